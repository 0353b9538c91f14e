// The resident standard Newton–Schulz kernel; see ns_resident.hpp for the contract, the
// rounding model and the work split.
#include "impl/math/cuda/ns_resident.hpp"

#include <array>

#include <cooperative_groups.h>

#include "impl/math/cuda/cuda_check.hpp"
#include "impl/math/cuda/dtype_device.cuh"

namespace muoncheck::impl::cuda {
namespace {

namespace cg = cooperative_groups;

constexpr int kRows = 128;                      // rows every matrix is padded to
constexpr int kCluster = 8;                     // blocks per matrix
constexpr int kBlockThreads = 256;              // eight warps
constexpr int kMaxColumns = 4096;
constexpr int kChunk = 128;                     // columns of X' per pass of X ← aX + BX
constexpr int kTiles = kRows / 16;                           // 16 × 16 tiles per side
constexpr int kLowerTiles = kTiles * (kTiles + 1) / 2;       // on and below the diagonal
constexpr int kTileBytes = 16 * 16 * 2;
constexpr int kUnits = 2 * kLowerTiles;                      // halves of lower tiles
constexpr int kUnitsPerBlock = kUnits / kCluster;
constexpr int kUnitBytes = 8 * 16 * 4;                       // one unit of a partial, fp32
constexpr int kReceiveBytes = kUnitsPerBlock * kCluster * kUnitBytes;
static_assert(kUnits % kCluster == 0, "the units split evenly over the cluster");

struct Coefficients {
  int steps = 0;
  float a[kResidentMaxSteps], b[kResidentMaxSteps], c[kResidentMaxSteps];
};

int slice_width(int64_t n) {
  const int64_t per = (n + kCluster - 1) / kCluster;
  return static_cast<int>((per + kChunk - 1) / kChunk * kChunk);
}

size_t shared_bytes(int width) {
  return static_cast<size_t>(kRows) * (width + 8) * 2 + kReceiveBytes + 2 * kLowerTiles * kTileBytes + 16 * sizeof(double);
}

// The shared memory layout: X's slice (kRows × (W + 8) values, rows 16 bytes apart modulo 128,
// so ldmatrix's eight row reads hit distinct banks); the receive slots of this block's units of
// XXᵀ (slot (unit, q): block q's fp32 partial, 8 rows × 16 columns); B's tiles; A's tiles; the
// norm's scratch. A and B are symmetric and kept as their 36 lower 16 × 16 tiles (the diagonal
// tiles in full): tile (I, J), I ≥ J, at lower_index(I, J), its 8-column halves one after the
// other, each 16 rows of 16 bytes, so eight consecutive rows of a half are one conflict-free
// ldmatrix read. An upper tile is read as the transpose of its mirror (ldmatrix .trans), as
// cuBLAS's lower-triangle split defines the upper triangle (symmetric_product.hpp). A unit is an
// 8-row half of a lower tile, u = 2·lower_index(I, J) + half; block r owns units [9r, 9r + 9).
struct Layout {
  unsigned char* base;
  int sx;   // X row stride, elements
  __device__ unsigned char* receive() const { return base + static_cast<size_t>(kRows) * sx * 2; }
  __device__ unsigned char* b_tiles() const { return receive() + kReceiveBytes; }
  __device__ unsigned char* a_tiles() const { return b_tiles() + kLowerTiles * kTileBytes; }
  __device__ double* reduce() const { return reinterpret_cast<double*>(a_tiles() + kLowerTiles * kTileBytes); }
};

__device__ __forceinline__ int lower_index(int i, int j) { return i * (i + 1) / 2 + j; }

__device__ __forceinline__ uint32_t shared_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(shared_address(p)));
}

__device__ __forceinline__ void ldmatrix_x2(uint32_t (&r)[2], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];\n" : "=r"(r[0]), "=r"(r[1]) : "r"(shared_address(p)));
}

