// Recomputes one scenario's float128 oracle digest and compares it with its
// golden file; a missing file is a failure that says how to create it.
#pragma once
#include <string>

#include "core/scenario.hpp"
#include "core/trajectory.hpp"
#include "harness/golden/golden_digest.hpp"

namespace muoncheck {

// `float128_oracle`: an already computed float128 trajectory of `s` (null: compute it).
golden::Comparison check_against_golden(const Scenario& s, const std::string& golden_dir,
                                        const Trajectory* float128_oracle = nullptr);

}  // namespace muoncheck
