#include "properties/followed_decisions.hpp"

#include <algorithm>

#include "oracle/scaler.hpp"
#include "properties/numeric_invariants.hpp"

namespace muoncheck {

Trajectory decisions_followed(const Scenario& s, const Trajectory& oracle, const Trajectory& impl, const ValidDecisions& valid,
                              std::vector<std::string>* followed) {
  Trajectory out = oracle;
  ScalerState scaler = oracle::initial_scaler(s.loss_scaler);
  int good_steps = 0;
  bool diverged = false;   // a followed decision: from here on the scaler follows the decisions
  for (size_t t = 0; t < out.steps.size(); ++t) {
    StepRecord& rec = out.steps[t];
    if (t < impl.steps.size() && impl.steps[t].skipped != rec.skipped) {
      const bool decision = impl.steps[t].skipped;
      const auto made = valid(static_cast<int>(t));
      const auto n = std::count(made.begin(), made.end(), decision);
      if (n > 0) {
        rec.skipped = decision;
        diverged = true;
        if (followed)
          followed->push_back("step " + std::to_string(t) + (decision ? " skipped" : " taken") + " as " + std::to_string(n) +
                              " of " + std::to_string(made.size()) + " valid orders decide; the oracle's trajectory did not");
      }
    }
    if (diverged) {
      rec.scale = scaler.scale;
      scaler = oracle::scaler_after(s.loss_scaler, scaler, rec.skipped);
      rec.scaler_after = scaler;
      good_steps += rec.skipped ? 0 : 1;
      rec.good_steps_after = good_steps;
    } else {
      scaler = rec.scaler_after;
      good_steps = rec.good_steps_after;
    }
  }
  return out;
}

ValidDecisions valid_decisions(const RunBundle& b) {
  return [&b](int t) {
    std::vector<bool> out;
    if (t > static_cast<int>(b.impl.trajectory.steps.size())) return out;
    const auto steps = steps_from_impl_state(b, t);
    out.push_back(steps.exact->skipped);
    for (const auto& m : *steps.members) out.push_back(m.skipped);
    return out;
  };
}

Verdict judged_on_followed(const RunBundle& b, const std::function<Verdict(const Trajectory&)>& judge) {
  const auto& want = b.oracle.steps;
  const auto& have = b.impl.trajectory.steps;
  bool differs = false;
  for (size_t t = 0; t < want.size() && t < have.size(); ++t) differs = differs || want[t].skipped != have[t].skipped;
  if (!differs) return judge(b.oracle);
  std::vector<std::string> followed;
  const Trajectory reference = decisions_followed(b.scenario, b.oracle, b.impl.trajectory, valid_decisions(b), &followed);
  Verdict v = judge(reference);
  for (const auto& f : followed) v.message += "; decision followed: " + f;
  return v;
}

}  // namespace muoncheck
