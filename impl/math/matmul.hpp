// CPU matrix products with fp32 accumulation, row-major. Each output element is summed
// over k in increasing order, so results are deterministic and independent of threads.
// The low-precision variant rounds its output into a storage dtype (inputs are expected
// to be rounded already), the way a bf16/fp16 GEMM with an fp32 accumulator behaves.
#pragma once
#include <cstdint>
#include <vector>

#include "core/dtype.hpp"

namespace muoncheck::impl {

// A dense row-major matrix of floats.
struct Mat {
  int64_t rows = 0, cols = 0;
  std::vector<float> v;
  Mat() = default;
  Mat(int64_t r, int64_t c) : rows(r), cols(c), v(static_cast<size_t>(r * c), 0.0f) {}
  float& at(int64_t i, int64_t j) { return v[static_cast<size_t>(i * cols + j)]; }
  float at(int64_t i, int64_t j) const { return v[static_cast<size_t>(i * cols + j)]; }
};

Mat transpose(const Mat& a);
// C = A·B, fp32 accumulation, output rounded to `out` (fp32: no rounding).
Mat matmul(const Mat& a, const Mat& b, DType out = DType::fp32);
// C = A·Aᵀ (the Gram matrix), fp32 accumulation, output rounded to `out`.
Mat gram(const Mat& a, DType out = DType::fp32);
// C = alpha·A + beta·B elementwise (fp32), rounded to `out`.
Mat axpby(float alpha, const Mat& a, float beta, const Mat& b, DType out);

}  // namespace muoncheck::impl
