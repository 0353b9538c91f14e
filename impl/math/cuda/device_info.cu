#include "impl/math/cuda/device_info.hpp"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "impl/math/cuda/cuda_check.hpp"

namespace muoncheck::impl::cuda {
namespace {

std::string cuda_version(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

}  // namespace

std::string environment() {
  const int n = device_count();
  if (n == 0) return "no CUDA device";
  cudaDeviceProp prop{};
  std::string name = cudaGetDeviceProperties(&prop, 0) == cudaSuccess ? prop.name : "unknown GPU";
  int driver = 0, runtime = 0;
  (void)cudaDriverGetVersion(&driver);
  (void)cudaRuntimeGetVersion(&runtime);
  int major = 0, minor = 0, patch = 0;
  (void)cublasGetProperty(MAJOR_VERSION, &major);
  (void)cublasGetProperty(MINOR_VERSION, &minor);
  (void)cublasGetProperty(PATCH_LEVEL, &patch);
  return name + " x" + std::to_string(n) + " (sm_" + std::to_string(prop.major) + std::to_string(prop.minor) +
         "), driver " + cuda_version(driver) + ", runtime " + cuda_version(runtime) + ", cuBLAS " +
         std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

}  // namespace muoncheck::impl::cuda