__device__ __forceinline__ void ldmatrix_x2_trans(uint32_t (&r)[2], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];\n"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(shared_address(p)));
}

__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(shared_address(p)));
}

// d += a·b for one 16×8 tile, k = 16, fp32 accumulators.
template <class T>
__device__ __forceinline__ void mma(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1);
template <>
__device__ __forceinline__ void mma<__nv_bfloat16>(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
template <>
__device__ __forceinline__ void mma<__half>(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Operand fragments of one warp (lane = threadIdx.x % 32), 16-bit values, for mma m16n8k16:
// A rows r0..r0+15 × k0..k0+15 of a row-major matrix; B as two n8 tiles n0..n0+15 × k0..k0+15
// of a matrix stored [n][k] (B = that matrix transposed) or [k][n] (trans). row(i): where row i
// starts (a base and a row stride instead made ptxas spill 16 bytes in four instantiations).
template <class Row>
__device__ __forceinline__ void load_a(uint32_t (&r)[4], Row row, int r0, int k0, int lane) {
  ldmatrix_x4(r, row(r0 + (lane & 15)) + (k0 + (lane >> 4) * 8) * 2);
}
template <class Row>
__device__ __forceinline__ void load_b_nk(uint32_t (&r)[4], Row row, int n0, int k0, int lane) {
  ldmatrix_x4(r, row(n0 + (lane & 7) + (lane >> 4) * 8) + (k0 + ((lane >> 3) & 1) * 8) * 2);
}
template <class Row>
__device__ __forceinline__ void load_b_kn(uint32_t (&r)[4], Row row, int n0, int k0, int lane) {
  ldmatrix_x4_trans(r, row(k0 + (lane & 7) + ((lane >> 3) & 1) * 8) + (n0 + (lane >> 4) * 8) * 2);
}

// One k-step of a warp's 32 × 64 tile: acc[i][n8] += a[i] · b (b: four n16 pairs of n8
// fragments), the 16 × 16 blocks (i, p) that keep(i, p) names.
template <class T, class Keep>
__device__ __forceinline__ void mma_32x64(float (&acc)[2][8][4], const uint32_t (&a)[2][4], const uint32_t (&b)[4][4],
                                          Keep keep) {
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int p = 0; p < 4; ++p)
      if (keep(i, p)) {
        mma<T>(acc[i][2 * p], a[i], b[p][0], b[p][1]);
        mma<T>(acc[i][2 * p + 1], a[i], b[p][2], b[p][3]);
      }
}

// 16 bytes global → shared without holding a register (cp.async); src_bytes 0 writes zeros.
__device__ __forceinline__ void copy_async_16(void* dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared_address(dst)), "l"(src), "r"(src_bytes));
}
__device__ __forceinline__ void wait_async_copies() {
  asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;\n" ::: "memory");
}

// Fragments of a symmetric matrix kept as lower tiles (Layout): the A operand of rows 16i.. ×
// k 16k.., and the B operand of k 16k.. × the 8 columns 16j + 8h...
__device__ __forceinline__ void load_sym_a(uint32_t (&r)[4], const unsigned char* tiles, int i, int k, int lane) {
  if (i >= k) {
    ldmatrix_x4(r, tiles + lower_index(i, k) * kTileBytes + lane * 16);
  } else {   // the transpose of tile (k, i): its 8 × 8 block (8b.., 8a..) for the fragment's block (a, b)
    const int a = (lane >> 3) & 1, b = lane >> 4;
    ldmatrix_x4_trans(r, tiles + lower_index(k, i) * kTileBytes + (a * 16 + 8 * b + (lane & 7)) * 16);
  }
}
__device__ __forceinline__ void load_sym_b(uint32_t (&r)[2], const unsigned char* tiles, int k, int j, int h, int lane) {
  const int kb = (lane >> 3) & 1;
  if (k >= j)
    ldmatrix_x2_trans(r, tiles + lower_index(k, j) * kTileBytes + (h * 16 + 8 * kb + (lane & 7)) * 16);
  else
    ldmatrix_x2(r, tiles + lower_index(j, k) * kTileBytes + (kb * 16 + 8 * h + (lane & 7)) * 16);
}

