// Host buffers for the comm tests: one dtype, values set and read as doubles, viewed as
// a Buffer. Test inputs are multiples of 1/16 in [-1, 1], so every partial sum over
// up to 4 ranks is exact in fp32, bf16 and fp16 and results are checked bit for bit.
#pragma once
#include <cstdint>
#include <vector>

#include "impl/comm/communicator.hpp"

namespace muoncheck::impl::test {

class HostBuffer {
 public:
  HostBuffer(DType t, int64_t n) : t_(t), f_(t == DType::fp32 ? n : 0), h_(t == DType::fp32 ? 0 : n), n_(n) {}
  int64_t size() const { return n_; }
  void set(int64_t i, double v) {
    if (t_ == DType::fp32) f_[i] = static_cast<float>(v);
    else h_[i] = to_bits16(t_, static_cast<float>(v));
  }
  double get(int64_t i) const {
    return t_ == DType::fp32 ? f_[i] : from_bits16(t_, h_[i]);
  }
  Buffer view() { return Buffer{t_ == DType::fp32 ? static_cast<void*>(f_.data()) : h_.data(), n_, t_}; }
  Buffer view(int64_t offset, int64_t count) {
    char* base = static_cast<char*>(view().data) + offset * dtype_bytes(t_);
    return Buffer{base, count, t_};
  }

 private:
  DType t_;
  std::vector<float> f_;
  std::vector<uint16_t> h_;
  int64_t n_;
};

// Rank r's exact input at element i: a multiple of 1/16 in [-1, 1].
inline double exact_value(int rank, int64_t i) {
  return static_cast<double>((rank * 7 + i * 3 + 5) % 33 - 16) / 16.0;
}

}  // namespace muoncheck::impl::test
