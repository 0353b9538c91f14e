// Relational invariants: two implementation runs that describe the same exact
// trajectory (a re-split batch, another stage, smaller buckets) must agree within
// the sum of their control ensembles' noise (the same band model as the numeric ones).
#pragma once
#include <string>

#include "core/scenario.hpp"
#include "core/trajectory.hpp"
#include "properties/tensor_error.hpp"
#include "properties/verdict.hpp"

namespace muoncheck {

struct RelationalSide {
  std::string label;              // "gas 4", "stage 1", ...
  const Trajectory* impl;
  const ControlEnsemble* controls;
};

// Worst over steps and params of ‖W_a − W_b‖ / ‖W*‖ against
// alpha·(max_k e_ctrl_a,k + max_k e_ctrl_b,k) + floor·u.
Verdict compare_runs(const std::string& invariant, const Scenario& s, const Trajectory& oracle,
                     const RelationalSide& a, const RelationalSide& b);

}  // namespace muoncheck
