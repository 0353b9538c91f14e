// Device code the two small-matrix NS kernels share (ns_resident.cu: a matrix resident in an
// eight-block cluster; ns_streamed.cu: a matrix streamed through a two-block cluster): the
// 128-row swizzled layout, cluster addressing, copies, the normalization's exact arithmetic, and the two steps done on a 128 × 128 matrix inside one block (A's mirror,
// B = c·A² + b·A). Included by those two files only.
#pragma once
#include <cfloat>
#include <cstdint>
#include <type_traits>

#include "impl/math/cuda/dtype_device.cuh"
#include "impl/math/cuda/ns_resident.hpp"
#include "impl/math/cuda/shared_memory.cuh"
#include "impl/math/cuda/tma.cuh"
#include "impl/math/cuda/wgmma.cuh"

namespace muoncheck::impl::cuda::small_ns {

constexpr int kRows = 128;                      // rows every matrix is padded to
constexpr int kBlockThreads = 256;              // eight warps, two warpgroups
constexpr int kMaxColumns = 4096;
constexpr int kAlign = 1024;                    // a swizzled matrix's alignment in shared memory
using XLayout = wgmma::Swizzled128<kRows>;
constexpr int kTiles = kRows / 16;                           // 16 × 16 tiles per side
constexpr int kLowerTiles = kTiles * (kTiles + 1) / 2;       // on and below the diagonal

struct Coefficients {
  int steps = 0;
  float a[kResidentMaxSteps], b[kResidentMaxSteps], c[kResidentMaxSteps];
};
inline Coefficients coefficients(const NsConfig& cfg) {
  Coefficients k;
  k.steps = cfg.steps;
  for (int i = 0; i < cfg.steps; ++i) k.a[i] = cfg.at(i).a, k.b[i] = cfg.at(i).b, k.c[i] = cfg.at(i).c;
  return k;
}

__device__ __forceinline__ int lower_index(int i, int j) { return i * (i + 1) / 2 + j; }
// The tile (I, J), I ≥ J, at lower index l.
__device__ __forceinline__ void lower_tile(int l, int& i, int& j) {
  i = 0;
  while (lower_index(i + 1, 0) <= l) ++i;
  j = l - lower_index(i, 0);
}

// v, as a value the compiler cannot see through: what is derived from it in a loop is computed
// there, not hoisted out of the loop and held in registers across it.
__device__ __forceinline__ int opaque(int v) {
  asm volatile("mov.b32 %0, %0;\n" : "+r"(v));
  return v;
}
__device__ __forceinline__ uint32_t opaque(uint32_t v) { return static_cast<uint32_t>(opaque(static_cast<int>(v))); }

// Distributed shared memory through 32-bit addresses (cluster_address, shared_memory.cuh): 16-byte
// stores there.
__device__ __forceinline__ void store_shared(uint32_t a, const uint4& v) {
  asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(a), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}
// 16 bytes at shared address a of block `rank` of the cluster, counted on that block's barrier
// bar (the same shared address in every block) when it is another block; this block's own by a
// plain store, which a barrier of the block then makes visible.
__device__ __forceinline__ void send(uint32_t a, const uint4& v, int rank, int self, uint32_t bar) {
  if (rank == self)
    store_shared(a, v);
  else
    tma::store_async(cluster_address(a, rank), v, cluster_address(bar, rank));
}

// The row address one lane gives ldmatrix_x4 for the 16 × 16 blocks (rows r0 + 16·i..,
// columns k0..) of a Swizzled128 matrix, r0 a multiple of 16 and k0 of 16: for the A fragment
// of an MMA (mma.sync m16n8k16, or a warp's share of a wgmma's A in registers), lane_row =
// r0 + lane % 16 and lane_half = lane / 16. The swizzled pieces are computed once, so a load in
// an unrolled loop adds only constants.
struct SwizzledRows {
  const unsigned char* row;
  int piece[4];   // byte offset of the lane's 16 bytes for k0 % 64 = 16·j
  __device__ SwizzledRows(const unsigned char* base, int lane_row, int lane_half) : row(base + lane_row * 128) {
#pragma unroll
    for (int j = 0; j < 4; ++j) piece[j] = ((2 * j + lane_half) ^ (lane_row % 8)) * 16;
  }
  __device__ const unsigned char* at(int i, int k0) const {
    return row + i * 16 * 128 + (k0 / 64) * XLayout::kBlockBytes + piece[k0 % 64 / 16];
  }
};

// 16 bytes global → shared without holding a register (cp.async); src_bytes 0 writes zeros.
__device__ __forceinline__ void copy_async_16(void* dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared_address(dst)), "l"(src), "r"(src_bytes));
}
// bytes (a multiple of 16) from src (16-byte aligned) into L2, asynchronously.
__device__ __forceinline__ void prefetch_l2(const void* src, uint32_t bytes) {
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;\n" ::"l"(src), "r"(bytes) : "memory");
}
__device__ __forceinline__ void commit_async_copies() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
// This thread's copies of all but the last `pending` (0 to 3) groups have landed; in an unrolled
// loop the switch folds to one wait.
__device__ __forceinline__ void wait_async_copies(int pending) {
  switch (pending) {
    case 3: asm volatile("cp.async.wait_group 3;\n" ::: "memory"); break;
    case 2: asm volatile("cp.async.wait_group 2;\n" ::: "memory"); break;
    case 1: asm volatile("cp.async.wait_group 1;\n" ::: "memory"); break;
    default: asm volatile("cp.async.wait_group 0;\n" ::: "memory"); break;
  }
}

