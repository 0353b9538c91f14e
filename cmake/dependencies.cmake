# Every dependency is an imported target; nothing is found by hand-written paths.
find_package(Threads REQUIRED)
find_package(Boost 1.74 REQUIRED)                    # Boost::headers (Multiprecision)
find_package(nlohmann_json 3.10 REQUIRED)           # nlohmann_json::nlohmann_json
find_package(Gloo REQUIRED)                          # gloo (CPU collectives)
find_package(rapidcheck REQUIRED)                    # rapidcheck (generators; `muoncheck sweep`), rapidcheck_gtest

# float128 needs libquadmath from gcc.
find_library(QUADMATH_LIBRARY NAMES quadmath libquadmath.so.0 REQUIRED)
add_library(muoncheck::quadmath UNKNOWN IMPORTED)
set_target_properties(muoncheck::quadmath PROPERTIES IMPORTED_LOCATION "${QUADMATH_LIBRARY}")

if(MUONCHECK_TESTS)
  find_package(GTest REQUIRED)                       # GTest::gtest, GTest::gmock (static)
endif()
if(MUONCHECK_BENCH)
  find_package(benchmark REQUIRED)                   # benchmark::benchmark
endif()
if(MUONCHECK_CUDA)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 90a)                # H100/H200 (sm_90a: the resident NS kernel uses wgmma); override with -D
  endif()
  enable_language(CUDA)
  # CMake 3.25 has no CUDA20 dialect flags for nvcc 13; the .cu files need only C++17.
  set(CMAKE_CUDA_STANDARD 17)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  find_package(CUDAToolkit REQUIRED)                 # CUDA::cudart_static, CUDA::cublas
  # NCCL ships with the toolkit here but has no CMake package: one imported target.
  find_library(NCCL_LIBRARY NAMES nccl HINTS ${CUDAToolkit_LIBRARY_DIR} REQUIRED)
  find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} REQUIRED)
  add_library(muoncheck::nccl UNKNOWN IMPORTED)
  set_target_properties(muoncheck::nccl PROPERTIES IMPORTED_LOCATION "${NCCL_LIBRARY}"
                        INTERFACE_INCLUDE_DIRECTORIES "${NCCL_INCLUDE_DIR}")
endif()
