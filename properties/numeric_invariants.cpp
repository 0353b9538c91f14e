#include "properties/numeric_invariants.hpp"

#include <cmath>
#include <cstdio>
#include <string>

#include "oracle/control_ensemble.hpp"
#include "properties/tensor_error.hpp"

namespace muoncheck {

namespace {

std::string fmt(const char* f, double a, double b) {
  char buf[160];
  std::snprintf(buf, sizeof buf, f, a, b);
  return buf;
}

bool is_power_of_two(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

}  // namespace

Verdict trajectory_conforms(const RunBundle& b) { return trajectory_conforms(b.scenario, b.impl.trajectory, b.oracle, b.controls); }

namespace {
Verdict band_verdict(const Scenario& s, const char* id, const BandCheck& worst, const std::string& located) {
  const std::string by_kind = per_kind_summary(worst);
  // Every tensor undetermined (or the determined ones exact): there is no worst place to name.
  const bool nothing_located = worst.where().empty() && worst.undetermined.tensors > 0;
  WorstCase w;
  w.step = worst.step, w.param = worst.param, w.tensor = worst.tensor;
  w.error = worst.worst_impl_error, w.band = worst.worst_control_error;
  Verdict v = nothing_located
                  ? Verdict::judge(id, worst.worst_ratio, 1.0, "no determined tensor differs from the exact one")
                  : Verdict::located(id, worst.worst_ratio, 1.0, w, located,
                                     by_kind.empty() ? "" : "; worst of the band per tensor: " + by_kind);
  v.sensitivity = worst.sensitivity;
  v.sensitivity_where = worst.sensitivity_where;
  return settle(v, worst.undetermined, s);
}
}  // namespace

Verdict trajectory_conforms(const Scenario& s, const Trajectory& impl, const Trajectory& oracle, const ControlEnsemble& controls) {
  if (impl.steps.size() != oracle.steps.size())
    return Verdict::judge("trajectory-conforms", INFINITY, 1.0, "the implementation ran a different number of steps");
  BandCheck worst;
  for (size_t t = 0; t < oracle.steps.size(); ++t) {
    const auto* before = t == 0 ? &oracle.initial : &oracle.steps[t - 1].params;
    // Free-running: every step after an undetermined one starts from an undetermined state.
    const bool downstream = worst.undetermined.tensors > 0;
    worst.merge(check_band(s, {&impl.steps[t].params, &oracle.steps[t].params, before, member_params(controls, t), downstream}),
                static_cast<int>(t));
  }
  return band_verdict(s, "trajectory-conforms", worst, "worst at ");
}

StepsFromState steps_from_impl_state(const RunBundle& b, int t) {
  const Scenario& s = b.scenario;
  StepsFromState out;
  out.before = t == 0 ? oracle::initial_state(s) : state_before(s, b.impl.trajectory, t);
  const int count = static_cast<int>(b.controls.size());
  out.exact = b.memo ? b.memo->exact_step(s, t, out.before, b.precision)
                     : std::make_shared<const StepRecord>(oracle::step_from(s, t, out.before, b.precision));
  out.members = b.memo ? b.memo->member_steps(s, t, out.before, count)
                       : std::make_shared<const std::vector<StepRecord>>(oracle::control_steps_from(s, t, out.before, count));
  return out;
}

Verdict step_conforms(const RunBundle& b) {
  const auto& s = b.scenario;
  if (b.impl.trajectory.steps.size() != b.oracle.steps.size())
    return Verdict::judge("step-conforms", INFINITY, 1.0, "the implementation ran a different number of steps");
  BandCheck worst;
  int first_out = -1;
  for (int t = 0; t < s.steps; ++t) {
    // From the implementation's own state: the exact step, and every control member's
    // step, so the band is the members' noise of the very step the implementation took.
    const auto [before, exact, members] = steps_from_impl_state(b, t);
    const int count = static_cast<int>(members->size());
    StepSides sides{&b.impl.trajectory.steps[t].params, &exact->params, &before.params, {}};
    for (const auto& m : *members) sides.members.push_back(&m.params);
    const bool skipped = b.impl.trajectory.steps[t].skipped;
    int same_decision = 0;   // control members that make the implementation's skip decision from its state
    for (const auto& m : *members) same_decision += m.skipped == skipped;
    // A decision the exact step does not make but some valid order does: this step's numbers
    // answer another question (a taken step against a skipped one), so every tensor is undetermined.
    sides.downstream_of_undetermined = exact->skipped != skipped && same_decision > 0;
    BandCheck c = check_band(s, sides);
    if (sides.downstream_of_undetermined)
      c.undetermined.reason = std::string(skipped ? "skipped" : "taken") + " as " + std::to_string(same_decision) +
                              " of " + std::to_string(count) + " valid orders (control members) decide from the implementation's state, the exact step does not";
    else if (exact->skipped != skipped) c.worst_ratio = INFINITY, c.tensor = "skip decision differs (no valid order makes it)";
    worst.merge(c, t);
    if (c.worst_ratio > 1.0) { first_out = t; break; }   // the first step where it diverges is the finding
  }
  return band_verdict(s, "step-conforms", worst,
                      first_out < 0 ? "every step within the band; worst at " : "first divergence at ");
}

Verdict grad_plumbing_exact(const RunBundle& b) {
  const auto& s = b.scenario;
  const auto& e = s.engine;
  if (e.param_dtype != DType::fp32 || e.grad_accum_dtype != DType::fp32 || e.comm_dtype != DType::fp32)
    return Verdict::skip("grad-plumbing-exact", "needs fp32 params, accumulation and communication");
  if (!is_power_of_two(e.global_batch())) return Verdict::skip("grad-plumbing-exact", "global batch is not a power of two");
  for (const auto& p : s.model.params) {
    const auto v = matrix_view(p.shape);
    if (!is_power_of_two(v.rows) || !is_power_of_two(v.cols) || v.cols > 1024)
      return Verdict::skip("grad-plumbing-exact", "param " + p.name + " is not power-of-two sized (or wider than 1024)");
  }
  if (b.oracle.steps.empty() || b.oracle.steps[0].skipped)
    return Verdict::skip("grad-plumbing-exact", "step 0 is skipped");
  if (b.impl.trajectory.steps.empty()) return Verdict::judge("grad-plumbing-exact", INFINITY, 0, "no steps from the implementation");
  double mismatched = 0;
  std::string first;
  for (size_t p = 0; p < s.model.params.size(); ++p) {
    const auto& want = b.oracle.steps[0].params[p].grad;
    const auto& have = b.impl.trajectory.steps[0].params[p].grad;
    if (want.size() != have.size()) {
      mismatched += static_cast<double>(want.size());
      if (first.empty()) first = s.model.params[p].name + ": gradient not exported";
      continue;
    }
    for (size_t i = 0; i < want.size(); ++i)
      if (want[i] != have[i]) {
        if (first.empty()) first = s.model.params[p].name + "[" + std::to_string(i) + "]" + fmt(": %.17g vs exact %.17g", have[i], want[i]);
        ++mismatched;
      }
  }
  return Verdict::judge("grad-plumbing-exact", mismatched, 0,
                        mismatched == 0 ? "step-0 gradient bit-equal to the oracle's" : std::to_string(static_cast<long>(mismatched)) + " elements differ; first " + first);
}

std::vector<StepError> per_step_errors(const RunBundle& b) { return per_step_errors(b.impl.trajectory, b.oracle, b.controls); }

std::vector<StepError> per_step_errors(const Trajectory& impl, const Trajectory& oracle, const ControlEnsemble& controls) {
  std::vector<StepError> out;
  for (size_t t = 0; t < oracle.steps.size() && t < impl.steps.size(); ++t) {
    StepError e;
    const auto members = member_params(controls, t);
    for (size_t p = 0; p < oracle.steps[t].params.size(); ++p) {
      const auto& exact = oracle.steps[t].params[p].weight;
      e.impl = std::max(e.impl, p < impl.steps[t].params.size() ? relative_error(impl.steps[t].params[p].weight, exact) : INFINITY);
      e.control = std::max(e.control, ensemble_error(member_tensors(members, p, "weight"), exact));
    }
    out.push_back(e);
  }
  return out;
}

}  // namespace muoncheck
