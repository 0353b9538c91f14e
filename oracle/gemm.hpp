// Matrix products for Newton–Schulz and friends, their rows spread over the
// oracle's threads (parallel.hpp). Each output element is one dot product
// over contiguous rows, so a product runs at the rate of a plain multiply-add
// loop; the kernel that forms a dot product is a parameter (exact, or the
// control's fp32-accumulating one). Results do not depend on the thread count.
#pragma once
#include <cstdint>

#include "oracle/matrix.hpp"
#include "oracle/parallel.hpp"

namespace muoncheck::oracle {

// The exact kernel: sum of a[i]·b[i] in order. Two accumulators let the soft-float
// calls of adjacent terms overlap; the sum order is fixed, so results are deterministic.
struct ExactDot {
  template <class T>
  T operator()(const T* a, const T* b, int64_t k) const {
    T s0(0), s1(0);
    int64_t i = 0;
    for (; i + 1 < k; i += 2) { s0 += a[i] * b[i]; s1 += a[i + 1] * b[i + 1]; }
    if (i < k) s0 += a[i] * b[i];
    return s0 + s1;
  }
};

// Runs dot(x, y_j, k) into out(j) for j in [lo, hi): four at a time where the kernel can
// (the control's dot4, bit-identical to one at a time), else one by one.
template <class T, class Dot, class RowOf, class Out>
void dot_row(const Dot& dot, const T* x, RowOf y, int64_t lo, int64_t hi, int64_t k, Out out) {
  int64_t j = lo;
  if constexpr (requires(const double* const* p, double* r) { dot.dot4(x, p, k, r); }) {
    for (; j + 4 <= hi; j += 4) {
      const T* ys[4] = {y(j), y(j + 1), y(j + 2), y(j + 3)};
      T r[4];
      dot.dot4(x, ys, k, r);
      for (int l = 0; l < 4; ++l) out(j + l, r[l]);
    }
  }
  for (; j < hi; ++j) out(j, dot(x, y(j), k));
}

// C = A·B (m×k · k×n).
template <class T, class Dot = ExactDot>
Mat<T> matmul(const Mat<T>& A, const Mat<T>& B, Dot dot = {}) {
  const Mat<T> Bt = transpose(B);
  Mat<T> C(A.rows, B.cols);
  const int64_t k = A.cols;
  parallel_rows(A.rows, [&](int64_t) { return double(B.cols * k); }, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i)
      dot_row<T>(dot, A.row(i), [&](int64_t j) { return Bt.row(j); }, 0, B.cols, k, [&](int64_t j, const T& v) { C(i, j) = v; });
  });
  return C;
}

// C = A·B where C is known to be symmetric (A, B square polynomials in one
// symmetric matrix): only the upper triangle is formed, then mirrored.
template <class T, class Dot = ExactDot>
Mat<T> matmul_symmetric(const Mat<T>& A, const Mat<T>& B, Dot dot = {}) {
  const Mat<T> Bt = transpose(B);
  const int64_t n = A.rows, k = A.cols;
  Mat<T> C(n, n);
  parallel_rows(n, [&](int64_t i) { return double((n - i) * k); }, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i)
      dot_row<T>(dot, A.row(i), [&](int64_t j) { return Bt.row(j); }, i, n, k, [&](int64_t j, const T& v) { C(i, j) = v; });
  });
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = i + 1; j < n; ++j) C(j, i) = C(i, j);
  return C;
}

// C = X·Xᵀ (m×m): dot products of rows; the upper triangle, mirrored.
template <class T, class Dot = ExactDot>
Mat<T> gram_matrix(const Mat<T>& X, Dot dot = {}) {
  const int64_t m = X.rows, k = X.cols;
  Mat<T> C(m, m);
  parallel_rows(m, [&](int64_t i) { return double((m - i) * k); }, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i)
      dot_row<T>(dot, X.row(i), [&](int64_t j) { return X.row(j); }, i, m, k, [&](int64_t j, const T& v) { C(i, j) = v; });
  });
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = i + 1; j < m; ++j) C(j, i) = C(i, j);
  return C;
}

}  // namespace muoncheck::oracle
