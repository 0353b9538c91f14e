// The lower-triangle tiles of a symmetric product and their mirror in one kernel; see
// triangle_product.hpp for the contract and the work split.
#include "impl/math/cuda/triangle_product.hpp"

#include <algorithm>
#include <array>
#include <string>

#include <cooperative_groups.h>

#include "impl/math/cuda/cluster_launch.hpp"
#include "impl/math/cuda/cuda_check.hpp"
#include "impl/math/cuda/dtype_device.cuh"
#include "impl/math/cuda/shared_memory.cuh"
#include "impl/math/cuda/tensor_map.hpp"
#include "impl/math/cuda/tma.cuh"
#include "impl/math/cuda/triangle_tile.cuh"
#include "impl/math/cuda/wgmma.cuh"

namespace muoncheck::impl::cuda {
namespace {

namespace cg = cooperative_groups;

using triangle::kTile;
using triangle::kQuarterBytes;
using triangle::kStep;
constexpr int kStages = 6;                      // the operand ring
constexpr int kBlockThreads = 384;              // the copying warpgroup and two multiplying ones, a tile each
// Registers a thread, moved from the copier to the multipliers once the roles are known
// (setmaxnreg; 128·40 + 256·232 of the 64 K): a tile's 128 accumulators and its epilogue.
constexpr int kCopierRegisters = 40;
constexpr int kMultiplierRegisters = 232;
static_assert(128 * kCopierRegisters + 256 * kMultiplierRegisters <= 65536, "one block's registers");
constexpr int kPanelBytes = kTile * kStep * 2;  // one operand's 128 rows × 64 of K
constexpr int kStageBytes = 2 * kPanelBytes;
constexpr int kCluster = 2;                     // blocks per cluster: 2, a pair of tiles sharing A; or 1
static_assert(kCluster == 1 || kCluster == 2, "a cluster is one block or a pair");
constexpr int kTurnBarrier = 3;                 // named barriers 3, 4: warpgroup 0's, 1's turn to multiply (1, 2: their epilogues)
// Each multiplying warpgroup stages a quarter and its transpose at once (two buffers).
constexpr size_t kSharedBytes = triangle::ring_bytes<kStages, kStageBytes>();
static_assert(kSharedBytes <= 227 * 1024, "one block's shared memory on sm_90");

// Tile l of one matrix's lower triangle, row by row: (i, j) with j ≤ i.
__device__ __forceinline__ void lower_tile(int l, int& i, int& j) {
  i = static_cast<int>((sqrtf(8.0f * static_cast<float>(l) + 1.0f) - 1.0f) * 0.5f);
  while (i * (i + 1) / 2 > l) --i;
  while ((i + 1) * (i + 2) / 2 <= l) ++i;
  j = l - i * (i + 1) / 2;
}

// The tiles go to the clusters of two blocks in pairs, 2u and 2u + 1 (pair u to cluster u mod
// clusters; block r of the cluster the tile 2u + r; with kCluster = 1, tile u to block u mod
// blocks). An odd count's last pair is the last tile twice: block 1 computes it without writing
// it, so that both blocks step through the same ring steps. Where the pair's tiles share their A
// panel (the same row of tiles of one matrix: all but the pairs that straddle a row's end), each
// block copies half of it into both blocks' ring slots (TMA multicast), halving its reads from L2;
// a ring slot is refilled only once both blocks' multiplying warps have read it. In a block, the n-th pair's tile goes to multiplying
// warpgroup n mod 2 (ping-pong: the copier fills the ring in pair order, so the two warpgroups'
// products take turns, and each writes its tile while the other multiplies).
template <class T>
__global__ void __launch_bounds__(kBlockThreads, 1)
    triangle_tiles(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap a_half_map,
                   const __grid_constant__ CUtensorMap b_map, const __grid_constant__ CUtensorMap d_map, T* d, const T* c,
                   int m, int k, int batch, float alpha,
                   float beta, bool one_operand) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ __align__(16) unsigned char shared[];
  const triangle::RingLayout layout = triangle::ring_layout<kStages, kStageBytes>(shared);
  const uint32_t ring_s = layout.ring, full = layout.full, empty = layout.empty;
  const int tid = static_cast<int>(threadIdx.x), wg = tid / 128;
  const int rank = static_cast<int>(blockIdx.x) % kCluster, peer = (rank + 1) % kCluster;
  const int cluster_id = static_cast<int>(blockIdx.x) / kCluster, clusters = static_cast<int>(gridDim.x) / kCluster;
  const int side = m / kTile, per_matrix = side * (side + 1) / 2, tiles = per_matrix * batch, pairs = (tiles + kCluster - 1) / kCluster;
  const int steps = (k + kStep - 1) / kStep;
  // Block r's tile of pair u: (i, j) of matrix mat; writes is false for the repeated last tile.
  struct Tile {
    int i, j, mat;
    bool writes;
  };
  auto tile_of = [&](int u, int r) {
    int t = kCluster * u + r;
    Tile x;
    x.writes = t < tiles;
    if (!x.writes) t = kCluster * u;
    lower_tile(t % per_matrix, x.i, x.j);
    x.mat = t / per_matrix;
    return x;
  };
  // B's panel of a diagonal tile is A's when both operands are one matrix (X·Xᵀ, A·A): loaded once.
  auto one_panel = [&](const Tile& x) { return one_operand && x.i == x.j; };
  if (tid == 0) {
    for (int s = 0; s < kStages; ++s) {
      tma::init(full + 8 * s, 1);              // the copier's arrival (with the bytes)
      tma::init(empty + 8 * s, 4 * kCluster);  // one arrival per warp of the multiplying warpgroup that read it, in each block
    }
    tma::fence_init();
  }
  cg::this_cluster().sync();   // both blocks' barriers are initialized before either copies or arrives

