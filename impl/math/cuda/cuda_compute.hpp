// The CUDA Compute: host buffers are staged through device memory on the Compute's own
// stream and cuBLAS handle, so several rank threads can share one GPU. NS runs through
// NsDevice (cuBLASLt, batched over heads); the elementwise kernels compute each element in
// double with explicitly rounded operations (no contraction into FMA), so they are
// bit-identical to the CPU reference in impl/math/optim.cpp. sum_squares reduces in a
// fixed tree order (deterministic, not the CPU's sequential order).
#pragma once
#include <memory>

#include "impl/math/compute.hpp"

namespace muoncheck::impl {

// Binds to CUDA device `device` (Infrastructure error when it does not exist); NS takes the
// `kernel` path (compute.hpp).
std::unique_ptr<Compute> make_cuda_compute(int device, NsKernel kernel = NsKernel::by_shape);

}  // namespace muoncheck::impl
