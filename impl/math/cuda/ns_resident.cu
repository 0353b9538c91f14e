// The resident standard Newton–Schulz kernel; see ns_resident.hpp for the contract, the
// rounding model and the work split.
#include "impl/math/cuda/ns_resident.hpp"

#include <algorithm>
#include <array>
#include <cfloat>
#include <type_traits>

#include <cooperative_groups.h>

#include "impl/math/cuda/cuda_check.hpp"
#include "impl/math/cuda/ns_small.cuh"

namespace muoncheck::impl::cuda {
namespace {

namespace cg = cooperative_groups;
using namespace small_ns;

constexpr int kCluster = 8;                     // blocks per matrix
constexpr int kChunk = 128;                     // columns of X' per pass of X ← aX + BX (one wgmma N)
constexpr int kLoadStages = 4;                  // copy groups the load is split into, Σx² follows them
constexpr int kUnits = 2 * kLowerTiles;                      // halves of lower tiles
constexpr int kUnitsPerBlock = kUnits / kCluster;
constexpr int kUnitBytes = 8 * 16 * 4;                       // one unit of a partial, fp32
constexpr int kReceiveBytes = kUnitsPerBlock * kCluster * kUnitBytes;
constexpr int kAUnitBytes = 8 * 16 * 2;                      // one unit of A, 16-bit
// What a block's two barriers count per iteration: the other blocks' partials of its units, and
// the other blocks' units of A (its own come by plain stores, before a barrier of the block).
constexpr uint32_t kRemotePartialBytes = (kCluster - 1) * kUnitsPerBlock * kUnitBytes;
constexpr uint32_t kRemoteABytes = (kUnits - kUnitsPerBlock) * kAUnitBytes;
static_assert(kUnits % kCluster == 0, "the units split evenly over the cluster");
static_assert(kRows <= kBlockThreads, "a thread per row (the next matrix's prefetch)");

int slice_width(int64_t n) {
  const int64_t per = (n + kCluster - 1) / kCluster;
  return static_cast<int>((per + kChunk - 1) / kChunk * kChunk);
}

size_t shared_bytes(int width) {
  return kAlign + static_cast<size_t>(kRows) * (width + kRows) * 2 + kReceiveBytes + 16 * sizeof(double);
}

// The shared memory layout, from the first 1024-byte boundary: X's slice (kRows × W values),
// then A and later B in its place (kRows × kRows), both in the 128-byte-swizzled layout that
// wgmma reads (wgmma.cuh; the eight rows of a 16-byte column piece lie in distinct banks, so
// ldmatrix and stmatrix reach them without conflict); the receive slots of this block's units of
// XXᵀ (slot (unit, q): block q's fp32 partial, 8 rows × 16 columns); the norm's scratch. A and B
// are symmetric and defined by their 36 lower 16 × 16 tiles, as cuBLAS's lower-triangle split
// defines them (symmetric_product.hpp): the upper tiles off the diagonal are copies of the
// transposed lower ones, the diagonal tiles are as computed. A unit is an 8-row half of a lower
// tile, u = 2·lower_index(I, J) + half; block r owns units [9r, 9r + 9). The scratch's doubles
// 12 and 13 hold the two barriers the exchanges of an iteration complete on (partials, A).
struct Layout {
  unsigned char* base;   // X
  int width;             // X's columns
  __device__ unsigned char* a() const { return base + static_cast<size_t>(kRows) * width * 2; }
  __device__ unsigned char* receive() const { return a() + kRows * kRows * 2; }
  __device__ double* reduce() const { return reinterpret_cast<double*>(receive() + kReceiveBytes); }
  __device__ void* barriers() const { return reduce() + 12; }
};


// A thread's vectors of 8 values in a block's slice of kWidth columns: vector i has row row(i),
// first column col(i) and lies at at(i) in the swizzled slice at xb. Where a row's vectors divide
// the block's threads (slices of 128, 256 and 512 columns) the column is the same for every i and
// the row advances by kStep, so the address is one of two bases (the row's parity in the 8-row
// swizzle, for kStep = 4) plus 128·kStep·i: no division per vector. Constructed where a phase
// starts (from an opaque thread index), so the bases are not held across the iterations.
template <int kWidth>
struct SliceVectors {
  static constexpr int kPerRow = kWidth / 8;
  static constexpr bool kRegular = kBlockThreads % kPerRow == 0;
  static constexpr int kStep = kRegular ? kBlockThreads / kPerRow : 0;
  static_assert(!kRegular || kStep * kPerRow == kBlockThreads, "a thread's vectors kStep rows apart");
  unsigned char* xb;
  int tid;
  unsigned char* even;   // kRegular: at(i) = (i even ? even : odd) + 128·kStep·i
  unsigned char* odd;
  __device__ SliceVectors(unsigned char* slice, int thread) : xb(slice), tid(thread), even(nullptr), odd(nullptr) {
    if constexpr (kRegular) {
      even = xb + XLayout::offset(row(0), col(0));
      odd = xb + XLayout::offset(row(0) + kStep, col(0)) - 128 * kStep;
    }
  }
  __device__ int row(int i) const {
    if constexpr (kRegular) return tid / kPerRow + kStep * i;
    return (tid + i * kBlockThreads) / kPerRow;
  }
  __device__ int col(int i) const {
    if constexpr (kRegular) return tid % kPerRow * 8;
    return (tid + i * kBlockThreads) % kPerRow * 8;
  }
  __device__ unsigned char* at(int i) const {
    if constexpr (kRegular) return (i % 2 == 0 ? even : odd) + 128 * kStep * i;
    return xb + XLayout::offset(row(i), col(i));
  }
};

// One block of cluster blockIdx.x / kCluster, which takes the matrices blockIdx.x / kCluster +
// i · (the clusters in the grid) in turn; kWidth: the block's slice's columns.
template <class T, bool kVectors, int kWidth>
__global__ void __launch_bounds__(kBlockThreads, 1) ns_resident(T* x, int batch, int m, int n, Coefficients k) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  static_assert(kWidth % kChunk == 0 && kWidth <= kMaxColumns / kCluster, "slice width");
  constexpr int kPerRow = kWidth / 8, kVectorsPerBlock = kRows * kPerRow;
  constexpr int kPerThread = kVectorsPerBlock / kBlockThreads, kPerStage = kPerThread / kLoadStages;
  static_assert(kPerStage * kLoadStages * kBlockThreads == kVectorsPerBlock && kLoadStages <= 4, "the load splits evenly");
  // A kernel launched after this one as its programmatic dependent (the streamed kernel beside
  // it, ns_streamed.hpp) starts once every block of this grid has its multiprocessor.
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
  extern __shared__ __align__(16) unsigned char shared[];
  cg::cluster_group cluster = cg::this_cluster();
  const int rank = static_cast<int>(cluster.block_rank());
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
  unsigned char* xb = shared + (kAlign - shared_address(shared) % kAlign) % kAlign;
  const Layout lay{xb, kWidth};
  const int col0 = rank * kWidth;
  // The exchanges' barriers, each completed once per iteration by one arrival (this block's
  // thread 0, announcing the other blocks' bytes) and those bytes; the first matrix's norm
  // barrier below orders their initialization before any other block's store.
  const uint32_t partials_bar = shared_address(lay.barriers()), a_bar = partials_bar + 8;
  if (tid == 0) {
    tma::init(partials_bar, 1);
    tma::init(a_bar, 1);
    tma::fence_init();
  }

