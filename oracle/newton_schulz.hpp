// Newton–Schulz orthogonalization (docs/semantics.md §7): the standard quintic loop and
// DeepSpeed's Gram variant, which agree in exact arithmetic and differ in
// rounding. Generic over the arithmetic policy: every elementwise result passes
// through ar.ns() and every product through ar.mm/mm_sym/xxt (identity for the oracle).
#pragma once
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/scenario.hpp"
#include "oracle/arith.hpp"

namespace muoncheck::oracle {

// coefficients: one triple for every iteration, or one per iteration (steps of them).
struct NsParams {
  NsMethod method = NsMethod::gram;
  int steps = 5;
  std::vector<NsCoefficients> coefficients{NsCoefficients{}};
  static NsParams from(const OptimizerConfig& o) { return {o.ns_method, o.ns_steps, o.ns_coefficients}; }
  const NsCoefficients& at(int i) const { return coefficients.size() == 1 ? coefficients.front() : coefficients.at(i); }
};

namespace detail {
// alpha·P + beta·Q: one fused elementwise kernel (fp32 arithmetic, one rounding to
// the NS dtype, as the CPU implementation's axpby), or — an equally valid kernel some
// members follow — each term rounded to the NS dtype first, as eager PyTorch does.
// Gram NS in 16 bits amplifies the difference between the two up to ~30× (a 3×1
// bf16 update), which is why one control sample could not bound another order.
template <class Ar, class T = typename Ar::T>
Mat<T> lin(const Ar& ar, double alpha, const Mat<T>& P, double beta, const Mat<T>& Q) {
  Mat<T> R(P.rows, P.cols);
  const T ta(alpha), tb(beta);
  // Elementwise work is ~10% of an NS call: split it too (cost ≈ 4 ops per element).
  parallel_rows(P.rows, [&](int64_t) { return 4.0 * P.cols; }, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo * P.cols; i < hi * P.cols; ++i) {
      const T p = alpha == 1.0 ? P.a[i] : ar.fp32(ta * P.a[i]);
      const T q = beta == 1.0 ? Q.a[i] : ar.fp32(tb * Q.a[i]);
      R.a[i] = ar.fused_axpby() ? ar.ns(ar.fp32(p + q)) : ar.ns(ar.fp32(ar.ns(p) + ar.ns(q)));
    }
  });
  return R;
}

// The standard loop on a wide (rows ≤ cols) matrix: A = XXᵀ; B = bA + cA²; X = aX + BX.
template <class Ar, class T = typename Ar::T>
Mat<T> standard_loop(const Ar& ar, Mat<T> X, const NsParams& p) {
  for (int i = 0; i < p.steps; ++i) {
    const NsCoefficients& k = p.at(i);
    const Mat<T> A = ar.xxt(X);
    const Mat<T> B = lin(ar, k.b, A, k.c, ar.mm_sym(A, A));
    X = lin(ar, k.a, X, 1.0, ar.mm(B, X));
  }
  return X;
}

// The Gram loop on a wide, non-square matrix: iterate on R = XXᵀ and Q (the
// accumulated polynomial), restarting from X = QX at i = 2; output QX.
template <class Ar, class T = typename Ar::T>
Mat<T> gram_loop(const Ar& ar, Mat<T> X, const NsParams& p) {
  Mat<T> R = ar.xxt(X), Q;
  bool have_q = false;
  for (int i = 0; i < p.steps; ++i) {
    const NsCoefficients& k = p.at(i);
    if (i == 2) {
      X = ar.mm(Q, X);
      R = ar.xxt(X);
      have_q = false;
    }
    const Mat<T> Z = lin(ar, k.b, R, k.c, ar.mm_sym(R, R));
    if (!have_q) {
      Q = Z;
      for (int64_t d = 0; d < Q.rows; ++d) Q(d, d) = ar.ns(Q(d, d) + T(k.a));
      have_q = true;
    } else {
      Q = lin(ar, k.a, Q, 1.0, ar.mm_sym(Z, Q));
    }
    if (i < p.steps - 1 && i + 1 != 2) {
      const Mat<T> Tm = lin(ar, k.a, R, 1.0, ar.mm_sym(Z, R));
      R = lin(ar, k.a, Tm, 1.0, ar.mm_sym(Z, Tm));
    }
  }
  return have_q ? ar.mm(Q, X) : X;
}
}  // namespace detail

// NS(U): normalize by ‖U‖_F + 1e-7, make wide, iterate, restore the orientation.
template <class Ar, class T = typename Ar::T>
Mat<T> newton_schulz(const Ar& ar, const Mat<T>& U, const NsParams& given) {
  // The coefficients as the arithmetic sees them (the control: fp32 scalars). a+b+c
  // ≈ 0.70 cancels, so a coefficient rounded to fp32 moves NS(U) by ~1e-6 relative —
  // more than fp32 NS arithmetic itself (found by `muoncheck sweep`, ns_dtype fp32).
  if (given.coefficients.empty() || (given.coefficients.size() > 1 && given.coefficients.size() != size_t(given.steps)))
    throw Error(ErrorKind::Internal, "oracle newton_schulz: " + std::to_string(given.coefficients.size()) +
                                         " coefficient triples for " + std::to_string(given.steps) + " iterations");
  NsParams p = given;
  for (auto& k : p.coefficients) k = {ar.scalar(k.a), ar.scalar(k.b), ar.scalar(k.c)};
  Mat<T> X(U.rows, U.cols);
  for (size_t i = 0; i < X.a.size(); ++i) X.a[i] = ar.ns(U.a[i]);
  // The norm of an NS-dtype tensor is an NS-dtype value (fp32 accumulation inside),
  // or kept in fp32 (members differ in where the norm lives).
  const T denom = ar.ns_norm(frobenius(X)) + T(1e-7);
  for (T& v : X.a) v = ar.ns(v / denom);
  const bool tall = X.rows > X.cols;
  if (tall) X = transpose(X);
  const bool square = X.rows == X.cols;
  X = (p.method == NsMethod::standard || square) ? detail::standard_loop(ar, std::move(X), p)
                                                 : detail::gram_loop(ar, std::move(X), p);
  return tall ? transpose(X) : X;
}

}  // namespace muoncheck::oracle
