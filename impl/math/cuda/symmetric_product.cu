// Lower-triangle products and their mirror; see symmetric_product.hpp.
#include "impl/math/cuda/symmetric_product.hpp"

#include "impl/math/cuda/cuda_check.hpp"
#include "impl/math/cuda/ns_kernels.hpp"
#include "impl/math/cuda/triangle_product.hpp"
#include "impl/math/cuda/triangle_strips.hpp"

namespace muoncheck::impl::cuda {
namespace {

const char* at(const void* base, int64_t elems, int64_t eb) { return static_cast<const char*>(base) + elems * eb; }

}  // namespace

SymmetricPlan fitted(SymmetricPlan plan, int64_t m) {
  switch (plan.split) {
    case SymmetricSplit::tiles:
      if (plan.param >= 1 && m % plan.param == 0 && m / plan.param >= 2) return plan;
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
  if (plan.split != SymmetricSplit::tiles || !tiles(plan.param, p, s)) {
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
