// norm_probe.cu: micro-benchmark of the resident NS kernel's (impl/math/cuda/ns_resident.cu) per-matrix
// phases around the NS iterations: load + Σx², the cluster's sum, X ← bf16(X / norm), the final store.
// Clusters of 8 blocks × 256 threads, the real kernel's dynamic shared memory (shared_bytes(512)), one
// 128 × 4096 bf16 matrix per cluster at a time (block r: columns [512r, 512r + 512) in Swizzled128<128>),
// 64 matrices in rounds (index = cluster, += clusters). Self-checking: outputs bitwise against V0, V0
// against a CPU model. No NS iterations.
//
// Build: nvcc -O3 -std=c++17 -arch=sm_90a -lineinfo .device/norm_probe.cu -o .device/norm_probe
// Run:   .device/norm_probe [clusters]   (default: cudaOccupancyMaxActiveClusters)
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cooperative_groups.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <utility>
#include <vector>

namespace cg = cooperative_groups;

#define CK(x)                                                                                                   \
  do {                                                                                                          \
    if (cudaError_t e_ = (x); e_ != cudaSuccess)                                                                \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)), exit(1);             \
  } while (0)

constexpr int kRows = 128, kCols = 4096, kCluster = 8, kThreads = 256, kWidth = 512, kBatch = 64;
constexpr int kAlign = 1024, kStages = 4;
constexpr int kPerRow = kWidth / 8, kPerThread = kRows * kPerRow / kThreads, kPerStage = kPerThread / kStages;
constexpr int kBlockBytes = kRows * 128;                  // one 64-column block of Swizzled128<128>
constexpr int kReceiveBytes = 9 * kCluster * 8 * 16 * 4;  // ns_resident.cu: kUnitsPerBlock · kCluster · kUnitBytes
constexpr size_t kShared = kAlign + size_t(kRows) * (kWidth + kRows) * 2 + kReceiveBytes + 16 * sizeof(double);
static_assert(kPerThread == 32 && kPerStage == 8 && kBlockBytes == 16384, "the real kernel's split of a 512-column slice");

// ---- variants ---------------------------------------------------------------------------------------
enum Load { kCpAsync, kTma128, kTma32 };  // cp.async 16 B in 4 groups; TMA 64×128 boxes (8 barriers); 64×32 (4)
enum Sum { kF2F, kNone, kF32, kBits, kBitsLea };
// The cluster's sum: pull = the real kernel's (own slot, cluster.sync, warp 0 reads the 8 remote slots);
// push = each block stores its sum into every block's slot, cluster.sync, a local sum; st.async = each block
// sends its sum to every block by st.async on the receiver's mbarrier: no cluster barrier at all (cluster.sync
// compiles to MEMBAR.ALL.GPU + UCGABAR_ARV/WAIT + CCTL.IVALL).
enum Exchange { kPull, kPush, kStAsync };
struct Flags {
  Load load;
  Sum sum;
  bool packed;     // division: unpack by shifts, one cvt.rn.bf16x2.f32 per pair
  bool hoist;      // this thread's vector i at two precomputed smem bases + 512·i (no per-vector div/mod)
  bool tma_store;  // the store by 8 TMA boxes from one thread (bulk_group; its smem read awaited next round)
  Exchange exchange;
};
constexpr int kVariants = 21;
__host__ __device__ constexpr Flags flags(int v) {
  switch (v) {
    case 0: return {kCpAsync, kF2F, false, false, false, kPull};
    case 1: return {kCpAsync, kNone, false, false, false, kPull};
    case 2: return {kCpAsync, kF32, false, false, false, kPull};
    case 3: return {kCpAsync, kBits, false, false, false, kPull};
    case 4: return {kCpAsync, kF2F, true, false, false, kPull};
    case 5: return {kTma128, kF2F, false, false, false, kPull};
    case 6: return {kTma128, kBits, true, false, false, kPull};
    case 7: return {kTma32, kF2F, false, false, false, kPull};
    case 8: return {kTma32, kBits, true, false, false, kPull};
    case 9: return {kTma32, kNone, false, false, false, kPull};
    case 10: return {kCpAsync, kBitsLea, false, false, false, kPull};
    case 11: return {kCpAsync, kF2F, false, true, false, kPull};
    case 12: return {kCpAsync, kBits, true, true, false, kPull};
    case 13: return {kCpAsync, kBitsLea, true, true, false, kPull};
    case 14: return {kTma32, kBits, true, true, false, kPull};
    case 15: return {kCpAsync, kF2F, false, false, false, kPush};
    case 16: return {kTma32, kBits, true, true, true, kPush};
    case 17: return {kTma32, kF32, true, true, true, kPush};
    case 18: return {kTma32, kNone, true, true, true, kPush};
    case 19: return {kCpAsync, kF2F, false, false, false, kStAsync};
    default: return {kTma32, kBits, true, true, true, kStAsync};
  }
}
const char* const kNames[kVariants] = {
    "current", "load-only", "sum-fp32-chains", "sum-double-bits", "div-packed", "tma-load", "V3+V4+V5",
    "tma-load-rows32", "V3+V4+V7", "tma-rows32-load-only", "sum-double-bits-lea", "addr-hoisted", "V3+V4+V11",
    "V10+V4+V11", "V3+V4+V7+V11", "cluster-push", "V14+tma-store+push", "V16 with fp32 sums", "V16 without sums", "cluster-st.async", "V16 with st.async"};

