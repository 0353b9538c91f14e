// The halves split of a symmetric product, measured against the production splits and dropped
// from impl/ (tiles of 128 on our triangle kernels won at every shape the NS runs; docs/gpu.md):
// a recursive 2×2 split of L levels, each level's off-diagonal blocks in one strided GEMM (batch 1)
// or one strided GEMM per block over the batch, and the 2^L diagonal blocks likewise; the GEMMs
// are independent and run side by side on branch streams (stream_branches.hpp), so the small
// levels fill the waves the large ones leave part-empty. Then the production mirror.
//
// Its reference: the same product as the full GEMM, element by element within fp32-accumulation
// rounding, and exactly symmetric. Its bench: X·Xᵀ at 4096 from K = 4096 and 14336 under halves of
// 1…4 levels beside the production split (ns_split_for) and the full GEMM, ms per call.
//   halves_split [--check-only]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "dev/cuda/stream_branches.hpp"
#include "impl/math/cuda/cuda_check.hpp"
#include "impl/math/cuda/device_buffer.hpp"
#include "impl/math/cuda/lt_gemm.hpp"
#include "impl/math/cuda/ns_cuda.hpp"
#include "impl/math/cuda/ns_kernels.hpp"
#include "impl/math/cuda/symmetric_product.hpp"

namespace muoncheck::impl::cuda {
namespace {

const char* at(const void* base, int64_t elems, int64_t eb) { return static_cast<const char*>(base) + elems * eb; }

// One strided run of square h×h blocks.
struct BlockRun {
  GemmProblem problem;
  const void *a, *b, *c;
  void* d;
};

// The square h×h blocks with top-left corners (row0 + i·step, col0 + i·step), i < count, of
// every matrix: one strided run for a single matrix, else one strided run over the batch per block.
std::vector<BlockRun> diagonal_runs(const SymmetricProblem& p, int64_t h, int64_t row0, int64_t col0, int64_t step,
                                    int count) {
  const int64_t eb = dtype_bytes(p.dtype), m = p.m, mm = m * m;
  const bool has_c = p.beta != 0.0f;
  auto block = [&](int64_t r, int64_t c) {
    BlockRun run;
    run.a = at(p.a, r * p.lda, eb);
    run.b = at(p.b, p.b_transposed ? c * p.ldb : c, eb);
    run.d = const_cast<char*>(at(p.d, r * m + c, eb));
    run.c = has_c ? at(p.c, r * m + c, eb) : run.d;
    GemmProblem& g = run.problem;
    g.dtype = p.dtype;
    g.tb = p.b_transposed;
    g.m = g.n = h;
    g.k = p.k;
    g.lda = p.lda, g.ldb = p.ldb, g.ldc = g.ldd = m;
    return run;
  };
  std::vector<BlockRun> runs;
  if (p.batch == 1) {                        // the blocks of the one matrix: one strided run
    BlockRun r = block(row0, col0);
    GemmProblem& g = r.problem;
    g.batch = count;
    g.sa = step * p.lda, g.sb = p.b_transposed ? step * p.ldb : step, g.sc = g.sd = step * (m + 1);
    runs.push_back(r);
  } else {                                   // one strided run over the batch per block
    for (int i = 0; i < count; ++i) {
      BlockRun r = block(row0 + i * step, col0 + i * step);
      GemmProblem& g = r.problem;
      g.batch = p.batch;
      g.sa = p.sa, g.sb = p.sb, g.sc = g.sd = mm;
      runs.push_back(r);
    }
  }
  for (BlockRun& r : runs) {
    GemmProblem& g = r.problem;
    g.align_a = alignment(r.a, g.sa * eb), g.align_b = alignment(r.b, g.sb * eb);
    g.align_c = alignment(r.c, g.sc * eb), g.align_d = alignment(r.d, g.sd * eb);
  }
  return runs;
}

bool halves(LtGemm& gemm_, StreamBranches& branches_, int levels, const SymmetricProblem& p, cudaStream_t s) {
  std::vector<BlockRun> runs;
  auto add = [&](std::vector<BlockRun> more) { runs.insert(runs.end(), more.begin(), more.end()); };
  for (int level = 1; level <= levels; ++level) {
    const int64_t h = p.m >> level;
    add(diagonal_runs(p, h, h, 0, 2 * h, 1 << (level - 1)));   // the off-diagonal block of each parent
  }
  const int64_t h = p.m >> levels;
  add(diagonal_runs(p, h, 0, 0, h, 1 << levels));
  for (BlockRun& r : runs)
    if (!gemm_.supports(r.problem)) return false;
  // Largest first on the origin stream, each other GEMM on a branch with a workspace of its own.
  const int n = static_cast<int>(runs.size());
  branches_.fork(s, n - 1);
  for (int i = 0; i < n; ++i) {
    const BlockRun& r = runs[static_cast<size_t>(i)];
    gemm_.run(r.problem, p.alpha, r.a, r.b, p.beta, r.c, r.d, i == 0 ? s : branches_.branch(i - 1), i);
  }
  branches_.join(s, n - 1);
  return true;
}


// Fraction of the full product's multiply-adds halves(levels) issues.
double halves_fraction(int levels) { return 0.5 + 1.0 / static_cast<double>(int64_t{2} << levels); }

// One product: halves (levels ≥ 1), the production plan (levels 0) or the full GEMM (levels -1).
void product(LtGemm& gemm, StreamBranches& branches, SymmetricProduct& sym, int levels, const SymmetricProblem& p,
             cudaStream_t s) {
  if (levels >= 1) {
    if (!halves(gemm, branches, levels, p, s)) throw Error(ErrorKind::Infrastructure, "halves: no cuBLASLt algorithm");
    mirror_lower(p.dtype, p.d, p.batch, p.m, s);
  } else {
    sym.run(levels == 0 ? ns_split_for(p.m) : SymmetricPlan{}, p, s);
  }
}

}  // namespace
}  // namespace muoncheck::impl::cuda

