// The storage dtypes a scenario can name (fp32, bf16, fp16) and exact
// round-to-nearest-even into them. Both the control (oracle/) and the CPU
// implementation (impl/) round through these functions, so "bf16" means one thing.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

namespace muoncheck {

enum class DType { fp32, bf16, fp16 };

std::string_view dtype_name(DType t);
std::optional<DType> parse_dtype(std::string_view s);

int dtype_bytes(DType t);
inline int mantissa_bits(DType t) { return t == DType::fp32 ? 24 : t == DType::bf16 ? 8 : 11; }   // with the implicit bit
double unit_roundoff(DType t);      // 2^-mantissa_bits: half an ulp at 1
inline double max_finite(DType t) {   // (2 − 2^(1−p))·2^emax
  return t == DType::fp32 ? 0x1.fffffep+127 : t == DType::bf16 ? 0x1.fep+127 : 0x1.ffcp+15;
}

namespace detail {
double round_to_general(DType t, double x);               // any finite x, subnormals included
double round_random_general(DType t, double x, double u);  // likewise; overflow not yet saturated

// |x| at or above t's smallest normal: there rounding is a bit operation on x's pattern.
inline bool in_normal_range(DType t, double x) { return std::fabs(x) >= (t == DType::fp16 ? 0x1p-14 : 0x1p-126); }

// Keeps the top significand bits of x's pattern (t's precision); a round-up's carry moves
// into the exponent by itself. `up(low, odd, drop)` decides from the dropped bits.
template <class Up>
double round_pattern(DType t, double x, Up up) {
  const int drop = 53 - mantissa_bits(t);
  const uint64_t mask = (uint64_t{1} << drop) - 1;
  uint64_t b;
  std::memcpy(&b, &x, 8);   // (not std::bit_cast: CUDA sources include this header as C++17)
  const uint64_t low = b & mask;
  b &= ~mask;
  b += static_cast<uint64_t>(up(low, (b >> drop) & 1, drop)) << drop;   // branch-free: random rounding is unpredictable
  std::memcpy(&x, &b, 8);
  return x;
}
}  // namespace detail

// Round a double to the nearest value representable in `t` (ties to even),
// with gradual underflow and overflow to ±inf, exactly as IEEE hardware would.
// Inline: the control rounds after every operation.
inline double round_to(DType t, double x) {
  if (!std::isfinite(x) || x == 0.0) return x;
  if (t == DType::fp32) return static_cast<double>(static_cast<float>(x));   // the hardware's RNE
  if (!detail::in_normal_range(t, x)) return detail::round_to_general(t, x);
  const double r = detail::round_pattern(t, x, [](uint64_t low, uint64_t odd, int drop) {
    const uint64_t half = uint64_t{1} << (drop - 1);
    return low > half || (low == half && odd);
  });
  return std::fabs(r) > max_finite(t) ? std::copysign(std::numeric_limits<double>::infinity(), x) : r;
}
inline float round_to(DType t, float x) { return static_cast<float>(round_to(t, static_cast<double>(x))); }

// Random rounding (Monte Carlo arithmetic's RR mode): x goes to one of its two
// neighbours in `t`, up with probability (x − down)/(up − down), decided by `u` ∈ [0, 1)
// (the caller's random number). Exact values stay; a value round_to sends to inf goes
// to inf, any other saturates at the largest finite value.
inline double round_random(DType t, double x, double u) {
  if (!std::isfinite(x) || x == 0.0) return x;
  const double r = detail::in_normal_range(t, x)
                       ? detail::round_pattern(t, x, [u](uint64_t low, uint64_t, int drop) {
                           return static_cast<double>(low) > u * static_cast<double>(uint64_t{1} << drop);
                         })
                       : detail::round_random_general(t, x, u);
  if (std::fabs(r) > max_finite(t)) {
    const double nearest = round_to(t, x);
    return std::isinf(nearest) ? nearest : std::copysign(max_finite(t), x);
  }
  return r;
}

// Bit patterns of the 16-bit formats (for buffers that travel as 2-byte words).
unsigned short to_bits16(DType t, float x);    // t must be bf16 or fp16; rounds RNE
float from_bits16(DType t, unsigned short bits);

}  // namespace muoncheck
