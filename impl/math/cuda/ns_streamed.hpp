// The standard Newton–Schulz of small matrices (the resident kernel's scope, ns_resident.hpp) in
// clusters of two thread blocks whose matrix streams through shared memory: the kernel that runs
// a resident batch's part-filled last round beside the resident kernel's rounds.
//
// Why: the resident kernel's eight-block clusters fill a GPC's multiprocessors only in whole
// eights (15 clusters on the H200's 132 multiprocessors, 12 left idle in pairs), and a round
// costs about the same whatever it holds, so 64 heads take five rounds of which the last holds 4.
// Two-block clusters fit those pairs. A pair cannot hold a 128 × 4096 matrix (1 MB) in its shared
// memory, so each block streams its half of X, from L2, through a ring of 64-column chunks: TMA
// tensor boxes from and to the matrix (swizzled and zero-filled by the copy), 16 KB bulk copies
// from and to a scratch copy of its own (swizzled). Two passes normalize, the second also
// accumulating the first iteration's XXᵀ from each chunk it rounds; each iteration is a pass for
// X ← aX + BX and, but for the last, a pass for the next iteration's XXᵀ. (X ← aX + BX fused with
// the next XXᵀ needs more registers than a thread has: docs/gpu.md.)
//   normalize   Σx² in double per block (|x| by bit moves, as in the resident kernel; a thread
//               that met an infinity or NaN contributes +∞ or NaN, as summing through the
//               conversion would), the two sums added; X ← round(X / (round(√Σ) + 1e-7)) with
//               the resident kernel's correctly rounded division
//   A = XXᵀ     each block its fp32 partial over its columns (wgmma: the lower 16 × 16 tiles and
//               a few above them), sent whole to the other block (st.async onto its barrier);
//               each adds the two (fp32 addition of two terms is commutative, so both get the same
//               bits), rounds once and keeps the lower tiles, the upper ones their transposes
//   B = cA² + bA  in each block (ns_small.cuh)
//   X ← aX + BX each block its columns, fp32 accumulation, epilogue + a·X, rounded once
// The rounding model is the resident kernel's and the GEMM path's: every product fp32-accumulated
// over its full K and rounded once with its combination; XXᵀ is summed in two column halves.
// Results are the same bits run to run, and the same whether the kernel runs beside the resident
// kernel or alone. sm_90a builds only (wgmma).
#pragma once
#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "impl/math/newton_schulz.hpp"

namespace muoncheck::impl::cuda {

// Whether streamed_standard runs (m, n, cfg) on the current device: resident_fits's scope with
// rows of whole 16-byte vectors (n a multiple of 8), on a device where the kernel launches.
// Not a stream operation: call it before a graph capture.
bool streamed_fits(int64_t m, int64_t n, const NsConfig& cfg);

// Two-block clusters that fit on the multiprocessors a full grid of the resident kernel for n
// columns leaves idle (6 on the H200); 0 where either kernel does not launch.
int streamed_beside_capacity(int64_t n);

// A resident batch's part-filled last round (resident_partial_round) where it can run streamed
// beside the kernel: it holds no more matrices than streamed_beside_capacity and streamed_fits;
// else 0.
int streamed_part(int batch, int64_t m, int64_t n, const NsConfig& cfg);

// How many of a resident batch's matrices (its last ones) the default runs streamed beside the
// kernel: streamed_part where the kernel runs at least kStreamedMinRounds full rounds meanwhile;
// else 0. Measured on the H200 (bench_ns_cuda --resident-sweep; docs/gpu.md): a
// matrix of 128 × 4096 takes the streamed kernel about 0.27 ms, four of the kernel's rounds, so
// 64 heads (four rounds and 4) gain (0.300 ms against 0.338) and 48 (three and 3) lose (0.287
// against 0.270).
constexpr int kStreamedMinRounds = 4;
int streamed_tail(int batch, int64_t m, int64_t n, const NsConfig& cfg);

// The clusters streamed_standard launches for a batch of n columns, beside the resident kernel or
// alone, and the scratch it needs.
int streamed_clusters(int batch, bool beside, int64_t n);
size_t streamed_scratch_bytes(int batch, bool beside, int64_t n);

// x: batch × m × n elements of cfg.dtype, row-major, 16-byte aligned; scratch:
// streamed_scratch_bytes(batch, beside, n) bytes. Replaces each matrix by
// NS(X) (its normalization included). beside: launched as the programmatic dependent of the
// resident kernel enqueued just before it on s, so that its blocks take the multiprocessors that
// kernel's grid leaves once all of that grid has started, and completes only after that kernel
// has. Asynchronous on the stream; capturable.
void streamed_standard(void* x, int batch, int64_t m, int64_t n, const NsConfig& cfg, void* scratch, bool beside,
                       cudaStream_t s);

}  // namespace muoncheck::impl::cuda
