// Low-precision storage on the CPU: values of a bf16/fp16 tensor are kept as floats
// already rounded to that dtype (round-to-nearest-even, as core/dtype.hpp defines it),
// and packed into 16-bit words only when they travel through a collective.
// These are the fast paths of core::round_to for float inputs; tests/impl checks they agree.
#pragma once
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/dtype.hpp"

namespace muoncheck::impl {

inline float round_bf16(float x) {
  if (x != x) return x;                                 // nan stays nan
  uint32_t u;
  std::memcpy(&u, &x, 4);
  u += 0x7FFFu + ((u >> 16) & 1u);                     // ties to even; overflow carries into inf
  u &= 0xFFFF0000u;
  float r;
  std::memcpy(&r, &u, 4);
  return r;
}

inline float round_fp16(float x) { return static_cast<float>(static_cast<_Float16>(x)); }

inline float round_dtype(DType t, float x) {
  switch (t) {
    case DType::fp32: return x;
    case DType::bf16: return round_bf16(x);
    case DType::fp16: return round_fp16(x);
  }
  return x;
}

// Rounds a double once, straight into the dtype (no double rounding through float).
inline float round_dtype(DType t, double x) {
  if (t == DType::fp32) return static_cast<float>(x);
  return static_cast<float>(round_to(t, x));
}

void round_inplace(DType t, float* x, int64_t n);

// A buffer in a collective's dtype: fp32 words or 16-bit bit patterns.
class WireBuffer {
 public:
  WireBuffer(DType t, int64_t count) : dtype_(t), count_(count) {
    if (t == DType::fp32) f32_.assign(static_cast<size_t>(count), 0.0f);
    else u16_.assign(static_cast<size_t>(count), 0);
  }
  DType dtype() const { return dtype_; }
  int64_t count() const { return count_; }
  void* data() { return dtype_ == DType::fp32 ? static_cast<void*>(f32_.data()) : static_cast<void*>(u16_.data()); }
  // Rounds into the wire dtype.
  void store(int64_t at, const float* src, int64_t n);
  void load(int64_t at, float* dst, int64_t n) const;
  float get(int64_t i) const;

 private:
  DType dtype_;
  int64_t count_;
  std::vector<float> f32_;
  std::vector<uint16_t> u16_;
};

}  // namespace muoncheck::impl