using namespace muoncheck;
using namespace muoncheck::impl::cuda;

int main(int argc, char** argv) {
  const bool check_only = argc > 1 && std::string(argv[1]) == "--check-only";
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "halves_split: no CUDA device\n");
    return 2;
  }
  cudaStream_t s;
  check(cudaStreamCreate(&s), "cudaStreamCreate");
  LtGemm gemm;
  StreamBranches branches;
  SymmetricProduct sym(gemm);
  int failed = 0;
  for (int64_t k : {int64_t{4096}, int64_t{14336}}) {
    const int64_t m = 4096;
    DeviceBuffer x, d, ref;
    x.reserve(static_cast<size_t>(m * k) * 4), d.reserve(static_cast<size_t>(m * m) * 4), ref.reserve(static_cast<size_t>(m * m) * 4);
    std::vector<float> host(static_cast<size_t>(m * k));
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (float& v : host) v = u(rng);
    check(cudaMemcpy(x.get(), host.data(), host.size() * 4, cudaMemcpyHostToDevice), "cudaMemcpy");
    SymmetricProblem p;
    p.dtype = DType::fp32, p.batch = 1, p.m = m, p.k = k;
    p.a = x.get(), p.lda = k, p.sa = m * k, p.b = x.get(), p.ldb = k, p.sb = m * k, p.b_transposed = true;
    p.d = ref.get();
    product(gemm, branches, sym, -1, p, s);   // the reference: the full GEMM
    std::vector<float> want(static_cast<size_t>(m * m)), got(want.size());
    check(cudaMemcpy(want.data(), ref.get(), want.size() * 4, cudaMemcpyDeviceToHost), "cudaMemcpy");
    for (int levels = 1; levels <= 4; ++levels) {
      p.d = d.get();
      product(gemm, branches, sym, levels, p, s);
      check(cudaMemcpy(got.data(), d.get(), got.size() * 4, cudaMemcpyDeviceToHost), "cudaMemcpy");
      double worst = 0;
      bool symmetric = true;
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < m; ++j) {
          const float g = got[static_cast<size_t>(i * m + j)], w = want[static_cast<size_t>(i * m + j)];
          worst = std::max(worst, std::abs(double(g) - w) / (std::sqrt(double(k)) * 1e-6 + std::abs(double(w)) * 1e-5));
          symmetric = symmetric && std::memcmp(&g, &got[static_cast<size_t>(j * m + i)], 4) == 0;
        }
      const bool ok = symmetric && worst <= 1.0;
      failed += !ok;
      std::printf("check halves%d 4096x%ld: %s (worst %.3g of fp32 rounding, %s)\n", levels, static_cast<long>(k), ok ? "ok" : "FAIL",
                  worst, symmetric ? "symmetric" : "NOT symmetric");
    }
    if (check_only) continue;
    p.dtype = DType::bf16;   // the NS's dtype for the timings
    for (int levels = -1; levels <= 4; ++levels) {
      for (int i = 0; i < 3; ++i) product(gemm, branches, sym, levels, p, s);
      check(cudaStreamSynchronize(s), "sync");
      const int reps = 20;
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < reps; ++i) product(gemm, branches, sym, levels, p, s);
      check(cudaStreamSynchronize(s), "sync");
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / reps;
      const std::string name = levels < 0 ? "full" : levels == 0 ? "production" : "halves" + std::to_string(levels);
      std::printf("bench xxt bf16 4096x%ld %-10s %.3f ms%s\n", static_cast<long>(k), name.c_str(), ms,
                  levels >= 1 ? (" (issues " + std::to_string(halves_fraction(levels)) + " of the full)").c_str() : "");
    }
  }
  return failed == 0 ? 0 : 1;
}
