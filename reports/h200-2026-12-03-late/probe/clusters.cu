// Probe: how many clusters of size C (1..16) of a 1-block-per-SM kernel with ~197 KB of shared
// memory run at once, and which SMs a full grid of them lands on.
#include <cstdio>
#include <vector>
#include <map>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void probe(int* smid) {
  extern __shared__ unsigned char s[];
  unsigned id; asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  if (threadIdx.x == 0) { smid[blockIdx.x] = id; s[0] = 1; }
  long long t0 = clock64(); while (clock64() - t0 < 2000000) {}
  cg::this_cluster().sync();
}
int main() {
  const int smem = 201856;
  cudaFuncSetAttribute(probe, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  cudaFuncSetAttribute(probe, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
  int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  printf("SMs %d\n", sms);
  for (int c : {1, 2, 4, 6, 8, 10, 12, 14, 16}) {
    cudaLaunchAttribute attr{}; attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = c; attr.val.clusterDim.y = 1; attr.val.clusterDim.z = 1;
    cudaLaunchConfig_t cfg{}; cfg.gridDim = dim3(c); cfg.blockDim = dim3(256); cfg.dynamicSmemBytes = smem;
    cfg.attrs = &attr; cfg.numAttrs = 1;
    int n = 0; cudaError_t e = cudaOccupancyMaxActiveClusters(&n, probe, &cfg);
    printf("cluster %2d: max active %d (%s) -> blocks %d\n", c, n, cudaGetErrorString(e), n * c);
    if (e != cudaSuccess || n == 0) { cudaGetLastError(); continue; }
    int* d; cudaMalloc(&d, n * c * sizeof(int));
    cfg.gridDim = dim3(n * c);
    cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
    cudaEventRecord(a); e = cudaLaunchKernelEx(&cfg, probe, d); cudaEventRecord(b); cudaEventSynchronize(b);
    float ms; cudaEventElapsedTime(&ms, a, b);
    std::vector<int> h(n * c); cudaMemcpy(h.data(), d, h.size() * sizeof(int), cudaMemcpyDeviceToHost);
    std::map<int,int> used; for (int v : h) used[v]++;
    printf("   launch %s, %.2f ms (one wave ~1.1 ms), distinct SMs %zu\n", cudaGetErrorString(e), ms, used.size());
    if (c == 8 || c == 2 || c == 4) { std::vector<int> idle; for (int i = 0; i < sms; ++i) if (!used.count(i)) idle.push_back(i);
      printf("   idle SMs:"); for (int i : idle) printf(" %d", i); printf("\n"); }
    cudaFree(d);
  }
}
