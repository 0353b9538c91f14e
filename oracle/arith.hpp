// Where the arithmetic rounds. The oracle and the control share one step engine;
// this policy is all that differs: ExactArith<Real> never rounds (every hook is the
// identity), ControlArith rounds to nearest-even into the scenario's dtypes exactly
// where a real implementation stores or multiplies in them (docs: oracle/README.md).
#pragma once
#include "core/dtype.hpp"
#include "core/scenario.hpp"
#include "oracle/gemm.hpp"

namespace muoncheck::oracle {

template <class Real>
struct ExactArith {
  using T = Real;
  T param(const T& x) const { return x; }  // model copy in forward/backward; micro-step grads
  T accum(const T& x) const { return x; }  // gradient accumulation buffer
  T comm(const T& x) const { return x; }   // cross-rank reduction operands and partial sums
  T fp32(const T& x) const { return x; }   // master weights, momentum, Adam moments, unscaled G
  T ns(const T& x) const { return x; }     // Newton–Schulz operands and results
  double scalar(double x) const { return x; }  // a constant used as a tensor op's scalar operand
  Mat<T> mm(const Mat<T>& A, const Mat<T>& B) const { return matmul(A, B); }
  // A·B known to be symmetric in exact arithmetic (polynomials in one Gram matrix).
  Mat<T> mm_sym(const Mat<T>& A, const Mat<T>& B) const { return matmul_symmetric(A, B); }
  Mat<T> xxt(const Mat<T>& X) const { return gram_matrix(X); }
};

// The control's product kernel: operands are already ns-dtype values, so each
// product is exact in double; the running sum is rounded to fp32 after every add
// (an fp32-accumulating tensor core, FMA-like), the result rounded to the ns dtype.
struct ControlDot {
  DType out = DType::fp32;
  double operator()(const double* a, const double* b, int64_t k) const {
    float acc = 0.0f;
    for (int64_t i = 0; i < k; ++i) acc = static_cast<float>(static_cast<double>(acc) + a[i] * b[i]);
    return round_to(out, static_cast<double>(acc));
  }
};

struct ControlArith {
  using T = double;
  DType param_t = DType::fp32, accum_t = DType::fp32, comm_t = DType::fp32, ns_t = DType::fp32;

  static ControlArith from(const Scenario& s) {
    return {s.engine.param_dtype, s.engine.grad_accum_dtype, s.engine.comm_dtype, s.optimizer.ns_dtype};
  }
  double param(double x) const { return round_to(param_t, x); }
  double accum(double x) const { return round_to(accum_t, x); }
  double comm(double x) const { return round_to(comm_t, x); }
  double fp32(double x) const { return round_to(DType::fp32, x); }
  double ns(double x) const { return round_to(ns_t, x); }
  // Tensor ops take a Python/C++ scalar in their fp32 "opmath" type (PyTorch does for
  // fp32, bf16 and fp16 tensors), so e.g. the NS coefficients enter as fp32 values.
  double scalar(double x) const { return round_to(DType::fp32, x); }
  Mat<double> mm(const Mat<double>& A, const Mat<double>& B) const { return matmul(A, B, ControlDot{ns_t}); }
  // A rounded product is not symmetric: the control forms it in full, as a GPU would.
  Mat<double> mm_sym(const Mat<double>& A, const Mat<double>& B) const { return mm(A, B); }
  // X·Xᵀ is bitwise symmetric even when rounded (same products, same order).
  Mat<double> xxt(const Mat<double>& X) const { return gram_matrix(X, ControlDot{ns_t}); }
};

}  // namespace muoncheck::oracle