// x / d correctly rounded from y = 1/d (Markstein): q = xy, then q + (x − qd)·y with FMAs.
__device__ __forceinline__ float divide(float x, float d, float y) {
  const float q = x * y;
  return fmaf(fmaf(-q, d, x), y, q);
}

// Σ over the block of one double per thread, in a fixed order; valid in thread 0.
__device__ double block_sum(double s, double* scratch) {
  for (int o = 16; o > 0; o /= 2) s += __shfl_down_sync(0xffffffffu, s, o);
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = s;
  __syncthreads();
  double t = 0.0;
  if (threadIdx.x == 0)
    for (int w = 0; w < kBlockThreads / 32; ++w) t += scratch[w];
  return t;
}

// One block of the cluster of matrix blockIdx.x / kCluster; kWidth: its slice's columns.
template <class T, bool kVectors, int kWidth>
__global__ void __launch_bounds__(kBlockThreads, 1) ns_resident(T* x, int m, int n, Coefficients k) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  static_assert(kWidth % kChunk == 0 && kWidth <= kMaxColumns / kCluster, "slice width");
  constexpr int kStride = kWidth + 8, kPerRow = kWidth / 8, kVectorsPerBlock = kRows * kPerRow;
  extern __shared__ __align__(16) unsigned char shared[];
  cg::cluster_group cluster = cg::this_cluster();
  const int rank = static_cast<int>(cluster.block_rank());
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  const Layout lay{shared, kStride};
  T* xs = reinterpret_cast<T*>(shared);
  auto x_row = [&](int i) { return reinterpret_cast<unsigned char*>(xs + i * kStride); };
  T* mat = x + static_cast<int64_t>(blockIdx.x / kCluster) * m * n;
  const int col0 = rank * kWidth;

  // Load this block's slice (zeros past m and n): every copy in flight at once (cp.async) where
  // rows are 16-byte vectors, else element by element. Then its Σx².
  for (int v = tid; v < kVectorsPerBlock; v += kBlockThreads) {
    const int row = v / kPerRow, c = v % kPerRow * 8, col = col0 + c;
    const bool inside = row < m && col < n;
    const T* src = mat + (inside ? static_cast<int64_t>(row) * n + col : 0);
    if constexpr (kVectors) {
      copy_async_16(xs + row * kStride + c, src, inside ? 16 : 0);
    } else {
      Vec<T> w;
#pragma unroll
      for (int e = 0; e < 8; ++e) w.v[e] = inside && col + e < n ? src[e] : st<T>(0.0f);
      *reinterpret_cast<Vec<T>*>(xs + row * kStride + c) = w;
    }
  }
  if constexpr (kVectors) wait_async_copies();
  __syncthreads();
  double ss = 0.0;
  for (int v = tid; v < kVectorsPerBlock; v += kBlockThreads) {
    const Vec<T> w = *reinterpret_cast<const Vec<T>*>(xs + v / kPerRow * kStride + v % kPerRow * 8);
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      const double d = ld(w.v[e]);
      ss += d * d;
    }
  }
  double* red = lay.reduce();
  ss = block_sum(ss, red);
  if (tid == 0) red[8] = ss;
  cluster.sync();
  if (warp == 0) {   // the eight blocks' sums read at once, added in rank order
    const double mine = lane < kCluster ? cluster.map_shared_rank(red, lane)[8] : 0.0;
    double total = 0.0;
    for (int q = 0; q < kCluster; ++q) total += __shfl_sync(0xffffffffu, mine, q);
    if (lane == 0) reinterpret_cast<float*>(red + 9)[0] = ld(st<T>(sqrtf(static_cast<float>(total)))) + 1e-7f;
  }
  __syncthreads();
  const float denom = reinterpret_cast<const float*>(red + 9)[0], inverse = __frcp_rn(denom);
  for (int v = tid; v < kVectorsPerBlock; v += kBlockThreads) {
    Vec<T>* p = reinterpret_cast<Vec<T>*>(xs + v / kPerRow * kStride + v % kPerRow * 8);
    Vec<T> w = *p;
#pragma unroll
    for (int e = 0; e < 8; ++e) w.v[e] = st<T>(divide(ld(w.v[e]), denom, inverse));
    *p = w;
  }
  __syncthreads();

  // XXᵀ is needed on and below the diagonal only: of the 4 × 2 warp tiles of 32 × 64, two lie
  // above it and others partly. Warps w and w + 4 share a scheduler; this placement gives each
  // scheduler 8 or 10 of the 16-wide tiles to compute instead of up to 15.
  // (row, column) of warp w's tile: rows 2, 3, 1, 3, 0, 1, 0, 2 and columns 0, 0, 0, 1, 1, 1, 0, 1.
  const int xm = (0x20103132 >> (4 * warp)) & 0xf, xn = (0xb8 >> warp) & 1;
  const int wm = warp / 2, wn = warp % 2;   // X ← aX + BX: 4 × 2 warps of 32 × 64
  for (int it = 0; it < k.steps; ++it) {
    // This block's partial of XXᵀ over its columns, its lower tiles only (the next k-step's
    // fragments load while this one's MMAs run), each unit sent to its owner's receive slot.
    if (2 * xm + 1 >= 4 * xn) {
      float acc[2][8][4] = {};
      uint32_t fa[2][2][4], fb[2][4][4];
      auto load = [&](int s, int k0) {
#pragma unroll
        for (int i = 0; i < 2; ++i) load_a(fa[s][i], x_row, 32 * xm + 16 * i, k0, lane);
#pragma unroll
        for (int p = 0; p < 4; ++p) load_b_nk(fb[s][p], x_row, 64 * xn + 16 * p, k0, lane);
      };
      load(0, 0);
#pragma unroll
      for (int ks = 0; ks < kWidth / 16; ++ks) {
        const int s = ks % 2;
        if (ks + 1 < kWidth / 16) load(1 - s, 16 * (ks + 1));
        mma_32x64<T>(acc, fa[s], fb[s], [&](int i, int p) { return 2 * xm + i >= 4 * xn + p; });   // on or below the diagonal
      }
#pragma unroll
      for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int p = 0; p < 4; ++p) {
          const int ti = 2 * xm + i, tj = 4 * xn + p;
          if (ti < tj) continue;
#pragma unroll
          for (int h = 0; h < 2; ++h) {   // a slot holds (row, column 8s + 2t + e) at [row][t][s][e]
            const int u = 2 * lower_index(ti, tj) + h, owner = u / kUnitsPerBlock;
            unsigned char* slot = cluster.map_shared_rank(lay.receive(), owner) +
                                  ((u % kUnitsPerBlock) * kCluster + rank) * kUnitBytes;
            const float* lo = acc[i][2 * p] + 2 * h;
            const float* hi = acc[i][2 * p + 1] + 2 * h;
            *reinterpret_cast<float4*>(slot + (g * 4 + t) * 16) = make_float4(lo[0], lo[1], hi[0], hi[1]);
          }
        }
    }
    cluster.sync();
    // A's lower tiles: block r sums each of its units' eight partials in rank order, rounds
    // once and writes the unit into every block.
    if (tid < kUnitsPerBlock * 16) {
      const int ul = tid / 16, u = rank * kUnitsPerBlock + ul, half = u % 2, rr = tid % 16 / 2, seg = tid % 2;
      // Columns 8·seg + 2t + e of row rr: [rr][t][seg][e] in each slot (see the sender).
      const float2* p = reinterpret_cast<const float2*>(lay.receive() + ul * kCluster * kUnitBytes) + rr * 8 + seg;
      float sum[8];
#pragma unroll
      for (int tt = 0; tt < 4; ++tt) {
        const float2 v = p[2 * tt];
        sum[2 * tt] = v.x, sum[2 * tt + 1] = v.y;
      }
#pragma unroll
      for (int q = 1; q < kCluster; ++q)
#pragma unroll
        for (int tt = 0; tt < 4; ++tt) {
          const float2 v = p[q * kUnitBytes / 8 + 2 * tt];
          sum[2 * tt] += v.x, sum[2 * tt + 1] += v.y;
        }
      Vec<T> w;
#pragma unroll
      for (int e = 0; e < 8; ++e) w.v[e] = st<T>(sum[e]);
      const int at = (u / 2) * kTileBytes + (seg * 16 + 8 * half + rr) * 16;
#pragma unroll
      for (int q = 0; q < kCluster; ++q) *reinterpret_cast<Vec<T>*>(cluster.map_shared_rank(lay.a_tiles(), q) + at) = w;
    }
    cluster.sync();
    // B = c·A·A + b·A, its lower tiles, in every block: cheaper than computing an eighth and
    // exchanging them. In 32 × 32 blocks (P, Q), P ≥ Q: the six below the diagonal, then the
    // four on it (their upper tile skipped); warp w takes block w, warps 0 and 1 also 8 and 9.
    {
      constexpr uint64_t kBlockRow = 0x3210333221ull, kBlockCol = 0x3210210100ull;   // nibble b: block b
      const float kb = k.b[it], kc = k.c[it];
      const unsigned char* at = lay.a_tiles();
      unsigned char* bt = lay.b_tiles();
      for (int blk = warp; blk < 10; blk += kBlockThreads / 32) {
        const int bp = static_cast<int>(kBlockRow >> (4 * blk)) & 0xf, bq = static_cast<int>(kBlockCol >> (4 * blk)) & 0xf;
        float acc[2][2][2][4] = {};   // [I − 2P][J − 2Q][half]
#pragma unroll
        for (int kt = 0; kt < kTiles; ++kt) {
          uint32_t fa[2][4], fb[2][2][2];
#pragma unroll
          for (int i = 0; i < 2; ++i) load_sym_a(fa[i], at, 2 * bp + i, kt, lane);
#pragma unroll
          for (int j = 0; j < 2; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h) load_sym_b(fb[j][h], at, kt, 2 * bq + j, h, lane);
#pragma unroll
          for (int i = 0; i < 2; ++i)
#pragma unroll
            for (int j = 0; j < 2; ++j)
              if (bp != bq || i >= j)
#pragma unroll
                for (int h = 0; h < 2; ++h) mma<T>(acc[i][j][h], fa[i], fb[j][h][0], fb[j][h][1]);
        }
#pragma unroll
        for (int i = 0; i < 2; ++i)
#pragma unroll
          for (int j = 0; j < 2; ++j) {
            if (bp == bq && i < j) continue;
#pragma unroll
            for (int h = 0; h < 2; ++h)
#pragma unroll
              for (int r = 0; r < 2; ++r) {
                const int off = lower_index(2 * bp + i, 2 * bq + j) * kTileBytes + h * 256 + (g + 8 * r) * 16 + 4 * t;
                const Pair<T> av = *reinterpret_cast<const Pair<T>*>(at + off);
                Pair<T> bv;
                bv.v[0] = st<T>(kc * acc[i][j][h][2 * r] + kb * ld(av.v[0]));
                bv.v[1] = st<T>(kc * acc[i][j][h][2 * r + 1] + kb * ld(av.v[1]));
                *reinterpret_cast<Pair<T>*>(bt + off) = bv;
              }
          }
      }
    }
    __syncthreads();
    // X ← aX + BX over this block's columns, kChunk at a time, in place. This warp's 32 rows of
    // B stay in registers for every chunk; X's fragments are double-buffered.
    {
      const float ka = k.a[it];
      uint32_t fm[kRows / 16][2][4];
#pragma unroll
      for (int ks = 0; ks < kRows / 16; ++ks)
#pragma unroll
        for (int i = 0; i < 2; ++i) load_sym_a(fm[ks][i], lay.b_tiles(), 2 * wm + i, ks, lane);
#pragma unroll 1
      for (int c0 = 0; c0 < kWidth; c0 += kChunk) {
        float acc[2][8][4] = {};
        uint32_t fx[2][4][4];
        auto load = [&](int s, int k0) {
#pragma unroll
          for (int p = 0; p < 4; ++p) load_b_kn(fx[s][p], x_row, c0 + 64 * wn + 16 * p, k0, lane);
        };
        load(0, 0);
#pragma unroll
        for (int ks = 0; ks < kRows / 16; ++ks) {
          const int s = ks % 2;
          if (ks + 1 < kRows / 16) load(1 - s, 16 * (ks + 1));
          mma_32x64<T>(acc, fm[ks], fx[s], [](int, int) { return true; });
        }
        __syncthreads();   // every warp has read the chunk's columns before any is overwritten
#pragma unroll
        for (int i = 0; i < 2; ++i)
#pragma unroll
          for (int j = 0; j < 8; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
              const int row = 32 * wm + 16 * i + g + 8 * h, col = c0 + 64 * wn + 8 * j + 2 * t;
              Pair<T>* p = reinterpret_cast<Pair<T>*>(xs + row * kStride + col);
              Pair<T> v = *p;
              v.v[0] = st<T>(acc[i][j][2 * h] + ka * ld(v.v[0]));
              v.v[1] = st<T>(acc[i][j][2 * h + 1] + ka * ld(v.v[1]));
              *p = v;
            }
      }
      __syncthreads();
    }
  }

  // Write NS(X) back (rows < m, columns < n).
  for (int v = tid; v < kVectorsPerBlock; v += kBlockThreads) {
    const int row = v / kPerRow, c = v % kPerRow * 8, col = col0 + c;
    if (row >= m || col >= n) continue;
    const Vec<T> w = *reinterpret_cast<const Vec<T>*>(xs + row * kStride + c);
    T* dst = mat + static_cast<int64_t>(row) * n + col;
    if constexpr (kVectors) {
      *reinterpret_cast<Vec<T>*>(dst) = w;
    } else {
      for (int e = 0; e < 8 && col + e < n; ++e) dst[e] = w.v[e];
    }
  }
