// Launching a kernel in thread-block clusters (the triangle kernels: triangle_product.cu,
// triangle_strips.cu): cudaLaunchKernelEx's configuration with its cluster attribute, and how many
// of those clusters run at once on the current device.
#pragma once
#include <cstddef>

#include <cuda_runtime_api.h>

namespace muoncheck::impl::cuda {

// grid blocks of `threads` in clusters of cluster_blocks, shared_bytes of dynamic shared memory
// each, on stream s.
struct ClusterLaunch {
  cudaLaunchAttribute cluster{};
  cudaLaunchConfig_t config{};
  ClusterLaunch(int grid, int cluster_blocks, int threads, size_t shared_bytes, cudaStream_t s) {
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = static_cast<unsigned>(cluster_blocks), cluster.val.clusterDim.y = 1,
    cluster.val.clusterDim.z = 1;
    config.gridDim = dim3(static_cast<unsigned>(grid));
    config.blockDim = dim3(static_cast<unsigned>(threads));
    config.dynamicSmemBytes = shared_bytes;
    config.stream = s;
    config.attrs = &cluster;
    config.numAttrs = 1;
  }
  ClusterLaunch(const ClusterLaunch&) = delete;   // config points at cluster
  ClusterLaunch& operator=(const ClusterLaunch&) = delete;
};

// How many clusters of the kernel's two instantiations (the same footprint: bf16 and fp16) run at
// once on the current device once each may take shared_bytes; 0 where either is refused. Leaves
// no sticky error behind. Not a stream operation: call it before a graph capture.
template <class Bf16Kernel, class Fp16Kernel>
int clusters_at_once(Bf16Kernel bf16, Fp16Kernel fp16, int cluster_blocks, int threads, size_t shared_bytes) {
  auto allow = [&](auto kernel) {
    return cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared_bytes)) ==
           cudaSuccess;
  };
  int clusters = 0;
  if (allow(bf16) && allow(fp16)) {
    const ClusterLaunch launch(cluster_blocks, cluster_blocks, threads, shared_bytes, nullptr);
    if (cudaOccupancyMaxActiveClusters(&clusters, bf16, &launch.config) != cudaSuccess) clusters = 0;
  }
  (void)cudaGetLastError();
  return clusters;
}

}  // namespace muoncheck::impl::cuda
