// Newton–Schulz throughput on one GPU, counted as the sum of its GEMMs (2·M·N·K each),
// beside the rate of exactly those GEMMs issued plainly (same shapes, same batching,
// no copies, no normalization) in the same process: the ratio is what the NS
// bookkeeping costs. Shapes: 1024², 4096², 4096×14336 and per-head 64×(128×4096).
// Times are CUDA events around one NS call (UseManualTime); inputs are seeded uniform
// values, never zeros. Ends with a table: shape, NS TFLOP/s, GEMM TFLOP/s, ratio.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "impl/math/cuda/cuda_check.hpp"
#include "impl/math/cuda/device_buffer.hpp"
#include "impl/math/cuda/device_info.hpp"
#include "impl/math/cuda/ns_cuda.hpp"

namespace {

using namespace muoncheck;
using namespace muoncheck::impl;
using cuda::check;

struct Shape {
  const char* name;
  int batch;
  int64_t m, n;
};
const Shape kShapes[] = {{"1024x1024", 1, 1024, 1024},
                         {"4096x4096", 1, 4096, 4096},
                         {"4096x14336", 1, 4096, 14336},
                         {"per_head_64x128x4096", 64, 128, 4096}};

// One device, one stream, one handle for the whole program.
struct Gpu {
  cudaStream_t stream = nullptr;
  cublasHandle_t handle = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  Gpu() {
    check(cudaSetDevice(0), "cudaSetDevice");
    check(cudaStreamCreate(&stream), "cudaStreamCreate");
    check(cublasCreate(&handle), "cublasCreate");
    check(cublasSetStream(handle, stream), "cublasSetStream");
    check(cudaEventCreate(&start), "cudaEventCreate");
    check(cudaEventCreate(&stop), "cudaEventCreate");
  }
  template <class F>
  double time_ms(F&& f) {
    check(cudaEventRecord(start, stream), "cudaEventRecord");
    f();
    check(cudaEventRecord(stop, stream), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    return ms;
  }
};
Gpu& gpu() {
  static Gpu g;
  return g;
}

NsConfig config(NsMethod method, DType t) {
  NsConfig c;
  c.method = method;
  c.dtype = t;
  return c;
}

// Seeded uniform values in [-1, 1), converted on the device to the NS dtype.
void fill(void* x, int64_t n, DType t, uint32_t seed) {
  std::vector<float> host(static_cast<size_t>(n));
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  for (auto& v : host) v = d(gen);
  cuda::DeviceBuffer f;
  f.reserve(sizeof(float) * n);
  check(cudaMemcpy(f.get(), host.data(), sizeof(float) * n, cudaMemcpyHostToDevice), "cudaMemcpy");
  cuda::to_dtype(t, f.as<float>(), x, n, gpu().stream);
  check(cudaStreamSynchronize(gpu().stream), "cudaStreamSynchronize");
}

void ns(benchmark::State& state, Shape sh, NsMethod method, DType t) {
  const NsConfig cfg = config(method, t);
  cuda::DeviceBuffer x;
  x.reserve(static_cast<size_t>(dtype_bytes(t)) * sh.batch * sh.m * sh.n);
  fill(x.get(), sh.batch * sh.m * sh.n, t, 8600);
  cuda::NsDevice dev(gpu().handle, gpu().stream);
  for (int i = 0; i < 3; ++i) dev.run(x.get(), sh.batch, sh.m, sh.n, cfg);   // warm-up: handles, workspaces
  for (auto _ : state) state.SetIterationTime(gpu().time_ms([&] { dev.run(x.get(), sh.batch, sh.m, sh.n, cfg); }) / 1e3);
  state.counters["TFLOP/s"] = benchmark::Counter(cuda::NsDevice::gemm_flops(sh.batch, sh.m, sh.n, cfg) / 1e12,
                                                 benchmark::Counter::kIsIterationInvariantRate);
}

// The standard NS's GEMMs, issued plainly: per step XXᵀ (m×m, K=n), A·A (m³), B·X (m×n, K=m).
void gemm_mix(benchmark::State& state, Shape sh, DType t) {
  const cudaDataType_t ct = t == DType::bf16 ? CUDA_R_16BF : CUDA_R_16F;
  const int64_t m = sh.m, n = sh.n, mm = m * m, mn = m * n;
  const int eb = dtype_bytes(t);
  cuda::DeviceBuffer x, y, a, b;
  x.reserve(eb * mn * sh.batch), y.reserve(eb * mn * sh.batch), a.reserve(eb * mm * sh.batch), b.reserve(eb * mm * sh.batch);
  fill(x.get(), mn * sh.batch, t, 1), fill(y.get(), mn * sh.batch, t, 2);
  fill(a.get(), mm * sh.batch, t, 3), fill(b.get(), mm * sh.batch, t, 4);
  const float one = 1.0f, zero = 0.0f;
  auto g = [&](cublasOperation_t ta, cublasOperation_t tb, int64_t M, int64_t N, int64_t K, const void* A,
               int64_t lda, int64_t sa, const void* B, int64_t ldb, int64_t sb, void* C, int64_t ldc, int64_t sc) {
    check(cublasGemmStridedBatchedEx(gpu().handle, ta, tb, int(M), int(N), int(K), &one, A, ct, int(lda), sa, B, ct,
                                     int(ldb), sb, &zero, C, ct, int(ldc), sc, sh.batch, CUBLAS_COMPUTE_32F,
                                     CUBLAS_GEMM_DEFAULT),
          "cublasGemmStridedBatchedEx");
  };
  auto run = [&] {
    for (int s = 0; s < 5; ++s) {
      g(CUBLAS_OP_T, CUBLAS_OP_N, m, m, n, x.get(), n, mn, x.get(), n, mn, a.get(), m, mm);   // X·Xᵀ
      g(CUBLAS_OP_N, CUBLAS_OP_N, m, m, m, a.get(), m, mm, a.get(), m, mm, b.get(), m, mm);   // A·A
      g(CUBLAS_OP_N, CUBLAS_OP_N, n, m, m, x.get(), n, mn, b.get(), m, mm, y.get(), n, mn);   // B·X
    }
  };
  for (int i = 0; i < 3; ++i) run();
  for (auto _ : state) state.SetIterationTime(gpu().time_ms(run) / 1e3);
  state.counters["TFLOP/s"] = benchmark::Counter(
      cuda::NsDevice::gemm_flops(sh.batch, m, n, config(NsMethod::standard, t)) / 1e12,
      benchmark::Counter::kIsIterationInvariantRate);
}

// Collects each benchmark's rate for the closing table.
class TableReporter : public benchmark::ConsoleReporter {
 public:
  std::map<std::string, double> rate;
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& r : runs)
      if (r.run_type == Run::RT_Iteration || r.aggregate_name == "median") {
        auto it = r.counters.find("TFLOP/s");
        if (it != r.counters.end()) rate[r.run_name.function_name] = it->second.value;
      }
    ConsoleReporter::ReportRuns(runs);
  }
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  std::printf("device: %s\n", muoncheck::impl::cuda::environment().c_str());
  for (const Shape& sh : kShapes) {
    const std::string s = sh.name;
    benchmark::RegisterBenchmark(("ns_standard_bf16/" + s).c_str(), ns, sh, NsMethod::standard, DType::bf16)
        ->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.5);
    benchmark::RegisterBenchmark(("gemm_mix_bf16/" + s).c_str(), gemm_mix, sh, DType::bf16)
        ->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.5);
    if (sh.m != sh.n)
      benchmark::RegisterBenchmark(("ns_gram_fp16/" + s).c_str(), ns, sh, NsMethod::gram, DType::fp16)
          ->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.5);
  }
  TableReporter table;
  benchmark::RunSpecifiedBenchmarks(&table);
  std::printf("\n%-22s %14s %14s %8s %16s\n", "shape", "NS bf16 TF/s", "GEMM TF/s", "NS/GEMM", "gram fp16 TF/s");
  for (const Shape& sh : kShapes) {
    const std::string s = sh.name;
    const double ns_rate = table.rate["ns_standard_bf16/" + s], gemm = table.rate["gemm_mix_bf16/" + s];
    const double gram = table.rate.count("ns_gram_fp16/" + s) ? table.rate["ns_gram_fp16/" + s] : 0.0;
    std::printf("%-22s %14.1f %14.1f %7.1f%% %16.1f\n", sh.name, ns_rate, gemm, gemm > 0 ? 100 * ns_rate / gemm : 0.0, gram);
  }
  benchmark::Shutdown();
  return 0;
}
