// Bit-identity of two trajectories: every double compared by its bit pattern, so a
// NaN equals the same NaN (a skipped step's recorded gradient may hold one) and
// +0 differs from −0. The `deterministic` invariant's notion of "the same run".
#pragma once
#include <string>

#include "core/trajectory.hpp"

namespace muoncheck {

// Empty when bit-identical; otherwise where the first difference is ("step 1 p0.grad[3]").
std::string first_bitwise_difference(const Trajectory& a, const Trajectory& b);

// Two tensors bit for bit (a NaN left in place equals itself; == would call it changed).
bool bit_identical(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace muoncheck
