// The model every component trains (docs/semantics.md §2): each param is its own linear layer with
// a squared loss — matrix W (m×n): 1/(2m)‖Wx − y‖², vector w: 1/(2n)‖w⊙x − y‖² — on
// inputs/targets from the data generator. Forward and backward run on the param_dtype
// weights with fp32 accumulation; the caller scales and rounds the gradient.
#pragma once
#include <cstdint>
#include <vector>

#include "core/scenario.hpp"

namespace muoncheck::impl {

struct SampleSet {
  uint64_t seed = 0;
  int step = 0;
  std::vector<int64_t> samples;   // global sample indices j
};

// Adds Σ_j ∂loss_j/∂W (unscaled) into grad_acc (numel, fp32) and returns Σ_j loss_j.
// `w` holds the param's weights (layer shape, row-major).
double linear_loss_grad(int param, const std::vector<int64_t>& layer_shape, const float* w,
                        const SampleSet& batch, float* grad_acc);

}  // namespace muoncheck::impl
