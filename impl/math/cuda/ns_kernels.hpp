// The elementwise kernels of the device Newton–Schulz and its callers: Frobenius
// normalization, Q = Z + aI, the lower→upper mirror of a symmetric product, and the
// fp32 ⇄ NS-dtype conversions. All asynchronous on the given stream.
#pragma once
#include <cstdint>

#include <cuda_runtime_api.h>

#include "core/scenario.hpp"
#include "impl/math/cuda/device_buffer.hpp"

namespace muoncheck::impl::cuda {

// Bytes of scratch normalize() needs for `batch` matrices of `count` elements.
size_t normalize_scratch_bytes(int batch, int64_t count);

// Each of `batch` matrices of `count` elements: X ← round(X / (round(‖X‖_F) + 1e-7)), the
// sum of squares in double over a partition fixed by the shape (deterministic).
void normalize(DType t, void* x, int batch, int64_t count, void* scratch, cudaStream_t s);

// q = z + a·I for `batch` m×m matrices: the diagonal rounded once, the rest copied (q may be z).
void plus_identity(DType t, const void* z, void* q, int batch, int64_t m, float a, cudaStream_t s);

// d[i][j] = d[j][i] for i < j in each of `batch` m×m matrices: the upper triangle becomes the
// transpose of the lower one, so the result is exactly symmetric.
void mirror_lower(DType t, void* d, int batch, int64_t m, cudaStream_t s);

// Elementwise conversions between fp32 and the NS dtype on the device (RNE).
void to_dtype(DType t, const float* src, void* dst, int64_t n, cudaStream_t s);
// dst = float(src) · scale (fp32 multiply, as the CPU reference does).
void from_dtype_scaled(DType t, const void* src, float* dst, int64_t n, float scale, cudaStream_t s);

}  // namespace muoncheck::impl::cuda