  if (wg == 0) {   // the copier: one thread
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kCopierRegisters));
    if (tid == 0) {
      int stage = 0;
      uint32_t phase = 0;
      for (int u = cluster_id; u < pairs; u += clusters) {
        const Tile x = tile_of(u, rank), other = tile_of(u, peer);
        const bool shared_a = kCluster == 2 && x.i == other.i && x.mat == other.mat;
        for (int s = 0; s < steps; ++s) {
          tma::wait(empty + 8 * stage, phase ^ 1);
          const uint32_t dst = ring_s + stage * kStageBytes, bar = full + 8 * stage;
          tma::arrive_expect(bar, one_panel(x) ? kPanelBytes : kStageBytes);
          if (shared_a)   // this block's half of the A panel, into both blocks
            tma::load_3d_multicast(dst + rank * (kPanelBytes / 2), &a_half_map, s * kStep, x.i * kTile + rank * (kTile / 2),
                                   x.mat, bar, (1u << kCluster) - 1);
          else
            tma::load_3d(dst, &a_map, s * kStep, x.i * kTile, x.mat, bar);
          if (!one_panel(x)) tma::load_3d(dst + kPanelBytes, &b_map, s * kStep, x.j * kTile, x.mat, bar);
          if (++stage == kStages) stage = 0, phase ^= 1;
        }
      }
    }
    __syncwarp();
  } else {
    // A multiplying warpgroup w: its tile's rows 64·h… (h = 0, 1) in acc[h]; warp `warp` of it
    // rows 16·warp… of those, its accumulators (g + 8·e, 8jj + 2q) as wgmma.cuh lays them out.
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kMultiplierRegisters));
    const int w = wg - 1, lane = tid % 32, wt = tid % 128;
    const triangle::TileWriter<T> writer{&d_map, d, c, m, alpha, beta, layout.staging + 2 * w * kQuarterBytes, 1 + w};
    const uint32_t peer_empty = cluster_address(empty, peer);
    int consumed = 0;   // the ring steps before this pair's, both warpgroups' (the copier's order)
    int n = 0;
    for (int u = cluster_id; u < pairs; u += clusters, ++n, consumed += steps) {
      if ((n & 1) != w) continue;   // the other warpgroup's pair
      // The turn: a ring slot's barrier tells phases apart only by parity, so this warpgroup waits
      // on its first steps only once every earlier step has landed, which the other warpgroup
      // says once it has waited on its last one (also the order ping-pong wants).
      if (n > 0) tma::named_barrier(kTurnBarrier + w, 256);
      const Tile x = tile_of(u, rank);
      const int i = x.i, j = x.j;
      const int64_t mat = x.mat;
      // Stage `slot` is read: one arrival per warp on its barrier in both blocks (either may
      // refill both blocks' slot with a multicast).
      auto release = [&](int slot) {
        if (lane != 0) return;
        tma::arrive(empty + 8 * slot);
        if (kCluster == 2) tma::arrive_remote(peer_empty + 8 * slot);
      };
      float acc[2][64];
      triangle::multiply_tile<T, kStages, kStageBytes>(acc, layout, consumed, steps, 0, one_panel(x) ? 0 : kPanelBytes,
                                                       release, [&] {   // the other's turn
                                                         if (u + clusters < pairs)
                                                           tma::named_barrier_arrive(kTurnBarrier + (w ^ 1), 256);
                                                       });
      if (x.writes) triangle::write_tile(writer, acc, i, j, mat);
    }
    if (wt == 0) tma::wait_bulk<0>();   // the last stores have read the staging and landed
  }
  // No block leaves while the other may still arrive on its barriers.
  cg::this_cluster().sync();
#else
  __trap();   // built without sm_90a: triangle_fits never launches it (g_triangle_built)
#endif
}

// 1 in the device code of an sm_90a build, 0 in any other.
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
__device__ int g_triangle_built = 1;
#else
__device__ int g_triangle_built = 0;
#endif

// Per device, asked once: whether the kernel runs there, and how many of its clusters run at once.
struct DeviceFacts {
  int ok = -1;   // −1: not asked yet
  int clusters = 0;
};
std::array<DeviceFacts, 64> g_devices;

