#include "harness/sweep/shrink_failure.hpp"

#include <chrono>

namespace muoncheck {

ShrinkPath shrink_failure(const rc::Shrinkable<Scenario>& failing,
                          const std::function<bool(const Scenario&)>& still_fails, int max_judgements,
                          double max_seconds) {
  const auto start = std::chrono::steady_clock::now();
  auto out_of_time = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > max_seconds;
  };
  ShrinkPath path;
  path.steps.push_back(failing);
  while (true) {
    auto shrinks = path.steps.back().shrinks();
    bool descended = false;
    while (auto next = shrinks.next()) {
      if (path.judgements >= max_judgements || out_of_time()) {
        path.exhausted = true;
        return path;
      }
      ++path.judgements;
      if (still_fails(next->value())) {
        path.steps.push_back(*next);
        descended = true;
        break;
      }
    }
    if (!descended) return path;   // no smaller scenario fails: a local minimum
  }
}

}  // namespace muoncheck
