// The lower-triangle tiles of a one-operand symmetric product in strips; see triangle_strips.hpp
// for the contract and the jobs.
#include "impl/math/cuda/triangle_strips.hpp"

#include <algorithm>
#include <array>
#include <vector>

#include <cooperative_groups.h>

#include "impl/math/cuda/cluster_launch.hpp"
#include "impl/math/cuda/cuda_check.hpp"
#include "impl/math/cuda/dtype_device.cuh"
#include "impl/math/cuda/shared_memory.cuh"
#include "impl/math/cuda/tensor_map.hpp"
#include "impl/math/cuda/tma.cuh"
#include "impl/math/cuda/triangle_product.hpp"
#include "impl/math/cuda/triangle_tile.cuh"
#include "impl/math/cuda/wgmma.cuh"

namespace muoncheck::impl::cuda {
namespace {

namespace cg = cooperative_groups;
using triangle::kQuarterBytes;
using triangle::kStep;
using triangle::kTile;
constexpr int kSlots = 3;                       // panels a stage holds
constexpr int kStages = 4;                      // the operand ring: four stages of three panels
constexpr int kBlockThreads = 384;              // the copying warpgroup and two multiplying ones, a tile each
constexpr int kCopierRegisters = 40;            // as the ping-pong kernel moves them (setmaxnreg)
constexpr int kMultiplierRegisters = 232;
constexpr int kPanelBytes = kTile * kStep * 2;  // one panel's 128 rows × 64 of K
constexpr int kStageBytes = kSlots * kPanelBytes;
constexpr int kCluster = 2;
constexpr size_t kSharedBytes = triangle::ring_bytes<kStages, kStageBytes>();
static_assert(kSharedBytes <= 227 * 1024, "one block's shared memory on sm_90");
constexpr uint16_t kNone = 0xFFFF;              // an empty slot
constexpr int kMaxJobs = 1800;                  // in the launch's parameters (32 764 bytes at most)
constexpr long long kLagCycles = 40000;         // StripsTiming::second_block_lags: about 20 µs a job

// One block's strip: the panels (rows of tiles of matrix mat) its ring slots hold; warpgroup w
// multiplies the panel in slot a[w] by the one in slot b[w], its tile (panel[a[w]], panel[b[w]]).
// kShared: slots 0 and 1 hold the panels the cluster's two blocks share, slot r copied by block r
// into both. kWrites0, kWrites1: warpgroup 0, 1 writes its tile (not a repeated one).
struct StripJob {
  uint16_t panel[kSlots];
  uint16_t mat;
  uint8_t a[2], b[2];
  uint8_t flags;
  uint8_t unused[3];
};
static_assert(sizeof(StripJob) == 16, "a job's size in the launch's parameters");
constexpr uint8_t kShared = 1, kWrites0 = 2, kWrites1 = 4;

// The jobs in pairs: pair u is job[2u] for block 0 of a cluster and job[2u + 1] for block 1.
struct StripJobs {
  int pairs;
  StripJob job[kMaxJobs];
};
static_assert(sizeof(StripJobs) + 2 * sizeof(CUtensorMap) + 64 <= 32764, "the launch's parameters");

template <class T, bool kSecondBlockLags>
__global__ void __launch_bounds__(kBlockThreads, 1)
    triangle_strip_tiles(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap d_map, T* d,
                         const T* c, int m, int k, float alpha, float beta, const __grid_constant__ StripJobs jobs) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ __align__(16) unsigned char shared[];
  const triangle::RingLayout layout = triangle::ring_layout<kStages, kStageBytes>(shared);
  const uint32_t ring_s = layout.ring, full = layout.full, empty = layout.empty;
  const int tid = static_cast<int>(threadIdx.x), wg = tid / 128;
  const int rank = static_cast<int>(blockIdx.x) % kCluster, peer = rank ^ 1;
  const int cluster_id = static_cast<int>(blockIdx.x) / kCluster, clusters = static_cast<int>(gridDim.x) / kCluster;
  const int steps = (k + kStep - 1) / kStep;
  if (tid == 0) {
    for (int s = 0; s < kStages; ++s) {
      tma::init(full + 8 * s, 1);                  // the copier's arrival (with the bytes)
      tma::init(empty + 8 * s, 8 * kCluster);      // one arrival per multiplying warp of both blocks
    }
    tma::fence_init();
  }
  cg::this_cluster().sync();   // both blocks' barriers are initialized before either copies or arrives

