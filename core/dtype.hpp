// The storage dtypes a scenario can name (fp32, bf16, fp16) and exact
// round-to-nearest-even into them. Both the control (oracle/) and the CPU
// implementation (impl/) round through these functions, so "bf16" means one thing.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace muoncheck {

enum class DType { fp32, bf16, fp16 };

std::string_view dtype_name(DType t);
std::optional<DType> parse_dtype(std::string_view s);

int dtype_bytes(DType t);
int mantissa_bits(DType t);         // significand precision including the implicit bit
double unit_roundoff(DType t);      // 2^-mantissa_bits: half an ulp at 1
double max_finite(DType t);

// Round a double to the nearest value representable in `t` (ties to even),
// with gradual underflow and overflow to ±inf, exactly as IEEE hardware would.
double round_to(DType t, double x);
inline float round_to(DType t, float x) { return static_cast<float>(round_to(t, static_cast<double>(x))); }

// Bit patterns of the 16-bit formats (for buffers that travel as 2-byte words).
unsigned short to_bits16(DType t, float x);    // t must be bf16 or fp16; rounds RNE
float from_bits16(DType t, unsigned short bits);

}  // namespace muoncheck
