#include "properties/numeric_invariants.hpp"

#include <cmath>
#include <cstdio>
#include <string>

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

Verdict trajectory_conforms(const RunBundle& b) { return trajectory_conforms(b.scenario, b.impl.trajectory, b.oracle, b.control); }

Verdict trajectory_conforms(const Scenario& s, const Trajectory& impl, const Trajectory& oracle, const Trajectory& control) {
  if (impl.steps.size() != oracle.steps.size())
    return Verdict::judge("trajectory-conforms", INFINITY, 1.0, "the implementation ran a different number of steps");
  BandCheck worst;
  int worst_step = 0;
  for (size_t t = 0; t < oracle.steps.size(); ++t) {
    const auto c = check_band(s, impl.steps[t].params, oracle.steps[t].params, control.steps[t].params);
    if (!(c.worst_ratio <= worst.worst_ratio)) worst = c, worst_step = static_cast<int>(t);
  }
  return Verdict::judge("trajectory-conforms", worst.worst_ratio, 1.0,
                        "worst at step " + std::to_string(worst_step) + " " + worst.where +
                            fmt(": error %.3g vs control %.3g", worst.worst_impl_error, worst.worst_control_error));
}

Verdict step_conforms(const RunBundle& b) {
  const auto& s = b.scenario;
  if (b.impl.trajectory.steps.size() != b.oracle.steps.size())
    return Verdict::judge("step-conforms", INFINITY, 1.0, "the implementation ran a different number of steps");
  BandCheck worst;
  int worst_step = -1;
  for (int t = 0; t < s.steps; ++t) {
    // The oracle advances the implementation's own state one step; the band is the
    // control's one-step noise from the control's own state.
    const auto impl_before = t == 0 ? oracle::initial_state(s) : state_before(s, b.impl.trajectory, t);
    const auto ctrl_before = t == 0 ? oracle::initial_state(s) : state_before(s, b.control, t);
    const auto exact_from_impl = oracle::step_from(s, t, impl_before, b.precision);
    const auto exact_from_ctrl = oracle::step_from(s, t, ctrl_before, b.precision);
    // Band: control error of its own step, measured against the oracle's step from the control state.
    BandCheck c;
    for (size_t p = 0; p < exact_from_impl.params.size(); ++p) {
      const auto want = state_tensors(exact_from_impl.params[p]);
      const auto have = state_tensors(b.impl.trajectory.steps[t].params[p]);
      const auto cw = state_tensors(exact_from_ctrl.params[p]);
      const auto ch = state_tensors(b.control.steps[t].params[p]);
      for (size_t k = 0; k < want.size() && k < have.size() && k < cw.size() && k < ch.size(); ++k) {
        const double e_impl = relative_error(*have[k].values, *want[k].values);
        const double e_ctrl = relative_error(*ch[k].values, *cw[k].values);
        const double ratio = e_impl / allowed_error(s.tolerance, e_ctrl);
        if (!(ratio <= c.worst_ratio))
          c = {std::isnan(ratio) ? INFINITY : ratio, e_impl, e_ctrl, "param " + s.model.params[p].name + " " + want[k].kind};
      }
    }
    if (exact_from_impl.skipped != b.impl.trajectory.steps[t].skipped) c = {INFINITY, 0, 0, "skip decision differs"};
    if (!(c.worst_ratio <= worst.worst_ratio)) worst = c, worst_step = t;
    if (c.worst_ratio > 1.0) break;  // the first step where it diverges is the finding
  }
  return Verdict::judge("step-conforms", worst.worst_ratio, 1.0,
                        worst_step < 0 ? "every step within the band"
                                       : "first/worst divergence at step " + std::to_string(worst_step) + " " + worst.where +
                                             fmt(": error %.3g vs control %.3g", worst.worst_impl_error, worst.worst_control_error));
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

std::vector<StepError> per_step_errors(const RunBundle& b) { return per_step_errors(b.impl.trajectory, b.oracle, b.control); }

std::vector<StepError> per_step_errors(const Trajectory& impl, const Trajectory& oracle, const Trajectory& control) {
  std::vector<StepError> out;
  for (size_t t = 0; t < oracle.steps.size() && t < impl.steps.size(); ++t) {
    StepError e;
    for (size_t p = 0; p < oracle.steps[t].params.size() && p < impl.steps[t].params.size(); ++p) {
      const auto& exact = oracle.steps[t].params[p].weight;
      e.impl = std::max(e.impl, relative_error(impl.steps[t].params[p].weight, exact));
      e.control = std::max(e.control, relative_error(control.steps[t].params[p].weight, exact));
    }
    out.push_back(e);
  }
  return out;
}

}  // namespace muoncheck
