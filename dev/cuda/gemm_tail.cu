// A resident run's part-filled last round on the GEMMs, on a branch stream beside the resident
// kernel's rounds: measured against the production choice (the streamed kernel beside it where that
// pays, else the kernel alone; streamed_tail in ns_streamed.hpp) and dropped from impl/: slower
// than both on the H100 and even on the H200 (docs/gpu.md).
//
// Its reference: the kernel's matrices bit for bit what the kernel gives without a tail, the
// tail's bit for bit what the GEMMs give those matrices alone. Its bench: standard bf16 NS of
// batches of 128×4096 blocks, ms per call: the kernel alone, + the GEMM tail, + the streamed tail,
// the GEMMs alone and the default.
//   gemm_tail [--check-only]
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "dev/cuda/stream_branches.hpp"
#include "impl/math/cuda/cuda_check.hpp"
#include "impl/math/cuda/device_buffer.hpp"
#include "impl/math/cuda/ns_cuda.hpp"
#include "impl/math/cuda/ns_resident.hpp"
#include "impl/math/cuda/ns_streamed.hpp"

using namespace muoncheck;
using namespace muoncheck::impl;
using namespace muoncheck::impl::cuda;

namespace {

enum class Route { kernel_alone, gemm_tail, streamed_tail, gemms, by_shape };

// The NS of x (batch × m × n, bf16) on one route; the result stays in x.
struct Runner {
  cudaStream_t s;
  StreamBranches branches;
  NsDevice alone{nullptr, s, [] { NsOptions o; o.resident = NsOptions::Resident::always; o.streamed_tail = false; return o; }()};
  NsDevice streamed{nullptr, s, [] { NsOptions o; o.resident = NsOptions::Resident::always; o.streamed_tail = true; return o; }()};
  NsDevice gemms{nullptr, s, [] { NsOptions o; o.resident = NsOptions::Resident::never; return o; }()};
  NsDevice by_shape{nullptr, s};

  void copy_back(void* x, const void* out, int64_t count) {
    if (out != x) check(cudaMemcpyAsync(x, out, count * 2, cudaMemcpyDeviceToDevice, s), "cudaMemcpyAsync");
  }
  void run(Route r, void* x, int batch, int64_t m, int64_t n, const NsConfig& cfg) {
    switch (r) {
      case Route::kernel_alone: copy_back(x, alone.run(x, batch, m, n, cfg), batch * m * n); return;
      case Route::streamed_tail: copy_back(x, streamed.run(x, batch, m, n, cfg), batch * m * n); return;
      case Route::gemms: copy_back(x, gemms.run(x, batch, m, n, cfg), batch * m * n); return;
      case Route::by_shape: copy_back(x, by_shape.run(x, batch, m, n, cfg), batch * m * n); return;
      case Route::gemm_tail: break;
    }
    // The kernel is enqueued first, so that its clusters take their multiprocessors before the
    // branch's GEMMs spread over the rest; the tail's result is copied into place on the branch.
    const int tail = resident_partial_round(batch, n);
    branches.fork(s, 1);
    resident_standard(x, batch - tail, m, n, cfg, s);
    if (tail > 0) {
      NsOptions o;
      o.resident = NsOptions::Resident::never;
      o.graphs = false;
      NsDevice on_branch(nullptr, branches.branch(0), o);
      void* tail_x = static_cast<unsigned char*>(x) + (batch - tail) * m * n * 2;
      const void* out = on_branch.run(tail_x, tail, m, n, cfg);
      if (out != tail_x)
        check(cudaMemcpyAsync(tail_x, out, tail * m * n * 2, cudaMemcpyDeviceToDevice, branches.branch(0)), "cudaMemcpyAsync");
      check(cudaStreamSynchronize(branches.branch(0)), "sync (the branch's workspace goes with its NsDevice)");
    }
    branches.join(s, 1);
  }
};

std::vector<uint16_t> download(const void* x, int64_t count) {
  std::vector<uint16_t> out(static_cast<size_t>(count));
  check(cudaMemcpy(out.data(), x, count * 2, cudaMemcpyDeviceToHost), "cudaMemcpy");
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const bool check_only = argc > 1 && std::string(argv[1]) == "--check-only";
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "gemm_tail: no CUDA device\n");
    return 2;
  }
  cudaStream_t s;
  check(cudaStreamCreate(&s), "cudaStreamCreate");
  Runner runner{s};
  NsConfig cfg;
  cfg.method = NsMethod::standard;
  cfg.dtype = DType::bf16;
  const int64_t m = 128, n = 4096;
  const int clusters = resident_active_clusters(n);
  if (clusters <= 0) {
    std::fprintf(stderr, "gemm_tail: the resident kernel does not launch here\n");
    return 2;
  }
  int failed = 0;
  for (int batch : {clusters + 3, 2 * clusters + 4, 4 * clusters + 4}) {
    const int64_t count = batch * m * n;
    const int tail = resident_partial_round(batch, n);
    DeviceBuffer x, y;
    x.reserve(static_cast<size_t>(count) * 2), y.reserve(static_cast<size_t>(count) * 2);
    std::vector<uint16_t> host(static_cast<size_t>(count));
    std::mt19937 rng(static_cast<uint32_t>(batch));
    for (auto& v : host) v = static_cast<uint16_t>(0x3c00 + (rng() % 0x300)) ^ static_cast<uint16_t>((rng() & 1) << 15);
    auto fresh = [&](void* to) { check(cudaMemcpy(to, host.data(), count * 2, cudaMemcpyHostToDevice), "cudaMemcpy"); };
    fresh(x.get());
    runner.run(Route::gemm_tail, x.get(), batch, m, n, cfg);
    const auto both = download(x.get(), count);
    fresh(y.get());
    runner.run(Route::kernel_alone, y.get(), batch, m, n, cfg);
    const auto kernel = download(y.get(), count);
    fresh(y.get());
    void* tail_in = static_cast<unsigned char*>(y.get()) + (batch - tail) * m * n * 2;
    runner.run(Route::gemms, tail_in, tail, m, n, cfg);
    const auto gemms = download(tail_in, tail * m * n);
    const int64_t head = count - tail * m * n;
    const bool ok = std::memcmp(both.data(), kernel.data(), head * 2) == 0 &&
                    std::memcmp(both.data() + head, gemms.data(), tail * m * n * 2) == 0;
    failed += !ok;
    std::printf("check gemm tail %dx128x4096 (tail %d): %s\n", batch, tail, ok ? "ok" : "FAIL");
    if (check_only) continue;
    const std::pair<const char*, Route> routes[] = {{"kernel", Route::kernel_alone}, {"+gemm tail", Route::gemm_tail},
                                                    {"+streamed", Route::streamed_tail}, {"gemms", Route::gemms},
                                                    {"default", Route::by_shape}};
    for (const auto& [name, route] : routes) {
      for (int i = 0; i < 3; ++i) runner.run(route, x.get(), batch, m, n, cfg);
      check(cudaStreamSynchronize(s), "sync");
      const int reps = 20;
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < reps; ++i) runner.run(route, x.get(), batch, m, n, cfg);
      check(cudaStreamSynchronize(s), "sync");
      std::printf("bench ns standard bf16 %dx128x4096 %-11s %.4f ms\n", batch, name,
                  std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / reps);
    }
  }
  return failed == 0 ? 0 : 1;
}
