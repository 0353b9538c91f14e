#include PROBE_SRC
#include <cstdio>
#include <vector>
#include <random>
#include <cuda_bf16.h>
using namespace muoncheck::impl::cuda;
int main(int argc, char** argv) {
  const int batch = argc > 1 ? atoi(argv[1]) : 64, m = 128, n = 4096;
  std::vector<__nv_bfloat16> h(size_t(batch) * m * n);
  std::mt19937 g(1); std::normal_distribution<float> d;
  for (auto& v : h) v = __float2bfloat16(d(g));
  void* x; cudaMalloc(&x, h.size() * 2);
  muoncheck::impl::NsConfig cfg; cfg.method = muoncheck::NsMethod::standard; cfg.dtype = muoncheck::DType::bf16;
  cudaStream_t s; cudaStreamCreate(&s);
  for (int warm = 0; warm < 3; ++warm) { cudaMemcpy(x, h.data(), h.size() * 2, cudaMemcpyHostToDevice); resident_standard(x, batch, m, n, cfg, s); }
  cudaStreamSynchronize(s);
  long long z[132][16] = {}; cudaMemcpyToSymbol(g_probe, z, sizeof z);
  const int reps = 20;
  for (int r = 0; r < reps; ++r) { resident_standard(x, batch, m, n, cfg, s); }
  cudaStreamSynchronize(s);
  printf("last error: %s\n", cudaGetErrorString(cudaGetLastError()));
  { cudaMemcpy(x, h.data(), h.size() * 2, cudaMemcpyHostToDevice); resident_standard(x, batch, m, n, cfg, s); cudaStreamSynchronize(s);
    std::vector<unsigned short> o(h.size()); cudaMemcpy(o.data(), x, o.size() * 2, cudaMemcpyDeviceToHost);
    unsigned long long f = 1469598103934665603ull; for (unsigned short v : o) { f ^= v; f *= 1099511628211ull; }
    printf("output hash %016llx\n", f); }
  { long long z2[132][16] = {}; cudaMemcpyToSymbol(g_probe, z2, sizeof z2);
    for (int r = 0; r < reps; ++r) resident_standard(x, batch, m, n, cfg, s); cudaStreamSynchronize(s); }
  long long p[132][16]; cudaMemcpyFromSymbol(p, g_probe, sizeof p);
  unsigned long long t[2]; cudaMemcpyFromSymbol(t, g_time, sizeof t);
  double clk = double(p[0][14] - p[0][15]) / double(t[1] - t[0]);  // cycles per ns of the last launch
  const int clusters = resident_active_clusters(n), rounds = (batch + clusters - 1) / clusters;
  printf("batch %d clusters %d rounds %d, SM clock %.3f GHz (last launch %.1f us)\n", batch, clusters, rounds, clk, (t[1]-t[0])/1e3);
  const char* names[] = {"load+sum", "norm sum", "division", "xxT+push", "partials wait", "reduce+bcast", "A wait", "mirror", "B", "BX", "store"};
  const int per_iter[] = {0,0,0,1,1,1,1,1,1,1,0};
  // block 0 and the mean over blocks used; per round (kcycles per launch / rounds of block 0)
  int used = clusters * 8;
  double total0 = 0, totalm = 0;
  for (int k = 0; k < 11; ++k) {
    double mean = 0; long long mx = 0; for (int b = 0; b < used; ++b) { mean += p[b][k]; mx = std::max(mx, p[b][k]); } mean /= used;
    double div = double(reps) * rounds * (per_iter[k] ? 5 : 1);
    printf("%-14s block0 %7.2f  mean %7.2f  max %7.2f kcycles %s\n", names[k], p[0][k] / div / 1e3, mean / div / 1e3, mx / div / 1e3, per_iter[k] ? "per iteration" : "per round");
    total0 += p[0][k] / (double(reps) * rounds); totalm += mean / (double(reps) * rounds);
  }
  printf("per round: block0 %.1f kcycles, mean %.1f kcycles = %.1f us at %.3f GHz\n", total0 / 1e3, totalm / 1e3, totalm / clk / 1e3, clk);
}
