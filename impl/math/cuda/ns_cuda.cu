// Newton–Schulz on the device: cuBLAS GEMMs plus three small kernels (normalization,
// diagonal add, dtype conversion). See ns_cuda.hpp for the contract and rounding notes.
#include "impl/math/cuda/ns_cuda.hpp"

#include <algorithm>
#include <type_traits>
#include <utility>

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace muoncheck::impl::cuda {
namespace {

template <class T> __device__ __forceinline__ float ld(T v);
template <> __device__ __forceinline__ float ld<float>(float v) { return v; }
template <> __device__ __forceinline__ float ld<__nv_bfloat16>(__nv_bfloat16 v) { return __bfloat162float(v); }
template <> __device__ __forceinline__ float ld<__half>(__half v) { return __half2float(v); }

template <class T> __device__ __forceinline__ T st(float v);
template <> __device__ __forceinline__ float st<float>(float v) { return v; }
template <> __device__ __forceinline__ __nv_bfloat16 st<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }
template <> __device__ __forceinline__ __half st<__half>(float v) { return __float2half_rn(v); }

// Calls f(T{}) with the storage type of an NS dtype.
template <class F>
void with_type(DType t, F&& f) {
  switch (t) {
    case DType::fp32: f(float{}); return;
    case DType::bf16: f(__nv_bfloat16{}); return;
    case DType::fp16: f(__half{}); return;
  }
}

cudaDataType_t cuda_type(DType t) {
  switch (t) {
    case DType::fp32: return CUDA_R_32F;
    case DType::bf16: return CUDA_R_16BF;
    case DType::fp16: return CUDA_R_16F;
  }
  return CUDA_R_32F;
}

int blocks_for(int64_t n, int threads) {
  return static_cast<int>(std::min<int64_t>((n + threads - 1) / threads, 65535));
}

constexpr int kThreads = 256;

// Eight 16-bit or four 32-bit values: one 16-byte load or store.
template <class T>
struct alignas(16) Vec {
  static constexpr int n = 16 / sizeof(T);
  T v[n];
};

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

// denom[b] = round(√Σx²) + 1e-7 (SPEC §4 NS normalization), partials summed in order.
template <class T>
__global__ void norm_denominators(const double* partial, int parts, int batch, float* denom) {
  const int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= batch) return;
  double ss = 0.0;
  for (int p = 0; p < parts; ++p) ss += partial[b * parts + p];
  denom[b] = ld(st<T>(sqrtf(static_cast<float>(ss)))) + 1e-7f;
}

// X ← round(X / denom[matrix]) over the whole batch, V elements at a time (V divides count).
template <class T, int V>
__global__ void normalize_by(T* x, int64_t count, int64_t total, const float* denom) {
  for (int64_t i = (blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x) * V; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x * V) {
    const float d = denom[i / count];
    if constexpr (V > 1) {
      Vec<T> w = *reinterpret_cast<const Vec<T>*>(x + i);
#pragma unroll
      for (int k = 0; k < V; ++k) w.v[k] = st<T>(ld(w.v[k]) / d);
      *reinterpret_cast<Vec<T>*>(x + i) = w;
    } else {
      x[i] = st<T>(ld(x[i]) / d);
    }
  }
}

// B = b·A + a·I (rounded once): the C operand of B ← c·A·A + B, so the standard step's
// (aI + bA + cA²) takes one small kernel and one GEMM.
template <class T>
__global__ void scaled_plus_identity(const T* a, T* out, int64_t m, int64_t total, float alpha, float diag) {
  for (int64_t k = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; k < total;
       k += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t e = k % (m * m);
    out[k] = st<T>(alpha * ld(a[k]) + (e / m == e % m ? diag : 0.0f));
  }
}

template <class T>
__global__ void add_diag(T* z, int batch, int64_t m, float a) {
  const int64_t k = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (k >= batch * m) return;
  const int64_t b = k / m, i = k % m;
  T& e = z[b * m * m + i * m + i];
  e = st<T>(ld(e) + a);
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

}  // namespace

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

