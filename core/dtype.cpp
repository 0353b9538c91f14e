#include "core/dtype.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace muoncheck {

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::fp32: return "fp32";
    case DType::bf16: return "bf16";
    case DType::fp16: return "fp16";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view s) {
  if (s == "fp32") return DType::fp32;
  if (s == "bf16") return DType::bf16;
  if (s == "fp16") return DType::fp16;
  return std::nullopt;
}

int dtype_bytes(DType t) { return t == DType::fp32 ? 4 : 2; }

static int min_normal_exponent(DType t) { return t == DType::fp16 ? -14 : -126; }

double unit_roundoff(DType t) { return std::ldexp(1.0, -mantissa_bits(t)); }


namespace {

// The general path (every exponent, subnormals included): scale to t's integer grid,
// round, scale back. Scaling by a power of two is exact in double for every exponent
// these formats reach; nearbyint rounds half to even in the default rounding mode.
double round_scaled(DType t, double x, double u, bool random) {
  const int p = mantissa_bits(t);
  int e = 0;
  std::frexp(x, &e);                       // x = f·2^e, 0.5 ≤ |f| < 1
  const int quantum = std::max(e - p, min_normal_exponent(t) - p + 1);
  const double y = std::ldexp(x, -quantum);
  const double down = std::floor(y);
  const double q = random ? (y - down > u ? down + 1 : down) : std::nearbyint(y);
  const double r = std::ldexp(q, quantum);
  return std::fabs(r) > max_finite(t) ? std::copysign(std::numeric_limits<double>::infinity(), x) : r;
}

}  // namespace

namespace detail {
double round_to_general(DType t, double x) { return round_scaled(t, x, 0.0, false); }
double round_random_general(DType t, double x, double u) { return round_scaled(t, x, u, true); }
}  // namespace detail

unsigned short to_bits16(DType t, float x) {
  const float r = round_to(t, x);
  if (t == DType::bf16) {
    uint32_t u;
    std::memcpy(&u, &r, 4);
    if (std::isnan(r)) return 0x7FC0;
    return static_cast<unsigned short>(u >> 16);  // exact: r has at most 8 significant bits
  }
  // fp16
  if (std::isnan(r)) return 0x7E00;
  uint32_t sign = std::signbit(r) ? 0x8000u : 0u;
  double a = std::fabs(static_cast<double>(r));
  if (std::isinf(a)) return static_cast<unsigned short>(sign | 0x7C00u);
  if (a == 0.0) return static_cast<unsigned short>(sign);
  int e = 0;
  std::frexp(a, &e);  // a = f·2^e
  int exp = e - 1;    // a = 1.m · 2^exp
  if (exp < -14) {    // subnormal: a = k · 2^-24
    return static_cast<unsigned short>(sign | static_cast<uint32_t>(std::ldexp(a, 24)));
  }
  uint32_t mant = static_cast<uint32_t>(std::ldexp(a, -exp) * 1024.0) - 1024u;
  return static_cast<unsigned short>(sign | (static_cast<uint32_t>(exp + 15) << 10) | mant);
}

float from_bits16(DType t, unsigned short bits) {
  if (t == DType::bf16) {
    uint32_t u = static_cast<uint32_t>(bits) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  const uint32_t sign = bits & 0x8000u, exp = (bits >> 10) & 0x1Fu, mant = bits & 0x3FFu;
  double v;
  if (exp == 0) v = std::ldexp(static_cast<double>(mant), -24);
  else if (exp == 31) v = mant ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  else v = std::ldexp(1.0 + mant / 1024.0, static_cast<int>(exp) - 15);
  return static_cast<float>(sign ? -v : v);
}

}  // namespace muoncheck
