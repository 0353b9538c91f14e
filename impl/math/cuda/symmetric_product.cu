// Lower-triangle products and their mirror; see symmetric_product.hpp.
#include "impl/math/cuda/symmetric_product.hpp"

#include "impl/math/cuda/cuda_check.hpp"
#include "impl/math/cuda/ns_kernels.hpp"
#include "impl/math/cuda/triangle_product.hpp"
#include "impl/math/cuda/triangle_strips.hpp"

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

}  // namespace

SymmetricPlan fitted(SymmetricPlan plan, int64_t m) {
  switch (plan.split) {
    case SymmetricSplit::tiles:
      if (plan.param >= 1 && m % plan.param == 0 && m / plan.param >= 2) return plan;
      break;
    case SymmetricSplit::halves:
      if (plan.param >= 1 && plan.param < 20 && m % (int64_t{1} << plan.param) == 0) return plan;
      break;
    case SymmetricSplit::triangle:
      if (m % kTriangleTile == 0 && m / kTriangleTile >= 2) return {SymmetricSplit::triangle, 0};
      break;
    case SymmetricSplit::strips:
      if (m % (2 * kTriangleTile) == 0) return {SymmetricSplit::strips, plan.param == 1 ? 1 : 0};
      return fitted({SymmetricSplit::triangle, 0}, m);
    case SymmetricSplit::full: break;
  }
  return {};
}

bool ran_as_planned(SymmetricPlan plan, int64_t m, SymmetricSplit ran) {
  plan = fitted(plan, m);
  return ran == plan.split ||
         (plan.split == SymmetricSplit::strips && ran == SymmetricSplit::triangle);
}

double issued_fraction(SymmetricPlan plan, int64_t m) {
  plan = fitted(plan, m);
  switch (plan.split) {
    case SymmetricSplit::tiles: {
      const double nb = static_cast<double>(m / plan.param);
      return (nb + 1) / (2 * nb);
    }
    case SymmetricSplit::halves: return 0.5 + 1.0 / static_cast<double>(int64_t{2} << plan.param);
    case SymmetricSplit::triangle:
    case SymmetricSplit::strips:   // the same tiles (not the one repeated where the diagonal's strips are odd)
      return issued_fraction({SymmetricSplit::tiles, kTriangleTile}, m);
    case SymmetricSplit::full: break;
  }
  return 1.0;
}

SymmetricSplit SymmetricProduct::run(SymmetricPlan plan, const SymmetricProblem& p, cudaStream_t s) {
  plan = fitted(plan, p.m);
  if (plan.split == SymmetricSplit::strips) {
    if (plan.param == 1 ? strips_fit(p) : strips_balanced(p)) {
      triangle_strips(p, s);   // mirrored as it is written
      return SymmetricSplit::strips;
    }
    plan = {SymmetricSplit::triangle, 0};   // the same tiles, ping-pong (two operands, rounds, or no sm_90a)
  }
  if (plan.split == SymmetricSplit::triangle) {
    if (triangle_fits(p)) {
      triangle_product(p, s);   // mirrored as it is written
      return SymmetricSplit::triangle;
    }
    plan = {SymmetricSplit::tiles, kTriangleTile};   // the same tiles on cuBLASLt
  }
  const bool lower = (plan.split == SymmetricSplit::tiles && tiles(plan.param, p, s)) ||
                     (plan.split == SymmetricSplit::halves && halves(static_cast<int>(plan.param), p, s));
  if (!lower) {
    full(p, s);
    return SymmetricSplit::full;
  }
  mirror_lower(p.dtype, p.d, p.batch, p.m, s);
  return plan.split;
}

void SymmetricProduct::full(const SymmetricProblem& p, cudaStream_t s) {
  const int64_t eb = dtype_bytes(p.dtype), mm = p.m * p.m;
  GemmProblem g;
  g.dtype = p.dtype;
  g.tb = p.b_transposed;
  g.m = g.n = p.m;
  g.k = p.k;
  g.lda = p.lda, g.ldb = p.ldb, g.ldc = g.ldd = p.m;
  g.sa = p.sa, g.sb = p.sb, g.sc = g.sd = mm;
  g.batch = p.batch;
  const void* c = p.beta != 0.0f ? p.c : p.d;
  g.align_a = alignment(p.a, p.sa * eb), g.align_b = alignment(p.b, p.sb * eb);
  g.align_c = alignment(c, mm * eb), g.align_d = alignment(p.d, mm * eb);
  gemm_.run(g, p.alpha, p.a, p.b, p.beta, c, p.d, s);
}

bool SymmetricProduct::halves(int levels, const SymmetricProblem& p, cudaStream_t s) {
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

bool SymmetricProduct::tiles(int64_t edge, const SymmetricProblem& p, cudaStream_t s) {
  const int64_t eb = dtype_bytes(p.dtype), m = p.m, mm = m * m, nb = m / edge;
  const bool has_c = p.beta != 0.0f;
  const void* c = has_c ? p.c : p.d;
  const int count = static_cast<int>(p.batch * nb * (nb + 1) / 2);
  const ArraysKey key{p.a, p.b, c, p.d, p.batch, m, p.k, edge, p.lda, p.sa, p.ldb, p.sb, p.b_transposed, int(eb)};
  auto it = arrays_.find(key);
  if (it == arrays_.end()) {
    auto made = std::make_unique<Arrays>();
    std::vector<const void*>& h = made->host;
    h.resize(static_cast<size_t>(4) * count);
    size_t i = 0;
    for (int mat = 0; mat < p.batch; ++mat)
      for (int64_t r = 0; r < nb; ++r)
        for (int64_t col = 0; col <= r; ++col, ++i) {
          h[i] = at(p.a, mat * p.sa + r * edge * p.lda, eb);
          h[count + i] = at(p.b, mat * p.sb + (p.b_transposed ? col * edge * p.ldb : col * edge), eb);
          h[2 * count + i] = at(c, mat * mm + r * edge * m + col * edge, eb);
          h[3 * count + i] = at(p.d, mat * mm + r * edge * m + col * edge, eb);
        }
    made->device.reserve(sizeof(void*) * h.size());
    check(cudaMemcpyAsync(made->device.get(), h.data(), sizeof(void*) * h.size(), cudaMemcpyHostToDevice, s),
          "cudaMemcpyAsync (tile pointers)");
    it = arrays_.emplace(key, std::move(made)).first;
  }
  void** ptrs = it->second->device.as<void*>();
  GemmProblem g;
  g.dtype = p.dtype;
  g.tb = p.b_transposed;
  g.m = g.n = edge;
  g.k = p.k;
  g.lda = p.lda, g.ldb = p.ldb, g.ldc = g.ldd = m;
  g.batch = count;
  g.pointer_array = true;
  auto aligned = [&](const void* base, int64_t a, int64_t b) { return alignment(base, (a | b) * eb); };
  g.align_a = aligned(p.a, p.sa, edge * p.lda);
  g.align_b = aligned(p.b, p.sb, p.b_transposed ? edge * p.ldb : edge);
  g.align_c = aligned(c, mm, edge), g.align_d = aligned(p.d, mm, edge);
  if (!gemm_.supports(g)) return false;
  gemm_.run(g, p.alpha, ptrs, ptrs + count, p.beta, ptrs + 2 * count, ptrs + 3 * count, s);
  return true;
}

}  // namespace muoncheck::impl::cuda
