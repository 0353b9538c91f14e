// The standard Newton–Schulz of small matrices in one kernel whose matrix stays on the chip
// from the normalization to the last iteration (the per-head split: heads of 128×4096).
//
// Each matrix (m ≤ 128 rows, m ≤ n ≤ 4096 columns, bf16 or fp16) belongs to one cluster of
// eight thread blocks; block r holds columns [r·W, r·W + W) of every row in shared memory
// (W = ⌈n/8⌉ rounded up to 128; rows past m and columns past n are zeros, which change no
// sum). One read of X, one write of NS(X): the iterations move no matrix through memory. The
// grid holds as many clusters as run at once (or one per matrix); each works through its
// matrices one after the other (rounds).
//   normalize   Σx² in double per block (each |x| made a double exactly by bit moves, an
//               infinity or NaN through the conversion), the eight sums added in rank order in
//               every block; X ← round(X / (round(√Σ) + 1e-7)), the division correctly rounded
//               as in normalize() (Markstein's FMAs where they are exact, else IEEE division)
//   A = XXᵀ     each block the lower 16×16 tiles of its partial X_r·X_rᵀ (fp32 accumulation
//               over its columns), each 8-row half-tile sent to the block that owns it (nine
//               per block, distributed shared memory); the owner adds the eight partials in
//               rank order (fp32), rounds once and writes the half-tile into every block. Both
//               exchanges are stores that count their bytes on the receiver's barrier
//               (st.async, mbarrier): a block waits for what it expects, with no cluster
//               barrier inside an iteration. While a matrix iterates, the cluster's next one
//               is prefetched into L2.
//   B = cA² + bA  every block computes B itself (fp32 accumulation over all 128, epilogue
//               c·AA + b·A rounded once; the upper tiles off the diagonal copied from the lower)
//   X ← aX + BX each block its columns in place (fp32 accumulation, epilogue + a·X, rounded once)
// A and B are defined by their lower triangle, the upper one read as its transpose, as the
// GEMMs' lower-triangle split defines them (symmetric_product.hpp). The rounding model is the
// GEMM path's (ns_cuda.hpp): every product fp32-accumulated over its full K and rounded once into
// the NS dtype with its combination; only the order of the fp32 sums differs (XXᵀ is summed in
// eight column slices). Results are the same bits run to run. The products are Hopper
// warpgroup MMAs (wgmma, fp32 accumulators; wgmma.cuh), so the kernel exists in sm_90a builds.
#pragma once
#include <cstdint>
#include <string>

#include <cuda_runtime_api.h>

#include "impl/math/newton_schulz.hpp"

namespace muoncheck::impl::cuda {

constexpr int kResidentMaxSteps = 16;   // iterations one launch carries coefficients for

// Whether resident_standard runs this problem on the current device: the standard method (or
// gram of a square matrix, which is the same iteration), bf16 or fp16, m ≤ 128, m ≤ n ≤ 4096,
// at most kResidentMaxSteps iterations, and a device that launches eight-block clusters with
// the shared memory they need (an sm_90a build on a device that runs its code: H100/H200).
// Not a stream operation: call it before a graph capture.
bool resident_fits(int batch, int64_t m, int64_t n, const NsConfig& cfg);
// What resident_fits takes, in words (for a message that refuses a call).
std::string resident_scope();

// How many eight-block clusters of the kernel for n columns run at once on the current device
// (0 where it does not run): a batch of more matrices than that runs in rounds.
int resident_active_clusters(int64_t n);

// Where the resident kernel beats the GEMMs, as measured on the H200 (bench_ns_cuda
// --resident-sweep; docs/gpu.md): at least 2 matrices
// of at least 64 × 512 elements that run in one round (batch ≤ resident_active_clusters: every
// cluster holds one), or, for matrices of 128 × 4096 elements and more, in several rounds, even
// when the last one holds a single matrix (a round costs about the same whatever it holds: 16
// heads of 128 × 4096, a round of 15 and one of 1, 0.135 ms against the GEMMs' 0.149; 31 heads
// 0.200 against 0.235). One matrix, tiny ones, or several rounds of smaller ones are faster or as
// fast on the GEMMs.
bool resident_pays(int batch, int64_t m, int64_t n);

// The part-filled last round of a batch in several rounds: batch mod resident_active_clusters(n)
// when the batch is larger than one round, else 0. Those matrices can run beside the kernel's
// rounds on the multiprocessors its clusters leave idle (12 of 132 on the H200: eight-block
// clusters fit a GPC's multiprocessors only in whole eights): on the streamed kernel where
// streamed_tail says so (ns_streamed.hpp). On the GEMMs on a branch stream it measured even with
// the kernel's own last round or slower (dev/cuda/gemm_tail.cu).
int resident_partial_round(int batch, int64_t n);

// x: batch × m × n elements of cfg.dtype, row-major. Replaces each matrix by NS(X) (its
// normalization included). Asynchronous on the stream; capturable.
void resident_standard(void* x, int batch, int64_t m, int64_t n, const NsConfig& cfg, cudaStream_t s);

}  // namespace muoncheck::impl::cuda