#else
  __trap();   // resident_fits never launches it below sm_90
#endif
}

// The kernel for a storage type, load mode and slice width (128, 256, 384 or 512).
template <class T, bool kVectors>
auto kernel(int width) {
  using F = void (*)(T*, int, int, Coefficients);
  switch (width) {
    case 128: return static_cast<F>(&ns_resident<T, kVectors, 128>);
    case 256: return static_cast<F>(&ns_resident<T, kVectors, 256>);
    case 384: return static_cast<F>(&ns_resident<T, kVectors, 384>);
    default: return static_cast<F>(&ns_resident<T, kVectors, 512>);
  }
}

cudaLaunchConfig_t cluster_config(unsigned clusters, int width, cudaLaunchAttribute* attr) {
  attr->id = cudaLaunchAttributeClusterDimension;
  attr->val.clusterDim.x = kCluster, attr->val.clusterDim.y = 1, attr->val.clusterDim.z = 1;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(clusters * kCluster), cfg.blockDim = dim3(kBlockThreads);
  cfg.dynamicSmemBytes = shared_bytes(width);
  cfg.attrs = attr, cfg.numAttrs = 1;
  return cfg;
}

// Clusters of the kernel that run at once (0: it cannot launch here).
template <class T, bool kVectors>
int active_clusters(int width) {
  cudaLaunchAttribute attr{};
  const cudaLaunchConfig_t cfg = cluster_config(1, width, &attr);
  int clusters = 0;
  return cudaOccupancyMaxActiveClusters(&clusters, kernel<T, kVectors>(width), &cfg) == cudaSuccess ? clusters : 0;
}

