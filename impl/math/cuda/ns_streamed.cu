// The streamed standard Newton–Schulz kernel; see ns_streamed.hpp for the contract, the rounding
// model and why it exists.
#include "impl/math/cuda/ns_streamed.hpp"

#include <algorithm>
#include <array>

#include <cooperative_groups.h>

#include "impl/math/cuda/cuda_check.hpp"
#include "impl/math/cuda/ns_resident.hpp"
#include "impl/math/cuda/ns_small.cuh"
#include "impl/math/cuda/tensor_map.hpp"

namespace muoncheck::impl::cuda {
namespace {

namespace cg = cooperative_groups;
using namespace small_ns;

constexpr int kCluster = 2;                              // blocks per matrix
constexpr int kChunk = 64;                               // columns per streamed chunk: one swizzled block
constexpr int kChunkBytes = XLayout::kBlockBytes;        // 16 KB
constexpr int kStages = 8;                               // chunks in the ring (a power of 2: c % kStages is a mask)
constexpr int kGroup = 4;                                // chunks of X ← aX + BX whose products overlap
constexpr int kAhead = kStages - 2;                      // chunks in flight ahead of the one in use
constexpr int kPairAhead = kStages - 4;                  // XXᵀ: chunks in flight ahead of a step's two
constexpr int kVectorsPerThread = kChunkBytes / 16 / kBlockThreads;
constexpr int kPartialVectors = 12;                      // a thread's 48 fp32 accumulators of a partial
constexpr int kPartialBytes = kPartialVectors * 16 * kBlockThreads;   // a block's partial of XXᵀ
static_assert(kVectorsPerThread == 4, "the thread mapping below");
static_assert(kStages >= 6 && (kStages & (kStages - 1)) == 0, "XXᵀ: two chunks in use, two in products, two loading");

int half_width(int64_t n) {   // columns per block, whole groups of chunks
  const int64_t per = (n + kCluster - 1) / kCluster, group = kGroup * kChunk;
  return static_cast<int>((per + group - 1) / group * group);
}

// From the first 1024-byte boundary: the ring (kStages chunks of kRows × 64, swizzled), A and
// later B (kRows × kRows swizzled), the receive slot of the other block's partial (by thread:
// thread i's 48 accumulators at 192·i), the norm's scratch (16 doubles; the 13th the barrier the
// partial completes on), the ring slots' barriers.
constexpr size_t kSharedBytes =
    kAlign + kStages * kChunkBytes + kRows * kRows * 2 + kPartialBytes + 16 * sizeof(double) + kStages * 8;

// One block of cluster blockIdx.x / kCluster, which takes the matrices blockIdx.x / kCluster +
// i · (the clusters in the grid) in turn; x_map: the batch as kRows × kChunk boxes, swizzled
// (tensor_map.hpp), which also holds the shape (m and n are not read); width: the block's columns
// (whole groups of chunks); scratch: per cluster of the grid, two blocks' width columns of kRows
// rows, swizzled.
template <class T>
__global__ void __launch_bounds__(kBlockThreads, 1)
    ns_streamed(const __grid_constant__ CUtensorMap x_map, unsigned char* scratch, int batch, int m, int n, int width,
                Coefficients k) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ __align__(16) unsigned char shared[];
  cg::cluster_group cluster = cg::this_cluster();
  const int rank = static_cast<int>(cluster.block_rank()), peer = 1 - rank;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4, wg = warp / 4, ww = warp % 4;
  unsigned char* const ring = shared + (kAlign - shared_address(shared) % kAlign) % kAlign;
  unsigned char* const receive = ring + kStages * kChunkBytes + kRows * kRows * 2;
  double* const red = reinterpret_cast<double*>(receive + kPartialBytes);
  const uint32_t ring_shared = shared_address(ring), receive_shared = shared_address(receive),
                 bar = shared_address(red + 12), full0 = shared_address(red + 16);
  if (tid == 0) {
    tma::init(bar, 1);
    for (int s = 0; s < kStages; ++s) tma::init(full0 + 8 * s, 1);
    tma::fence_init();
  }
  cluster.sync();   // the barriers are initialized before the other block's first store onto one

