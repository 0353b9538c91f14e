// Recomputes one scenario's float128 oracle digest and compares it with its
// golden file; a missing file is a failure that says how to create it.
#pragma once
#include <string>

#include "core/scenario.hpp"
#include "core/trajectory.hpp"
#include "harness/golden/golden_digest.hpp"

namespace muoncheck {

// A golden folder that does not exist is a path mistake (bad input naming it), never a FAIL of
// every scenario that would advise regenerating digests that exist elsewhere.
void require_golden_folder(const std::string& golden_dir);

// What to do about a failed comparison: write the digest of a scenario that has none, or
// regenerate one whose change is intended.
std::string golden_failure_hint(const golden::Comparison& c, const Scenario& s, const std::string& golden_dir);

// `float128_oracle`: an already computed float128 trajectory of `s` (null: compute it).
golden::Comparison check_against_golden(const Scenario& s, const std::string& golden_dir,
                                        const Trajectory* float128_oracle = nullptr);

}  // namespace muoncheck
