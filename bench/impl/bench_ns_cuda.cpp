// Newton–Schulz on one GPU: ms per call (5 steps) for 1024², 4096², 4096×14336 and per-head
// 64×(128×4096), standard bf16 and (non-square) gram fp16, median of 5 repetitions; each named
// per-iteration schedule too (`ns_standard_bf16_NAME/…`, as many steps as it has, median of 3).
// Rates: the algorithm's GEMMs in full (2·M·N·K each, "TFLOP/s") and the GEMM work actually issued
// once symmetric products compute one triangle ("issued TFLOP/s"); the counter "roofline GFLOP" is
// one call's flops with symmetric products as exact triangles (bench/ns_side_by_side.py checks its
// own count against it); "split fallbacks" counts products issued on another split than planned
// (0 in a sound run), "strips products" those the strips kernel took. Beside them, in the same
// process:
//   - the plain cuBLAS GEMMs of the standard algorithm's shapes in full (`gemm_mix_bf16/…`);
//   - the roofline's GEMM (`gemm_square_{bf16,fp16}/4096`: C = A·B at 4096³, fifteen a call).
// Times are CUDA events around one call (UseManualTime); inputs are seeded uniform values, never
// zeros. Calls run back to back (Protocol::sustained); the roofline's GEMM and the NS at 4096² and
// 4096×14336 are also timed cold (`…/cold`: after two idle seconds, the median of the calls in the
// first 30 ms; see Protocol), as the side by side times torch.matmul.
// Flags:
//   --resident-sweep  for the standard bf16 NS of batches of 1…128 blocks of 128×4096, 128×1024,
//                     64×512 and 32×128, the resident kernel and the GEMMs side by side
//                     (`ns_resident_sweep/BATCHxMxN/{resident,streamed,gemms,default}`: resident
//                     the kernel alone, streamed with the part-filled last round on the streamed
//                     kernel beside it, where it fits) with a table of the default's choice (the
//                     measurements behind resident_pays and streamed_tail); and the streamed kernel
//                     alone (`ns_streamed_alone/BATCHx128x4096/stepsS`, its grid as beside the
//                     resident kernel) for 0, 1 and 5 iterations. The routes measured and dropped
//                     (halves, the GEMM tail) have their benches in dev/cuda/.
//   --products        X·Xᵀ alone (4096×4096 from K = 4096 and 14336) under the 128-tiles, our
//                     triangle kernel, its strips and the full GEMM, both protocols; a split that
//                     falls back to another is not timed
//                     (`product_xxt_bf16/4096xK/SPLIT[/cold]`).
//   --parts           the standard NS's calls at 4096² and 4096×14336, each timed alone as the NS
//                     issues them (`ns_part_bf16/SHAPE/{normalize,xxt,square,apply,apply_no_c}`),
//                     and in its order on those inputs (`…/chain`), under both protocols (`…/cold`):
//                     whether the NS costs more than its parts, and what reading C costs the apply.
// Ends with a table; bench/ns_side_by_side.py reads the JSON output (--benchmark_out).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "core/ns_schedules.hpp"
#include "impl/math/cuda/cuda_check.hpp"
#include "impl/math/cuda/device_buffer.hpp"
#include "impl/math/cuda/device_info.hpp"
#include "impl/math/cuda/ns_cuda.hpp"
#include "impl/math/cuda/ns_resident.hpp"
#include "impl/math/cuda/ns_streamed.hpp"
#include "impl/math/cuda/symmetric_product.hpp"

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

// How a benchmark times its call. `sustained`: calls back to back for the benchmark's minimum
// time, each timed; under that load an H100 reaches its 700 W limit and lowers its SM clock from
// 1980 MHz to about 1450–1600. `cold`: after two idle seconds, one call
// to raise the clocks, then calls timed until kColdWindowMs of them (at least 3), their median: the
// first tens of milliseconds of load, which the card runs at its top clock, as
// bench/ns_side_by_side.py times torch.matmul's GEMM rate. The window is the same for every call
// length, so that a 6 ms call and a 3 ms one are timed in the same state of the card (a fixed count
// of calls would time the longer call further into the power limit). A rate is compared only with
// one timed the same way.
enum class Protocol { sustained, cold };
constexpr double kColdWindowMs = 30.0;

