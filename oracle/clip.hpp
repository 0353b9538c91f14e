// Gradient clipping (docs/semantics.md §4.5). Both modes share one rule: with N the 2-norm of
// the clipped quantities, if N > max_norm they are multiplied by
// max_norm / (N + 1e-6). The modes differ only in what N covers (see step engine).
#pragma once
#include "oracle/real.hpp"

namespace muoncheck::oracle {

// 1 when clipping is off (max_norm ≤ 0) or N ≤ max_norm.
template <class T>
T clip_factor(const T& norm, double max_norm) {
  if (max_norm <= 0 || !(norm > T(max_norm))) return T(1);
  return T(max_norm) / (norm + T(1e-6));
}

}  // namespace muoncheck::oracle