// ---- device helpers (from ns_resident.cu and tma.cuh) ----------------------------------------------
struct alignas(16) Vec { __nv_bfloat16 v[8]; };
struct alignas(16) Words { uint32_t u[4]; };

__device__ __forceinline__ uint32_t shared_address(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }
__device__ __forceinline__ void copy_async_16(void* dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared_address(dst)), "l"(src), "r"(src_bytes));
}
__device__ __forceinline__ void commit_async_copies() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
__device__ __forceinline__ void wait_async_copies(int pending) {   // 0..3; folds to one wait when unrolled
  if (pending == 3) asm volatile("cp.async.wait_group 3;\n" ::: "memory");
  else if (pending == 2) asm volatile("cp.async.wait_group 2;\n" ::: "memory");
  else if (pending == 1) asm volatile("cp.async.wait_group 1;\n" ::: "memory");
  else asm volatile("cp.async.wait_group 0;\n" ::: "memory");
}
__device__ __forceinline__ void proxy_fence() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t n) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(n) : "memory");
}
__device__ __forceinline__ void mbar_expect(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {   // traps rather than hang on a lost copy
  uint32_t done = 0;
  for (uint32_t spins = 0;; ++spins) {
    asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(done) : "r"(bar), "r"(parity) : "memory");
    if (done) return;
    if (spins > (1u << 24)) __trap();
  }
}
__device__ __forceinline__ void tma_load(uint32_t dst, const CUtensorMap* map, int x, int y, int z, uint32_t bar) {
  asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n"
               ::"r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y), "r"(z), "r"(bar) : "memory");
}
__device__ __forceinline__ void tma_store(const CUtensorMap* map, uint32_t src, int x, int y, int z) {
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [%0, {%1, %2, %3}], [%4];\n"
               ::"l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y), "r"(z), "r"(src) : "memory");
}
__device__ __forceinline__ uint32_t cluster_address(uint32_t a, int rank) {
  uint32_t r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(a), "r"(rank));
  return r;
}
// 8 bytes into (remote) shared memory, counted on the receiver's mbarrier (both shared::cluster addresses).
__device__ __forceinline__ void st_async(uint32_t dst, double v, uint32_t bar) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.b64 [%0], %1, [%2];\n"
               ::"r"(dst), "l"(__double_as_longlong(v)), "r"(bar) : "memory");
}
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
__device__ __forceinline__ void bulk_wait_read() { asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory"); }
__device__ __forceinline__ void bulk_wait() { asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory"); }
__device__ __forceinline__ uint64_t globaltimer() { uint64_t t; asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t)); return t; }
// x / d correctly rounded from y = 1/d (Markstein), ns_resident.cu's divide.
__device__ __forceinline__ float divide(float x, float d, float y) {
  const float q = x * y;
  return fmaf(fmaf(-q, d, x), y, q);
}
// Σ over the block of one double per thread in a fixed order; valid in thread 0 (ns_resident.cu).
__device__ double block_sum(double s, double* scratch) {
  for (int o = 16; o > 0; o /= 2) s += __shfl_down_sync(0xffffffffu, s, o);
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = s;
  __syncthreads();
  double t = 0.0;
  if (threadIdx.x == 0)
    for (int w = 0; w < kThreads / 32; ++w) t += scratch[w];
  return t;
}
// A bf16's 15 magnitude bits at bits 13..27 of a double's high word, low word 0: exactly |x|·2^-896 for
// every finite bf16 (exponent field e → double exponent field e; e = 0 gives double subnormals and zero).
__device__ __forceinline__ double scaled(uint32_t hi) { return __hiloint2double(static_cast<int>(hi & 0x0FFFE000u), 0); }
__device__ __forceinline__ double f2f(__nv_bfloat16 v) { return static_cast<double>(__bfloat162float(v)); }