// Per device: whether every instantiation launches there (−1: not asked yet).
std::array<int, 64> g_device_ok = [] {
  std::array<int, 64> a{};
  a.fill(-1);
  return a;
}();

template <class T, bool kVectors>
bool prepare(int width) {
  const int bytes = static_cast<int>(shared_bytes(width));
  return cudaFuncSetAttribute(kernel<T, kVectors>(width), cudaFuncAttributeMaxDynamicSharedMemorySize, bytes) ==
             cudaSuccess &&
         active_clusters<T, kVectors>(width) > 0;
}

bool device_ok() {
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= static_cast<int>(g_device_ok.size())) return false;
  if (g_device_ok[dev] < 0) {
    int major = 0;
    (void)cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
    bool ok = major >= 9;
    for (int width = kChunk; ok && width <= kMaxColumns / kCluster; width += kChunk)
      ok = prepare<__nv_bfloat16, true>(width) && prepare<__nv_bfloat16, false>(width) &&
           prepare<__half, true>(width) && prepare<__half, false>(width);
    (void)cudaGetLastError();   // a refused attribute leaves no sticky error behind
    g_device_ok[dev] = ok ? 1 : 0;
  }
  return g_device_ok[dev] == 1;
}

}  // namespace

int resident_active_clusters(int64_t n) {
  return device_ok() ? active_clusters<__nv_bfloat16, true>(slice_width(n)) : 0;
}

