// How many clusters of 1, 2, 3, 4 blocks run at once for a kernel with the triangle kernel's
// footprint (384 threads, one block a multiprocessor, 225 KB of dynamic shared memory), and how
// many multiprocessors they fill: the question a three- or four-block sharing layout has to
// answer before it is built (reports/h100-2026-12-06g/README.md).
#include <cstdio>

#include <cuda_runtime.h>

__global__ void __launch_bounds__(384, 1) footprint(int* sink) {
  extern __shared__ int shared[];
  if (threadIdx.x == 0 && sink != nullptr) sink[blockIdx.x] = shared[0];
}

int main() {
  const size_t shared = 1024 + 6 * 32768 + 4 * 8192 + 12 * 8;   // triangle_product.cu's kSharedBytes
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) return std::puts("no device"), 1;
  std::printf("{\"device\": \"%s\", \"multiprocessors\": %d, \"shared_bytes\": %zu, \"clusters\": [", prop.name,
              prop.multiProcessorCount, shared);
  if (cudaFuncSetAttribute(footprint, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared)) != cudaSuccess)
    return std::puts("shared memory refused"), 1;
  for (int size = 1; size <= 8; ++size) {
    cudaLaunchAttribute cluster{};
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = size, cluster.val.clusterDim.y = 1, cluster.val.clusterDim.z = 1;
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(size);
    config.blockDim = dim3(384);
    config.dynamicSmemBytes = shared;
    config.attrs = &cluster;
    config.numAttrs = 1;
    int clusters = 0;
    const cudaError_t e = cudaOccupancyMaxActiveClusters(&clusters, footprint, &config);
    std::printf("%s{\"size\": %d, \"at_once\": %d, \"multiprocessors\": %d%s}", size > 1 ? ", " : "", size,
                e == cudaSuccess ? clusters : -1, e == cudaSuccess ? clusters * size : -1,
                e == cudaSuccess ? "" : ", \"error\": \"refused\"");
    (void)cudaGetLastError();
  }
  std::puts("]}");
  return 0;
}