const DeviceFacts* device_facts() {
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= static_cast<int>(g_devices.size())) return nullptr;
  DeviceFacts& f = g_devices[dev];
  if (f.ok < 0) {
    int built = 0;
    bool ok = tensor_map_encoder() != nullptr &&
              cudaMemcpyFromSymbol(&built, g_triangle_built, sizeof built) == cudaSuccess && built == 1;
    (void)cudaGetLastError();   // a missing symbol leaves no sticky error behind
    if (ok)
      f.clusters = clusters_at_once(&triangle_tiles<__nv_bfloat16>, &triangle_tiles<__half>, kCluster, kBlockThreads,
                                    kSharedBytes);
    f.ok = ok && f.clusters > 0 ? 1 : 0;
  }
  return f.ok == 1 ? &f : nullptr;
}

// The operand's rows × k values of each matrix as boxes of box_rows × 64, 128-byte swizzled.
CUtensorMap panel_map(DType t, const void* p, int64_t rows, int64_t k, int64_t ld, int64_t stride, int batch,
                      int box_rows) {
  return swizzled_matrix_map(t, p, rows, k, ld, stride, batch, box_rows, kStep, "triangle product");
}

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// Whether [p, p + bytes) and [q, q + bytes_q) overlap.
bool overlap(const void* p, int64_t bytes, const void* q, int64_t bytes_q) {
  const auto a = reinterpret_cast<uintptr_t>(p), b = reinterpret_cast<uintptr_t>(q);
  return a < b + static_cast<uintptr_t>(bytes_q) && b < a + static_cast<uintptr_t>(bytes);
}

}  // namespace

bool triangle_fits(const SymmetricProblem& p) {
  if (p.dtype != DType::bf16 && p.dtype != DType::fp16) return false;
  if (p.batch < 1 || p.m % kTile != 0 || p.m < 2 * kTile || p.k < 1 || p.m > (int64_t{1} << 20) || p.k > (int64_t{1} << 30))
    return false;
  if (!p.b_transposed && !(p.b_symmetric && p.k == p.m)) return false;
  const bool strides = p.lda % 8 == 0 && p.ldb % 8 == 0 && p.lda >= p.k && p.ldb >= p.k &&
                       (p.batch == 1 || (p.sa % 8 == 0 && p.sb % 8 == 0));
  const bool has_c = p.beta != 0.0f;
  if (!strides || !aligned16(p.a) || !aligned16(p.b) || !aligned16(p.d) || (has_c && !aligned16(p.c))) return false;
  // D is written while the operands (and other tiles' C) are still read.
  const int64_t eb = 2, d_bytes = p.batch * p.m * p.m * eb;
  const int64_t a_bytes = ((p.batch - 1) * p.sa + p.m * p.lda) * eb, b_bytes = ((p.batch - 1) * p.sb + p.m * p.ldb) * eb;
  if (overlap(p.d, d_bytes, p.a, a_bytes) || overlap(p.d, d_bytes, p.b, b_bytes) || (has_c && overlap(p.d, d_bytes, p.c, d_bytes)))
    return false;
  return device_facts() != nullptr;
}

void triangle_product(const SymmetricProblem& p, cudaStream_t s) {
  if (!triangle_fits(p)) throw Error(ErrorKind::Internal, "triangle_product: the problem does not fit");
  const DeviceFacts* f = device_facts();
  const CUtensorMap a_map = panel_map(p.dtype, p.a, p.m, p.k, p.lda, p.sa, p.batch, kTile);
  const CUtensorMap a_half_map = panel_map(p.dtype, p.a, p.m, p.k, p.lda, p.sa, p.batch, kTile / 2);
  const CUtensorMap b_map = panel_map(p.dtype, p.b, p.m, p.k, p.ldb, p.sb, p.batch, kTile);
  const CUtensorMap d_map = swizzled_matrix_map(p.dtype, p.d, p.m, p.m, p.m, p.m * p.m, p.batch, 64, 64, "triangle product");
  const int64_t side = p.m / kTile, tiles = p.batch * side * (side + 1) / 2, pairs = (tiles + kCluster - 1) / kCluster;
  const int grid = kCluster * static_cast<int>(std::min<int64_t>(pairs, f->clusters));
  const int m = static_cast<int>(p.m), k = static_cast<int>(p.k);
  with_type(p.dtype, [&](auto v) {
    using T = decltype(v);
    if constexpr (sizeof(T) == 2) {
      const ClusterLaunch launch(grid, kCluster, kBlockThreads, kSharedBytes, s);
      check(cudaLaunchKernelEx(&launch.config, &triangle_tiles<T>, a_map, a_half_map, b_map, d_map, static_cast<T*>(p.d),
                               static_cast<const T*>(p.c), m, k, p.batch, p.alpha, p.beta,
                               p.a == p.b && p.lda == p.ldb && p.sa == p.sb),
            "triangle_tiles");
    }
  });
}

}  // namespace muoncheck::impl::cuda
