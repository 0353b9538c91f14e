# Every dependency is an imported target; nothing is found by hand-written paths.
find_package(Threads REQUIRED)
find_package(Boost 1.74 REQUIRED)                    # Boost::headers (Multiprecision)
find_package(nlohmann_json 3.10 REQUIRED)           # nlohmann_json::nlohmann_json
find_package(Gloo REQUIRED)                          # gloo (CPU collectives)

# float128 needs libquadmath from gcc.
find_library(QUADMATH_LIBRARY NAMES quadmath libquadmath.so.0 REQUIRED)
add_library(muoncheck::quadmath UNKNOWN IMPORTED)
set_target_properties(muoncheck::quadmath PROPERTIES IMPORTED_LOCATION "${QUADMATH_LIBRARY}")

if(MUONCHECK_TESTS)
  find_package(GTest REQUIRED)                       # GTest::gtest, GTest::gmock (static)
  find_package(rapidcheck REQUIRED)                  # rapidcheck, rapidcheck_gtest
endif()
if(MUONCHECK_BENCH)
  find_package(benchmark REQUIRED)                   # benchmark::benchmark
endif()
if(MUONCHECK_CUDA)
  enable_language(CUDA)
  set(CMAKE_CUDA_ARCHITECTURES 90)
  set(CMAKE_CUDA_STANDARD 20)
  find_package(CUDAToolkit REQUIRED)                 # CUDA::cudart, CUDA::cublas
endif()