// ---- the probe kernel -------------------------------------------------------------------------------
// marks = 1: clock64 marks in thread 0 at the phase boundaries, each after a __syncthreads.
template <int V>
__global__ void __launch_bounds__(kThreads, 1)
    probe(const __grid_constant__ CUtensorMap in_map, const __grid_constant__ CUtensorMap out_map,
          const __nv_bfloat16* in, __nv_bfloat16* out, int batch, int m, int n, const double* given, double* sums,
          float* norms, unsigned long long* acc, unsigned long long* clk, int marks) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr Flags F = flags(V);
  constexpr Load kLoad = F.load;
  constexpr Sum kSum = F.sum;
  constexpr bool kHoist = F.hoist;
  constexpr int kUnroll = kHoist ? 8 : 1;
  static_assert(!F.tma_store || kLoad != kCpAsync, "the TMA store's read is awaited by the TMA-issuing thread");
  extern __shared__ __align__(16) unsigned char shared[];
  cg::cluster_group cluster = cg::this_cluster();
  const int rank = static_cast<int>(cluster.block_rank());
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  unsigned char* xb = shared + (kAlign - shared_address(shared) % kAlign) % kAlign;
  const uint32_t xs = shared_address(xb);
  unsigned char* const a_area = xb + kRows * kWidth * 2;   // A's place, unused here: barriers, exchange slots
  const uint32_t bars = shared_address(a_area), recv = bars + 64;   // 8 load barriers, 2 receive barriers
  double* const slots = reinterpret_cast<double*>(a_area + 128);
  double* red = reinterpret_cast<double*>(a_area + kRows * kRows * 2 + kReceiveBytes);
  auto x_at = [&](int row, int col) {
    return xb + (col / 64) * kBlockBytes + row * 128 + ((((col % 64) / 8) ^ (row % 8)) * 16) + (col % 8) * 2;
  };
  auto vector_row = [&](int i) { return (tid + i * kThreads) / kPerRow; };
  auto vector_col = [&](int i) { return (tid + i * kThreads) % kPerRow * 8; };
  // Vector i of this thread: row r0 + 4i, column 8·jc (the same for all i), so in smem h[i % 2] + 512·i.
  const int r0 = tid / kPerRow, jc = tid % kPerRow, col0 = rank * kWidth;
  unsigned char* const h0 = xb + (jc / 8) * kBlockBytes + r0 * 128 + ((jc % 8) ^ r0) * 16;
  unsigned char* const h1 = xb + (jc / 8) * kBlockBytes + r0 * 128 + ((jc % 8) ^ (r0 + 4)) * 16;
  auto vec_at = [&](int i) -> unsigned char* {
    if constexpr (kHoist) return (i % 2 ? h1 : h0) + 512 * i;
    else return x_at(vector_row(i), vector_col(i));
  };
  auto vec_row = [&](int i) { return kHoist ? r0 + 4 * i : vector_row(i); };
  auto vec_col = [&](int i) { return kHoist ? 8 * jc : vector_col(i); };
  uint64_t g0 = 0, c0 = 0;
  if (blockIdx.x == 0 && tid == 0) g0 = globaltimer(), c0 = clock64();
  if (kLoad != kCpAsync && tid == 0) {
    for (int b = 0; b < 8; ++b) mbar_init(bars + 8 * b, 1);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  if (F.exchange == kStAsync && tid == 0) {
    mbar_init(recv, 1), mbar_init(recv + 8, 1);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();
  if constexpr (F.exchange == kStAsync) cluster.sync();   // every block's receive barriers exist before any send
  unsigned long long ph[4] = {};
  long long mark = 0;
  int rounds = 0;
  auto stamp = [&](int p) {   // phase p − 1 ends here
    if (marks) {
      __syncthreads();
      if (tid == 0) {
        const long long t = clock64();
        if (p > 0) ph[p - 1] += t - mark;
        mark = t;
      }
    }
  };

  const int clusters = static_cast<int>(gridDim.x) / kCluster;
  for (int index = static_cast<int>(blockIdx.x) / kCluster, round = 0; index < batch; index += clusters, ++round) {
    const __nv_bfloat16* mat = in + static_cast<int64_t>(index) * m * n;
    __nv_bfloat16* dst_mat = out + static_cast<int64_t>(index) * m * n;
    const uint32_t parity = round & 1;
    if (marks && tid == 0) mark = clock64();   // after the previous round's (or the start's) __syncthreads
    double given_total = 0.0;
    if (kSum == kNone && tid == 0) given_total = given[index * kCluster + rank];   // issued before the waits
    // ---- load ----
    if constexpr (kLoad == kCpAsync) {
#pragma unroll
      for (int s = 0; s < kStages; ++s) {
#pragma unroll(kUnroll)
        for (int i = s * kPerStage; i < (s + 1) * kPerStage; ++i) {
          const int row = vec_row(i), c = vec_col(i), col = col0 + c;
          const bool inside = row < m && col < n;
          const __nv_bfloat16* src = mat + (inside ? static_cast<int64_t>(row) * n + col : 0);
          copy_async_16(vec_at(i), src, inside ? 16 : 0);
        }
        commit_async_copies();
      }
    } else if (tid == 0) {
      if constexpr (F.tma_store) bulk_wait_read();   // the previous round's store has read the slice
      if constexpr (kLoad == kTma128) {
        for (int b = 0; b < 8; ++b) {
          mbar_expect(bars + 8 * b, kBlockBytes);
          tma_load(xs + b * kBlockBytes, &in_map, col0 + 64 * b, 0, index, bars + 8 * b);
        }
      } else {
        for (int s = 0; s < kStages; ++s) {
          mbar_expect(bars + 8 * s, 8 * 32 * 128);
          for (int b = 0; b < 8; ++b) tma_load(xs + b * kBlockBytes + s * 32 * 128, &in_map, col0 + 64 * b, 32 * s, index, bars + 8 * s);
        }
      }
    }
    // ---- Σx²: this thread's vectors in order, eight chains (one per position in the vector) ----
    double block_in = 0.0;
    if constexpr (kSum == kNone) {
      if constexpr (kLoad == kCpAsync) wait_async_copies(0);
      else
        for (int b = 0; b < (kLoad == kTma128 ? 8 : kStages); ++b) mbar_wait(bars + 8 * b, parity);
    } else {
      double ss[8] = {};
      float fs[8] = {};
#pragma unroll
      for (int s = 0; s < kStages; ++s) {
        if constexpr (kLoad == kCpAsync) wait_async_copies(kStages - 1 - s);
        else if constexpr (kLoad == kTma32) mbar_wait(bars + 8 * s, parity);
        else if (s == 0) mbar_wait(bars + 8 * (jc / 8), parity);   // all 32 vectors lie in box jc / 8
#pragma unroll(kUnroll)
        for (int i = s * kPerStage; i < (s + 1) * kPerStage; ++i) {
          const unsigned char* p = vec_at(i);
          const Vec w = *reinterpret_cast<const Vec*>(p);
          const Words u = *reinterpret_cast<const Words*>(&w);
          if constexpr (kSum == kF2F) {
#pragma unroll
            for (int e = 0; e < 8; ++e) {
              const double d = f2f(w.v[e]);
              ss[e] += d * d;
            }
          } else if constexpr (kSum == kF32) {
#pragma unroll
            for (int e = 0; e < 8; ++e) {
              const float f = __bfloat162float(w.v[e]);
              fs[e] += f * f;
            }
          } else if constexpr (kSum == kBits) {   // |x|·2^-896 by bit moves, · 2^896 by a DMUL: exact
#pragma unroll
            for (int k = 0; k < 4; ++k) {
              const double d0 = scaled(u.u[k] << 13) * 0x1p896, d1 = scaled(u.u[k] >> 3) * 0x1p896;
              ss[2 * k] += d0 * d0;
              ss[2 * k + 1] += d1 * d1;
            }
          } else {   // kBitsLea: exponent + (1023 − 127) by an integer add; a vector holding exponent 0 takes F2F
            const uint32_t z = __vminu2(__vminu2(u.u[0] & 0x7f807f80u, u.u[1] & 0x7f807f80u),
                                        __vminu2(u.u[2] & 0x7f807f80u, u.u[3] & 0x7f807f80u));
            if (__vcmpeq2(z, 0u) == 0u) {
#pragma unroll
              for (int k = 0; k < 4; ++k) {
                const double d0 = __hiloint2double(static_cast<int>(((u.u[k] & 0x7fffu) << 13) + 0x38000000u), 0);
                const double d1 = __hiloint2double(static_cast<int>(((u.u[k] >> 3) & 0x0FFFE000u) + 0x38000000u), 0);
                ss[2 * k] += d0 * d0;
                ss[2 * k + 1] += d1 * d1;
              }
            } else {
#pragma unroll
              for (int e = 0; e < 8; ++e) {
                const double d = f2f(w.v[e]);
                ss[e] += d * d;
              }
            }
          }
        }
      }
      if constexpr (kSum == kF32)
#pragma unroll
        for (int e = 0; e < 8; ++e) ss[e] = fs[e];
      block_in = ((ss[0] + ss[1]) + (ss[2] + ss[3])) + ((ss[4] + ss[5]) + (ss[6] + ss[7]));
    }
    stamp(1);
    // ---- the cluster's sum: the eight blocks' sums in rank order (ns_resident.cu) ----
    double block_total = block_sum(block_in, red);
    if (tid == 0) {
      if constexpr (kSum == kNone) block_total = given_total;
      else sums[index * kCluster + rank] = block_total;
      if constexpr (F.exchange == kPull) red[8 + round % 2] = block_total;
    }
    auto set_norm = [&](double total) {
      reinterpret_cast<float*>(red + 10)[0] = __bfloat162float(__float2bfloat16_rn(sqrtf(static_cast<float>(total)))) + 1e-7f;
    };
    if constexpr (F.exchange == kStAsync) {   // slot [parity][rank] of every block; barrier recv[parity], used every other round
      if (warp == 0) {
        const double bt = __shfl_sync(0xffffffffu, block_total, 0);
        if (lane < kCluster)
          st_async(cluster_address(shared_address(slots + 8 * parity + rank), lane), bt, cluster_address(recv + 8 * parity, lane));
      }
      if (tid == 0) {   // a sender may complete its bytes before this expect: the phase waits for this arrival
        mbar_expect(recv + 8 * parity, kCluster * sizeof(double));
        mbar_wait(recv + 8 * parity, (round >> 1) & 1);
        double total = 0.0;
        for (int q = 0; q < kCluster; ++q) total += slots[8 * parity + q];
        set_norm(total);
      }
    } else if constexpr (F.exchange == kPush) {   // slot [parity][rank] of every block, by parity as red[8 + round % 2]
      if (warp == 0) {
        const double bt = __shfl_sync(0xffffffffu, block_total, 0);
        if (lane < kCluster) cluster.map_shared_rank(slots, lane)[8 * parity + rank] = bt;
      }
      cluster.sync();
      if (tid == 0) {
        double total = 0.0;
        for (int q = 0; q < kCluster; ++q) total += slots[8 * parity + q];
        set_norm(total);
      }
    } else {
      cluster.sync();
      if (warp == 0) {
        const double mine = lane < kCluster ? cluster.map_shared_rank(red, lane)[8 + round % 2] : 0.0;
        double total = 0.0;
        for (int q = 0; q < kCluster; ++q) total += __shfl_sync(0xffffffffu, mine, q);
        if (lane == 0) set_norm(total);
      }
    }
    __syncthreads();
    const float denom = reinterpret_cast<const float*>(red + 10)[0], inverse = __frcp_rn(denom);
    if (rank == 0 && tid == 0) norms[index] = denom;
    stamp(2);
    // ---- X ← bf16(X / norm), groups of 4 vectors read before any is written ----
    constexpr int kGroup = 4;
#pragma unroll 1
    for (int i0 = 0; i0 < kPerThread; i0 += kGroup) {
      if constexpr (!F.packed) {
        Vec w[kGroup];
#pragma unroll
        for (int q = 0; q < kGroup; ++q) w[q] = *reinterpret_cast<const Vec*>(vec_at(i0 + q));
#pragma unroll
        for (int q = 0; q < kGroup; ++q) {
#pragma unroll
          for (int e = 0; e < 8; ++e) w[q].v[e] = __float2bfloat16_rn(divide(__bfloat162float(w[q].v[e]), denom, inverse));
          *reinterpret_cast<Vec*>(vec_at(i0 + q)) = w[q];
        }
      } else {
        Words w[kGroup];
#pragma unroll
        for (int q = 0; q < kGroup; ++q) w[q] = *reinterpret_cast<const Words*>(vec_at(i0 + q));
#pragma unroll
        for (int q = 0; q < kGroup; ++q) {
#pragma unroll
          for (int k = 0; k < 4; ++k) {
            const float lo = __uint_as_float(w[q].u[k] << 16), hi = __uint_as_float(w[q].u[k] & 0xffff0000u);
            const __nv_bfloat162 r = __floats2bfloat162_rn(divide(lo, denom, inverse), divide(hi, denom, inverse));
            w[q].u[k] = *reinterpret_cast<const uint32_t*>(&r);
          }
          *reinterpret_cast<Words*>(vec_at(i0 + q)) = w[q];
        }
      }
    }
    proxy_fence();   // the real kernel's (wgmma reads X next); here it orders these writes before TMA reads/writes
    __syncthreads();
    stamp(3);
    // ---- write X back (rows < m, columns < n) ----
    if constexpr (F.tma_store) {
      if (tid == 0) {
        for (int b = 0; b < 8; ++b) tma_store(&out_map, xs + b * kBlockBytes, col0 + 64 * b, 0, index);
        bulk_commit();
      }
    } else {
#pragma unroll(kUnroll)
      for (int i = 0; i < kPerThread; ++i) {
        const int row = vec_row(i), c = vec_col(i), col = col0 + c;
        if (row >= m || col >= n) continue;
        *reinterpret_cast<Vec*>(dst_mat + static_cast<int64_t>(row) * n + col) = *reinterpret_cast<const Vec*>(vec_at(i));
      }
      if constexpr (kLoad != kCpAsync) proxy_fence();   // these reads before the next round's TMA writes
    }
    stamp(4);
    if (!marks) __syncthreads();
    ++rounds;
  }
  if (F.tma_store && tid == 0) bulk_wait();
  cluster.sync();   // no block leaves while another may still read its shared memory
  if (tid == 0) {
    if (marks) {
      for (int p = 0; p < 4; ++p) atomicAdd(acc + p, ph[p]);
      atomicAdd(acc + 4, static_cast<unsigned long long>(rounds));
    }
    if (blockIdx.x == 0) clk[0] += clock64() - c0, clk[1] += globaltimer() - g0;
  }
#else
  __trap();
#endif
}

// ---- host ---------------------------------------------------------------------------------------------
using Kernel = void (*)(const CUtensorMap, const CUtensorMap, const __nv_bfloat16*, __nv_bfloat16*, int, int, int,
                        const double*, double*, float*, unsigned long long*, unsigned long long*, int);
template <int... I>
constexpr std::array<Kernel, sizeof...(I)> kernel_table(std::integer_sequence<int, I...>) { return {&probe<I>...}; }
const auto kKernels = kernel_table(std::make_integer_sequence<int, kVariants>{});

static uint32_t fbits(float f) { uint32_t b; memcpy(&b, &f, 4); return b; }
static uint16_t f2bf(float f) { const uint32_t b = fbits(f); return static_cast<uint16_t>((b + 0x7fffu + ((b >> 16) & 1u)) >> 16); }  // RNE, no NaN
static float bf2f(uint16_t h) { const uint32_t b = static_cast<uint32_t>(h) << 16; float f; memcpy(&f, &b, 4); return f; }

// The kernel's Σ for block r of a matrix, in its exact order: per-thread chains, shuffle tree, warps.
static double cpu_block_sum(const uint16_t* x, int r) {
  std::vector<double> th(kThreads);
  for (int tid = 0; tid < kThreads; ++tid) {
    double ss[8] = {};
    for (int i = 0; i < kPerThread; ++i) {
      const int idx = tid + i * kThreads, row = idx / kPerRow, c = idx % kPerRow * 8;
      for (int e = 0; e < 8; ++e) {
        const double d = bf2f(x[static_cast<int64_t>(row) * kCols + r * kWidth + c + e]);
        ss[e] += d * d;   // the product is exact: fused or not, the same sum
      }
    }
    th[tid] = ((ss[0] + ss[1]) + (ss[2] + ss[3])) + ((ss[4] + ss[5]) + (ss[6] + ss[7]));
  }
  double t = 0.0;
  for (int w = 0; w < kThreads / 32; ++w) {
    double v[32], nv[32];
    for (int l = 0; l < 32; ++l) v[l] = th[32 * w + l];
    for (int o = 16; o > 0; o /= 2) {
      for (int l = 0; l < 32; ++l) nv[l] = v[l] + (l + o < 32 ? v[l + o] : v[l]);
      memcpy(v, nv, sizeof v);
    }
    t += v[0];
  }
  return t;
}

static CUtensorMap make_map(void* p, int box_rows) {
  static PFN_cuTensorMapEncodeTiled_v12000 enc = nullptr;
  if (!enc) {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult found{};
    CK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || !f) { fprintf(stderr, "no cuTensorMapEncodeTiled\n"); exit(1); }
    enc = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(f);
  }
  CUtensorMap map{};
  const cuuint64_t dims[3] = {kCols, kRows, kBatch}, strides[2] = {kCols * 2ull, 2ull * kRows * kCols};
  const cuuint32_t box[3] = {64, static_cast<cuuint32_t>(box_rows), 1}, unit[3] = {1, 1, 1};
  const CUresult r = enc(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3, p, dims, strides, box, unit, CU_TENSOR_MAP_INTERLEAVE_NONE,
                         CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) { fprintf(stderr, "cuTensorMapEncodeTiled: error %d\n", static_cast<int>(r)); exit(1); }
  return map;
}

