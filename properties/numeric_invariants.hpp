// Tolerance invariants: the implementation's state against the exact oracle,
// within the control ensemble's band (free-running and stepwise), and the exact plumbing
// tier (step-0 gradient bit-equal where every sum is exact).
#pragma once
#include <memory>

#include "properties/run_bundle.hpp"
#include "properties/tensor_error.hpp"
#include "properties/verdict.hpp"

namespace muoncheck {

// Step t from the implementation's own state before it: that state, the exact step and every
// control member's step (the memo's when the bundle has one) — what step-conforms judges with.
struct StepsFromState {
  TrainingState before;
  std::shared_ptr<const StepRecord> exact;
  std::shared_ptr<const std::vector<StepRecord>> members;
};
StepsFromState steps_from_impl_state(const RunBundle& b, int t);

Verdict trajectory_conforms(const RunBundle& b);
Verdict step_conforms(const RunBundle& b);
Verdict grad_plumbing_exact(const RunBundle& b);

// Worst impl and control-ensemble error of the weights per step (for the report's per-step records).
struct StepError {
  double impl = 0.0, control = 0.0;
};
std::vector<StepError> per_step_errors(const RunBundle& b);

// Over plain trajectories (an implementation's trace judged by `muoncheck verify`).
Verdict trajectory_conforms(const Scenario& s, const Trajectory& impl, const Trajectory& oracle, const ControlEnsemble& controls);
std::vector<StepError> per_step_errors(const Trajectory& impl, const Trajectory& oracle, const ControlEnsemble& controls);

}  // namespace muoncheck
