// Error of a tensor against the exact oracle, ‖X − X*‖_F / max(‖X*‖_F, tiny), and
// the tolerance band of SPEC §6: pass when err(impl) ≤ alpha·err(control) +
// floor_ulps·u(dtype). Written once here; every numeric invariant uses it.
#pragma once
#include <string>
#include <vector>

#include "core/scenario.hpp"
#include "core/trajectory.hpp"

namespace muoncheck {

double relative_error(const std::vector<double>& x, const std::vector<double>& exact);

// The storage dtype of master weights and optimizer state (SPEC §5: always fp32).
constexpr DType kStateDType = DType::fp32;

double allowed_error(const Tolerance& t, double control_error, DType storage = kStateDType);

// The tensors of a ParamState by name: weight, momentum, adam_m, adam_v.
struct NamedTensor {
  const char* kind;
  const std::vector<double>* values;
};
std::vector<NamedTensor> state_tensors(const ParamState& p);

// Worst (impl error / allowed) over every param and state tensor of one step.
struct BandCheck {
  double worst_ratio = 0.0;
  double worst_impl_error = 0.0;
  double worst_control_error = 0.0;
  std::string where;   // "param <name> <tensor>"
};
BandCheck check_band(const Scenario& s, const std::vector<ParamState>& impl, const std::vector<ParamState>& exact,
                     const std::vector<ParamState>& control);

// The state before step `step` (the initial state for step 0) as a TrainingState.
TrainingState state_before(const Scenario& s, const Trajectory& t, int step);

}  // namespace muoncheck