int main(int argc, char** argv) {
  int dev = 0, clock_khz = 0;
  CK(cudaGetDevice(&dev));
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, dev));
  (void)cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, dev);
  (void)cudaGetLastError();
  printf("device %s, %d SMs, sm_%d%d, clock attribute %d MHz; %zu B dynamic shared memory per block\n", prop.name,
         prop.multiProcessorCount, prop.major, prop.minor, clock_khz / 1000, kShared);
  if (prop.major != 9) { fprintf(stderr, "needs an sm_90 (Hopper) GPU\n"); return 1; }

  const size_t elems = static_cast<size_t>(kBatch) * kRows * kCols;
  std::vector<uint16_t> hx(elems);
  std::mt19937_64 rng(12345);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (auto& v : hx) v = f2bf(nd(rng));
  __nv_bfloat16 *din, *dout;
  double *dgiven, *dsums;
  float* dnorms;
  unsigned long long *dacc, *dclk;
  const size_t sums_bytes = kBatch * kCluster * sizeof(double);
  CK(cudaMalloc(&din, elems * 2)); CK(cudaMalloc(&dout, elems * 2)); CK(cudaMalloc(&dgiven, sums_bytes));
  CK(cudaMalloc(&dsums, sums_bytes)); CK(cudaMalloc(&dnorms, kBatch * sizeof(float)));
  CK(cudaMalloc(&dacc, 8 * sizeof(unsigned long long))); CK(cudaMalloc(&dclk, 2 * sizeof(unsigned long long)));
  CK(cudaMemcpy(din, hx.data(), elems * 2, cudaMemcpyHostToDevice));
  CK(cudaMemset(dgiven, 0, sums_bytes));
  const CUtensorMap map128 = make_map(din, 128), map32 = make_map(din, 32), out_map = make_map(dout, 128);

  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = kCluster, attr.val.clusterDim.y = 1, attr.val.clusterDim.z = 1;
  cudaLaunchConfig_t cfg{};
  cfg.blockDim = dim3(kThreads), cfg.dynamicSmemBytes = kShared, cfg.attrs = &attr, cfg.numAttrs = 1;
  cfg.gridDim = dim3(kCluster);
  int clusters = 1 << 30;
  for (int v = 0; v < kVariants; ++v) {
    CK(cudaFuncSetAttribute(kKernels[v], cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(kShared)));
    int c = 0;
    CK(cudaOccupancyMaxActiveClusters(&c, kKernels[v], &cfg));
    clusters = std::min(clusters, c);
  }
  printf("cudaOccupancyMaxActiveClusters %d", clusters);
  if (argc > 1) clusters = atoi(argv[1]), printf(" (overridden: %d)", clusters);
  clusters = std::min(clusters, kBatch);
  if (clusters < 1) { fprintf(stderr, "\nno cluster fits\n"); return 1; }
  printf("; grid %d clusters × %d blocks × %d threads; %d matrices 128×4096 bf16, %d to %d per cluster\n", clusters,
         kCluster, kThreads, kBatch, kBatch / clusters, (kBatch + clusters - 1) / clusters);
  cfg.gridDim = dim3(clusters * kCluster);

  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  std::vector<uint16_t> ref_out, hout(elems);
  std::vector<double> ref_sums, hsums(kBatch * kCluster);
  std::vector<float> ref_norms, hnorms(kBatch);
  unsigned long long clk_total[2] = {0, 0};
  int failures = 0;
  // The cp.async variants first (V1 needs V0's sums), then the TMA ones, then st.async: a failing launch ends the run.
  for (int v : {0, 1, 2, 3, 4, 10, 11, 12, 13, 15, 5, 6, 7, 8, 9, 14, 16, 17, 18, 19, 20}) {
    const Flags f = flags(v);
    const CUtensorMap& in_map = f.load == kTma32 ? map32 : map128;
    auto launch = [&](int marks) {
      CK(cudaLaunchKernelEx(&cfg, kKernels[v], in_map, out_map, din, dout, kBatch, kRows, kCols, dgiven, dsums, dnorms,
                            dacc, dclk, marks));
    };
    CK(cudaMemset(dout, 0xff, elems * 2));
    CK(cudaMemset(dsums, 0, sums_bytes));
    CK(cudaMemset(dnorms, 0, kBatch * sizeof(float)));
    auto timed = [&](int marks) {   // median of 20 after 3 warm-ups; leaves this run's sums in dacc, dclk
      for (int w = 0; w < 3; ++w) launch(marks);
      CK(cudaDeviceSynchronize());
      CK(cudaMemset(dacc, 0, 8 * sizeof(unsigned long long)));
      CK(cudaMemset(dclk, 0, 2 * sizeof(unsigned long long)));
      std::vector<float> ms(20);
      for (auto& t : ms) {
        CK(cudaEventRecord(e0));
        launch(marks);
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        CK(cudaEventElapsedTime(&t, e0, e1));
      }
      CK(cudaGetLastError());
      std::sort(ms.begin(), ms.end());
      return 0.5f * (ms[9] + ms[10]);
    };
    const float ms_plain = timed(0), ms_marks = timed(1);
    unsigned long long acc[8], clk[2];
    CK(cudaMemcpy(acc, dacc, sizeof acc, cudaMemcpyDeviceToHost)); CK(cudaMemcpy(clk, dclk, sizeof clk, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hout.data(), dout, elems * 2, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hsums.data(), dsums, sums_bytes, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hnorms.data(), dnorms, kBatch * sizeof(float), cudaMemcpyDeviceToHost));
    clk_total[0] += clk[0], clk_total[1] += clk[1];
    double kc[4], total = 0.0;
    for (int p = 0; p < 4; ++p) kc[p] = acc[p] / static_cast<double>(std::max(acc[4], 1ull)) / 1000.0, total += kc[p];
    char verdict[200] = "reference";
    if (v == 0) {
      ref_out = hout, ref_sums = hsums, ref_norms = hnorms;
      CK(cudaMemcpy(dgiven, dsums, sums_bytes, cudaMemcpyDeviceToDevice));   // the load-only variants' sums
    } else {
      size_t diff = 0;
      for (size_t i = 0; i < elems; ++i) diff += hout[i] != ref_out[i];
      int len = 0;
      if (diff == 0) len = snprintf(verdict, sizeof verdict, "bitwise equal");
      else if (f.sum == kF32) len = snprintf(verdict, sizeof verdict, "%zu outputs differ from V0 (not required)", diff);
      else len = snprintf(verdict, sizeof verdict, "MISMATCH variant=V%d count=%zu", v, diff), ++failures;
      if (f.sum != kNone) {
        int sum_diff = 0, norm_diff = 0;
        for (int i = 0; i < kBatch * kCluster; ++i) sum_diff += memcmp(&hsums[i], &ref_sums[i], 8) != 0;
        for (int i = 0; i < kBatch; ++i) norm_diff += fbits(hnorms[i]) != fbits(ref_norms[i]);
        if ((sum_diff || norm_diff) && f.sum != kF32) ++failures;
        snprintf(verdict + len, sizeof verdict - len, "; block sums differing from V0 %d/%d, bf16-rounded norms %d/%d",
                 sum_diff, kBatch * kCluster, norm_diff, kBatch);
      }
    }
    printf("V%d %s: load+sum %.1f kc, cluster-sum %.1f, divide %.1f, store %.1f, total/matrix-round %.1f kc; kernel %.4f ms"
           " (%.4f ms without marks); SM clock %.0f MHz; %s\n",
           v, kNames[v], kc[0], kc[1], kc[2], kc[3], total, ms_marks, ms_plain, clk[1] ? 1000.0 * clk[0] / clk[1] : 0.0, verdict);
    fflush(stdout);
  }
  printf("SM clock over all marked runs (%%globaltimer vs clock64 in block 0): %.0f MHz; %.0f MiB read + written per kernel\n",
         clk_total[1] ? 1000.0 * clk_total[0] / clk_total[1] : 0.0, 2.0 * elems * 2 / (1 << 20));

  // V0 against a CPU model: the same Σ order (bitwise), the norm's rounding, x / norm rounded to bf16 both
  // as IEEE division and as the Markstein formula.
  int bad_sums = 0, bad_norms = 0;
  size_t bad_div = 0, bad_mark = 0;
  for (int mat : {0, 1, 31, 63}) {
    const uint16_t* x = hx.data() + static_cast<size_t>(mat) * kRows * kCols;
    double total = 0.0;
    for (int r = 0; r < kCluster; ++r) {
      const double b = cpu_block_sum(x, r);
      bad_sums += memcmp(&b, &ref_sums[mat * kCluster + r], 8) != 0;
      total += b;
    }
    const float norm = bf2f(f2bf(sqrtf(static_cast<float>(total)))) + 1e-7f, y = 1.0f / norm;
    bad_norms += fbits(norm) != fbits(ref_norms[mat]);
    for (size_t i = 0; i < static_cast<size_t>(kRows) * kCols; ++i) {
      const float xv = bf2f(x[i]), q = xv * y;
      const uint16_t got = ref_out[static_cast<size_t>(mat) * kRows * kCols + i];
      bad_div += f2bf(xv / norm) != got;
      bad_mark += f2bf(std::fmaf(std::fmaf(-q, norm, xv), y, q)) != got;
    }
  }
  const bool cpu_ok = !bad_sums && !bad_norms && !bad_div && !bad_mark;
  printf("CPU check of V0 (matrices 0, 1, 31, 63): block sums differing %d/32, norms %d/4, outputs differing from "
         "bf16(x/norm) %zu, from the Markstein model %zu: %s\n",
         bad_sums, bad_norms, bad_div, bad_mark, cpu_ok ? "CPU equal" : "CPU MISMATCH");
  printf("%s\n", failures || !cpu_ok ? "SOME CHECKS FAILED" : "ALL CHECKS PASSED");
  return failures || !cpu_ok ? 2 : 0;
}
