// Host side of TMA tensor copies (tma.cuh): cuTensorMapEncodeTiled, reached through the runtime's
// driver entry point (the build links no libcuda), and a 3-D map of 16-bit matrices with
// 128-byte-swizzled boxes, the layout wgmma reads (wgmma.cuh). Used by the triangle product and the
// streamed NS kernel.
#pragma once
#include <cstdint>
#include <string>

#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include "core/error.hpp"
#include "core/scenario.hpp"

namespace muoncheck::impl::cuda {

// The encoder, or nullptr where the driver has none (asked once).
inline PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess)
      f = nullptr;
    (void)cudaGetLastError();
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(f);
  }();
  return fn;
}

// batch matrices of rows × cols bf16 or fp16 values at p (row pitch ld values, matrix pitch
// stride values; both multiples of 8, p 16-byte aligned) as boxes of box_rows × box_cols
// (box_cols · 2 = 128 bytes), swizzled by 128 bytes. Out of bounds a load reads zeros and a store
// writes nothing. who names the caller in the error.
inline CUtensorMap swizzled_matrix_map(DType t, const void* p, int64_t rows, int64_t cols, int64_t ld, int64_t stride,
                                       int batch, uint32_t box_rows, uint32_t box_cols, const char* who) {
  CUtensorMap map{};
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows), static_cast<cuuint64_t>(batch)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(ld) * 2, static_cast<cuuint64_t>(batch > 1 ? stride : rows * ld) * 2};
  const cuuint32_t box[3] = {box_cols, box_rows, 1}, unit[3] = {1, 1, 1};
  const PFN_cuTensorMapEncodeTiled_v12000 encode = tensor_map_encoder();
  const CUresult r = encode == nullptr
                         ? CUDA_ERROR_NOT_SUPPORTED
                         : encode(&map, t == DType::bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 3,
                                  const_cast<void*>(p), dims, strides, box, unit, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                  CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                  CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw Error(ErrorKind::Infrastructure, std::string("CUDA: cuTensorMapEncodeTiled (") + who + "): error " + std::to_string(r));
  return map;
}

}  // namespace muoncheck::impl::cuda