  const int chunks = width / kChunk, col0 = rank * width, clusters = static_cast<int>(gridDim.x) / kCluster;
  unsigned char* const scr = scratch + (static_cast<int64_t>(blockIdx.x / kCluster) * kCluster + rank) * chunks * kChunkBytes;
  // This thread's four 16-byte vectors of a chunk: rows vrow + 32i, columns 8·piece.., at
  // swizzled + 4096i (the normalization's passes, which touch every value once, in any order).
  const int vrow = tid / 8, piece = tid % 8, swizzled = vrow * 128 + ((piece ^ (vrow % 8)) * 16);
  // This thread's accumulators of B·X_c (a 64-row wgmma per warpgroup): rows row0 + 8h, columns 8j + 2t.
  const int row0 = 64 * wg + 16 * ww + g;
  uint32_t exchanges = 0;   // partials received so far: the barrier's phase parity
  uint32_t phases = 0;      // bit s: the parity of ring slot s's next phase
  bool arrived = false;     // this block has arrived on the cluster barrier and not yet waited

  for (int index = static_cast<int>(blockIdx.x) / kCluster, round = 0; index < batch; index += clusters, ++round) {
    // Chunk c into ring slot c % kStages, counted on the slot's barrier, by thread 0: from the
    // scratch copy (one bulk copy) or from the matrix (one box of the tensor map, zeros past m and
    // n), swizzled either way.
    auto load = [&](int c, bool from_matrix) {
      if (c >= chunks || tid != 0) return;
      const int s = c % kStages;
      const uint32_t full = full0 + 8 * s, slot = ring_shared + s * kChunkBytes;
      tma::arrive_expect(full, kChunkBytes);
      if (from_matrix)
        tma::load_3d(slot, &x_map, col0 + c * kChunk, 0, index, full);
      else
        tma::load_1d(slot, scr + c * kChunkBytes, kChunkBytes, full);
    };
    auto wait_chunk = [&](int c) {
      const int s = c % kStages;
      tma::wait(full0 + 8 * s, (phases >> s) & 1u);
      phases ^= 1u << s;
    };
    auto prologue = [&](bool from_matrix, int count = kAhead) {
#pragma unroll 1
      for (int c = 0; c < count; ++c) load(c, from_matrix);
    };
    // Chunk c (ring slot `slot`) out, by thread 0: to the scratch copy, or into the matrix as NS(X)
    // (the tensor map's box: nothing past m and n).
    auto store = [&](uint32_t slot, int c, bool into_matrix) {
      if (tid != 0) return;
      if (into_matrix)
        tma::store_3d(&x_map, col0 + c * kChunk, 0, index, slot);
      else
        tma::store_1d(scr + c * kChunkBytes, slot, kChunkBytes);
      tma::commit_bulk();
    };
    // Before slot (c − 2)'s reload at chunk c: chunk c − 2's store has read it (chunk c − 1's may
    // still be reading).
    auto slot_read_out = [&] {
      if (tid == 0) tma::wait_bulk_read<1>();
    };
    // p += this block's share of X_c · X_cᵀ: the lower 16 × 16 tiles and a few above the diagonal,
    // in two products of the same shapes in both warpgroups (so that no branch splits the MMAs):
    // rows 64·wg..+63 × columns 0..63 (p[0..31]), and rows 64..127 × columns 96..127 in
    // warpgroup 0, 64..95 in warpgroup 1 (p[32..47]). kFirst: the pass's first chunk, whose first
    // k-step writes p without reading it.
    float p[48];
    const int corner_col = wg == 0 ? 96 : 64;
    // opens: this chunk's products start a group (wgmma.fence first); closes: they end it (else the
    // next chunk's join them).
    auto accumulate_partial = [&](uint32_t slot, auto first, bool opens, bool closes) {
      constexpr bool kFirst = decltype(first)::value;
      const uint32_t s = opaque(slot);
      auto desc = [&](int row, int ks) { return wgmma::k_major_descriptor<kRows>(s, row, 16 * ks); };
      float(&square)[32] = *reinterpret_cast<float(*)[32]>(&p[0]);
      float(&corner)[16] = *reinterpret_cast<float(*)[16]>(&p[32]);
      if (opens) wgmma::fence();
#pragma unroll
      for (int ks = 0; ks < kChunk / 16; ++ks) {
        if (kFirst && ks == 0) {
          wgmma::SsFirst<T, 64>::mma(square, desc(64 * wg, ks), desc(0, ks));
          wgmma::SsFirst<T, 32>::mma(corner, desc(64, ks), desc(corner_col, ks));
        } else {
          wgmma::Ss<T, 64>::mma(square, desc(64 * wg, ks), desc(0, ks), 1);
          wgmma::Ss<T, 32>::mma(corner, desc(64, ks), desc(corner_col, ks), 1);
        }
      }
      if (closes) wgmma::commit();
    };
    // Where p[4j + 2h + e] lies: row p_row(j) + 8h, column p_col0(j) + 2t + e.
    auto p_row = [&](int j) { return (j < 8 ? 64 * wg : 64) + 16 * ww + g; };
    auto p_col0 = [&](int j) { return j < 8 ? 8 * j : corner_col + 8 * (j - 8); };

    // Pass 1: Σx² over this block's columns.
    prologue(true);
    double ss[8] = {};
    uint32_t top = 0;            // per 16-bit half, the largest magnitude seen
    uint32_t low = 0xffffffffu;  // per half, the smallest nonzero magnitude − 1 (a zero wraps to 0xffff)
#pragma unroll 1
    for (int c = 0; c < chunks; ++c) {
      wait_chunk(c);
      __syncthreads();   // every thread is past chunk c − 2
      load(c + kAhead, true);
      const unsigned char* slot = ring + (c % kStages) * kChunkBytes;
#pragma unroll
      for (int i = 0; i < kVectorsPerThread; ++i) {
        const uint4 w = *reinterpret_cast<const uint4*>(slot + swizzled + 4096 * i);
        const uint32_t u[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          const uint32_t mag = u[q] & 0x7fff7fffu;
          top = __vmaxu2(top, mag);
          low = __vminu2(low, __vsub2(mag, 0x00010001u));
          const double lo = magnitude_low<T>(u[q]), hi = magnitude_high<T>(u[q]);
          ss[2 * q] += lo * lo;
          ss[2 * q + 1] += hi * hi;
        }
      }
    }
    const uint32_t largest = max(top & 0xffffu, top >> 16), smallest = min(low & 0xffffu, low >> 16) + 1;
    const bool finite = largest < Magnitude<T>::kExponent;
    // An infinity makes the sum through the conversion +∞, a NaN (a larger magnitude) NaN.
    const double mine = finite ? ((ss[0] + ss[1]) + (ss[2] + ss[3])) + ((ss[4] + ss[5]) + (ss[6] + ss[7]))
                               : (largest == Magnitude<T>::kExponent ? __longlong_as_double(0x7ff0000000000000ll)
                                                                       : __longlong_as_double(0x7ff8000000000000ll));
    __syncthreads();   // every read of the ring is done
    prologue(true);    // pass 2's first chunks load while the norm is summed
    const double block_total = block_sum(mine, red);
    if (tid == 0) red[8 + round % 2] = block_total;   // by parity: the other block may still read last round's
    if (arrived) cluster_wait();
    arrived = false;
    cluster.sync();
    if (tid == 0) {
      const double total = block_total + cluster.map_shared_rank(red, peer)[8 + round % 2];
      reinterpret_cast<float*>(red + 10)[0] = ld(st<T>(sqrtf(static_cast<float>(total)))) + 1e-7f;
    }
    __syncthreads();
    const float denom = reinterpret_cast<const float*>(red + 10)[0], inverse = __frcp_rn(denom);
    const float big = static_cast<float>(magnitude_low<T>(largest)),
                tiny = smallest > 0xffffu ? 0.0f : static_cast<float>(magnitude_low<T>(smallest));
    const bool markstein_ok = finite && markstein_exact(big, denom, inverse) && markstein_exact(tiny, denom, inverse);

    // Pass 2: X ← round(X / denom) chunk by chunk in place, out to the scratch copy (or, with no
    // iterations, into the matrix); with iterations, the first one's XXᵀ accumulates from each
    // chunk while it is in the ring (the same products in the same order as a pass of its own,
    // which would read the scratch copy once more).
    const bool fused = k.steps > 0;
#pragma unroll 1
    for (int c = 0; c < chunks; ++c) {
      slot_read_out();
      wait_chunk(c);
      if (fused) wgmma::wait<1>();   // chunk c − 2's products are done: its slot may be reloaded
      __syncthreads();
      load(c + kAhead, true);
      unsigned char* slot = ring + (c % kStages) * kChunkBytes;
      // Markstein's FMAs where they divide this thread's values exactly, else IEEE division (a
      // branch per thread, as in the resident kernel).
      if (markstein_ok) {
#pragma unroll
        for (int i = 0; i < kVectorsPerThread; ++i) {
          Vec<T>* v = reinterpret_cast<Vec<T>*>(slot + swizzled + 4096 * i);
          Vec<T> w = *v;
#pragma unroll
          for (int e = 0; e < 8; ++e) w.v[e] = st<T>(markstein(ld(w.v[e]), denom, inverse));
          *v = w;
        }
      } else {
#pragma unroll 1
        for (int i = 0; i < kVectorsPerThread; ++i) {
          T* v = reinterpret_cast<T*>(slot + swizzled + 4096 * i);
#pragma unroll 1
          for (int e = 0; e < 8; ++e) v[e] = st<T>(ld(v[e]) / denom);
        }
      }
      wgmma::proxy_fence();   // the store and the products read what this thread wrote
      __syncthreads();
      store(ring_shared + (c % kStages) * kChunkBytes, c, !fused);
      if (!fused) continue;
      if (c == 0)
        accumulate_partial(ring_shared, std::true_type{}, true, true);   // p is written, not read
      else
        accumulate_partial(ring_shared + (c % kStages) * kChunkBytes, std::false_type{}, true, true);
    }
    // Pass 2's stores are done before the first iteration reads the scratch copy (each later one's
    // reads wait before the XXᵀ pass that ends the iteration before it).
    if (tid == 0) tma::wait_bulk<0>();

    for (int it = 0; it < k.steps; ++it) {
      // The shared addresses of this iteration from an opaque base: computed where they are used,
      // not held in registers (or spilled) across the whole kernel.
      const int o = opaque(0);
      unsigned char* const a = ring + kStages * kChunkBytes + o;
      const uint32_t a_shared = ring_shared + kStages * kChunkBytes + o;
      wgmma::wait<0>();
      wgmma::pin(p);
      __syncthreads();   // every slot is free
      prologue(false);   // X ← aX + BX's first chunks load while A and B are formed
      // A = the two partials' sum: send this thread's 48 accumulators into the other block's slot
      // for this thread once that block has read the last ones, then add the other's.
      if (arrived) cluster_wait();
      arrived = false;
      {
        const uint32_t remote = cluster_address(receive_shared + o + 16 * kPartialVectors * tid, peer),
                       remote_bar = cluster_address(bar, peer);
#pragma unroll
        for (int v = 0; v < kPartialVectors; ++v)
          tma::store_async(remote + 16 * v,
                           make_uint4(__float_as_uint(p[4 * v]), __float_as_uint(p[4 * v + 1]), __float_as_uint(p[4 * v + 2]),
                                      __float_as_uint(p[4 * v + 3])),
                           remote_bar);
      }
      if (tid == 0) tma::arrive_expect(bar, kPartialBytes);
      tma::wait_cluster(bar, exchanges % 2);
      ++exchanges;
      {
        const float4* mine_slot = reinterpret_cast<const float4*>(receive + o + 16 * kPartialVectors * tid);
#pragma unroll
        for (int v = 0; v < kPartialVectors; ++v) {
          const float4 r = mine_slot[v];
          p[4 * v] += r.x, p[4 * v + 1] += r.y, p[4 * v + 2] += r.z, p[4 * v + 3] += r.w;
        }
      }
      cluster_arrive();   // this block's slot is read
      arrived = true;
      // A's lower 16 × 16 tiles, rounded once; then the upper ones as their transposes.
#pragma unroll
      for (int j = 0; j < 12; ++j) {
        if (p_col0(j) / 16 > p_row(j) / 16) continue;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          Pair<T> v;
          v.v[0] = st<T>(p[4 * j + 2 * h]);
          v.v[1] = st<T>(p[4 * j + 2 * h + 1]);
          *reinterpret_cast<Pair<T>*>(a + XLayout::offset(p_row(j) + 8 * h, p_col0(j) + 2 * t)) = v;
        }
      }
      __syncthreads();
      mirror_lower_tiles(a, warp, lane);
      wgmma::proxy_fence();
      __syncthreads();
      symmetric_b<T>(a, a_shared, k.b[it], k.c[it], wg, ww, lane);

      // X ← aX + BX chunk by chunk in place in the ring, B's rows of this warpgroup in registers,
      // chunk c + 1's product running while chunk c is written back; then chunk c out (the last
      // iteration: into the matrix).
      const float ka = k.a[it];
      const bool last = it + 1 == k.steps;
      uint32_t fb[kRows / 16][4];
      {
        const SwizzledRows rows_of_b(a, row0 - g + lane % 16, lane / 16);
#pragma unroll
        for (int ks = 0; ks < kRows / 16; ++ks) ldmatrix_x4(fb[ks], rows_of_b.at(0, 16 * ks));
      }
      // d = B·X_c; its first k-step writes d without reading it, so d is dead between chunks.
      auto issue = [&](float (&d)[32], int c) {
        const uint32_t xs = opaque(ring_shared) + (c % kStages) * kChunkBytes;
        wgmma::fence();
        wgmma::RsFirst<T, kChunk>::mma(d, fb[0], wgmma::mn_major_descriptor<kRows>(xs, 0, 0));
#pragma unroll
        for (int ks = 1; ks < kRows / 16; ++ks)
          wgmma::Rs<T, kChunk>::mma(d, fb[ks], wgmma::mn_major_descriptor<kRows>(xs, 16 * ks, 0), 1);
        wgmma::commit();
      };
      // Chunk c, its product in d; chunk c + 1's issued into e first unless c ends a group.
      auto chunk = [&](float (&d)[32], float (&e)[32], int c, bool ends_group) {
        if (!ends_group) {
          wait_chunk(c + 1);
          issue(e, c + 1);
          wgmma::wait<1>();    // chunk c's product is done
        } else {
          wgmma::wait<0>();
        }
        wgmma::pin(d);
        slot_read_out();
        __syncthreads();       // in both warpgroups: chunk c's old values are read; slot c − 2 is out
        load(c + kAhead, false);
        // (row0 + 8h, 8j + 2t) of the chunk, from a base the compiler cannot hoist out of the loop.
        // Every old value is read before any new one is written: loads and stores through one
        // pointer type would otherwise run one after the other, each load waiting for the store
        // before it.
        unsigned char* const base = ring + opaque(c % kStages) * kChunkBytes + row0 * 128 + 4 * t;
        auto at = [&](int j, int h) { return reinterpret_cast<Pair<T>*>(base + 8 * h * 128 + ((j ^ g) & 7) * 16); };
        Pair<T> old[kChunk / 8][2];
#pragma unroll
        for (int j = 0; j < kChunk / 8; ++j)
#pragma unroll
          for (int h = 0; h < 2; ++h) old[j][h] = *at(j, h);
#pragma unroll
        for (int j = 0; j < kChunk / 8; ++j)
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            Pair<T> v;
            v.v[0] = st<T>(d[4 * j + 2 * h] + ka * ld(old[j][h].v[0]));
            v.v[1] = st<T>(d[4 * j + 2 * h + 1] + ka * ld(old[j][h].v[1]));
            *at(j, h) = v;
          }
        wgmma::proxy_fence();  // the store reads what this thread wrote
        __syncthreads();
        store(ring_shared + (c % kStages) * kChunkBytes, c, last);
      };
      // Groups of kGroup chunks, each group's products issued and retired inside it (a product in
      // flight across the loop's back edge makes ptxas serialize the MMAs).
      float acc0[32], acc1[32];   // named, so that they stay in registers
#pragma unroll 1
      for (int c0 = 0; c0 < chunks; c0 += kGroup) {
        wait_chunk(c0);
        issue(acc0, c0);
#pragma unroll
        for (int q = 0; q < kGroup; q += 2) {
          chunk(acc0, acc1, c0 + q, false);
          chunk(acc1, acc0, c0 + q + 1, q + 2 == kGroup);
        }
      }
      // The next iteration's XXᵀ over this block's columns (the first one's ran in pass 2): one
      // pass, two chunks a step (one group of products), the next two chunks' copies waited for
      // while a step's products run. Here rather than at the top of the iteration, so that p is
      // dead while X ← aX + BX holds its registers.
      if (it + 1 < k.steps) {
        if (tid == 0) tma::wait_bulk<0>();   // this iteration's stores into the scratch copy are done
        __syncthreads();
        prologue(false, kPairAhead);
        auto partial_pair = [&](int c, auto first) {
          wait_chunk(c);
          wait_chunk(c + 1);
          wgmma::wait<1>();   // the step before last's products are done
          __syncthreads();    // its slots (c − 4, c − 3) are free in both warpgroups
          load(c + kPairAhead, false);
          load(c + kPairAhead + 1, false);
          accumulate_partial(ring_shared + (c % kStages) * kChunkBytes, first, true, false);
          accumulate_partial(ring_shared + ((c + 1) % kStages) * kChunkBytes, std::false_type{}, false, true);
        };
        partial_pair(0, std::true_type{});   // p is written, not read, by its first product
#pragma unroll 1
        for (int c = 2; c < chunks; c += 2) partial_pair(c, std::false_type{});
      }
    }
    wgmma::wait<0>();
    tma::wait_bulk<0>();   // this matrix's stores are done before its slots and scratch are reused
    __syncthreads();
  }
  if (arrived) cluster_wait();
  cluster.sync();   // no block leaves while the other may still read its shared memory
  // Beside the resident kernel: complete only once it has (a no-op when launched alone).
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#else
  __trap();   // built without sm_90a's wgmma: streamed_fits never launches it
