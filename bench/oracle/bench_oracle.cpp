// How fast the oracle's float128 matrix products run against the limit set by a
// plain float128 multiply-add loop (soft-float: every + and × is a libquadmath
// call, so a GEMM can at best match the loop). Every benchmark reports `flops`
// as a rate; a multiply-add counts 2. For NS, `flops` counts 2·m·n·k for every
// product as if formed in full ("GFLOP-equivalent"); `flops_done` counts the work
// actually done (symmetric products form one triangle). Read the ratios off:
//   GEMM/limit and NS/limit at threads:2 (the goal: ≥ 0.7).
#include <benchmark/benchmark.h>

#include <random>
#include <thread>

#include "core/llama_preset.hpp"
#include "oracle/arith.hpp"
#include "oracle/certify.hpp"
#include "oracle/newton_schulz.hpp"
#include "oracle/oracle.hpp"

namespace mo = muoncheck::oracle;
using mo::f128;
using mo::Mat;

namespace {

Mat<f128> random_mat(int64_t r, int64_t c, unsigned seed) {
  std::mt19937_64 g(seed);  // fixed seed: benchmarks are repeatable
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Mat<f128> m(r, c);
  for (auto& v : m.a) v = f128(u(g));
  return m;
}

// The limit: each thread runs acc += a[i]·b[i] over its own 4096-vectors.
void BM_F128MaddLimit(benchmark::State& st) {
  const int nt = static_cast<int>(st.range(0));
  constexpr int64_t n = 4096, reps = 64;
  std::vector<std::vector<f128>> a(nt), b(nt);
  for (int t = 0; t < nt; ++t) {
    a[t] = random_mat(1, n, 1 + t).a;
    b[t] = random_mat(1, n, 101 + t).a;
  }
  std::vector<f128> out(nt);
  auto work = [&](int t) {
    f128 acc(0);
    for (int64_t r = 0; r < reps; ++r)
      for (int64_t i = 0; i < n; ++i) acc += a[t][i] * b[t][i];
    out[t] = acc;
  };
  for (auto _ : st) {
    std::vector<std::thread> pool;
    for (int t = 1; t < nt; ++t) pool.emplace_back(work, t);
    work(0);
    for (auto& th : pool) th.join();
    benchmark::DoNotOptimize(out.data());
  }
  st.counters["flops"] = benchmark::Counter(2.0 * n * reps * nt * st.iterations(), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_F128MaddLimit)->Arg(1)->Arg(2)->ArgName("threads")->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_GemmF128(benchmark::State& st) {
  mo::set_thread_count(static_cast<int>(st.range(0)));
  const int64_t n = 128;
  const Mat<f128> A = random_mat(n, n, 7), B = random_mat(n, n, 8);
  for (auto _ : st) benchmark::DoNotOptimize(mo::matmul(A, B).a.data());
  st.counters["flops"] = benchmark::Counter(2.0 * n * n * n * st.iterations(), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_GemmF128)->Arg(1)->Arg(2)->ArgName("threads")->UseRealTime()->Unit(benchmark::kMillisecond);

// X·Xᵀ of a 64×176 matrix (the Gram step of an MLP projection's NS).
void BM_XXtF128(benchmark::State& st) {
  mo::set_thread_count(static_cast<int>(st.range(0)));
  const int64_t m = 64, k = 176;
  const Mat<f128> X = random_mat(m, k, 9);
  for (auto _ : st) benchmark::DoNotOptimize(mo::gram_matrix(X).a.data());
  st.counters["flops"] = benchmark::Counter(2.0 * m * m * k * st.iterations(), benchmark::Counter::kIsRate);
  st.counters["flops_done"] = benchmark::Counter(1.0 * m * (m + 1) * k * st.iterations(), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_XXtF128)->Arg(1)->Arg(2)->ArgName("threads")->UseRealTime()->Unit(benchmark::kMillisecond);

// ExactArith<f128> that tallies nominal (full) and performed flops.
struct CountingArith : mo::ExactArith<f128> {
  double* nominal;
  double* done;
  Mat<f128> mm(const Mat<f128>& A, const Mat<f128>& B) const {
    *nominal += 2.0 * A.rows * A.cols * B.cols;
    *done += 2.0 * A.rows * A.cols * B.cols;
    return mo::matmul(A, B);
  }
  Mat<f128> mm_sym(const Mat<f128>& A, const Mat<f128>& B) const {
    *nominal += 2.0 * A.rows * A.cols * B.cols;
    *done += 1.0 * A.rows * (A.rows + 1) * A.cols;
    return mo::matmul_symmetric(A, B);
  }
  Mat<f128> xxt(const Mat<f128>& X) const {
    *nominal += 2.0 * X.rows * X.rows * X.cols;
    *done += 1.0 * X.rows * (X.rows + 1) * X.cols;
    return mo::gram_matrix(X);
  }
};

// One NS call (5 steps) on a rows×cols update: args (threads, method 0=standard 1=gram, rows, cols).
void BM_NsF128(benchmark::State& st) {
  mo::set_thread_count(static_cast<int>(st.range(0)));
  mo::NsParams p;
  p.method = st.range(1) ? muoncheck::NsMethod::gram : muoncheck::NsMethod::standard;
  const Mat<f128> U = random_mat(st.range(2), st.range(3), 11);
  double nominal = 0, done = 0;
  CountingArith ar;
  ar.nominal = &nominal;
  ar.done = &done;
  for (auto _ : st) benchmark::DoNotOptimize(mo::newton_schulz(ar, U, p).a.data());
  st.counters["flops"] = benchmark::Counter(nominal, benchmark::Counter::kIsRate);
  st.counters["flops_done"] = benchmark::Counter(done, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_NsF128)
    ->ArgNames({"threads", "gram", "rows", "cols"})
    ->Args({1, 1, 176, 64})->Args({2, 1, 176, 64})
    ->Args({1, 0, 176, 64})->Args({2, 0, 176, 64})
    ->Args({2, 0, 64, 64})
    ->UseRealTime()->Unit(benchmark::kMillisecond);

// The llama preset as in scenarios/llama2-zero3.json: 2 layers, hidden 64, stage 3,
// dp 2, gas 1, micro_batch 2, 6 steps (built here so the bench reads no files).
muoncheck::Scenario llama_scenario() {
  muoncheck::Scenario s;
  s.name = "llama2-zero3";
  s.seed = 8438;
  s.steps = 6;
  s.model.preset = muoncheck::LlamaPreset{};
  s.model.params = muoncheck::expand_llama(*s.model.preset);
  s.engine.stage = 3;
  s.engine.dp = 2;
  s.engine.micro_batch = 2;
  return s;
}

// Whole runs, once each (--benchmark_filter=Llama for just these).
void BM_LlamaRun(benchmark::State& st) {
  mo::set_thread_count(2);
  const auto s = llama_scenario();
  for (auto _ : st) {
    if (st.range(0) == 0) benchmark::DoNotOptimize(mo::run_control(s).steps.size());
    else benchmark::DoNotOptimize(mo::run_oracle(s, static_cast<mo::Precision>(st.range(0) - 1)).steps.size());
  }
}
BENCHMARK(BM_LlamaRun)->ArgName("control0_f64_f128_bin50")->Arg(0)->Arg(1)->Arg(2)->Arg(3)
    ->Iterations(1)->UseRealTime()->Unit(benchmark::kSecond);

void BM_LlamaCertify(benchmark::State& st) {
  mo::set_thread_count(2);
  const auto s = llama_scenario();
  mo::Certificate c;
  for (auto _ : st) c = mo::certify(s);
  st.counters["digits"] = c.min_digits;
}
BENCHMARK(BM_LlamaCertify)->Iterations(1)->UseRealTime()->Unit(benchmark::kSecond);

}  // namespace

BENCHMARK_MAIN();
