// CUDA, cuBLAS and NCCL status codes turned into muoncheck errors with a kind: every
// failing call throws Error(Infrastructure, "CUDA: <call>: <reason>") — never exits.
// Callers name the call so the one-line message says which step of which kernel failed.
#pragma once
#include <string>

#include <cublas_api.h>
#include <cuda_runtime_api.h>

#include "core/error.hpp"

namespace muoncheck::impl::cuda {

inline void check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  throw Error(ErrorKind::Infrastructure,
              std::string("CUDA: ") + what + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}

inline void check(cublasStatus_t s, const char* what) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  throw Error(ErrorKind::Infrastructure, std::string("cuBLAS: ") + what + ": " + cublasGetStatusName(s) + " (" +
                                             cublasGetStatusString(s) + ")");
}

// Launches are asynchronous: a kernel's own failure shows at the next check of the stream.
inline void check_launch(const char* kernel) { check(cudaGetLastError(), kernel); }

// Number of CUDA devices, 0 when there is no driver or no device (never throws).
inline int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();   // clear the sticky "no device" error
    return 0;
  }
  return n;
}

}  // namespace muoncheck::impl::cuda
