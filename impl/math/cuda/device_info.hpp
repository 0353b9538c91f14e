// What a report records about the GPU side of a run: device name, driver and runtime
// versions, cuBLAS version. Never throws; "no CUDA device" when there is none.
#pragma once
#include <string>

namespace muoncheck::impl::cuda {

std::string environment();   // "NVIDIA H200 ×1, driver 13.0, runtime 13.0, cuBLAS 13.1.0"

}  // namespace muoncheck::impl::cuda