  if (wg == 0) {   // the copier: one thread
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kCopierRegisters));
    if (tid == 0) {
      int stage = 0;
      uint32_t phase = 0;
      for (int u = cluster_id; u < jobs.pairs; u += clusters) {
        const StripJob& x = jobs.job[2 * u + rank];
        const bool shared_pair = (x.flags & kShared) != 0;
        uint32_t bytes = 0;
#pragma unroll
        for (int slot = 0; slot < kSlots; ++slot) bytes += x.panel[slot] == kNone ? 0 : kPanelBytes;
        for (int s = 0; s < steps; ++s) {
          // Both blocks' slot is free: either block may write it (a multicast).
          tma::wait(empty + 8 * stage, phase ^ 1);
          const uint32_t dst = ring_s + stage * kStageBytes, bar = full + 8 * stage;
          tma::arrive_expect(bar, bytes);
#pragma unroll
          for (int slot = 0; slot < kSlots; ++slot) {
            if (x.panel[slot] == kNone) continue;
            const int row = x.panel[slot] * kTile;
            if (shared_pair && slot < 2) {
              if (slot == rank)
                tma::load_3d_multicast(dst + slot * kPanelBytes, &a_map, s * kStep, row, x.mat, bar, (1u << kCluster) - 1);
            } else {
              tma::load_3d(dst + slot * kPanelBytes, &a_map, s * kStep, row, x.mat, bar);
            }
          }
          if (++stage == kStages) stage = 0, phase ^= 1;
        }
      }
    }
    __syncwarp();
  } else {
    // Multiplying warpgroup w: its tile's rows 64·h… (h = 0, 1) in acc[h]. Both warpgroups read
    // every stage, so each waits on every phase of every slot in turn (no turn to take).
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kMultiplierRegisters));
    const int w = wg - 1, lane = tid % 32, wt = tid % 128;
    const triangle::TileWriter<T> writer{&d_map, d, c, m, alpha, beta, layout.staging + 2 * w * kQuarterBytes, 1 + w};
    const uint32_t peer_empty = cluster_address(empty, peer);
    // Stage `slot` is read: one arrival per warp on its barrier in both blocks.
    auto release = [&](int slot) {
      if (lane != 0) return;
      tma::arrive(empty + 8 * slot);
      tma::arrive_remote(peer_empty + 8 * slot);
    };
    int at = 0;   // ring steps so far
    for (int u = cluster_id; u < jobs.pairs; u += clusters) {
      if constexpr (kSecondBlockLags) {
        if (rank == 1)
          for (const long long t0 = clock64(); clock64() - t0 < kLagCycles;) {
          }
      }
      // This warpgroup's slots and tile, read with constant indices (the job stays in parameter space).
      int a_slot, b_slot, i, j, mat;
      bool writes;
      {
        const StripJob& x = jobs.job[2 * u + rank];
        a_slot = w == 0 ? x.a[0] : x.a[1], b_slot = w == 0 ? x.b[0] : x.b[1];
        auto panel = [&](int slot) -> int { return slot == 0 ? x.panel[0] : slot == 1 ? x.panel[1] : x.panel[2]; };
        i = panel(a_slot), j = panel(b_slot), mat = x.mat;
        writes = (x.flags & (w == 0 ? kWrites0 : kWrites1)) != 0;
      }
      float acc[2][64];
      triangle::multiply_tile<T, kStages, kStageBytes>(acc, layout, at, steps, a_slot * kPanelBytes, b_slot * kPanelBytes,
                                                       release, [] {});
      at += steps;
      if (writes) triangle::write_tile(writer, acc, i, j, mat);
    }
    if (wt == 0) tma::wait_bulk<0>();   // the last stores have read the staging and landed
  }
  // No block leaves while the other may still arrive on its barriers or copy into it.
  cg::this_cluster().sync();
#else
  __trap();   // built without sm_90a: strips_fit never launches it (triangle_fits asks)
#endif
}

// Per device, asked once: how many clusters of the kernel run at once (0: it does not run there).
std::array<int, 64> g_clusters;
std::array<bool, 64> g_asked;

int device_clusters() {
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= static_cast<int>(g_clusters.size())) return 0;
  if (!g_asked[dev]) {
    g_asked[dev] = true;
    g_clusters[dev] = clusters_at_once(&triangle_strip_tiles<__nv_bfloat16, false>, &triangle_strip_tiles<__half, false>,
                                       kCluster, kBlockThreads, kSharedBytes);
  }
  return g_clusters[dev];
}

StripJob job(uint16_t mat, std::array<uint16_t, kSlots> panel, std::array<uint8_t, 2> a, std::array<uint8_t, 2> b,
             uint8_t flags) {
  StripJob x{};
  for (int s = 0; s < kSlots; ++s) x.panel[s] = panel[s];
  x.mat = mat;
  x.a[0] = a[0], x.a[1] = a[1], x.b[0] = b[0], x.b[1] = b[1];
  x.flags = flags;
  return x;
}

