// The one rule of every `gpu`-labelled test: no CUDA device, no run — a clear
// GTEST_SKIP (cudaGetDeviceCount failed or returned 0), never a failure.
#pragma once
#include <gtest/gtest.h>

#include "impl/math/compute.hpp"

#define MUONCHECK_REQUIRE_GPU()                                                                   \
  do {                                                                                            \
    if (::muoncheck::impl::cuda_device_count() == 0)                                              \
      GTEST_SKIP() << "no CUDA device (cudaGetDeviceCount failed or returned 0): gpu test skipped"; \
  } while (0)
