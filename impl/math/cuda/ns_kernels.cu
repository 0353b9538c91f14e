// Elementwise kernels of the device Newton–Schulz; see ns_kernels.hpp.
#include "impl/math/cuda/ns_kernels.hpp"

#include <algorithm>
#include <type_traits>

#include "impl/math/cuda/cuda_check.hpp"
#include "impl/math/cuda/dtype_device.cuh"

namespace muoncheck::impl::cuda {
namespace {

// Partial Σx² of chunk blockIdx.x of matrix blockIdx.y, in double. The partition depends
// only on the shape, so the sum (finished in a fixed order) is deterministic. V: elements
// per load (16-byte loads when every matrix starts 16-byte aligned, else 1).
template <class T, int V>
__global__ void sum_squares_partial(const T* x, int64_t count, int64_t chunk, int parts, double* partial) {
  __shared__ double red[kThreads];
  const T* m = x + static_cast<int64_t>(blockIdx.y) * count;
  const int64_t begin = blockIdx.x * chunk, end = min(count, begin + chunk);
  double s = 0.0;
  for (int64_t i = begin + static_cast<int64_t>(threadIdx.x) * V; i < end; i += static_cast<int64_t>(blockDim.x) * V) {
    if constexpr (V > 1) {
      const Vec<T> w = *reinterpret_cast<const Vec<T>*>(m + i);
#pragma unroll
      for (int k = 0; k < V; ++k) {
        const double v = ld(w.v[k]);
        s += v * v;
      }
    } else {
      const double v = ld(m[i]);
      s += v * v;
    }
  }
  red[threadIdx.x] = s;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) red[threadIdx.x] += red[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.y * parts + blockIdx.x] = red[0];
}

// denom[b] = round(√Σx²) + 1e-7 (docs/semantics.md §7, the normalization): one block per matrix sums its
// partials in a fixed order (strided per thread, then a fixed tree).
template <class T>
__global__ void norm_denominators(const double* partial, int parts, float* denom) {
  __shared__ double red[kThreads];
  const double* p = partial + static_cast<int64_t>(blockIdx.x) * parts;
  double s = 0.0;
  for (int i = threadIdx.x; i < parts; i += blockDim.x) s += p[i];
  red[threadIdx.x] = s;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) red[threadIdx.x] += red[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) denom[blockIdx.x] = ld(st<T>(sqrtf(static_cast<float>(red[0])))) + 1e-7f;
}

// X ← round(X / denom[matrix]) over chunk blockIdx.x of matrix blockIdx.y (sum_squares_partial's
// partition), V elements at a time, from the chunk's end: what the sum read last is what L2 most
// likely still holds.
template <class T, int V>
__global__ void normalize_by(T* x, int64_t count, int64_t chunk, const float* denom) {
  T* const m = x + static_cast<int64_t>(blockIdx.y) * count;
  const float d = denom[blockIdx.y];
  const int64_t begin = blockIdx.x * chunk, end = min(count, begin + chunk);
  for (int64_t i = end - (static_cast<int64_t>(threadIdx.x) + 1) * V; i >= begin; i -= static_cast<int64_t>(blockDim.x) * V) {
    if constexpr (V > 1) {
      Vec<T> w = *reinterpret_cast<const Vec<T>*>(m + i);
#pragma unroll
      for (int k = 0; k < V; ++k) w.v[k] = st<T>(ld(w.v[k]) / d);
      *reinterpret_cast<Vec<T>*>(m + i) = w;
    } else {
      m[i] = st<T>(ld(m[i]) / d);
    }
  }
}

// q[i][i] = round(z[i][i] + a) in each of the count / m matrices (the rest of q is a copy of z).
// (It replaced one kernel over every element with two 64-bit divisions each: ncu on the H200,
// 70 µs for a 4096² fp16 matrix, a copy's work.)
template <class T>
__global__ void add_to_diagonal(const T* z, T* q, int64_t m, int64_t count, float a) {
  for (int64_t k = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; k < count;
       k += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t e = k / m * m * m + k % m * (m + 1);
    q[e] = st<T>(ld(z[e]) + a);
  }
}

constexpr int kTile = 64, kTileRows = 8;

// Tile k of the tiles on or above the diagonal, numbered column by column: (ti, tj), ti ≤ tj.
__device__ inline void upper_tile(int64_t k, int64_t* ti, int64_t* tj) {
  int64_t j = static_cast<int64_t>((sqrt(8.0 * static_cast<double>(k) + 1.0) - 1.0) / 2.0);
  while (j * (j + 1) / 2 > k) --j;
  while ((j + 1) * (j + 2) / 2 <= k) ++j;
  *tj = j;
  *ti = k - j * (j + 1) / 2;
}

