// Device-side access to the NS storage types (fp32, bf16, fp16): load as float, store with
// round-to-nearest-even, dispatch a host call on a DType, 16-byte vectors and pairs, launch sizing.
#pragma once
#include <algorithm>
#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "core/scenario.hpp"

namespace muoncheck::impl::cuda {

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

// Eight 16-bit or four 32-bit values: one 16-byte load or store.
template <class T>
struct alignas(16) Vec {
  static constexpr int n = 16 / sizeof(T);
  T v[n];
};

// Two adjacent elements: one 4-byte (16-bit types) or 8-byte (fp32) access.
template <class T>
struct alignas(2 * sizeof(T)) Pair {
  T v[2];
};

constexpr int kThreads = 256;

inline int blocks_for(int64_t n, int threads) {
  return static_cast<int>(std::min<int64_t>((n + threads - 1) / threads, 65535));
}

}  // namespace muoncheck::impl::cuda