#endif
}

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
__device__ int g_streamed_built = 1;
#else
__device__ int g_streamed_built = 0;
#endif

template <class T>
auto kernel() {
  return &ns_streamed<T>;
}

cudaLaunchConfig_t launch_config(unsigned clusters, cudaLaunchAttribute* attrs, bool beside) {
  attrs[0].id = cudaLaunchAttributeClusterDimension;
  attrs[0].val.clusterDim.x = kCluster, attrs[0].val.clusterDim.y = 1, attrs[0].val.clusterDim.z = 1;
  attrs[1].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attrs[1].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(clusters * kCluster), cfg.blockDim = dim3(kBlockThreads);
  cfg.dynamicSmemBytes = kSharedBytes;
  cfg.attrs = attrs, cfg.numAttrs = beside ? 2 : 1;
  return cfg;
}

// Per device, asked once: the clusters of the kernel that run at once on an idle device (the
// fewer of its two instantiations; 0 where it does not launch) and the multiprocessors.
struct DeviceFacts {
  int clusters = -1;   // −1: not asked yet
  int multiprocessors = 0;
};
std::array<DeviceFacts, 64> g_devices;

template <class T>
int prepare() {
  if (cudaFuncSetAttribute(kernel<T>(), cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(kSharedBytes)) !=
      cudaSuccess)
    return 0;
  cudaLaunchAttribute attrs[2] = {};
  const cudaLaunchConfig_t cfg = launch_config(1, attrs, false);
  int clusters = 0;
  return cudaOccupancyMaxActiveClusters(&clusters, kernel<T>(), &cfg) == cudaSuccess ? clusters : 0;
}

