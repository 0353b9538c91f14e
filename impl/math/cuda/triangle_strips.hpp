// The lower-triangle tiles of a one-operand symmetric product (X·Xᵀ, A·A with A symmetric) in
// strips: the layout of cuBLAS's own dense GEMM on sm_90 (a block 256 × 128, four stages, clusters
// of two sharing the 256-row panel pair), put on the triangle. Each 128 × 128 tile is one
// fp32-accumulated product over the full K, D = α·A·Aᵀ + β·C rounded once and written with its
// transpose, exactly as triangle_product.hpp's kernel writes it; only the order of the fp32 sums
// may differ.
//
// A block's job is a strip: two tiles that need at most three panels of 128 rows, both multiplied
// at once from one ring stage, one by each multiplying warpgroup (so a tile's epilogue is no
// longer hidden behind the other's products, as in the ping-pong kernel; the copier refills the
// ring meanwhile). The jobs of a matrix, for s = m/128 tiles a side (s even):
//   - each 2 × 2 block of tiles below the diagonal, rows {a, b} × columns {c, d}, is two strips,
//     {a, b} × c for one block of a cluster and {a, b} × d for the other; the pair shares the
//     panels a and b, each block copies one of them into both (TMA multicast): 16 KB a tile a
//     k-step read from L2, against the ping-pong kernel's 24;
//   - each 2 × 2 block on the diagonal, p = 0…s/2 − 1, gives the strip (2p + 1, 2p), (2p + 1,
//     2p + 1) (panels 2p + 1 and 2p), and its tile (2p, 2p) pairs with the next block's as a strip
//     of two diagonal tiles (a panel each);
// cluster u takes the job pairs u, u + clusters, … (both blocks step through the ring together).
// At 4096² (s = 32) that is 120 + 12 job pairs: two rounds of 66 clusters, the four tile-rounds
// of the ping-pong kernel.
#pragma once
#include <cuda_runtime_api.h>

#include "impl/math/cuda/symmetric_product.hpp"

namespace muoncheck::impl::cuda {

// Whether triangle_strips runs p on the current device: what triangle_fits asks, B the same
// matrix as A (one operand: X·Xᵀ, or A·A with A symmetric), m a multiple of 256, and a job table
// that fits the launch's parameters. Not a stream operation: call it before a graph capture.
bool strips_fit(const SymmetricProblem& p);

// strips_fit, and the strips take no more rounds of the chip than the ping-pong kernel's tiles (a
// round of strips is two tile-times): at 4096² on 132 multiprocessors, four each.
bool strips_balanced(const SymmetricProblem& p);

// How the cluster's blocks are timed: together (every product), or, for the synchronization
// tests, with the second block's multiplying warpgroups idling about 20 µs before each job, so that
// the first block runs ahead as far as the ring's barriers let it. That build of the kernel is a
// separate instantiation; the other's code does not change.
enum class StripsTiming { together, second_block_lags };

// D as described above; throws Error(Internal) when strips_fit(p) is false.
void triangle_strips(const SymmetricProblem& p, cudaStream_t s, StripsTiming timing = StripsTiming::together);

}  // namespace muoncheck::impl::cuda