template <class F>
void time_calls(benchmark::State& state, Protocol protocol, F&& call) {
  if (protocol == Protocol::sustained) {
    for (auto _ : state) state.SetIterationTime(gpu().time_ms(call) / 1e3);
    return;
  }
  for (auto _ : state) {
    check(cudaStreamSynchronize(gpu().stream), "cudaStreamSynchronize");
    std::this_thread::sleep_for(std::chrono::seconds(2));
    call();
    std::vector<double> ms;
    for (double total = 0; ms.size() < 3 || total < kColdWindowMs; total += ms.back()) ms.push_back(gpu().time_ms(call));
    std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
    state.SetIterationTime(ms[ms.size() / 2] / 1e3);
    state.counters["cold calls"] = static_cast<double>(ms.size());
  }
}

NsConfig config(NsMethod method, DType t) {
  NsConfig c;
  c.method = method;
  c.dtype = t;
  return c;
}

NsConfig scheduled(NsMethod method, DType t, const NsSchedule& sch) {
  OptimizerConfig o;
  o.ns_method = method;
  o.ns_dtype = t;
  o.ns_coefficients = sch.coefficients;
  o.ns_steps = static_cast<int>(sch.coefficients.size());
  return NsConfig::from(o);
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

void ns(benchmark::State& state, Shape sh, NsConfig cfg, cuda::NsOptions options, Protocol protocol) {
  const DType t = cfg.dtype;
  cuda::DeviceBuffer x;
  x.reserve(static_cast<size_t>(dtype_bytes(t)) * sh.batch * sh.m * sh.n);
  fill(x.get(), sh.batch * sh.m * sh.n, t, 8600);
  cuda::NsDevice dev(gpu().handle, gpu().stream, options);
  try {
    for (int i = 0; i < 3; ++i) dev.run(x.get(), sh.batch, sh.m, sh.n, cfg);   // warm-up: plans, arrays, graph
  } catch (const Error& e) {   // e.g. a heuristic rank that some GEMM of the shape does not have
    state.SkipWithError(e.what());
    return;
  }
  time_calls(state, protocol, [&] { dev.run(x.get(), sh.batch, sh.m, sh.n, cfg); });
  const cuda::NsFlops f = cuda::NsDevice::flops(sh.batch, sh.m, sh.n, cfg, options);
  state.counters["TFLOP/s"] = benchmark::Counter(f.nominal / 1e12, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["issued TFLOP/s"] = benchmark::Counter(f.issued / 1e12, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["roofline GFLOP"] = f.symmetric / 1e9;   // per call, symmetric products as triangles
  state.counters["split fallbacks"] = static_cast<double>(dev.split_fallbacks());   // 0: every split ran as planned
  state.counters["strips products"] = static_cast<double>(dev.issued_as(cuda::SymmetricSplit::strips));   // issued, as above
  state.counters["resident"] = dev.ran_resident() ? 1 : 0;   // 1: one resident kernel (ns_resident.hpp)
  if (dev.ran_resident()) state.counters["clusters at once"] = cuda::resident_active_clusters(sh.n);
  if (dev.ran_resident()) state.counters["streamed tail"] = dev.streamed_matrices();   // on the streamed kernel beside it
}

// The streamed kernel alone (ns_streamed.hpp), one launch for the batch with `steps`
// iterations, its grid as it runs beside the resident kernel: what the streamed tail costs.
void streamed_alone(benchmark::State& state, Shape sh, int steps) {
  NsConfig cfg = config(NsMethod::standard, DType::bf16);
  cfg.steps = steps;
  if (!cuda::streamed_fits(sh.m, sh.n, cfg)) {
    state.SkipWithError("the streamed kernel does not run here");
    return;
  }
  cuda::DeviceBuffer x, scratch;
  x.reserve(2 * static_cast<size_t>(sh.batch * sh.m * sh.n));
  scratch.reserve(cuda::streamed_scratch_bytes(sh.batch, true, sh.n));
  fill(x.get(), sh.batch * sh.m * sh.n, DType::bf16, 8601);
  auto once = [&] { cuda::streamed_standard(x.get(), sh.batch, sh.m, sh.n, cfg, scratch.get(), true, gpu().stream); };
  once();
  time_calls(state, Protocol::sustained, once);
  state.counters["clusters"] = cuda::streamed_clusters(sh.batch, true, sh.n);
}

// One cuBLAS GEMM in the NS dtype with fp32 accumulation, C = A·B (column-major, as cuBLAS reads it).
struct PlainGemm {
  cudaDataType_t type;
  int batch;
  void operator()(cublasOperation_t ta, cublasOperation_t tb, int64_t M, int64_t N, int64_t K, const void* A,
                  int64_t lda, int64_t sa, const void* B, int64_t ldb, int64_t sb, void* C, int64_t ldc,
                  int64_t sc) const {
    const float one = 1.0f, zero = 0.0f;
    check(cublasGemmStridedBatchedEx(gpu().handle, ta, tb, int(M), int(N), int(K), &one, A, type, int(lda), sa, B,
                                     type, int(ldb), sb, &zero, C, type, int(ldc), sc, batch, CUBLAS_COMPUTE_32F,
                                     CUBLAS_GEMM_DEFAULT),
          "cublasGemmStridedBatchedEx");
  }
};

cudaDataType_t cuda_type(DType t) { return t == DType::bf16 ? CUDA_R_16BF : CUDA_R_16F; }

// The standard NS's GEMMs, issued plainly: per step XXᵀ (m×m, K=n), A·A (m³), B·X (m×n, K=m).
void gemm_mix(benchmark::State& state, Shape sh, DType t) {
  const int64_t m = sh.m, n = sh.n, mm = m * m, mn = m * n;
  const int eb = dtype_bytes(t);
  cuda::DeviceBuffer x, y, a, b;
  x.reserve(eb * mn * sh.batch), y.reserve(eb * mn * sh.batch), a.reserve(eb * mm * sh.batch), b.reserve(eb * mm * sh.batch);
  fill(x.get(), mn * sh.batch, t, 1), fill(y.get(), mn * sh.batch, t, 2);
  fill(a.get(), mm * sh.batch, t, 3), fill(b.get(), mm * sh.batch, t, 4);
  const PlainGemm g{cuda_type(t), sh.batch};
  auto run = [&] {
    for (int s = 0; s < 5; ++s) {
      g(CUBLAS_OP_T, CUBLAS_OP_N, m, m, n, x.get(), n, mn, x.get(), n, mn, a.get(), m, mm);   // X·Xᵀ
      g(CUBLAS_OP_N, CUBLAS_OP_N, m, m, m, a.get(), m, mm, a.get(), m, mm, b.get(), m, mm);   // A·A
      g(CUBLAS_OP_N, CUBLAS_OP_N, n, m, m, x.get(), n, mn, b.get(), m, mm, y.get(), n, mn);   // B·X
    }
  };
  for (int i = 0; i < 3; ++i) run();
  time_calls(state, Protocol::sustained, run);
  state.counters["TFLOP/s"] = benchmark::Counter(
      cuda::NsDevice::flops(sh.batch, m, n, config(NsMethod::standard, t)).nominal / 1e12,
      benchmark::Counter::kIsIterationInvariantRate);
}

// Products per timed call where one product is timed alone (gemm_square, product): as many as a
// 4096² NS call has (5 steps × 3), so that a call lasts about as long as that NS call.
constexpr int kChain = 15;

// The roofline's GEMM (bench/ns_side_by_side.py: C = A·B at size³, uniform operands in [-1, 1))
// timed the way this program times the NS (either Protocol), kChain back to back per timed call.
void gemm_square(benchmark::State& state, int64_t size, DType t, Protocol protocol) {
  const int64_t ss = size * size;
  cuda::DeviceBuffer a, b, c;
  a.reserve(dtype_bytes(t) * ss), b.reserve(dtype_bytes(t) * ss), c.reserve(dtype_bytes(t) * ss);
  fill(a.get(), ss, t, 5), fill(b.get(), ss, t, 6);
  const PlainGemm g{cuda_type(t), 1};
  auto run = [&] {
    for (int i = 0; i < kChain; ++i)
      g(CUBLAS_OP_N, CUBLAS_OP_N, size, size, size, a.get(), size, ss, b.get(), size, ss, c.get(), size, ss);
  };
  for (int i = 0; i < 3; ++i) run();
  time_calls(state, protocol, run);
  state.counters["TFLOP/s"] = benchmark::Counter(kChain * 2.0 * double(size) * double(ss) / 1e12,
                                                 benchmark::Counter::kIsIterationInvariantRate);
}

// One symmetric product of the NS alone, X·Xᵀ (m×m from m×k, bf16), under a split, kChain a
// timed call: each split's rate per issued flop against the dense GEMM's (`full`, cuBLASLt over
// the whole square), under either protocol (docs/gpu.md has the H100's figures).
void product(benchmark::State& state, int64_t m, int64_t k, cuda::SymmetricPlan plan, Protocol protocol) {
  cuda::DeviceBuffer x, d;
  x.reserve(2 * m * k), d.reserve(2 * m * m);
  fill(x.get(), m * k, DType::bf16, 7);
  cuda::LtGemm gemm;
  cuda::SymmetricProduct sym(gemm);
  cuda::SymmetricProblem p;
  p.dtype = DType::bf16;
  p.m = m, p.k = k;
  p.a = x.get(), p.lda = k, p.sa = m * k;
  p.b = x.get(), p.ldb = k, p.sb = m * k, p.b_transposed = true;
  p.d = d.get();
  if (sym.run(plan, p, gpu().stream) != cuda::fitted(plan, m).split) {   // timed under another split's name: no
    state.SkipWithError("the split fell back to another one here");
    return;
  }
  auto run = [&] {
    for (int i = 0; i < kChain; ++i) sym.run(plan, p, gpu().stream);
  };
  for (int i = 0; i < 3; ++i) run();
  time_calls(state, protocol, run);
  const double nominal = kChain * 2.0 * double(m) * double(m) * double(k);
  state.counters["issued TFLOP/s"] = benchmark::Counter(nominal * cuda::issued_fraction(plan, m) / 1e12,
                                                        benchmark::Counter::kIsIterationInvariantRate);
}

// The standard NS's calls at one shape, each timed alone as one NS call issues it (the default
// split, the same scalars, C and D; first iteration's triple): the normalization once, A = XXᵀ
// (`xxt`), B = cA² + bA (`square`) and X' = BX + aX (`apply`) five times each. Their four times
// add up to the NS's call where the chain costs nothing beyond its parts; `apply_no_c` is the
// apply without its aX term, so the difference is what reading C costs. `chain` issues them in
// the NS's order (normalize, then xxt, square and apply five times, X and X' swapping), without a
// graph: the NS's launches. Every part runs on the values a chain leaves in its buffers (X, A and
// B of an NS call), so that parts and chain multiply the same kind of numbers.
enum class Part { normalize, xxt, square, apply, apply_no_c, chain };

void ns_part(benchmark::State& state, Shape sh, Part part, Protocol protocol) {
  const int64_t m = sh.m, n = sh.n, mm = m * m, mn = m * n;
  const NsConfig cfg = config(NsMethod::standard, DType::bf16);
  const NsTriple& k = cfg.at(0);
  cuda::DeviceBuffer x, y, a, b, scratch;
  x.reserve(2 * mn), y.reserve(2 * mn), a.reserve(2 * mm), b.reserve(2 * mm);
  scratch.reserve(cuda::normalize_scratch_bytes(1, mn));
  fill(x.get(), mn, DType::bf16, 8602);   // A, B and X' come from the chain below
  cuda::LtGemm gemm;
  cuda::SymmetricProduct sym(gemm);
  cuda::SymmetricProblem gram;   // A = XXᵀ
  gram.m = m, gram.k = n;
  gram.a = gram.b = x.get(), gram.lda = gram.ldb = n, gram.sa = gram.sb = mn, gram.b_transposed = true;
  gram.d = a.get();
  cuda::SymmetricProblem square;   // B = cA² + bA
  square.m = square.k = m;
  square.a = square.b = square.c = a.get(), square.lda = square.ldb = m, square.sa = square.sb = mm;
  square.b_symmetric = true, square.alpha = k.c, square.beta = k.b;
  square.d = b.get();
  const bool with_c = part != Part::apply_no_c;
  const void* c = with_c ? x.get() : y.get();   // d where beta is 0, as NsDevice::apply passes it
  const cuda::GemmProblem apply = cuda::ns_apply_problem(DType::bf16, 1, m, n, b.get(), x.get(), c, y.get());
  const cuda::SymmetricPlan plan = cuda::ns_split_for(m);   // X·Xᵀ's and A²'s
  const cudaStream_t st = gpu().stream;
  auto chain = [&] {
    cuda::normalize(DType::bf16, x.get(), 1, mn, scratch.get(), st);
    void* cur = x.get();
    void* nxt = y.get();
    for (int i = 0; i < cfg.steps; ++i) {
      cuda::SymmetricProblem g = gram;
      g.a = g.b = cur;
      sym.run(plan, g, st);
      sym.run(plan, square, st);
      gemm.run(cuda::ns_apply_problem(DType::bf16, 1, m, n, b.get(), cur, cur, nxt), 1.0f, b.get(), cur, k.a, cur, nxt, st);
      std::swap(cur, nxt);
    }
  };
  // One timed call: the part as many times as an NS call issues it.
  auto run = [&] {
    switch (part) {
      case Part::normalize: return cuda::normalize(DType::bf16, x.get(), 1, mn, scratch.get(), st);
      case Part::chain: return chain();
      case Part::xxt:
        for (int i = 0; i < cfg.steps; ++i) sym.run(plan, gram, st);
        return;
      case Part::square:
        for (int i = 0; i < cfg.steps; ++i) sym.run(plan, square, st);
        return;
      case Part::apply:
      case Part::apply_no_c:
        for (int i = 0; i < cfg.steps; ++i) gemm.run(apply, 1.0f, b.get(), x.get(), with_c ? k.a : 0.0f, c, y.get(), st);
        return;
    }
  };
  chain();   // every part then reads values an NS call leaves, not the seeded ones (power follows the bits)
  for (int i = 0; i < 3; ++i) run();
  time_calls(state, protocol, run);
}

// Collects each benchmark's rate and time (median where repeated) for the closing tables.
class TableReporter : public benchmark::ConsoleReporter {
 public:
  std::map<std::string, double> rate, ms;
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& r : runs)
      if ((r.run_type == Run::RT_Iteration && r.repetitions <= 1) || r.aggregate_name == "median") {
        auto it = r.counters.find("TFLOP/s");
        if (it != r.counters.end()) rate[r.run_name.function_name] = it->second.value;
        ms[r.run_name.function_name] = r.GetAdjustedRealTime();
      }
    ConsoleReporter::ReportRuns(runs);
  }
};

// Removes a flag of ours from argv; true when it was there.
bool take_flag(int* argc, char** argv, const std::string& flag) {
  for (int i = 1; i < *argc; ++i)
    if (argv[i] == flag) {
      for (int j = i; j + 1 < *argc; ++j) argv[j] = argv[j + 1];
      --*argc;
      return true;
    }
  return false;
}

// The batches and block shapes of --resident-sweep (names live as long as the program).
std::vector<Shape> sweep_shapes() {
  static std::vector<std::string> names;
  std::vector<Shape> out;
  auto add = [&](int batch, int64_t m, int64_t n) {
    names.push_back(std::to_string(batch) + "x" + std::to_string(m) + "x" + std::to_string(n));
    out.push_back({nullptr, batch, m, n});
  };
  for (int b : {1, 2, 4, 8, 15, 16, 30, 31, 32, 34, 45, 48, 49, 60, 64, 79, 128}) add(b, 128, 4096);
  for (int b : {1, 8, 16, 64}) add(b, 128, 1024);
  for (int b : {1, 8, 32}) add(b, 64, 512);
  for (int b : {1, 4}) add(b, 32, 128);
  for (size_t i = 0; i < out.size(); ++i) out[i].name = names[i].c_str();
  return out;
}

// --resident-sweep's columns: the kernel alone, the kernel with its partial round on the streamed
// kernel beside it (where it fits: the kernel alone elsewhere), the GEMMs alone, and the default.
std::vector<std::pair<std::string, cuda::NsOptions>> sweep_variants() {
  using R = cuda::NsOptions::Resident;
  auto resident = [](bool streamed) {
    cuda::NsOptions o;
    o.resident = R::always;
    o.streamed_tail = streamed;
    return o;
  };
  cuda::NsOptions gemms;
  gemms.resident = R::never;
  return {{"resident", resident(false)}, {"streamed", resident(true)}, {"gemms", gemms}, {"default", {}}};
}

// A registered benchmark's timing under a protocol: sustained, calls for at least min_time
// seconds; cold, one measurement (time_calls).
benchmark::internal::Benchmark* timed(benchmark::internal::Benchmark* b, Protocol protocol, double min_time = 0.2) {
  b->UseManualTime()->Unit(benchmark::kMillisecond);
  return protocol == Protocol::cold ? b->Iterations(1) : b->MinTime(min_time);
}

// NAME under the sustained protocol and NAME/cold under the cold one; add(name, protocol)
// registers one of them.
template <class Add>
void register_both(const std::string& name, Add add) {
  timed(add(name, Protocol::sustained), Protocol::sustained);
  timed(add(name + "/cold", Protocol::cold), Protocol::cold);
}

void register_ns(const std::string& name, const Shape& sh, const NsConfig& cfg, cuda::NsOptions o, int reps) {
  auto* b = timed(benchmark::RegisterBenchmark(name.c_str(), ns, sh, cfg, o, Protocol::sustained), Protocol::sustained,
                  reps > 1 ? 0.2 : 0.1);
  if (reps > 1) b->Repetitions(reps);
}

// NAME/cold: the call timed under the cold protocol, once.
void register_cold(const std::string& name, const Shape& sh, const NsConfig& cfg, cuda::NsOptions o = {}) {
  timed(benchmark::RegisterBenchmark((name + "/cold").c_str(), ns, sh, cfg, o, Protocol::cold), Protocol::cold);
}

}  // namespace