const DeviceFacts& device_facts() {
  static const DeviceFacts none{0, 0};
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= static_cast<int>(g_devices.size())) return none;
  DeviceFacts& f = g_devices[dev];
  if (f.clusters < 0) {
    int built = 0;
    const bool ok = cudaMemcpyFromSymbol(&built, g_streamed_built, sizeof built) == cudaSuccess && built == 1;
    f.clusters = ok ? std::min(prepare<__nv_bfloat16>(), prepare<__half>()) : 0;
    if (cudaDeviceGetAttribute(&f.multiprocessors, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess) f.clusters = 0;
    (void)cudaGetLastError();   // a refused attribute leaves no sticky error behind
  }
  return f;
}

}  // namespace

bool streamed_fits(int64_t m, int64_t n, const NsConfig& cfg) {
  return n % 8 == 0 && resident_fits(1, m, n, cfg) && tensor_map_encoder() != nullptr && device_facts().clusters > 0;
}

int streamed_beside_capacity(int64_t n) {
  const DeviceFacts& f = device_facts();
  const int resident = resident_active_clusters(n);
  if (f.clusters <= 0 || resident <= 0) return 0;
  return std::clamp((f.multiprocessors - 8 * resident) / kCluster, 0, f.clusters);
}

int streamed_part(int batch, int64_t m, int64_t n, const NsConfig& cfg) {
  const int part = resident_partial_round(batch, n);
  return part > 0 && part <= streamed_beside_capacity(n) && streamed_fits(m, n, cfg) ? part : 0;
}

