// Newton–Schulz on the device (SPEC §4 NS, standard and gram) for a batch of row-major
// m×n matrices with m ≤ n, stored contiguously in the NS dtype (bf16, fp16 or fp32).
// Every product is one cuBLAS (strided-batched) GEMM with fp32 accumulation
// (CUBLAS_COMPUTE_32F, no TF32) whose output is rounded once into the NS dtype; the
// `αC + βAB` combinations ride in the GEMM epilogue. The batch is the per-head split
// (one call over all heads), so small matrices are not launch-bound.
// Rounding differs from the CPU reference only in order: X ← aX + BX is evaluated as
// (aI + B)·X with aI + bA rounded once before the cA² GEMM adds to it, and an epilogue
// rounds αC + β·AB once where the CPU rounds AB first.
#pragma once
#include <cstdint>

#include <cublas_api.h>
#include <cuda_runtime_api.h>

#include "impl/math/cuda/device_buffer.hpp"
#include "impl/math/newton_schulz.hpp"

namespace muoncheck::impl::cuda {

class NsDevice {
 public:
  NsDevice(cublasHandle_t handle, cudaStream_t stream) : handle_(handle), stream_(stream) {}

  // x: batch × m × n elements of cfg.dtype, m ≤ n. Normalizes each matrix in place
  // (X/(‖X‖_F + 1e-7)) and returns where NS(X) lies: x itself or a workspace buffer of
  // this NsDevice, valid until its next run (no copy back). Asynchronous on the stream.
  void* run(void* x, int batch, int64_t m, int64_t n, const NsConfig& cfg);

  // Floating-point operations of the GEMMs one run() issues (2·M·N·K each).
  static double gemm_flops(int batch, int64_t m, int64_t n, const NsConfig& cfg);

 private:
  void gemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha, const void* a, int64_t lda,
            int64_t sa, const void* b, int64_t ldb, int64_t sb, float beta, void* c, int64_t ldc, int64_t sc,
            int batch);
  void normalize(void* x, int batch, int64_t count);
  void* standard(void* x, int batch, int64_t m, int64_t n, const NsConfig& cfg);
  void* gram(void* x, int batch, int64_t m, int64_t n, const NsConfig& cfg);
  void copy(void* dst, const void* src, int64_t elems);
  void add_diagonal(void* z, int batch, int64_t m, float a);
  void scaled_identity(const void* a, void* out, int batch, int64_t m, float alpha, float diag);

  cublasHandle_t handle_;
  cudaStream_t stream_;
  DType dtype_ = DType::bf16;
  DeviceBuffer x2_, a_, b_, q_, q2_, t_, partial_;
};

// Elementwise conversions between fp32 and the NS dtype on the device (RNE).
void to_dtype(DType t, const float* src, void* dst, int64_t n, cudaStream_t s);
// dst = float(src) · scale (fp32 multiply, as the CPU reference does).
void from_dtype_scaled(DType t, const void* src, float* dst, int64_t n, float scale, cudaStream_t s);

}  // namespace muoncheck::impl::cuda
