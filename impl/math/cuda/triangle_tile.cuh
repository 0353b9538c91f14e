// A multiplying warpgroup's 128 × 128 lower-triangle tile, as both triangle kernels compute and
// write it (triangle_product.cu, triangle_strips.cu): its accumulators acc[h] hold the tile's rows
// 64·h…, laid out as wgmma.cuh says; multiply_tile sums them over the operand ring, write_tile
// writes D = α·acc + β·C rounded once, in place and transposed into tile (j, i), so D comes out
// exactly symmetric.
#pragma once
#include <cstdint>

#include <cuda.h>

#include "impl/math/cuda/dtype_device.cuh"
#include "impl/math/cuda/shared_memory.cuh"
#include "impl/math/cuda/tma.cuh"
#include "impl/math/cuda/wgmma.cuh"

namespace muoncheck::impl::cuda::triangle {

constexpr int kTile = 128;                   // a tile's rows and columns
constexpr int kStep = 64;                    // K per ring stage: one 128-byte row of 16-bit values
constexpr int kQuarterBytes = 64 * 64 * 2;   // a staged quarter of a tile, 64 × 64, 128-byte swizzled
using QuarterLayout = wgmma::Swizzled128<64>;

// A kernel's shared memory: the operand ring of kStages stages of kStageBytes (1024-byte aligned,
// as the 128-byte swizzle wants), four staging quarters (two per multiplying warpgroup), then the
// ring's barriers: kStages `full` (a stage has landed) and kStages `empty` (a stage was read).
struct RingLayout {
  unsigned char* staging;
  uint32_t ring, full, empty;
};
template <int kStages, int kStageBytes>
__device__ __forceinline__ RingLayout ring_layout(unsigned char* shared) {
  unsigned char* const ring = shared + (1024 - shared_address(shared) % 1024) % 1024;
  RingLayout r;
  r.staging = ring + kStages * kStageBytes;
  r.ring = shared_address(ring);
  r.full = shared_address(r.staging + 4 * kQuarterBytes);
  r.empty = r.full + kStages * sizeof(uint64_t);
  return r;
}
// The bytes ring_layout lays out, with the alignment's slack.
template <int kStages, int kStageBytes>
constexpr size_t ring_bytes() {
  return 1024 + kStages * kStageBytes + 4 * kQuarterBytes + 2 * kStages * sizeof(uint64_t);
}

// acc = A·Bᵀ over a tile's `steps` ring steps, the first ring step `first`: each stage waited on by
// phase parity, its A and B panels (128 rows × 64 of K, K-major, 128-byte swizzled) at a_offset and
// b_offset within it, issued as one group a stage; a stage is released (release(stage)) once the
// next one's products are issued and it is done, the last once all are. after_waits() runs once
// every stage has been waited on, while the last products still run.
template <class T, int kStages, int kStageBytes, class Release, class AfterWaits>
__device__ __forceinline__ void multiply_tile(float (&acc)[2][64], const RingLayout& ring, int first, int steps,
                                              uint32_t a_offset, uint32_t b_offset, Release&& release,
                                              AfterWaits&& after_waits) {
#pragma unroll
  for (int h = 0; h < 2; ++h)
#pragma unroll
    for (int e = 0; e < 64; ++e) acc[h][e] = 0.0f;
  int previous = -1;
  for (int s = 0; s < steps; ++s) {
    const int at = first + s, stage = at % kStages;
    tma::wait(ring.full + 8 * stage, static_cast<uint32_t>(at / kStages) & 1u);
    const uint32_t base = ring.ring + stage * kStageBytes, a_s = base + a_offset, b_s = base + b_offset;
    wgmma::fence();
#pragma unroll
    for (int ks = 0; ks < kStep / 16; ++ks) {
      const uint64_t b_desc = wgmma::k_major_descriptor<kTile>(b_s, 0, 16 * ks);
      wgmma::Ss<T, 128>::mma(acc[0], wgmma::k_major_descriptor<kTile>(a_s, 0, 16 * ks), b_desc, 1);
      wgmma::Ss<T, 128>::mma(acc[1], wgmma::k_major_descriptor<kTile>(a_s, 64, 16 * ks), b_desc, 1);
    }
    wgmma::commit();
    wgmma::wait<1>();   // the step before is done: its stage may be refilled
    if (previous >= 0) release(previous);
    previous = stage;
  }
  after_waits();
  wgmma::wait<0>();
  wgmma::pin(acc[0]);
  wgmma::pin(acc[1]);
  release(previous);
}

// Where and how one warpgroup writes: d (batch × m×m, its tensor map d_map of 64 × 64 boxes), C
// read where β ≠ 0; two staging quarters of its own (`direct`, then `transposed` right after it);
// named barrier `barrier` (128 threads) its own.
template <class T>
struct TileWriter {
  const CUtensorMap* d_map;
  T* d;
  const T* c;
  int m;
  float alpha, beta;
  unsigned char* direct;
  int barrier;
};

// The tile in four quarters of 64 × 64: rows 64·h… (acc[h]) × columns 64·ch… (a warp's
// accumulators 16·ch… of acc[h]). Each is staged twice, as rows and transposed, and written by two
// TMA stores; on the diagonal, the quarter above it is the mirror of the one below, and the two
// that straddle it are written by the threads, only what lies on or below it. The caller waits
// for the last stores (tma::wait_bulk) before its block leaves.
template <class T>
__device__ __forceinline__ void write_tile(const TileWriter<T>& w, float (&acc)[2][64], int i, int j, int64_t mat) {
  const int tid = static_cast<int>(threadIdx.x), warp = tid / 32 % 4, lane = tid % 32, g = lane / 4, q = lane % 4,
            wt = tid % 128;
  unsigned char* const transposed = w.direct + kQuarterBytes;
  const int64_t mm = static_cast<int64_t>(w.m) * w.m;
  T* const dm = w.d + mat * mm;
  const bool diagonal = i == j;
#pragma unroll
  for (int quarter = 0; quarter < 4; ++quarter) {
    const int h = quarter / 2, ch = quarter % 2;
    if (diagonal && h < ch) continue;
    const bool straddles = diagonal && h == ch;
    const int64_t row0 = static_cast<int64_t>(i) * kTile + 64 * h;   // D's row of this quarter's first
    const int64_t col0 = static_cast<int64_t>(j) * kTile + 64 * ch;  // and its column
    // D = α·acc + β·C rounded once.
    Pair<T> v[8][2];
#pragma unroll
    for (int jl = 0; jl < 8; ++jl)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int r = 16 * warp + g + 8 * e, col = 8 * jl + 2 * q, a = 4 * (8 * ch + jl) + 2 * e;
        float x0 = w.alpha * acc[h][a], x1 = w.alpha * acc[h][a + 1];
        if (w.beta != 0.0f) {
          const Pair<T> cv = *reinterpret_cast<const Pair<T>*>(w.c + mat * mm + (row0 + r) * w.m + col0 + col);
          x0 += w.beta * ld(cv.v[0]);
          x1 += w.beta * ld(cv.v[1]);
        }
        v[jl][e].v[0] = st<T>(x0);
        v[jl][e].v[1] = st<T>(x1);
      }
    // The buffers are free once the stores issued from them have read them.
    if (wt == 0) tma::wait_bulk_read<0>();
    tma::named_barrier(w.barrier, 128);
#pragma unroll
    for (int jl = 0; jl < 8; ++jl)
#pragma unroll
      for (int e = 0; e < 2; ++e)
        *reinterpret_cast<Pair<T>*>(w.direct + QuarterLayout::offset(16 * warp + g + 8 * e, 8 * jl + 2 * q)) = v[jl][e];
    // The transpose: each warp's 16 × 16 blocks by stmatrix .trans (matrix mi of block jp is
    // rows 8·(mi % 2)… × columns 16·jp + 8·(mi / 2)…, stored at its columns' rows).
    const int mi = lane / 8;
#pragma unroll
    for (int jp = 0; jp < 4; ++jp) {
      const uint32_t f[4] = {as_bits(v[2 * jp][0]), as_bits(v[2 * jp][1]), as_bits(v[2 * jp + 1][0]),
                             as_bits(v[2 * jp + 1][1])};
      stmatrix_x4_trans(transposed + QuarterLayout::offset(16 * jp + 8 * (mi / 2) + lane % 8, 16 * warp + 8 * (mi % 2)), f);
    }
    if (!straddles) {
      wgmma::proxy_fence();   // the staged values, seen by the TMA stores
      tma::named_barrier(w.barrier, 128);
      if (wt == 0) {
        tma::store_3d(w.d_map, static_cast<int>(col0), static_cast<int>(row0), static_cast<int>(mat), shared_address(w.direct));
        tma::store_3d(w.d_map, static_cast<int>(row0), static_cast<int>(col0), static_cast<int>(mat),
                      shared_address(transposed));
        tma::commit_bulk();
      }
      continue;
    }
    tma::named_barrier(w.barrier, 128);
#pragma unroll
    for (int e = 0; e < 4; ++e) {   // tile (i, j): what lies on or below the diagonal
      const int idx = wt + 128 * e, r = idx / 8, p = idx % 8, tile_row = 64 * h + r, tile_col = 64 * ch + 8 * p;
      T* dst = dm + (row0 + r) * w.m + col0 + 8 * p;
      const unsigned char* src = w.direct + QuarterLayout::offset(r, 8 * p);
      if (tile_col + 7 <= tile_row) {
        *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(src);
      } else {
        for (int x = 0; tile_col + x <= tile_row; ++x) dst[x] = reinterpret_cast<const T*>(src)[x];
      }
    }
#pragma unroll
    for (int e = 0; e < 4; ++e) {   // tile (j, i): what lies above it
      const int idx = wt + 128 * e, r = idx / 8, p = idx % 8, first = 64 * h + 8 * p, tile_col = 64 * ch + r;
      T* dst = dm + (col0 + r) * w.m + row0 + 8 * p;   // r: a column of the quarter, a row of its transpose
      const unsigned char* src = transposed + QuarterLayout::offset(r, 8 * p);
      if (first > tile_col) {
        *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(src);
      } else {
        for (int x = 0; x < 8; ++x)
          if (first + x > tile_col) dst[x] = reinterpret_cast<const T*>(src)[x];
      }
    }
  }
}

}  // namespace muoncheck::impl::cuda::triangle