// One block per 64×64 tile (ti, tj) on or above the diagonal of matrix blockIdx.y: reads the
// lower tile (tj, ti) row by row (coalesced), writes its transpose over the upper part; each
// thread moves two adjacent elements of a row (Pair accesses when m is even and d is
// Pair-aligned, so every pair is aligned).
template <class T, bool kPairs>
__global__ void mirror_lower_tiles(T* d, int64_t m) {
  __shared__ T tile[kTile][kTile + 2];
  int64_t ti = 0, tj = 0;
  upper_tile(blockIdx.x, &ti, &tj);
  T* mat = d + static_cast<int64_t>(blockIdx.y) * m * m;
  const int c2 = 2 * static_cast<int>(threadIdx.x);
  for (int r = threadIdx.y; r < kTile; r += kTileRows) {
    const int64_t row = tj * kTile + r, col = ti * kTile + c2;
    if (row >= m) break;
    if (kPairs && col + 1 < m) {
      const Pair<T> p = *reinterpret_cast<const Pair<T>*>(mat + row * m + col);
      tile[r][c2] = p.v[0];
      tile[r][c2 + 1] = p.v[1];
    } else {
      for (int q = 0; q < 2; ++q)
        if (col + q < m) tile[r][c2 + q] = mat[row * m + col + q];
    }
  }
  __syncthreads();
  for (int r = threadIdx.y; r < kTile; r += kTileRows) {
    const int64_t row = ti * kTile + r, col = tj * kTile + c2;   // (row, col + q) ← (col + q, row)
    if (row >= m) break;
    if (kPairs && row < col && col + 1 < m) {
      Pair<T> p;
      p.v[0] = tile[c2][r];
      p.v[1] = tile[c2 + 1][r];
      *reinterpret_cast<Pair<T>*>(mat + row * m + col) = p;
    } else {
      for (int q = 0; q < 2; ++q)
        if (row < col + q && col + q < m) mat[row * m + col + q] = tile[c2 + q][r];
    }
  }
}

// The same tiles for m a multiple of the 16-byte width and a 16-byte aligned d, kThreads
// threads a tile: each thread issues all its 16-byte loads of lower-tile rows before it
// stores any (kPasses loads in flight), then writes 16-byte pieces of the upper tile's rows
// gathered from shared memory; a diagonal tile writes only its elements above the diagonal.
// A mirror only copies, so U is the element's bits (uint16_t or uint32_t) and each 16-byte
// piece is packed as four 32-bit words: one 16-byte load and one 16-byte store in the PTX (a
// struct of eight __nv_bfloat16 was stored as eight 2-byte stores: 32 µs for 4096² on the H200
// under ncu; mirror_lower_tiles' pairs, also stored in 2-byte halves, 16 µs).
template <class U>
__global__ void mirror_lower_vectors(U* d, int64_t m) {
  constexpr int kVec = 16 / sizeof(U), kPerRow = kTile / kVec, kRows = kThreads / kPerRow, kPasses = kTile / kRows;
  constexpr int kPerWord = 4 / sizeof(U);
  constexpr int kPad = sizeof(U) == 4 ? 1 : 2;   // column gathers at most 2-way bank conflicts
  __shared__ U tile[kTile][kTile + kPad];
  int64_t ti = 0, tj = 0;
  upper_tile(blockIdx.x, &ti, &tj);
  U* mat = d + static_cast<int64_t>(blockIdx.y) * m * m;
  const int r0 = static_cast<int>(threadIdx.x) / kPerRow, c0 = static_cast<int>(threadIdx.x) % kPerRow * kVec;
  uint4 v[kPasses];
#pragma unroll
  for (int p = 0; p < kPasses; ++p) {
    const int64_t row = tj * kTile + r0 + p * kRows, col = ti * kTile + c0;
    v[p] = row < m && col < m ? *reinterpret_cast<const uint4*>(mat + row * m + col) : make_uint4(0, 0, 0, 0);
  }
#pragma unroll
  for (int p = 0; p < kPasses; ++p) {
    const uint32_t w[4] = {v[p].x, v[p].y, v[p].z, v[p].w};
#pragma unroll
    for (int q = 0; q < kVec; ++q)
      tile[r0 + p * kRows][c0 + q] = static_cast<U>(w[q / kPerWord] >> (8 * sizeof(U) * (q % kPerWord)));
  }
  __syncthreads();
  if (ti == tj) {   // (row, col) ← (col, row) above the diagonal only: the lower part is the result
    for (int e = static_cast<int>(threadIdx.x); e < kTile * kTile; e += kThreads) {
      const int r = e / kTile, c = e % kTile;
      const int64_t row = ti * kTile + r, col = tj * kTile + c;
      if (r < c && col < m) mat[row * m + col] = tile[c][r];
    }
    return;
  }
#pragma unroll
  for (int p = 0; p < kPasses; ++p) {
    const int r = r0 + p * kRows;
    const int64_t row = ti * kTile + r, col = tj * kTile + c0;
    if (row >= m || col >= m) continue;
    uint32_t w[4] = {0, 0, 0, 0};
#pragma unroll
    for (int q = 0; q < kVec; ++q)
      w[q / kPerWord] |= static_cast<uint32_t>(tile[c0 + q][r]) << (8 * sizeof(U) * (q % kPerWord));
    // __stwb: a plain (write-back) store, which nvcc emits as one st.global.v4 where the
    // assignment through a uint4* came out as four 4-byte stores.
    __stwb(reinterpret_cast<uint4*>(mat + row * m + col), make_uint4(w[0], w[1], w[2], w[3]));
  }
}