bool resident_pays(int batch, int64_t m, int64_t n) {
  const int waves_of = resident_active_clusters(n);
  return waves_of > 0 && batch >= 4 && m * n >= 64 * 512 && (batch <= waves_of || batch % waves_of == 0);
}

bool resident_fits(int batch, int64_t m, int64_t n, const NsConfig& cfg) {
  const bool standard = cfg.method == NsMethod::standard || m == n;
  const bool sixteen_bit = cfg.dtype == DType::bf16 || cfg.dtype == DType::fp16;
  return standard && sixteen_bit && batch >= 1 && m >= 1 && m <= kRows && m <= n && n <= kMaxColumns &&
         cfg.steps >= 0 && cfg.steps <= kResidentMaxSteps && device_ok();
}

void resident_standard(void* x, int batch, int64_t m, int64_t n, const NsConfig& cfg, cudaStream_t s) {
  if (!resident_fits(batch, m, n, cfg)) throw Error(ErrorKind::Internal, "resident_standard: the problem does not fit");
  Coefficients k;
  k.steps = cfg.steps;
  for (int i = 0; i < cfg.steps; ++i) k.a[i] = cfg.at(i).a, k.b[i] = cfg.at(i).b, k.c[i] = cfg.at(i).c;
  const int width = slice_width(n);
  const bool vectors = n % 8 == 0 && reinterpret_cast<uintptr_t>(x) % 16 == 0;
  cudaLaunchAttribute attr{};
  cudaLaunchConfig_t lc = cluster_config(static_cast<unsigned>(batch), width, &attr);
  lc.stream = s;
  const int mi = static_cast<int>(m), ni = static_cast<int>(n);
  with_type(cfg.dtype, [&](auto v) {
    using T = decltype(v);
    if constexpr (sizeof(T) == 2) {
      T* p = static_cast<T*>(x);
      check(cudaLaunchKernelEx(&lc, vectors ? kernel<T, true>(width) : kernel<T, false>(width), p, mi, ni, k),
            "cudaLaunchKernelEx (ns_resident)");
    }
  });
}

}  // namespace muoncheck::impl::cuda
