// Relational invariants: two implementation runs that describe the same exact
// trajectory (a re-split batch, another stage, smaller buckets) must agree within
// the sum of their controls' noise.
#pragma once
#include <string>

#include "core/scenario.hpp"
#include "core/trajectory.hpp"
#include "properties/verdict.hpp"

namespace muoncheck {

struct RelationalSide {
  std::string label;              // "gas 4", "stage 1", ...
  const Trajectory* impl;
  const Trajectory* control;
};

// Worst over steps and params of ‖W_a − W_b‖ / ‖W*‖ against alpha·(e_ctrl_a + e_ctrl_b) + floor·u.
Verdict compare_runs(const std::string& invariant, const Scenario& s, const Trajectory& oracle,
                     const RelationalSide& a, const RelationalSide& b);

}  // namespace muoncheck