// The cluster barrier in two halves: arrive (what this thread did before is released to the
// cluster) and, later, wait for every thread of the cluster to have arrived.
__device__ __forceinline__ void cluster_arrive() { asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void cluster_wait() { asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory"); }

// x / d correctly rounded, d > 0, from y = RN(1/d) (Markstein): q = RN(xy), then q + (x − qd)·y
// with FMAs. That is exact where nothing underflows or overflows (markstein_exact): d finite, x
// zero or |x| ≥ 2^-100 (the residual x − qd is then a representable fp32) with q normal and finite.
// Elsewhere (an infinite or NaN norm or x, a quotient near the subnormals) the IEEE division is
// the one that is right: 1/∞ = 0 and 0·∞ = NaN would turn x/∞ = 0 into NaN.
__device__ __forceinline__ bool markstein_exact(float x, float d, float y) {
  const float ax = fabsf(x), aq = fabsf(x * y);
  return d <= FLT_MAX && (x == 0.0f || (ax >= 0x1p-100f && aq >= 0x1p-125f && aq <= FLT_MAX));
}
__device__ __forceinline__ float markstein(float x, float d, float y) {
  const float q = x * y;
  return fmaf(fmaf(-q, d, x), y, q);
}

// |x| of a 16-bit float as a double, exactly, without a conversion instruction (16 per cycle on an
// SM, against 64 DFMAs): its 15 magnitude bits moved into a double's high word so that its
// exponent field lands at the bottom of the double's, which is |x|·2^-(1023 − bias), then one DMUL
// by 2^(1023 − bias), exact for every finite value (subnormals and zero included). Infinities and
// NaNs would come out finite: their magnitude bits are kExponent or more (all exponent bits set).
template <class T>
struct Magnitude;
template <>
struct Magnitude<__nv_bfloat16> {
  static constexpr int kShift = 13;
  static constexpr double kScale = 0x1p896;
  static constexpr uint32_t kExponent = 0x7f80;
};
template <>
struct Magnitude<__half> {
  static constexpr int kShift = 10;
  static constexpr double kScale = 0x1p1008;
  static constexpr uint32_t kExponent = 0x7c00;
};
// The value in the low (first) and high (second) half of a 32-bit word.
template <class T>
__device__ __forceinline__ double magnitude_low(uint32_t w) {
  using M = Magnitude<T>;
  return __hiloint2double(static_cast<int>((w << M::kShift) & (0x7fffu << M::kShift)), 0) * M::kScale;
}
template <class T>
__device__ __forceinline__ double magnitude_high(uint32_t w) {
  using M = Magnitude<T>;
  return __hiloint2double(static_cast<int>((w >> (16 - M::kShift)) & (0x7fffu << M::kShift)), 0) * M::kScale;
}

// Σ over the block of one double per thread, in a fixed order; valid in thread 0.
__device__ __forceinline__ double block_sum(double s, double* scratch) {
  for (int o = 16; o > 0; o /= 2) s += __shfl_down_sync(0xffffffffu, s, o);
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = s;
  __syncthreads();
  double t = 0.0;
  if (threadIdx.x == 0)
    for (int w = 0; w < kBlockThreads / 32; ++w) t += scratch[w];
  return t;
}

// A's upper tiles from its lower ones: A (kRows × kRows, XLayout at a) is defined by its lower
// 16 × 16 tiles. Every warp of the block takes part; a barrier of the block must follow before
// the upper tiles are read.
__device__ __forceinline__ void mirror_lower_tiles(unsigned char* a, int warp, int lane) {
  for (int l = warp; l < kLowerTiles - kTiles; l += kBlockThreads / 32) {
    int ti, tj;   // the l-th tile below the diagonal: (I, J), J < I, is (I − 1, J) on or below it
    lower_tile(l, ti, tj);
    ++ti;
    const int r = lane / 8 % 2, c = lane / 16;   // block (r, c) of tile (I, J) to block (c, r) of (J, I)
    uint32_t f[4];
    ldmatrix_x4(f, a + XLayout::offset(16 * ti + 8 * r + lane % 8, 16 * tj + 8 * c));
    stmatrix_x4_trans(a + XLayout::offset(16 * tj + 8 * c + lane % 8, 16 * ti + 8 * r), f);
  }
}

// B = c·A·A + b·A in place of A (kRows × kRows, XLayout at a, shared address a_shared), in every
// block that needs it (cheaper than computing a share and exchanging them), as wgmma products:
// warpgroup 0 rows 0..63 × columns 0..63, warpgroup 1 rows 64..127 × all columns, A's rows in
// registers, A itself as the shared operand. B then takes A's place: its lower tiles as computed,
// the upper ones their transposes (stmatrix .trans). Every thread of the block takes part; A
// must have been made visible to wgmma (proxy_fence and a barrier) before. On return B is
// visible to wgmma and to every thread.
template <class T>
__device__ __forceinline__ void symmetric_b(unsigned char* a, uint32_t a_shared, float kb, float kc, int wg, int ww,
                                            int lane) {
  const int g = lane / 4, t = lane % 4;
  const int ti = 4 * wg + ww, n8 = wg == 0 ? 8 : 16;   // this warp's tile row; its 8-column groups
  const SwizzledRows rows(a, 16 * ti + lane % 16, lane / 16);
  uint32_t fa[kRows / 16][4];
#pragma unroll
  for (int ks = 0; ks < kRows / 16; ++ks) ldmatrix_x4(fa[ks], rows.at(0, 16 * ks));
  Pair<T> bv[16][2];   // B at (16·ti + g + 8h, 8j + 2t), two columns
  auto product = [&](auto n) {
    constexpr int kN = decltype(n)::value;
    float acc[kN / 2];
    wgmma::issue<T, kN, kRows>(acc, fa, a_shared, 0);
    wgmma::wait<0>();
    wgmma::pin(acc);
    Pair<T> av[kN / 8][2];
#pragma unroll
    for (int j = 0; j < kN / 8; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h)
        av[j][h] = *reinterpret_cast<const Pair<T>*>(a + XLayout::offset(16 * ti + g + 8 * h, 8 * j + 2 * t));
#pragma unroll
    for (int j = 0; j < kN / 8; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        bv[j][h].v[0] = st<T>(kc * acc[4 * j + 2 * h] + kb * ld(av[j][h].v[0]));
        bv[j][h].v[1] = st<T>(kc * acc[4 * j + 2 * h + 1] + kb * ld(av[j][h].v[1]));
      }
  };
  if (wg == 0)
    product(std::integral_constant<int, 64>{});
  else
    product(std::integral_constant<int, 128>{});
  __syncthreads();   // every product and every read of A is done
#pragma unroll
  for (int j = 0; j < 16; ++j) {
    if (j >= n8 || j / 2 > ti) continue;   // past this warp's product, or above the diagonal
#pragma unroll
    for (int h = 0; h < 2; ++h) *reinterpret_cast<Pair<T>*>(a + XLayout::offset(16 * ti + g + 8 * h, 8 * j + 2 * t)) = bv[j][h];
  }
  // The tiles (ti, J), J < ti, transposed into (J, ti): 8 × 8 block (h, s) of the tile is
  // matrix h + 2s of the stmatrix, stored at block (s, h).
#pragma unroll
  for (int tj = 0; tj < 8; ++tj) {
    if (tj >= ti) continue;
    const uint32_t f[4] = {as_bits(bv[2 * tj][0]), as_bits(bv[2 * tj][1]), as_bits(bv[2 * tj + 1][0]), as_bits(bv[2 * tj + 1][1])};
    const int mi = lane / 8;
    stmatrix_x4_trans(a + XLayout::offset(16 * tj + 8 * (mi / 2) + lane % 8, 16 * ti + 8 * (mi % 2)), f);
  }
  wgmma::proxy_fence();   // X ← aX + BX reads B through wgmma
  __syncthreads();
}

}  // namespace muoncheck::impl::cuda::small_ns
