// Recomputes one scenario's float128 oracle digest and compares it with its
// golden file; a missing file is a failure that says how to create it.
#pragma once
#include <string>

#include "core/scenario.hpp"
#include "harness/golden.hpp"

namespace muoncheck {

golden::Comparison check_against_golden(const Scenario& s, const std::string& golden_dir);

}  // namespace muoncheck