void NsDevice::gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, const void* a, int64_t lda,
                    int64_t sa, const void* b, int64_t ldb, int64_t sb, float beta, void* c, int64_t ldc,
                    int64_t sc, int batch) {
  // Row-major C = op(A)·op(B) is column-major Cᵀ = op(B)ᵀ·op(A)ᵀ: swap the operands.
  const cudaDataType_t t = cuda_type(dtype_);
  check(cublasGemmStridedBatchedEx(handle_, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N,
                                   static_cast<int>(N), static_cast<int>(M), static_cast<int>(K), &alpha, b, t,
                                   static_cast<int>(ldb), sb, a, t, static_cast<int>(lda), sa, &beta, c, t,
                                   static_cast<int>(ldc), sc, batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
        "cublasGemmStridedBatchedEx");
}

void NsDevice::copy(void* dst, const void* src, int64_t elems) {
  check(cudaMemcpyAsync(dst, src, static_cast<size_t>(elems) * dtype_bytes(dtype_), cudaMemcpyDeviceToDevice, stream_),
        "cudaMemcpyAsync (NS copy)");
}

void NsDevice::add_diagonal(void* z, int batch, int64_t m, float a) {
  with_type(dtype_, [&](auto tag) {
    using T = decltype(tag);
    add_diag<T><<<blocks_for(batch * m, kThreads), kThreads, 0, stream_>>>(static_cast<T*>(z), batch, m, a);
  });
  check_launch("add_diag");
}

void NsDevice::normalize(void* x, int batch, int64_t count) {
  const int64_t total = count * batch;
  const int parts = static_cast<int>(std::clamp<int64_t>(count / 65536, 1, 128));
  auto* partial = static_cast<double*>(partial_.reserve(sizeof(double) * parts * batch + sizeof(float) * batch));
  auto* denom = reinterpret_cast<float*>(partial + parts * batch);
  with_type(dtype_, [&](auto tag) {
    using T = decltype(tag);
    constexpr int V = Vec<T>::n;
    auto launch = [&](auto v) {
      constexpr int W = decltype(v)::value;
      const int64_t chunk = ((count + parts - 1) / parts + W - 1) / W * W;
      sum_squares_partial<T, W><<<dim3(parts, batch), kThreads, 0, stream_>>>(static_cast<T*>(x), count, chunk,
                                                                               parts, partial);
      check_launch("sum_squares_partial");
      norm_denominators<T><<<(batch + 127) / 128, 128, 0, stream_>>>(partial, parts, batch, denom);
      check_launch("norm_denominators");
      normalize_by<T, W><<<blocks_for(total / W, kThreads), kThreads, 0, stream_>>>(static_cast<T*>(x), count, total,
                                                                                    denom);
      check_launch("normalize_by");
    };
    if (count % V == 0) launch(std::integral_constant<int, V>{});   // every matrix 16-byte aligned
    else launch(std::integral_constant<int, 1>{});
  });
}

void NsDevice::scaled_identity(const void* a, void* out, int batch, int64_t m, float alpha, float diag) {
  const int64_t total = batch * m * m;
  with_type(dtype_, [&](auto tag) {
    using T = decltype(tag);
    scaled_plus_identity<T><<<blocks_for(total, kThreads), kThreads, 0, stream_>>>(
        static_cast<const T*>(a), static_cast<T*>(out), m, total, alpha, diag);
  });
  check_launch("scaled_plus_identity");
}

// X (m×n, m ≤ n): A = XXᵀ; B = bA + cA²; X ← aX + BX, the last in one GEMM whose epilogue
// adds aX (fp32 accumulation, one rounding). Folding a into B's diagonal instead, (aI + B)·X,
// rounds aI + B to ns_dtype first: an extra rounding the semantics do not have, which a
// generated 1×1 case showed at 8× the control's error on the H200.
void* NsDevice::standard(void* x, int batch, int64_t m, int64_t n, const NsConfig& cfg) {
  const int64_t eb = dtype_bytes(dtype_), mm = m * m, mn = m * n;
  void* a = a_.reserve(eb * mm * batch);
  void* b = b_.reserve(eb * mm * batch);
  void* cur = x;
  void* nxt = x2_.reserve(eb * mn * batch);
  for (int i = 0; i < cfg.steps; ++i) {
    gemm(false, true, m, m, n, 1.0f, cur, n, mn, cur, n, mn, 0.0f, a, m, mm, batch);
    scaled_identity(a, b, batch, m, cfg.b, 0.0f);                                     // B = bA
    gemm(false, false, m, m, m, cfg.c, a, m, mm, a, m, mm, 1.0f, b, m, mm, batch);      // B += cA²
    copy(nxt, cur, mn * batch);
    gemm(false, false, m, n, m, 1.0f, b, m, mm, cur, n, mn, cfg.a, nxt, n, mn, batch);  // X' = BX + aX
    std::swap(cur, nxt);
  }
  return cur;
}

// DeepSpeed's zeropower_via_gram_newtonschulz (SPEC §4), X m×n with m < n.
void* NsDevice::gram(void* x, int batch, int64_t m, int64_t n, const NsConfig& cfg) {
  const int64_t eb = dtype_bytes(dtype_), mm = m * m, mn = m * n;
  void* r = a_.reserve(eb * mm * batch);
  void* z = b_.reserve(eb * mm * batch);
  void* q = q_.reserve(eb * mm * batch);
  void* q2 = q2_.reserve(eb * mm * batch);
  void* t = t_.reserve(eb * mm * batch);
  void* cur = x;
  void* nxt = x2_.reserve(eb * mn * batch);
  bool have_q = false;
  gemm(false, true, m, m, n, 1.0f, cur, n, mn, cur, n, mn, 0.0f, r, m, mm, batch);     // R = XXᵀ
  for (int i = 0; i < cfg.steps; ++i) {
    if (i == 2) {                                                                      // restart
      if (have_q) {
        gemm(false, false, m, n, m, 1.0f, q, m, mm, cur, n, mn, 0.0f, nxt, n, mn, batch);
        std::swap(cur, nxt);
      }
      gemm(false, true, m, m, n, 1.0f, cur, n, mn, cur, n, mn, 0.0f, r, m, mm, batch);
      have_q = false;
    }
    copy(z, r, mm * batch);                                                            // Z = bR + cR²
    gemm(false, false, m, m, m, cfg.c, r, m, mm, r, m, mm, cfg.b, z, m, mm, batch);
    if (!have_q) {                                                                     // Q = Z + aI
      copy(q, z, mm * batch);
      add_diagonal(q, batch, m, cfg.a);
      have_q = true;
    } else {                                                                           // Q = aQ + ZQ
      copy(q2, q, mm * batch);
      gemm(false, false, m, m, m, 1.0f, z, m, mm, q, m, mm, cfg.a, q2, m, mm, batch);
      std::swap(q, q2);
    }
    if (i < cfg.steps - 1 && i + 1 != 2) {
      copy(t, r, mm * batch);                                                          // T = aR + ZR
      gemm(false, false, m, m, m, 1.0f, z, m, mm, r, m, mm, cfg.a, t, m, mm, batch);
      copy(r, t, mm * batch);                                                          // R = aT + ZT
      gemm(false, false, m, m, m, 1.0f, z, m, mm, t, m, mm, cfg.a, r, m, mm, batch);
    }
  }
  if (!have_q) return cur;
  gemm(false, false, m, n, m, 1.0f, q, m, mm, cur, n, mn, 0.0f, nxt, n, mn, batch);   // QX
  return nxt;
}

void* NsDevice::run(void* x, int batch, int64_t m, int64_t n, const NsConfig& cfg) {
  if (m > n) throw Error(ErrorKind::Internal, "NsDevice::run: expects m <= n (transpose tall matrices first)");
  if (batch < 1 || m < 1) return x;
  dtype_ = cfg.dtype;
  check(cublasSetStream(handle_, stream_), "cublasSetStream");
  normalize(x, batch, m * n);
  const bool use_gram = cfg.method == NsMethod::gram && m != n;
  return use_gram ? gram(x, batch, m, n, cfg) : standard(x, batch, m, n, cfg);
}

double NsDevice::gemm_flops(int batch, int64_t m, int64_t n, const NsConfig& cfg) {
  const double M = static_cast<double>(m), N = static_cast<double>(n);
  const double xxt = 2 * M * M * N, mmm = 2 * M * M * M, qx = 2 * M * M * N;
  double f = 0;
  if (cfg.method != NsMethod::gram || m == n) {
    f = cfg.steps * (xxt + mmm + qx);
  } else {
    f = xxt;
    bool have_q = false;
    for (int i = 0; i < cfg.steps; ++i) {
      if (i == 2) {
        if (have_q) f += qx;
        f += xxt;
        have_q = false;
      }
      f += mmm;                                       // Z
      if (have_q) f += mmm;                           // ZQ
      have_q = true;
      if (i < cfg.steps - 1 && i + 1 != 2) f += 2 * mmm;
    }
    if (have_q) f += qx;
  }
  return f * batch;
}

}  // namespace muoncheck::impl::cuda