int streamed_tail(int batch, int64_t m, int64_t n, const NsConfig& cfg) {
  const int resident = resident_active_clusters(n);
  return resident > 0 && batch / resident >= kStreamedMinRounds ? streamed_part(batch, m, n, cfg) : 0;
}

int streamed_clusters(int batch, bool beside, int64_t n) {
  const int most = beside ? streamed_beside_capacity(n) : device_facts().clusters;
  return std::max(1, std::min(batch, most));
}

size_t streamed_scratch_bytes(int batch, bool beside, int64_t n) {
  return static_cast<size_t>(streamed_clusters(batch, beside, n)) * kCluster * (half_width(n) / kChunk) * kChunkBytes;
}

void streamed_standard(void* x, int batch, int64_t m, int64_t n, const NsConfig& cfg, void* scratch, bool beside,
                       cudaStream_t s) {
  if (!streamed_fits(m, n, cfg) || reinterpret_cast<uintptr_t>(x) % 16 != 0)
    throw Error(ErrorKind::Internal, "streamed_standard: the problem does not fit");
  if (batch < 1) return;
  const Coefficients k = coefficients(cfg);
  cudaLaunchAttribute attrs[2] = {};
  cudaLaunchConfig_t lc = launch_config(static_cast<unsigned>(streamed_clusters(batch, beside, n)), attrs, beside);
  lc.stream = s;
  const int mi = static_cast<int>(m), ni = static_cast<int>(n), width = half_width(n);
  const CUtensorMap map = swizzled_matrix_map(cfg.dtype, x, m, n, n, m * n, batch, kRows, kChunk, "streamed NS");
  with_type(cfg.dtype, [&](auto v) {
    using T = decltype(v);
    if constexpr (sizeof(T) == 2)
      check(cudaLaunchKernelEx(&lc, kernel<T>(), map, static_cast<unsigned char*>(scratch), batch, mi, ni, width, k),
            "cudaLaunchKernelEx (ns_streamed)");
  });
}

}  // namespace muoncheck::impl::cuda
