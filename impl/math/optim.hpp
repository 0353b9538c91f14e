// Elementwise optimizer kernels on fp32 state (docs/semantics.md §4.6–4.7): Muon momentum and
// Nesterov input, the decoupled-weight-decay Muon update, AdamW. Each element is
// computed in double and stored once as fp32, so state never drifts by double rounding.
#pragma once
#include <cstdint>

#include "core/scenario.hpp"

namespace muoncheck::impl {

// ema: M ← βM + (1−β)G;  sum: M ← βM + G.
void momentum_update(float* m, const float* g, int64_t n, double beta, MomentumForm form);
// The matrix NS orthogonalizes: Nesterov ema (1−β)G + βM, sum G + βM; plain: M.
void muon_input(float* u, const float* g, const float* m, int64_t n, double beta, MomentumForm form,
                bool nesterov);
// W ← W·(1 − lr·wd) − lr·O.
void muon_apply(float* w, const float* o, int64_t n, double lr, double wd);
// Bias-corrected AdamW with decoupled decay; t is the step count after this step.
void adamw_update(float* w, float* m, float* v, const float* g, int64_t n, const AdamConfig& c,
                  int t, double lr, double wd);

double sum_squares(const float* x, int64_t n);    // double accumulation
bool all_finite(const float* x, int64_t n);
void scale_inplace(float* x, int64_t n, double factor);

}  // namespace muoncheck::impl