int main(int argc, char** argv) {
  const bool resident_sweep = take_flag(&argc, argv, "--resident-sweep");
  const bool products = take_flag(&argc, argv, "--products");
  const bool parts = take_flag(&argc, argv, "--parts");
  bool listing = false;   // --benchmark_list_tests names the benchmarks; it needs no GPU
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    listing = listing || (arg.rfind("--benchmark_list_tests", 0) == 0 && arg.find("=false") == std::string::npos &&
                          arg.find("=0") == std::string::npos);
  }
  benchmark::Initialize(&argc, argv);
  std::printf("device: %s\n", muoncheck::impl::cuda::environment().c_str());
  if (!listing && cuda::device_count() == 0) {
    std::fprintf(stderr, "bench_ns_cuda: nothing to time: %s\n", muoncheck::impl::cuda::environment().c_str());
    return 2;
  }
  for (const Shape& sh : kShapes) {
    const std::string s = sh.name;
    register_ns("ns_standard_bf16/" + s, sh, config(NsMethod::standard, DType::bf16), {}, 5);
    timed(benchmark::RegisterBenchmark(("gemm_mix_bf16/" + s).c_str(), gemm_mix, sh, DType::bf16), Protocol::sustained);
    if (sh.m != sh.n) register_ns("ns_gram_fp16/" + s, sh, config(NsMethod::gram, DType::fp16), {}, 5);
    const bool roofline_shape = sh.batch == 1 && sh.m >= 4096;   // also timed cold, as the roofline's GEMM is
    if (roofline_shape) {
      register_cold("ns_standard_bf16/" + s, sh, config(NsMethod::standard, DType::bf16));
      if (sh.m != sh.n) register_cold("ns_gram_fp16/" + s, sh, config(NsMethod::gram, DType::fp16));
    }
    // The named per-iteration schedules (core/ns_schedules.hpp): the same kernels with each
    // iteration's scalars, as many iterations as the schedule has.
    for (const auto& sch : ns_schedules()) {
      register_ns("ns_standard_bf16_" + sch.name + "/" + s, sh, scheduled(NsMethod::standard, DType::bf16, sch), {}, 3);
      if (sh.m != sh.n)
        register_ns("ns_gram_fp16_" + sch.name + "/" + s, sh, scheduled(NsMethod::gram, DType::fp16, sch), {}, 3);
    }
  }
  for (const DType t : {DType::bf16, DType::fp16})
    register_both(t == DType::bf16 ? "gemm_square_bf16/4096" : "gemm_square_fp16/4096", [&](const std::string& n, Protocol p) {
      return benchmark::RegisterBenchmark(n.c_str(), gemm_square, int64_t{4096}, t, p);
    });
  if (products) {
    using cuda::SymmetricPlan;
    using cuda::SymmetricSplit;
    const std::pair<const char*, SymmetricPlan> plans[] = {{"tiles128", {SymmetricSplit::tiles, 128}},
                                                           {"triangle", {SymmetricSplit::triangle, 0}},
                                                           {"strips", {SymmetricSplit::strips, 0}},
                                                           {"full", {SymmetricSplit::full, 0}}};
    for (int64_t k : {4096, 14336})
      for (const auto& [plan_name, plan] : plans)
        register_both("product_xxt_bf16/4096x" + std::to_string(k) + "/" + plan_name, [&](const std::string& n, Protocol p) {
          return benchmark::RegisterBenchmark(n.c_str(), product, int64_t{4096}, k, plan, p);
        });
  }
  if (parts) {
    const std::pair<const char*, Part> names[] = {{"normalize", Part::normalize}, {"xxt", Part::xxt},
                                                  {"square", Part::square}, {"apply", Part::apply},
                                                  {"apply_no_c", Part::apply_no_c}, {"chain", Part::chain}};
    for (const Shape& sh : kShapes) {
      if (sh.batch != 1 || sh.m < 4096) continue;   // the roofline's shapes
      for (const auto& [part_name, part] : names)
        register_both(std::string("ns_part_bf16/") + sh.name + "/" + part_name, [&](const std::string& n, Protocol p) {
          return benchmark::RegisterBenchmark(n.c_str(), ns_part, sh, part, p);
        });
    }
  }
  const std::vector<Shape> sweep = resident_sweep ? sweep_shapes() : std::vector<Shape>{};
  for (const Shape& sh : sweep)
    for (const auto& [name, o] : sweep_variants())
      register_ns(std::string("ns_resident_sweep/") + sh.name + "/" + name, sh, config(NsMethod::standard, DType::bf16), o, 1);
  if (resident_sweep)
    for (int batch : {1, 4, 6})
      for (int steps : {0, 1, 5}) {
        const std::string name = "ns_streamed_alone/" + std::to_string(batch) + "x128x4096/steps" + std::to_string(steps);
        timed(benchmark::RegisterBenchmark(name.c_str(), streamed_alone, Shape{nullptr, batch, 128, 4096}, steps),
              Protocol::sustained, 0.1);
      }
  TableReporter table;
  benchmark::RunSpecifiedBenchmarks(&table);
  if (table.ms.empty()) {   // nothing ran (listed, filtered out, or no GPU): no tables of blanks
    benchmark::Shutdown();
    return 0;
  }
  auto get = [](const std::map<std::string, double>& m, const std::string& k) {
    auto it = m.find(k);
    return it == m.end() ? 0.0 : it->second;
  };
  auto number = [](double v, int precision) {
    char text[32];
    std::snprintf(text, sizeof text, "%.*f", precision, v);
    return std::string(text);
  };
  // A table's value, or "-" where its benchmark did not run (filtered out, or failed).
  auto cell = [&](const std::map<std::string, double>& m, const std::string& k, int precision) {
    auto it = m.find(k);
    return it == m.end() ? std::string("-") : number(it->second, precision);
  };
  std::printf("\n%-22s %10s %10s %12s %10s %10s %12s\n", "shape", "std ms", "std TF/s", "GEMM mix TF/s",
              "NS/GEMM", "gram ms", "gram TF/s");
  for (const Shape& sh : kShapes) {
    const std::string s = sh.name, ns = "ns_standard_bf16/" + s, mix = "gemm_mix_bf16/" + s, gram = "ns_gram_fp16/" + s;
    const double r = get(table.rate, ns), gemm = get(table.rate, mix);
    const std::string share = r > 0 && gemm > 0 ? number(100 * r / gemm, 1) + "%" : "-";
    std::printf("%-22s %10s %10s %12s %10s %10s %12s\n", sh.name, cell(table.ms, ns, 3).c_str(), cell(table.rate, ns, 1).c_str(),
                cell(table.rate, mix, 1).c_str(), share.c_str(), cell(table.ms, gram, 3).c_str(), cell(table.rate, gram, 1).c_str());
  }
  if (!sweep.empty()) {
    std::printf("\nresident kernel vs GEMMs, standard bf16 (ms per call; +streamed: the part-filled last round on the streamed "
                "kernel beside it, where it fits)\n%-16s %10s %10s %10s %8s %10s %-16s\n",
                "shape", "resident", "+streamed", "gemms", "ratio", "default", "default's pick");
    for (const Shape& sh : sweep) {
      const std::string base = std::string("ns_resident_sweep/") + sh.name;
      const double r = get(table.ms, base + "/resident"), g = get(table.ms, base + "/gemms");
      const NsConfig cfg = config(NsMethod::standard, DType::bf16);
      const int streamed = cuda::streamed_tail(sh.batch, sh.m, sh.n, cfg);
      const std::string pick = !cuda::resident_pays(sh.batch, sh.m, sh.n) ? "gemms"
                               : streamed > 0 ? "resident+" + std::to_string(streamed) + " streamed"
                                              : "resident";
      const std::string ratio = r > 0 && g > 0 ? number(g / r, 2) + "x" : "-";
      std::printf("%-16s %10s %10s %10s %8s %10s %-16s\n", sh.name, cell(table.ms, base + "/resident", 4).c_str(),
                  cell(table.ms, base + "/streamed", 4).c_str(),
                  cell(table.ms, base + "/gemms", 4).c_str(), ratio.c_str(), cell(table.ms, base + "/default", 4).c_str(),
                  pick.c_str());
    }
  }
  benchmark::Shutdown();
  return 0;
}
