// A dense row-major matrix of any number type, and the elementwise helpers the
// optimizer math needs. Vectors (rank-1 params) are 1×n matrices; rank-3/4 params
// are (shape[0], prod(rest)), the same view core's matrix_view() gives.
#pragma once
#include <cstdint>
#include <vector>

#include "oracle/real.hpp"

namespace muoncheck::oracle {

template <class T>
struct Mat {
  int64_t rows = 0, cols = 0;
  std::vector<T> a;  // row-major, rows·cols

  Mat() = default;
  Mat(int64_t r, int64_t c) : rows(r), cols(c), a(static_cast<size_t>(r * c), T(0)) {}
  T& operator()(int64_t i, int64_t j) { return a[static_cast<size_t>(i * cols + j)]; }
  const T& operator()(int64_t i, int64_t j) const { return a[static_cast<size_t>(i * cols + j)]; }
  int64_t size() const { return rows * cols; }
  const T* row(int64_t i) const { return a.data() + i * cols; }
  T* row(int64_t i) { return a.data() + i * cols; }
};

template <class T>
Mat<T> transpose(const Mat<T>& x) {
  Mat<T> t(x.cols, x.rows);
  for (int64_t i = 0; i < x.rows; ++i)
    for (int64_t j = 0; j < x.cols; ++j) t(j, i) = x(i, j);
  return t;
}

template <class T>
Mat<T> identity(int64_t n) {
  Mat<T> m(n, n);
  for (int64_t i = 0; i < n; ++i) m(i, i) = T(1);
  return m;
}

template <class T>
T frobenius_sq(const Mat<T>& x) {
  T s(0);
  for (const T& v : x.a) s += v * v;
  return s;
}

template <class T>
T frobenius(const Mat<T>& x) { return real_sqrt(frobenius_sq(x)); }

// Rows [r0, r0+n) as their own matrix (a head's block of a projection).
template <class T>
Mat<T> row_block(const Mat<T>& x, int64_t r0, int64_t n) {
  Mat<T> b(n, x.cols);
  std::copy(x.row(r0), x.row(r0) + n * x.cols, b.a.begin());
  return b;
}

template <class T>
void set_row_block(Mat<T>& x, int64_t r0, const Mat<T>& b) {
  std::copy(b.a.begin(), b.a.end(), x.row(r0));
}

template <class T>
Mat<T> from_doubles(const std::vector<double>& v, int64_t rows, int64_t cols) {
  Mat<T> m(rows, cols);
  for (size_t i = 0; i < v.size(); ++i) m.a[i] = T(v[i]);
  return m;
}

template <class T>
std::vector<double> to_doubles(const Mat<T>& m) {
  std::vector<double> v(m.a.size());
  for (size_t i = 0; i < v.size(); ++i) v[i] = to_double(m.a[i]);
  return v;
}

}  // namespace muoncheck::oracle
