#include "impl/math/cuda/tensor_map.hpp"

#include <string>

#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include "core/error.hpp"

namespace muoncheck::impl::cuda {
namespace {

PFN_cuTensorMapEncodeTiled_v12000 encoder() {
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

}  // namespace

bool tensor_maps_available() { return encoder() != nullptr; }

CUtensorMap swizzled_map(DType t, const void* p, int64_t rows, int64_t cols, int64_t ld, int64_t stride, int batch,
                         uint32_t box_rows, const char* what) {
  CUtensorMap map{};
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows), static_cast<cuuint64_t>(batch)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(ld) * 2,
                                 static_cast<cuuint64_t>(batch > 1 ? stride : rows * ld) * 2};
  const cuuint32_t box[3] = {64, box_rows, 1}, unit[3] = {1, 1, 1};
  const CUresult r = encoder() == nullptr
                         ? CUDA_ERROR_NOT_SUPPORTED
                         : encoder()(&map, t == DType::bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
                                     3, const_cast<void*>(p), dims, strides, box, unit, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                     CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                     CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw Error(ErrorKind::Infrastructure, std::string("CUDA: cuTensorMapEncodeTiled (") + what + "): error " + std::to_string(r));
  return map;
}

}  // namespace muoncheck::impl::cuda