  // The cluster's matrices one after the other (one when the grid holds a cluster per matrix).
  const int clusters = static_cast<int>(gridDim.x) / kCluster;
  for (int index = static_cast<int>(blockIdx.x) / kCluster, round = 0; index < batch; index += clusters, ++round) {
    T* mat = x + static_cast<int64_t>(index) * m * n;
    // Load this block's slice (zeros past m and n): with cp.async where rows are 16-byte vectors
    // (in kLoadStages groups, each thread summing its own vectors of a group while the later ones
    // are in flight), else element by element. Σx² in double, each thread over its vectors in order.
    const SliceVectors<kWidth> v(xb, opaque(tid));
#pragma unroll
    for (int s = 0; s < kLoadStages; ++s) {
#pragma unroll 1
      for (int i = s * kPerStage; i < (s + 1) * kPerStage; ++i) {
        const int row = v.row(i), col = col0 + v.col(i);
        const bool inside = row < m && col < n;
        const T* src = mat + (inside ? static_cast<int64_t>(row) * n + col : 0);
        if constexpr (kVectors) {
          copy_async_16(v.at(i), src, inside ? 16 : 0);
        } else {
          Vec<T> w;
#pragma unroll
          for (int e = 0; e < 8; ++e) w.v[e] = inside && col + e < n ? src[e] : st<T>(0.0f);
          *reinterpret_cast<Vec<T>*>(v.at(i)) = w;
        }
      }
      if constexpr (kVectors) commit_async_copies();
    }
    // Σx²: eight chains, one per position in the vector, each over this thread's vectors in order;
    // |x| exactly as a double by bit moves (Magnitude). A thread that met an infinity or NaN sums
    // its vectors again through the conversion, which carries them into the norm.
    double ss[8] = {};
    uint32_t top = 0;            // per 16-bit half, the largest magnitude (|x|'s 15 bits) seen
    uint32_t low = 0xffffffffu;  // per half, the smallest nonzero magnitude − 1 (a zero wraps to 0xffff)
#pragma unroll
    for (int s = 0; s < kLoadStages; ++s) {
      if constexpr (kVectors) wait_async_copies(kLoadStages - 1 - s);
#pragma unroll 2
      for (int i = s * kPerStage; i < (s + 1) * kPerStage; ++i) {
        const uint4 w = *reinterpret_cast<const uint4*>(v.at(i));
        const uint32_t u[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
        for (int k = 0; k < 4; ++k) {
          const uint32_t mag = u[k] & 0x7fff7fffu;
          top = __vmaxu2(top, mag);
          low = __vminu2(low, __vsub2(mag, 0x00010001u));
          const double lo = magnitude_low<T>(u[k]), hi = magnitude_high<T>(u[k]);
          ss[2 * k] += lo * lo;
          ss[2 * k + 1] += hi * hi;
        }
      }
    }
    const uint32_t largest = max(top & 0xffffu, top >> 16), smallest = min(low & 0xffffu, low >> 16) + 1;
    const bool finite = largest < Magnitude<T>::kExponent;   // no infinity or NaN among this thread's values
    if (!finite) {
#pragma unroll
      for (double& e : ss) e = 0.0;
#pragma unroll 1
      for (int i = 0; i < kPerThread; ++i) {
        const Vec<T> w = *reinterpret_cast<const Vec<T>*>(v.at(i));
#pragma unroll
        for (int e = 0; e < 8; ++e) {
          const double d = ld(w.v[e]);
          ss[e] += d * d;
        }
      }
    }
    double* red = lay.reduce();
    const double block_total = block_sum(((ss[0] + ss[1]) + (ss[2] + ss[3])) + ((ss[4] + ss[5]) + (ss[6] + ss[7])), red);
    if (tid == 0) red[8 + round % 2] = block_total;   // by parity: a block a round ahead writes the other
    cluster.sync();
    if (warp == 0) {   // the eight blocks' sums read at once, added in rank order
      const double mine = lane < kCluster ? cluster.map_shared_rank(red, lane)[8 + round % 2] : 0.0;
      double total = 0.0;
      for (int q = 0; q < kCluster; ++q) total += __shfl_sync(0xffffffffu, mine, q);
      if (lane == 0) reinterpret_cast<float*>(red + 10)[0] = ld(st<T>(sqrtf(static_cast<float>(total)))) + 1e-7f;
    }
    __syncthreads();
    const float denom = reinterpret_cast<const float*>(red + 10)[0], inverse = __frcp_rn(denom);
    // Markstein's FMAs where they divide this thread's values exactly (markstein_exact for its
    // largest and smallest nonzero |x|, 0 when all are zero: a branch per thread, no test per
    // value), else the IEEE division value by value.
    const float big = static_cast<float>(magnitude_low<T>(largest)),
                tiny = smallest > 0xffffu ? 0.0f : static_cast<float>(magnitude_low<T>(smallest));
    if (finite && markstein_exact(big, denom, inverse) && markstein_exact(tiny, denom, inverse)) {
      constexpr int kGroup = 4;   // vectors read before any is written (see write_back below)
      static_assert(kPerThread % kGroup == 0, "whole groups");
#pragma unroll 1
      for (int i0 = 0; i0 < kPerThread; i0 += kGroup) {
        Vec<T> w[kGroup];
#pragma unroll
        for (int q = 0; q < kGroup; ++q) w[q] = *reinterpret_cast<const Vec<T>*>(v.at(i0 + q));
#pragma unroll
        for (int q = 0; q < kGroup; ++q) {
#pragma unroll
          for (int e = 0; e < 8; ++e) {
            const float xv = ld(w[q].v[e]);
            w[q].v[e] = st<T>(markstein(xv, denom, inverse));
          }
          *reinterpret_cast<Vec<T>*>(v.at(i0 + q)) = w[q];
        }
      }
    } else {
#pragma unroll 1
      for (int i = 0; i < kPerThread; ++i) {
        T* p = reinterpret_cast<T*>(v.at(i));
#pragma unroll 1
        for (int e = 0; e < 8; ++e) p[e] = st<T>(ld(p[e]) / denom);
      }
    }
    wgmma::proxy_fence();   // the first X ← aX + BX reads the normalized X through wgmma
    __syncthreads();
    // The cluster's next matrix into L2 while this one iterates (its iterations touch no global
    // memory), so that its load reads L2: one row of this block's slice per thread.
    if constexpr (kVectors) {
      const int next = index + clusters;
      if (next < batch && tid < m && col0 < n)
        prefetch_l2(x + static_cast<int64_t>(next) * m * n + static_cast<int64_t>(tid) * n + col0,
                    static_cast<uint32_t>(min(kWidth, n - col0)) * sizeof(T));
    }

    const int wg = warp / 4, ww = warp % 4;   // warpgroup, warp in it: rows 16·ww.. of a 64-row product
    const uint32_t x_shared = shared_address(xb), receive_shared = shared_address(lay.receive()),
                   a_shared = shared_address(lay.a());
    for (int it = 0; it < k.steps; ++it) {
      // This block's partial of XXᵀ over its columns, wgmma products of X with itself: warpgroup 0
      // rows 0..63 × columns 0..63 and rows 64..127 × columns 96..127, warpgroup 1 rows
      // 64..127 × columns 0..95 (the lower 16 × 16 tiles and a few above the diagonal, in equal
      // shares). Each lower unit is sent to its owner's receive slot.
      {
        // A product's lower units: d holds rows 16·(tile_row + ww).. × columns 16·tile_col.. .
        auto push = [&](auto& d, int tile_row, int tile_col) {
          constexpr int kTilesAcross = static_cast<int>(sizeof(d) / sizeof(float)) / 8;
          const int ti = tile_row + opaque(ww);   // the units' slots are computed here, each iteration
#pragma unroll
          for (int jt = 0; jt < kTilesAcross; ++jt) {
            const int tj = tile_col + jt;
            if (ti < tj) continue;
#pragma unroll
            for (int h = 0; h < 2; ++h) {   // a slot holds (row, column 8s + 2t + e) at [row][t][s][e]
              const int u = 2 * lower_index(ti, tj) + h, owner = u / kUnitsPerBlock;
              const uint32_t slot = receive_shared + ((u % kUnitsPerBlock) * kCluster + rank) * kUnitBytes + (g * 4 + t) * 16;
              send(slot,
                   make_uint4(__float_as_uint(d[8 * jt + 2 * h]), __float_as_uint(d[8 * jt + 2 * h + 1]),
                              __float_as_uint(d[8 * jt + 4 + 2 * h]), __float_as_uint(d[8 * jt + 5 + 2 * h])),
                   owner, rank, partials_bar);
            }
          }
        };
        const uint32_t xs = opaque(x_shared);   // see issue() below
        auto x_desc = [&](int row0, int k0) { return wgmma::k_major_descriptor<kRows>(xs, row0, k0); };
        if (wg == 0) {
          float top[32], corner[16];
          wgmma::fence();
#pragma unroll
          for (int ks = 0; ks < kWidth / 16; ++ks) {
            wgmma::Ss<T, 64>::mma(top, x_desc(0, 16 * ks), x_desc(0, 16 * ks), ks);
            wgmma::Ss<T, 32>::mma(corner, x_desc(64, 16 * ks), x_desc(96, 16 * ks), ks);
          }
          wgmma::commit();
          wgmma::wait<0>();
          wgmma::pin(top);
          wgmma::pin(corner);
          push(top, 0, 0);
          push(corner, 4, 6);
        } else {
          float bottom[48];
          wgmma::fence();
#pragma unroll
          for (int ks = 0; ks < kWidth / 16; ++ks) wgmma::Ss<T, 96>::mma(bottom, x_desc(64, 16 * ks), x_desc(0, 16 * ks), ks);
          wgmma::commit();
          wgmma::wait<0>();
          wgmma::pin(bottom);
          push(bottom, 4, 0);
        }
      }
      // No cluster barrier between the exchanges (each is a GPU-scope fence): a block waits for
      // the bytes it expects. A slot or a unit of A is written again only after its reader has
      // passed on what it read: the next iteration's partials come from blocks that have this
      // iteration's A, which every owner sends after summing its slots; the next A comes after
      // the next partials, which a block sends after its last read of B.
      const uint32_t parity = static_cast<uint32_t>(round * k.steps + it) % 2;   // iterations done before this one
      __syncthreads();   // this block's own partials are in place
      if (tid == 0) tma::arrive_expect(partials_bar, kRemotePartialBytes);
      // A's lower tiles: block r sums each of its units' eight partials in rank order, rounds
      // once and writes the unit into every block.
      if (tid < kUnitsPerBlock * 16) {
        tma::wait_cluster(partials_bar, parity);
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
        int ti, tj;
        lower_tile(u / 2, ti, tj);
        const int at = XLayout::offset(16 * ti + 8 * half + rr, 16 * tj + 8 * seg);
#pragma unroll
        for (int q = 0; q < kCluster; ++q) send(a_shared + at, *reinterpret_cast<const uint4*>(&w), q, rank, a_bar);
      }
      if (tid == 0) tma::arrive_expect(a_bar, kRemoteABytes);
      tma::wait_cluster(a_bar, parity);
      __syncthreads();   // and its own units of A
      mirror_lower_tiles(lay.a(), warp, lane);
      wgmma::proxy_fence();   // A is read by wgmma next
      __syncthreads();
      symmetric_b<T>(lay.a(), a_shared, k.b[it], k.c[it], wg, ww, lane);
      // X ← aX + BX over this block's columns in place, kChunk at a time, as wgmma products:
      // warpgroup wg the rows 64·wg.., its rows of B in registers for every chunk. Chunk c + 1's
      // products run while chunk c is written back; a chunk is written once both warpgroups'
      // products have read it.
      {
        const float ka = k.a[it];
        const SwizzledRows rows(lay.a(), 64 * wg + 16 * ww + lane % 16, lane / 16);
        uint32_t fb[kRows / 16][4];
#pragma unroll
        for (int ks = 0; ks < kRows / 16; ++ks) ldmatrix_x4(fb[ks], rows.at(0, 16 * ks));
        // The descriptors from an opaque base: computed at each issue, not all held from the start.
        auto issue = [&](float (&d)[64], int c0) {
          wgmma::issue<T, kChunk, kRows>(d, fb, opaque(x_shared), c0);
        };
        // All of the chunk's old values are read before any new one is written: stores and loads
        // through one pointer type would otherwise run one after the other.
        auto write_back = [&](float (&d)[64], int c0) {
          // XLayout::offset(64·wg + 16·ww + g + 8h, c0 + 8j + 2t), from a base the compiler cannot hoist out
          // of the iterations (c0 is a multiple of 64; the row is g modulo 8).
          unsigned char* const base = xb + opaque(c0 / 64) * XLayout::kBlockBytes + (64 * wg + 16 * ww + g) * 128 + 4 * t;
          auto at = [&](int j, int h) { return base + (j / 8) * XLayout::kBlockBytes + 8 * h * 128 + (j % 8 ^ g) * 16; };
#pragma unroll
          for (int j0 = 0; j0 < kChunk / 8; j0 += 8) {   // in two halves, to hold fewer registers
            Pair<T> old[8][2];
#pragma unroll
            for (int j = 0; j < 8; ++j)
#pragma unroll
              for (int h = 0; h < 2; ++h) old[j][h] = *reinterpret_cast<const Pair<T>*>(at(j0 + j, h));
#pragma unroll
            for (int j = 0; j < 8; ++j)
#pragma unroll
              for (int h = 0; h < 2; ++h) {
                Pair<T> v;
                v.v[0] = st<T>(d[4 * (j0 + j) + 2 * h] + ka * ld(old[j][h].v[0]));
                v.v[1] = st<T>(d[4 * (j0 + j) + 2 * h + 1] + ka * ld(old[j][h].v[1]));
                *reinterpret_cast<Pair<T>*>(at(j0 + j, h)) = v;
              }
          }
        };
        constexpr int kChunks = kWidth / kChunk;
        float acc[2][64];
        issue(acc[0], 0);
#pragma unroll
        for (int c = 0; c < kChunks; ++c) {
          if (c + 1 < kChunks) {
            issue(acc[(c + 1) % 2], kChunk * (c + 1));
            wgmma::wait<1>();
          } else {
            wgmma::wait<0>();
          }
          wgmma::pin(acc[c % 2]);
          __syncthreads();   // both warpgroups' products of chunk c are done
          write_back(acc[c % 2], kChunk * c);
        }
        wgmma::proxy_fence();   // the next iteration's products read the new X
        __syncthreads();
      }
    }

    // Write NS(X) back (rows < m, columns < n).
    const SliceVectors<kWidth> out(xb, opaque(tid));
#pragma unroll 1
    for (int i = 0; i < kPerThread; ++i) {
      const int row = out.row(i), col = col0 + out.col(i);
      if (row >= m || col >= n) continue;
      const Vec<T> w = *reinterpret_cast<const Vec<T>*>(out.at(i));
      T* dst = mat + static_cast<int64_t>(row) * n + col;
      if constexpr (kVectors) {
        *reinterpret_cast<Vec<T>*>(dst) = w;
      } else {
        for (int e = 0; e < 8 && col + e < n; ++e) dst[e] = w.v[e];
      }
    }
  }
  // No block leaves while another may still read its shared memory: with no iterations, the last
  // matrix's norm is read across the cluster with no barrier after it.
  cluster.sync();
#else
  __trap();   // built without sm_90a's wgmma: resident_fits never launches it (g_built_with_wgmma)
#endif
}

// 1 in the device code of an sm_90a build (the kernel's wgmma products), 0 in any other.
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
__device__ int g_built_with_wgmma = 1;
#else
__device__ int g_built_with_wgmma = 0;
#endif

// The kernel for a storage type, load mode and slice width (128, 256, 384 or 512).
template <class T, bool kVectors>
auto kernel(int width) {
  using F = void (*)(T*, int, int, int, Coefficients);
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

// Per device, asked once: whether every instantiation launches there, and for each slice width
// (128, 256, 384, 512) the clusters that run at once (the fewest of the four instantiations).
struct DeviceFacts {
  int ok = -1;   // −1: not asked yet
  std::array<int, kMaxColumns / kCluster / kChunk> clusters{};
};
std::array<DeviceFacts, 64> g_devices;

template <class T, bool kVectors>
int prepare(int width) {
  const int bytes = static_cast<int>(shared_bytes(width));
  return cudaFuncSetAttribute(kernel<T, kVectors>(width), cudaFuncAttributeMaxDynamicSharedMemorySize, bytes) ==
                 cudaSuccess
             ? active_clusters<T, kVectors>(width)
             : 0;
}

const DeviceFacts* device_facts() {
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= static_cast<int>(g_devices.size())) return nullptr;
  DeviceFacts& f = g_devices[dev];
  if (f.ok < 0) {
    int built = 0;   // the device code loaded for this device is the sm_90a one
    bool ok = cudaMemcpyFromSymbol(&built, g_built_with_wgmma, sizeof built) == cudaSuccess && built == 1;
    for (int w = 0; ok && w < static_cast<int>(f.clusters.size()); ++w) {
      const int width = kChunk * (w + 1);
      f.clusters[w] = std::min({prepare<__nv_bfloat16, true>(width), prepare<__nv_bfloat16, false>(width),
                                prepare<__half, true>(width), prepare<__half, false>(width)});
      ok = f.clusters[w] > 0;
    }
    (void)cudaGetLastError();   // a refused attribute leaves no sticky error behind
    f.ok = ok ? 1 : 0;
  }
  return f.ok == 1 ? &f : nullptr;
}

bool device_ok() { return device_facts() != nullptr; }

}  // namespace

int resident_active_clusters(int64_t n) {
  const DeviceFacts* f = device_facts();
  return f ? f->clusters[slice_width(n) / kChunk - 1] : 0;
}

bool resident_pays(int batch, int64_t m, int64_t n) {
  const int clusters = resident_active_clusters(n);
  return clusters > 0 && batch >= 2 && m * n >= 64 * 512 && (batch <= clusters || m * n >= 128 * 4096);
}

int resident_partial_round(int batch, int64_t n) {
  const int clusters = resident_active_clusters(n);
  return clusters > 0 && batch > clusters ? batch % clusters : 0;
}

std::string resident_scope() {
  return "m <= " + std::to_string(kRows) + ", m <= n <= " + std::to_string(kMaxColumns) + ", bf16 or fp16, at most " +
         std::to_string(kResidentMaxSteps) + " steps, the standard method or a square gram, an sm_90a build";
}

bool resident_fits(int batch, int64_t m, int64_t n, const NsConfig& cfg) {
  const bool standard = cfg.method == NsMethod::standard || m == n;
  const bool sixteen_bit = cfg.dtype == DType::bf16 || cfg.dtype == DType::fp16;
  return standard && sixteen_bit && batch >= 1 && m >= 1 && m <= kRows && m <= n && n <= kMaxColumns &&
         cfg.steps >= 0 && cfg.steps <= kResidentMaxSteps && device_ok();
}

void resident_standard(void* x, int batch, int64_t m, int64_t n, const NsConfig& cfg, cudaStream_t s) {
  if (!resident_fits(batch, m, n, cfg)) throw Error(ErrorKind::Internal, "resident_standard: the problem does not fit");
  const Coefficients k = coefficients(cfg);
  const int width = slice_width(n);
  const bool vectors = n % 8 == 0 && reinterpret_cast<uintptr_t>(x) % 16 == 0;
  cudaLaunchAttribute attr{};
  // As many clusters as run at once (or one per matrix): each works through its share in turn.
  const int clusters = std::min(batch, resident_active_clusters(n));
  cudaLaunchConfig_t lc = cluster_config(static_cast<unsigned>(clusters), width, &attr);
  lc.stream = s;
  const int mi = static_cast<int>(m), ni = static_cast<int>(n);
  with_type(cfg.dtype, [&](auto v) {
    using T = decltype(v);
    if constexpr (sizeof(T) == 2) {
      T* p = static_cast<T*>(x);
      check(cudaLaunchKernelEx(&lc, vectors ? kernel<T, true>(width) : kernel<T, false>(width), p, batch, mi, ni, k),
            "cudaLaunchKernelEx (ns_resident)");
    }
  });
}

}  // namespace muoncheck::impl::cuda
