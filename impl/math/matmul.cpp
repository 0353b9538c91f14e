#include "impl/math/matmul.hpp"

#include <stdexcept>

#include "impl/math/lowp.hpp"

namespace muoncheck::impl {

Mat transpose(const Mat& a) {
  Mat t(a.cols, a.rows);
  for (int64_t i = 0; i < a.rows; ++i)
    for (int64_t j = 0; j < a.cols; ++j) t.at(j, i) = a.at(i, j);
  return t;
}

Mat matmul(const Mat& a, const Mat& b, DType out) {
  if (a.cols != b.rows) throw std::logic_error("matmul: inner dimensions differ");
  Mat c(a.rows, b.cols);
  const int64_t n = b.cols;
  for (int64_t i = 0; i < a.rows; ++i) {
    float* crow = c.v.data() + i * n;
    for (int64_t k = 0; k < a.cols; ++k) {      // i-k-j: each c(i,j) still sums k in order
      const float aik = a.at(i, k);
      const float* brow = b.v.data() + k * n;
      for (int64_t j = 0; j < n; ++j) crow[j] += aik * brow[j];
    }
  }
  round_inplace(out, c.v.data(), static_cast<int64_t>(c.v.size()));
  return c;
}

Mat gram(const Mat& a, DType out) { return matmul(a, transpose(a), out); }

Mat axpby(float alpha, const Mat& a, float beta, const Mat& b, DType out) {
  if (a.rows != b.rows || a.cols != b.cols) throw std::logic_error("axpby: shapes differ");
  Mat c(a.rows, a.cols);
  for (size_t i = 0; i < c.v.size(); ++i) c.v[i] = round_dtype(out, alpha * a.v[i] + beta * b.v[i]);
  return c;
}

}  // namespace muoncheck::impl
