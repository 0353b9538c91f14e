// The lower-triangle split of a symmetric product as one kernel of our own (sm_90a): each
// 128 × 128 tile on or below the diagonal of every m×m result is one fp32-accumulated product
// over the full K, D = α·A·Bᵀ + β·C rounded once into the 16-bit dtype, and the kernel writes
// it twice — in place and, transposed, into the tile above the diagonal — so D comes out
// exactly symmetric without a mirror pass. On the diagonal tiles the elements above the
// diagonal are the transposes of those below (as mirror_lower makes them). The same rounding
// model as cuBLASLt's tiles split (symmetric_product.hpp); only the order of the fp32 sums differs.
//
// The tiles are spread over a persistent grid of two-block clusters (as many as run at once),
// in pairs: block r of a cluster takes tile 2u + r of pair u (with kCluster = 1 in
// triangle_product.cu, block u takes tile u). A block is three warpgroups: one
// thread of the first copies each 64-column step of both operands' 128-row panels into a
// six-stage ring with the TMA (tma.cuh; a diagonal tile of a matrix times itself loads one
// panel; a pair in one row of tiles multicasts its shared A panel, half from each block), and
// the other two take the block's tiles in turn (ping-pong), each multiplying a whole tile
// (wgmma m64n128k16 twice a k-step, wgmma.cuh) and writing it through shared memory, a quarter
// of 64 × 64 at a time, as 16-byte pieces of rows while the other multiplies.
#pragma once
#include <cuda_runtime_api.h>

#include "impl/math/cuda/symmetric_product.hpp"

namespace muoncheck::impl::cuda {

// Whether triangle_product runs p on the current device: bf16 or fp16; m a multiple of 128 with
// at least two tiles a side; B read transposed (X·Xᵀ) or symmetric (k = m: B's rows are its
// columns); every leading dimension and batch stride a multiple of 8 elements and every
// pointer 16-byte aligned (the TMA's and the 16-byte stores' terms); an sm_90a build on a
// device that runs it. Not a stream operation: call it before a graph capture.
bool triangle_fits(const SymmetricProblem& p);

// D as described above; throws Error(Internal) when triangle_fits(p) is false.
void triangle_product(const SymmetricProblem& p, cudaStream_t s);

}  // namespace muoncheck::impl::cuda
