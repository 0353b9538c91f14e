#include "properties/scaler_invariant.hpp"

#include <cstdio>
#include <string>

#include "properties/followed_decisions.hpp"

namespace muoncheck {
namespace {

std::string num(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

}  // namespace

Verdict scaler_state_exact(const RunBundle& b) {
  return judged_on_followed(b, [&](const Trajectory& reference) { return scaler_state_exact(reference, b.impl.trajectory); });
}

Verdict scaler_state_exact(const Trajectory& oracle, const Trajectory& impl) {
  double bad = 0;
  std::string first;
  auto note = [&](const std::string& m) {
    ++bad;
    if (first.empty()) first = m;
  };
  if (impl.steps.size() != oracle.steps.size())
    note("the implementation recorded " + std::to_string(impl.steps.size()) + " steps, the oracle " +
         std::to_string(oracle.steps.size()));
  int grew = 0, skipped = 0;
  for (size_t t = 0; t < oracle.steps.size() && t < impl.steps.size(); ++t) {
    const auto& want = oracle.steps[t];
    const auto& have = impl.steps[t];
    const std::string at = "step " + std::to_string(t) + ": ";
    if (have.skipped != want.skipped) note(at + (have.skipped ? "skipped, the oracle did not" : "taken, the oracle skipped it"));
    if (have.scale != want.scale) note(at + "used loss scale " + num(have.scale) + ", expected " + num(want.scale));
    const auto& h = have.scaler_after;
    const auto& w = want.scaler_after;
    if (h.scale != w.scale) note(at + "loss scale after the step " + num(h.scale) + ", expected " + num(w.scale));
    if (h.hysteresis != w.hysteresis)
      note(at + "hysteresis counter after the step " + std::to_string(h.hysteresis) + ", expected " + std::to_string(w.hysteresis));
    if (h.good_streak != w.good_streak)
      note(at + "good-step streak after the step " + std::to_string(h.good_streak) + ", expected " + std::to_string(w.good_streak));
    if (have.good_steps_after != want.good_steps_after)
      note(at + "optimizer step count " + std::to_string(have.good_steps_after) + ", expected " + std::to_string(want.good_steps_after));
    grew += w.scale > want.scale;
    skipped += want.skipped;
  }
  const std::string summary = std::to_string(oracle.steps.size()) + " steps, " + std::to_string(skipped) + " skipped, " +
                              std::to_string(grew) + " scale growth(s): scale, hysteresis, streak and step count equal";
  return Verdict::judge("scaler-state-exact", bad, 0, bad == 0 ? summary : first);
}

}  // namespace muoncheck
