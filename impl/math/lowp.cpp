#include "impl/math/lowp.hpp"

namespace muoncheck::impl {

void round_inplace(DType t, float* x, int64_t n) {
  if (t == DType::fp32) return;
  if (t == DType::bf16)
    for (int64_t i = 0; i < n; ++i) x[i] = round_bf16(x[i]);
  else
    for (int64_t i = 0; i < n; ++i) x[i] = round_fp16(x[i]);
}

void WireBuffer::store(int64_t at, const float* src, int64_t n) {
  if (n <= 0) return;   // an empty param's span: its pointers may be null, memcpy's may not
  if (dtype_ == DType::fp32) {
    std::memcpy(f32_.data() + at, src, static_cast<size_t>(n) * 4);
    return;
  }
  uint16_t* dst = u16_.data() + at;
  if (dtype_ == DType::bf16) {
    for (int64_t i = 0; i < n; ++i) {
      const float r = round_bf16(src[i]);
      uint32_t u;
      std::memcpy(&u, &r, 4);
      dst[i] = r != r ? uint16_t{0x7FC0} : static_cast<uint16_t>(u >> 16);
    }
  } else {
    for (int64_t i = 0; i < n; ++i) {
      const _Float16 h = static_cast<_Float16>(src[i]);
      std::memcpy(&dst[i], &h, 2);
    }
  }
}

void WireBuffer::load(int64_t at, float* dst, int64_t n) const {
  if (n <= 0) return;
  if (dtype_ == DType::fp32) {
    std::memcpy(dst, f32_.data() + at, static_cast<size_t>(n) * 4);
    return;
  }
  const uint16_t* src = u16_.data() + at;
  if (dtype_ == DType::bf16) {
    for (int64_t i = 0; i < n; ++i) {
      const uint32_t u = static_cast<uint32_t>(src[i]) << 16;
      std::memcpy(&dst[i], &u, 4);
    }
  } else {
    for (int64_t i = 0; i < n; ++i) {
      _Float16 h;
      std::memcpy(&h, &src[i], 2);
      dst[i] = static_cast<float>(h);
    }
  }
}

float WireBuffer::get(int64_t i) const {
  float x;
  load(i, &x, 1);
  return x;
}

}  // namespace muoncheck::impl
