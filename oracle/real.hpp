// The number types the oracle is instantiated for, and exact conversions to and
// from double. All three are plain value types (`et_off`), so `auto` never holds a
// dangling expression template. Conversions from double are exact in every type.
#pragma once
#include <boost/multiprecision/cpp_bin_float.hpp>
#include <boost/multiprecision/float128.hpp>
#include <cmath>

namespace muoncheck::oracle {

using f64 = double;
using f128 = boost::multiprecision::float128;  // 113-bit significand (libquadmath)
using bin50 = boost::multiprecision::number<boost::multiprecision::cpp_bin_float<50>,
                                            boost::multiprecision::et_off>;  // ≈ 168 bits

template <class Real>
inline double to_double(const Real& x) { return static_cast<double>(x); }
inline double to_double(double x) { return x; }

// Generic math through ADL: std:: for double, boost::multiprecision:: otherwise.
template <class Real>
inline Real real_sqrt(const Real& x) { using std::sqrt; return sqrt(x); }
template <class Real>
inline Real real_abs(const Real& x) { using std::abs; return abs(x); }
template <class Real>
inline bool real_isfinite(const Real& x) { using std::isfinite; using boost::multiprecision::isfinite; return isfinite(x); }

// f128 → bin50 without going through double: hi + mid + lo, each a double, is
// exact for a 113-bit significand (3 × 53 ≥ 113) unless the value underflows double.
inline bin50 widen(const f128& x) {
  if (!real_isfinite(x)) return bin50(static_cast<double>(x));
  const double hi = static_cast<double>(x);
  const f128 r1 = x - f128(hi);
  const double mid = static_cast<double>(r1);
  const double lo = static_cast<double>(r1 - f128(mid));
  return bin50(hi) + bin50(mid) + bin50(lo);
}
inline bin50 widen(const bin50& x) { return x; }
inline bin50 widen(double x) { return bin50(x); }

}  // namespace muoncheck::oracle
