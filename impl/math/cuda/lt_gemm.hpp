// Row-major GEMMs through cuBLASLt for the device Newton–Schulz:
//   D = α·op(A)·op(B) + β·C   (D may differ from C: X' = B·X + a·X needs no copy of X)
// over a strided batch or a pointer-array batch (independent blocks of one matrix, e.g. the
// lower-triangle tiles of a symmetric product). Accumulation is fp32 (CUBLAS_COMPUTE_32F, no
// TF32) and the output is rounded once into the NS dtype: the algorithm search admits split-K
// only when its partial sums are reduced in fp32 (CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE), never
// the in-place or output-type reductions that add partial sums in the output dtype.
// One plan (descriptors, layouts, one of the heuristic's algorithms: its first unless a
// benchmark asks for another rank) per problem, cached: a
// problem always runs the same kernel, so results are bit-identical run to run. Launches that
// may run at the same time on different streams take different workspace lanes.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include "core/scenario.hpp"
#include "impl/math/cuda/device_buffer.hpp"

namespace muoncheck::impl::cuda {

// One GEMM problem, row-major: D (m×n) = op(A) (m×k) · op(B) (k×n), ld* in elements.
// Strided batches step by s* elements; pointer-array batches ignore s*.
struct GemmProblem {
  DType dtype = DType::bf16;
  bool ta = false, tb = false;
  int64_t m = 0, n = 0, k = 0;
  int64_t lda = 0, ldb = 0, ldc = 0, ldd = 0;
  int64_t sa = 0, sb = 0, sc = 0, sd = 0;
  int batch = 1;
  bool pointer_array = false;
  // The largest power of two (≤ 256) dividing every address the batch touches: the
  // algorithms cuBLASLt may pick depend on it.
  int align_a = 256, align_b = 256, align_c = 256, align_d = 256;

  auto tie() const {
    return std::tie(dtype, ta, tb, m, n, k, lda, ldb, ldc, ldd, sa, sb, sc, sd, batch, pointer_array, align_a,
                    align_b, align_c, align_d);
  }
  bool operator<(const GemmProblem& o) const { return tie() < o.tie(); }
};

// The alignment of a strided operand: base address and stride (bytes) together.
int alignment(const void* base, int64_t stride_bytes);

class LtGemm {
 public:
  // heuristic_rank: which of cuBLASLt's ranked algorithms each problem runs (0: its first choice,
  // what the conformance runs use; a problem with fewer candidates has no algorithm).
  explicit LtGemm(int heuristic_rank = 0);
  ~LtGemm();
  LtGemm(const LtGemm&) = delete;
  LtGemm& operator=(const LtGemm&) = delete;

  // True when cuBLASLt has an algorithm for the problem under the rounding rule above.
  bool supports(const GemmProblem& p);

  // Strided: a, b, c, d are the first matrices. Pointer array: device arrays of p.batch
  // pointers each. c is read only when beta ≠ 0 (pass d otherwise). lane: the workspace, one
  // per launch that may run concurrently with another of this LtGemm.
  void run(const GemmProblem& p, float alpha, const void* a, const void* b, float beta, const void* c, void* d,
           cudaStream_t stream, int lane = 0);

 private:
  struct Plan;
  Plan* plan(const GemmProblem& p);   // nullptr: no algorithm

  void* workspace(int lane);

  int heuristic_rank_ = 0;
  cublasLtHandle_t handle_ = nullptr;
  std::vector<std::unique_ptr<DeviceBuffer>> workspaces_;
  std::map<GemmProblem, std::unique_ptr<Plan>> plans_;
};

}  // namespace muoncheck::impl::cuda
