// ‖x − ref‖₂ / ‖ref‖₂ in double: how far a result lies from its reference, for the tests
// that put the CPU and the CUDA Newton–Schulz beside the same reference.
#pragma once
#include <algorithm>
#include <cmath>
#include <vector>

namespace muoncheck::impl {

inline double relative_error(const std::vector<float>& x, const std::vector<float>& ref) {
  double d = 0, n = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    d += (double(x[i]) - ref[i]) * (double(x[i]) - ref[i]);
    n += double(ref[i]) * ref[i];
  }
  return std::sqrt(d / std::max(n, 1e-300));
}

}  // namespace muoncheck::impl
