#include "properties/checkpoint_invariant.hpp"

#include <bit>
#include <cmath>
#include <cstdint>

#include "properties/bitwise.hpp"
#include "properties/relational_invariants.hpp"

namespace muoncheck {

namespace {

constexpr const char* kId = "checkpoint-resume-exact";

bool same(double a, double b) { return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b); }

std::string engine_label(const EngineConfig& e) {
  return "dp " + std::to_string(e.dp) + " stage " + std::to_string(e.stage);
}

}  // namespace

double resumed_state_differences(const StepRecord& saved, const TrainingState& resumed, std::string& first) {
  double bad = 0;
  auto note = [&](double n, const std::string& what) {
    bad += n;
    if (first.empty()) first = what;
  };
  const std::string at = "resumed after step " + std::to_string(saved.step) + ": ";
  if (resumed.params.size() != saved.params.size()) {
    note(INFINITY, at + std::to_string(resumed.params.size()) + " params restored, " + std::to_string(saved.params.size()) + " saved");
    return bad;
  }
  for (size_t p = 0; p < saved.params.size(); ++p) {
    const ParamState &s = saved.params[p], &r = resumed.params[p];
    const std::pair<const char*, std::pair<const std::vector<double>*, const std::vector<double>*>> tensors[] = {
        {"weight", {&s.weight, &r.weight}}, {"momentum", {&s.momentum, &r.momentum}},
        {"adam_m", {&s.adam_m, &r.adam_m}}, {"adam_v", {&s.adam_v, &r.adam_v}}};
    for (const auto& [name, pair] : tensors) {
      const auto &want = *pair.first, &have = *pair.second;
      const std::string where = at + "p" + std::to_string(p) + "." + name;
      if (want.size() != have.size()) {
        note(static_cast<double>(std::max(want.size(), have.size())),
             where + " has " + std::to_string(have.size()) + " elements, " + std::to_string(want.size()) + " saved");
        continue;
      }
      for (size_t i = 0; i < want.size(); ++i)
        if (!same(want[i], have[i]))
          note(1, where + "[" + std::to_string(i) + "] = " + std::to_string(have[i]) + ", saved " + std::to_string(want[i]));
    }
  }
  if (resumed.good_steps != saved.good_steps_after)
    note(1, at + "Adam step count " + std::to_string(resumed.good_steps) + ", saved " + std::to_string(saved.good_steps_after));
  const ScalerState &a = resumed.scaler, &b = saved.scaler_after;
  if (!same(a.scale, b.scale) || a.hysteresis != b.hysteresis || a.good_streak != b.good_streak)
    note(1, at + "loss scale " + std::to_string(a.scale) + " (hysteresis " + std::to_string(a.hysteresis) + ", streak " +
                std::to_string(a.good_streak) + "), saved " + std::to_string(b.scale) + " (" + std::to_string(b.hysteresis) +
                ", " + std::to_string(b.good_streak) + ")");
  return bad;
}

Verdict checkpoint_resume_exact(const RunBundle& b, const Observation& uninterrupted,
                                const ControlEnsemble& uninterrupted_controls) {
  const Scenario& s = b.scenario;
  if (!s.checkpoint) return Verdict::skip(kId, "no checkpoint in the scenario");
  const int k = s.checkpoint->save_after_step;
  const auto& steps = b.impl.trajectory.steps;
  if (static_cast<int>(steps.size()) != s.steps)
    return Verdict::judge(kId, INFINITY, 0, "the resumed run recorded " + std::to_string(steps.size()) + " of " +
                                                std::to_string(s.steps) + " steps");
  const EngineConfig resumed = resume_engine(s);
  const std::string label = "saved at " + engine_label(s.engine) + " after step " + std::to_string(k) + ", resumed at " +
                            engine_label(resumed);
  const bool shows_resume = b.impl.shows(ObservedPart::resumed_state);
  if (shows_resume) {
    if (!b.impl.resumed_state)
      return Verdict::judge(kId, INFINITY, 0, "the run reports no state at its resume after step " + std::to_string(k));
    std::string first;
    const double bad = resumed_state_differences(steps[static_cast<size_t>(k)], *b.impl.resumed_state, first);
    if (bad > 0) return Verdict::judge(kId, bad, 0, first);
  }
  if (shows_resume && resumed.dp == s.engine.dp && resumed.stage == s.engine.stage) {
    const std::string where = first_bitwise_difference(b.impl.trajectory, uninterrupted.trajectory);
    return Verdict::judge(kId, where.empty() ? 0 : 1, 0,
                          label + (where.empty() ? ": state at the resume and every later step bit-identical to the uninterrupted run"
                                                 : ": differs from the uninterrupted run, first at " + where));
  }
  // Another dp or stage reduces in another order: the weights within the band of both runs'
  // rounding noise (the two share one control ensemble: the checkpoint changes no semantics).
  Verdict v = compare_runs(kId, s, b.oracle, {"resumed (" + label + ")", &b.impl.trajectory, &b.controls},
                           {"uninterrupted", &uninterrupted.trajectory, &uninterrupted_controls});
  v.message = (shows_resume ? "state at the resume bit-identical to the saved, then every step compared within the band: "
                            : "the run shows no state at its resume, so every step is compared within the band: ") +
              v.message;
  return v;
}

}  // namespace muoncheck