// The jobs of `batch` matrices of side s tiles (s even), in pairs (triangle_strips.hpp): the
// shared pairs of the 2 × 2 blocks below the diagonal, then the diagonal's strips two by two (an
// odd last one beside a copy of itself that writes nothing).
std::vector<StripJob> strip_jobs(int s, int batch) {
  std::vector<StripJob> pairs, solo;
  const uint8_t both = kWrites0 | kWrites1;
  for (int mat = 0; mat < batch; ++mat) {
    const auto mt = static_cast<uint16_t>(mat);
    for (int P = 1; P < s / 2; ++P)
      for (int Q = 0; Q < P; ++Q)
        for (int col = 2 * Q; col < 2 * Q + 2; ++col)   // block 0 column 2Q, block 1 column 2Q + 1
          pairs.push_back(job(mt, {static_cast<uint16_t>(2 * P), static_cast<uint16_t>(2 * P + 1), static_cast<uint16_t>(col)},
                              {0, 1}, {2, 2}, kShared | both));
    for (int p = 0; p < s / 2; ++p)   // (2p + 1, 2p) and (2p + 1, 2p + 1)
      solo.push_back(job(mt, {static_cast<uint16_t>(2 * p + 1), static_cast<uint16_t>(2 * p), kNone}, {0, 0}, {1, 0}, both));
    for (int p = 0; p < s / 2; p += 2) {   // (2p, 2p) and (2p + 2, 2p + 2): a panel each
      if (p + 1 < s / 2)
        solo.push_back(job(mt, {static_cast<uint16_t>(2 * p), static_cast<uint16_t>(2 * p + 2), kNone}, {0, 1}, {0, 1}, both));
      else
        solo.push_back(job(mt, {static_cast<uint16_t>(2 * p), kNone, kNone}, {0, 0}, {0, 0}, kWrites0));
    }
  }
  if (solo.size() % 2 != 0) {
    StripJob copy = solo.back();
    copy.flags = 0;
    solo.push_back(copy);
  }
  pairs.insert(pairs.end(), solo.begin(), solo.end());
  return pairs;
}

bool one_operand(const SymmetricProblem& p) { return p.a == p.b && p.lda == p.ldb && p.sa == p.sb; }

// strips_fit, with p's job table already built.
bool fits(const SymmetricProblem& p, const std::vector<StripJob>& jobs) {
  return triangle_fits(p) && one_operand(p) && p.m % (2 * kTile) == 0 && p.batch <= 0xFFFF && device_clusters() > 0 &&
         static_cast<int64_t>(jobs.size()) <= kMaxJobs;
}

std::vector<StripJob> jobs_of(const SymmetricProblem& p) {
  return p.m % (2 * kTile) == 0 && p.batch <= 0xFFFF ? strip_jobs(static_cast<int>(p.m / kTile), p.batch)
                                                      : std::vector<StripJob>{};
}

}  // namespace

bool strips_fit(const SymmetricProblem& p) { return fits(p, jobs_of(p)); }

bool strips_balanced(const SymmetricProblem& p) {
  const std::vector<StripJob> jobs = jobs_of(p);
  if (!fits(p, jobs)) return false;
  const int64_t clusters = device_clusters(), s = p.m / kTile, tiles = p.batch * s * (s + 1) / 2;
  const int64_t pairs = static_cast<int64_t>(jobs.size()) / 2;
  // A round of strips takes two tile-times (both warpgroups at once); the ping-pong kernel's block
  // takes its tiles one after the other.
  const int64_t strip_rounds = 2 * ((pairs + clusters - 1) / clusters);
  const int64_t tile_rounds = ((tiles + 1) / 2 + clusters - 1) / clusters;
  return strip_rounds <= tile_rounds;
}

void triangle_strips(const SymmetricProblem& p, cudaStream_t s, StripsTiming timing) {
  const std::vector<StripJob> list = jobs_of(p);
  if (!fits(p, list)) throw Error(ErrorKind::Internal, "triangle_strips: the problem does not fit");
  StripJobs jobs{};
  jobs.pairs = static_cast<int>(list.size() / 2);
  std::copy(list.begin(), list.end(), jobs.job);
  const CUtensorMap a_map =
      swizzled_matrix_map(p.dtype, p.a, p.m, p.k, p.lda, p.sa, p.batch, kTile, kStep, "triangle strips");
  const CUtensorMap d_map = swizzled_matrix_map(p.dtype, p.d, p.m, p.m, p.m, p.m * p.m, p.batch, 64, 64, "triangle strips");
  const int grid = kCluster * std::min(jobs.pairs, device_clusters());
  const int m = static_cast<int>(p.m), k = static_cast<int>(p.k);
  with_type(p.dtype, [&](auto v) {
    using T = decltype(v);
    if constexpr (sizeof(T) == 2) {
      auto* kernel = &triangle_strip_tiles<T, false>;
      if (timing == StripsTiming::second_block_lags) {
        kernel = &triangle_strip_tiles<T, true>;
        check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(kSharedBytes)),
              "triangle_strip_tiles (lagging): shared memory");
      }
      const ClusterLaunch launch(grid, kCluster, kBlockThreads, kSharedBytes, s);
      check(cudaLaunchKernelEx(&launch.config, kernel, a_map, d_map, static_cast<T*>(p.d), static_cast<const T*>(p.c), m,
                               k, p.alpha, p.beta, jobs),
            "triangle_strip_tiles");
    }
  });
}

}  // namespace muoncheck::impl::cuda
