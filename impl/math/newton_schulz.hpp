// Newton–Schulz orthogonalization (docs/semantics.md §7): the standard quintic loop and the Gram
// variant (DeepSpeed's zeropower_via_gram_newtonschulz), in the scenario's ns_dtype:
// every matrix product and elementwise combination is rounded to ns_dtype, products
// accumulate in fp32. Per-head: the rows split into H blocks, orthogonalized as one
// batched call.
#pragma once
#include <cstdint>
#include <vector>

#include "core/scenario.hpp"
#include "impl/math/matmul.hpp"

namespace muoncheck::impl {

// One iteration's coefficients as the kernels take them (fp32 scalars).
struct NsTriple {
  float a = 3.4445f, b = -4.7750f, c = 2.0315f;
};

// coefficients: one triple for every iteration, or one per iteration (steps of them).
struct NsConfig {
  NsMethod method = NsMethod::gram;
  int steps = 5;
  std::vector<NsTriple> coefficients{NsTriple{}};
  DType dtype = DType::fp16;
  static NsConfig from(const OptimizerConfig& o);
  const NsTriple& at(int iteration) const;   // throws Internal outside the list
};

// NS(U) for an m×n matrix; the result holds values of ns_dtype.
Mat newton_schulz(const Mat& u, const NsConfig& cfg);

// Per-head: rows split into `heads` blocks of rows/heads, each orthogonalized and
// multiplied by its own scale factor; heads ≤ 1 is the whole matrix. Returns O = NS·scale.
Mat orthogonalize_scaled(const Mat& u, int heads, const NsConfig& cfg, ScaleRule rule);

double scale_factor(ScaleRule rule, int64_t rows, int64_t cols);

}  // namespace muoncheck::impl
