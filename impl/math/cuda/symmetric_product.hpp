// Products whose result is symmetric: X·Xᵀ, and in NS every product of two polynomials in
// one symmetric matrix (A·A, R·R, Z·R, Z·T, Z·Q). Only the blocks on and below the diagonal
// are computed — D = α·A·op(B) + β·C through the same cuBLASLt epilogue, each element one
// fp32-accumulated dot product over the full K rounded once — and then the lower triangle is
// copied onto the upper one (mirror_lower), so D is exactly symmetric. For X·Xᵀ and P·P
// with P symmetric, element (j, i) is the same dot product as (i, j); for Z·R with Z, R
// polynomials in one matrix it is the (i, j) element of R·Z, equal in exact arithmetic.
//
// Splits of the m×m result (per matrix of a batch). By default (ns_split_for) strips where they
// fit and pay, else triangle, else tiles(128), else full; the other splits measured against these
// are in dev/cuda/.
//   tiles(b)   every lower-triangle b×b block in one pointer-array GEMM: m/b·(m/b + 1)/2 blocks
//   triangle   the 128-blocks of tiles(128) in one kernel of our own that writes each block and
//              its transpose (triangle_product.hpp; sm_90a, 16-bit dtypes, B transposed or
//              symmetric); where it does not fit, tiles(128)
//   strips     the same 128-blocks two to a block in another kernel of ours, the layout of
//              cuBLAS's dense GEMM (triangle_strips.hpp; one operand, m a multiple of 256, and
//              no more rounds of the chip than triangle's unless param is 1); else triangle
//   full       one GEMM for the whole matrix, no mirror (the result is symmetric up to the
//              rounding of its two triangles)
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include <cuda_runtime_api.h>

#include "core/scenario.hpp"
#include "impl/math/cuda/device_buffer.hpp"
#include "impl/math/cuda/lt_gemm.hpp"

namespace muoncheck::impl::cuda {

enum class SymmetricSplit { full, tiles, triangle, strips };
constexpr int64_t kTriangleTile = 128;   // the triangle split's block edge

struct SymmetricPlan {
  SymmetricSplit split = SymmetricSplit::full;
  int64_t param = 0;   // tiles: the block edge; strips: 1 even where it takes more rounds than
                       // triangle (tests: the kernel on small shapes); triangle: unused

  bool operator==(const SymmetricPlan& o) const { return split == o.split && param == o.param; }
};

// The plan itself when it fits an m×m result (block divides m into ≥ 2 blocks, 128 divides m into ≥ 2 blocks for triangle, 256 divides m for strips, else
// triangle's fit), else full.
SymmetricPlan fitted(SymmetricPlan plan, int64_t m);

// Whether a product run under plan as `ran` ran as planned: as fitted(plan, m), or, for strips, as
// the same tiles on the ping-pong kernel, which takes what the strips do not (two operands; more
// rounds of the chip, unless forced). Anything else fell back.
bool ran_as_planned(SymmetricPlan plan, int64_t m, SymmetricSplit ran);

// Fraction of the full product's multiply-adds the plan issues.
double issued_fraction(SymmetricPlan plan, int64_t m);

// D (batch × m×m, row-major, ld m, stride m·m) = alpha·A·op(B) + beta·C, known symmetric.
// A: m×k rows (ld lda, stride sa). B: m×k rows used transposed (X·Xᵀ) or a k×m matrix
// (ld ldb, stride sb). C (m×m like D) is read only when beta ≠ 0.
struct SymmetricProblem {
  DType dtype = DType::bf16;
  int batch = 1;
  int64_t m = 0, k = 0;
  const void* a = nullptr;
  int64_t lda = 0, sa = 0;
  const void* b = nullptr;
  int64_t ldb = 0, sb = 0;
  bool b_transposed = false;
  bool b_symmetric = false;   // B (k = m) is exactly symmetric, so its rows may be read as its columns
  float alpha = 1.0f, beta = 0.0f;
  const void* c = nullptr;
  void* d = nullptr;
};

class SymmetricProduct {
 public:
  explicit SymmetricProduct(LtGemm& gemm) : gemm_(gemm) {}

  // Falls back to full when the plan does not fit m or cuBLASLt offers no algorithm for its
  // blocks (triangle first to tiles(128) where triangle_fits refuses); returns the split that ran.
  SymmetricSplit run(SymmetricPlan plan, const SymmetricProblem& p, cudaStream_t s);

  // Device pointer arrays cached for tiles (one set per distinct operands and shape).
  size_t cached_arrays() const { return arrays_.size(); }
  void clear_arrays() { arrays_.clear(); }

 private:
  struct Arrays {
    std::vector<const void*> host;   // A, B, C, D pointer lists back to back (kept for the async copy)
    DeviceBuffer device;
  };
  using ArraysKey = std::tuple<const void*, const void*, const void*, const void*, int, int64_t, int64_t, int64_t,
                               int64_t, int64_t, int64_t, int64_t, bool, int>;

  void full(const SymmetricProblem& p, cudaStream_t s);
  // false (nothing issued) when cuBLASLt has no algorithm for the blocks.
  bool tiles(int64_t edge, const SymmetricProblem& p, cudaStream_t s);

  LtGemm& gemm_;
  std::map<ArraysKey, std::unique_ptr<Arrays>> arrays_;
};

}  // namespace muoncheck::impl::cuda