template <class T>
__global__ void convert_to(const float* src, T* dst, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    dst[i] = st<T>(src[i]);
}

template <class T>
__global__ void convert_from(const T* src, float* dst, int64_t n, float scale) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    dst[i] = ld(src[i]) * scale;
}

// Chunks of at least 16384 elements, at most 1024 per matrix: enough blocks to keep every
// multiprocessor streaming on one large matrix.
int norm_parts(int64_t count) { return static_cast<int>(std::clamp<int64_t>(count / 16384, 1, 1024)); }

}  // namespace

size_t normalize_scratch_bytes(int batch, int64_t count) {
  return (sizeof(double) * norm_parts(count) + sizeof(float)) * static_cast<size_t>(batch);
}

void normalize(DType t, void* x, int batch, int64_t count, void* scratch, cudaStream_t s) {
  const int parts = norm_parts(count);
  auto* partial = static_cast<double*>(scratch);
  auto* denom = reinterpret_cast<float*>(partial + parts * batch);
  with_type(t, [&](auto tag) {
    using T = decltype(tag);
    constexpr int V = Vec<T>::n;
    auto launch = [&](auto v) {
      constexpr int W = decltype(v)::value;
      const int64_t chunk = ((count + parts - 1) / parts + W - 1) / W * W;
      sum_squares_partial<T, W><<<dim3(parts, batch), kThreads, 0, s>>>(static_cast<T*>(x), count, chunk, parts,
                                                                         partial);
      check_launch("sum_squares_partial");
      norm_denominators<T><<<batch, kThreads, 0, s>>>(partial, parts, denom);
      check_launch("norm_denominators");
      normalize_by<T, W><<<dim3(parts, batch), kThreads, 0, s>>>(static_cast<T*>(x), count, chunk, denom);
      check_launch("normalize_by");
    };
    if (count % V == 0) launch(std::integral_constant<int, V>{});   // every matrix 16-byte aligned
    else launch(std::integral_constant<int, 1>{});
  });
}

void plus_identity(DType t, const void* z, void* q, int batch, int64_t m, float a, cudaStream_t s) {
  const int64_t diagonal = batch * m;
  if (z != q)
    check(cudaMemcpyAsync(q, z, static_cast<size_t>(dtype_bytes(t)) * diagonal * m, cudaMemcpyDeviceToDevice, s),
          "cudaMemcpyAsync (Q = Z + aI)");
  with_type(t, [&](auto tag) {
    using T = decltype(tag);
    add_to_diagonal<T><<<blocks_for(diagonal, kThreads), kThreads, 0, s>>>(static_cast<const T*>(z),
                                                                         static_cast<T*>(q), m, diagonal, a);
  });
  check_launch("add_to_diagonal");
}

void mirror_lower(DType t, void* d, int batch, int64_t m, cudaStream_t s) {
  const int64_t tiles = (m + kTile - 1) / kTile;
  const dim3 grid(static_cast<unsigned>(tiles * (tiles + 1) / 2), static_cast<unsigned>(batch));
  const dim3 block(kTile / 2, kTileRows);
  with_type(t, [&](auto tag) {
    using T = decltype(tag);
    const auto base = reinterpret_cast<uintptr_t>(d);
    using U = std::conditional_t<sizeof(T) == 2, uint16_t, uint32_t>;   // the element's bits
    if (m % Vec<T>::n == 0 && base % alignof(Vec<T>) == 0)
      mirror_lower_vectors<U><<<grid, kThreads, 0, s>>>(static_cast<U*>(d), m);
    else if (m % 2 == 0 && base % alignof(Pair<T>) == 0)
      mirror_lower_tiles<T, true><<<grid, block, 0, s>>>(static_cast<T*>(d), m);
    else
      mirror_lower_tiles<T, false><<<grid, block, 0, s>>>(static_cast<T*>(d), m);
  });
  check_launch("mirror_lower");
}

void to_dtype(DType t, const float* src, void* dst, int64_t n, cudaStream_t s) {
  if (n == 0) return;
  with_type(t, [&](auto tag) {
    using T = decltype(tag);
    convert_to<T><<<blocks_for(n, kThreads), kThreads, 0, s>>>(src, static_cast<T*>(dst), n);
  });
  check_launch("convert_to");
}

void from_dtype_scaled(DType t, const void* src, float* dst, int64_t n, float scale, cudaStream_t s) {
  if (n == 0) return;
  with_type(t, [&](auto tag) {
    using T = decltype(tag);
    convert_from<T><<<blocks_for(n, kThreads), kThreads, 0, s>>>(static_cast<const T*>(src), dst, n, scale);
  });
  check_launch("convert_from");
}

}  // namespace muoncheck::impl::cuda
