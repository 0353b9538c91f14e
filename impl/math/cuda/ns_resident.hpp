// The standard Newton–Schulz of small matrices in one kernel whose matrix stays on the chip
// from the normalization to the last iteration (the per-head split: 64 heads of 128×4096).
//
// Each matrix (m ≤ 128 rows, m ≤ n ≤ 4096 columns, bf16 or fp16) belongs to one cluster of
// eight thread blocks; block r holds columns [r·W, r·W + W) of every row in shared memory
// (W = ⌈n/8⌉ rounded up to 128; rows past m and columns past n are zeros, which change no
// sum). One read of X, one write of NS(X): the iterations move no matrix through memory.
//   normalize   Σx² in double per block, the eight partials summed in rank order in every
//               block; X ← round(X / (round(√Σ) + 1e-7)) as normalize() does
//   A = XXᵀ     each block its partial X_r·X_rᵀ (fp32 accumulation over its columns); block r
//               sums rows [16r, 16r + 16) of the eight partials in rank order (fp32), rounds
//               them once and writes them into every block (distributed shared memory)
//   B = cA² + bA  block r computes its 16 rows (fp32 accumulation over all 128, epilogue
//               c·AA + b·A rounded once) and writes them into every block
//   X ← aX + BX each block its columns in place (fp32 accumulation, epilogue + a·X, rounded once)
// The rounding model is the cuBLAS path's (ns_cuda.hpp): every product fp32-accumulated over
// its full K and rounded once into the NS dtype with its combination, A and B rounded as the
// GEMMs round them; only the order of the fp32 sums differs (XXᵀ is summed in eight column
// slices). Results are the same bits run to run. The products are warp-level bf16/fp16 MMAs
// (mma.sync m16n8k16, fp32 accumulators) on ldmatrix fragments.
#pragma once
#include <cstdint>

#include <cuda_runtime_api.h>

#include "impl/math/newton_schulz.hpp"

namespace muoncheck::impl::cuda {

constexpr int kResidentMaxSteps = 16;   // iterations one launch carries coefficients for

// Whether resident_standard runs this problem on the current device: the standard method (or
// gram of a square matrix, which is the same iteration), bf16 or fp16, m ≤ 128, m ≤ n ≤ 4096,
// at most kResidentMaxSteps iterations, and a device that launches eight-block clusters with
// the shared memory they need (sm_90 and later). Not a stream operation: call it before a
// graph capture.
bool resident_fits(int batch, int64_t m, int64_t n, const NsConfig& cfg);

// How many eight-block clusters of the kernel for n columns run at once on the current device
// (0 where it does not run): a batch of more matrices than that runs in waves.
int resident_active_clusters(int64_t n);

// x: batch × m × n elements of cfg.dtype, row-major. Replaces each matrix by NS(X) (its
// normalization included). Asynchronous on the stream; capturable.
void resident_standard(void* x, int batch, int64_t m, int64_t n, const NsConfig& cfg, cudaStream_t s);

}  // namespace muoncheck::impl::cuda
