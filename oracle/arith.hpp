// Where the arithmetic rounds. The oracle and the control share one step engine;
// this policy is all that differs: ExactArith<Real> never rounds (every hook is the
// identity), ControlArith rounds into the scenario's dtypes exactly where a real
// implementation stores or multiplies in them, in the order and manner of one
// RoundingVariant (docs: oracle/README.md).
#pragma once
#include "core/dtype.hpp"
#include "core/scenario.hpp"
#include "oracle/control_dot.hpp"
#include "oracle/gemm.hpp"
#include "oracle/rounding_variant.hpp"

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
  bool fused_axpby() const { return true; }
  T ns_norm(const T& x) const { return x; }
  T backward(const T& x) const { return x; }   // forward/backward arithmetic
  int reduce_first(int64_t, int64_t, int64_t, int) const { return 0; }   // rank order (the sum is exact)
  int reduce_direction() const { return 1; }
};

struct ControlArith {
  using T = double;
  DType param_t = DType::fp32, accum_t = DType::fp32, comm_t = DType::fp32, ns_t = DType::fp32;
  RoundingVariant v;   // which valid rounding sequence this control member follows

  static ControlArith from(const Scenario& s, const RoundingVariant& v = {}) {
    return {s.engine.param_dtype, s.engine.grad_accum_dtype, s.engine.comm_dtype, s.optimizer.ns_dtype, v};
  }
  double param(double x) const { return round_member(param_t, x, v.random_rounding); }
  double accum(double x) const { return round_member(accum_t, x, v.random_rounding); }
  double comm(double x) const { return round_member(comm_t, x, v.random_rounding); }
  double fp32(double x) const { return round_member(DType::fp32, x, v.random_rounding); }
  double ns(double x) const { return round_member(ns_t, x, v.random_rounding); }
  // Tensor ops take a Python/C++ scalar in their fp32 "opmath" type (PyTorch does for
  // fp32, bf16 and fp16 tensors), so e.g. the NS coefficients enter as fp32 values
  // (a constant converts once, to nearest, in every member).
  double scalar(double x) const { return round_to(DType::fp32, x); }
  bool fused_axpby() const { return v.fused_axpby; }
  // fp32 to nearest even, also in random-rounding members: the backward's order is the
  // CPU implementation's, enumerated; random rounding covers NS and the reductions.
  double backward(double x) const { return v.fp32_backward ? static_cast<double>(static_cast<float>(x)) : x; }
  double ns_norm(double x) const { return v.norm_in_ns_dtype ? ns(x) : fp32(x); }
  // The rank that element i of its tensor, at `flat` in the model's `total`-element
  // flat gradient, starts its walk at (rounding_variant.hpp, ReduceStart).
  int reduce_first(int64_t i, int64_t flat, int64_t total, int dp) const {
    if (v.reduce == ReduceOrder::rank_order) return 0;
    const int64_t partition = (total + dp - 1) / dp;
    int64_t position = i;
    if (v.reduce_start == ReduceStart::all_reduce_segment) position = flat / (2 * ((total + 2 * dp - 1) / (2 * dp)));
    if (v.reduce_start == ReduceStart::partition) position = flat / partition;
    return static_cast<int>(((position + v.reduce_offset) % dp + dp) % dp);
  }
  int reduce_direction() const { return v.reduce == ReduceOrder::ring_reversed ? -1 : 1; }
  ControlDot dot() const { return {ns_t, v.dot, v.block, v.random_rounding}; }
  Mat<double> mm(const Mat<double>& A, const Mat<double>& B) const { return matmul(A, B, dot()); }
  // A rounded product is not symmetric: the control forms it in full, as a GPU would.
  Mat<double> mm_sym(const Mat<double>& A, const Mat<double>& B) const { return mm(A, B); }
  // X·Xᵀ is bitwise symmetric even when rounded (same products, same order).
  Mat<double> xxt(const Mat<double>& X) const { return gram_matrix(X, dot()); }
};

}  // namespace muoncheck::oracle
