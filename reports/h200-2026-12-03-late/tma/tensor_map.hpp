// Tensor maps for the TMA copies (tma.cuh): the driver's cuTensorMapEncodeTiled reached through
// the runtime (no link against libcuda), and the one box layout our kernels copy: 64 columns of
// 16-bit values (128 bytes) × `rows` rows, 128-byte swizzled, the layout wgmma reads
// (wgmma.cuh's Swizzled128).
#pragma once
#include <cstdint>

#include <cuda.h>

#include "core/dtype.hpp"

namespace muoncheck::impl::cuda {

// Whether the driver gives cuTensorMapEncodeTiled (asked once per process).
bool tensor_maps_available();

// A 3-D map of `batch` matrices of rows × cols 16-bit values (bf16 or fp16), row pitch `ld`
// values, `stride` values from one matrix to the next, read and written in boxes of 64 columns ×
// box_rows rows; past the edges a load reads zeros and a store writes nothing. p, ld·2 and
// stride·2 must be multiples of 16 bytes. `what` names the caller in the error a refused map
// throws (ErrorKind::Infrastructure).
CUtensorMap swizzled_map(DType t, const void* p, int64_t rows, int64_t cols, int64_t ld, int64_t stride, int batch,
                         uint32_t box_rows, const char* what);

}  // namespace muoncheck::impl::cuda
