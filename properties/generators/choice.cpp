#include "properties/generators/choice.hpp"

#include <numeric>

namespace muoncheck::generators {

rc::Gen<std::size_t> weighted_index(std::vector<int> weights) {
  return [weights = std::move(weights)](const rc::Random& random, int) {
    const uint64_t total = static_cast<uint64_t>(std::accumulate(weights.begin(), weights.end(), 0));
    if (total == 0) throw rc::GenerationFailure("weighted_index: every weight is 0");
    uint64_t x = rc::Random(random).next() % total;
    std::size_t i = 0;
    while (x >= static_cast<uint64_t>(weights[i])) x -= static_cast<uint64_t>(weights[i++]);
    return rc::shrinkable::shrinkRecur(i, [weights](std::size_t v) {
      // Only toward options that can be drawn at all (weight > 0).
      return rc::seq::filter(rc::shrink::towards<std::size_t>(v, 0),
                             [weights](std::size_t j) { return weights[j] > 0; });
    });
  };
}

rc::Gen<int64_t> range(int64_t lo, int64_t hi) {
  return [lo, hi](const rc::Random& random, int) {
    if (hi < lo) throw rc::GenerationFailure("range: empty");
    const uint64_t span = static_cast<uint64_t>(hi - lo) + 1;
    const int64_t v = lo + static_cast<int64_t>(rc::Random(random).next() % span);
    return rc::shrinkable::shrinkRecur(v, [lo](int64_t x) { return rc::shrink::towards<int64_t>(x, lo); });
  };
}

rc::Gen<int> int_range(int lo, int hi) {
  return rc::gen::map(range(lo, hi), [](int64_t v) { return static_cast<int>(v); });
}

rc::Gen<bool> chance(int percent) { return weighted<bool>({{100 - percent, false}, {percent, true}}); }

}  // namespace muoncheck::generators
