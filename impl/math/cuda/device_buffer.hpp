// A grow-only device allocation (cudaMalloc, never managed memory): reserve(bytes)
// keeps the old block when it is large enough, so a step's buffers are allocated once.
#pragma once
#include <cstddef>

#include <cuda_runtime_api.h>

#include "impl/math/cuda/cuda_check.hpp"

namespace muoncheck::impl::cuda {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer() {
    if (ptr_ != nullptr) (void)cudaFree(ptr_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* reserve(size_t bytes) {
    if (bytes <= bytes_) return ptr_;
    if (ptr_ != nullptr) check(cudaFree(ptr_), "cudaFree");
    ptr_ = nullptr;
    bytes_ = 0;
    check(cudaMalloc(&ptr_, bytes), "cudaMalloc");
    bytes_ = bytes;
    return ptr_;
  }
  template <class T>
  T* as() const { return static_cast<T*>(ptr_); }
  void* get() const { return ptr_; }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace muoncheck::impl::cuda
