// Newton–Schulz on the device (docs/semantics.md §7, standard and gram) for a batch of row-major
// m×n matrices with m ≤ n, stored contiguously in the NS dtype (bf16, fp16 or fp32).
//
// Rounding model (what the conformance verdicts accept): every product is a cuBLASLt GEMM
// with fp32 accumulation (CUBLAS_COMPUTE_32F, no TF32; split-K only with fp32 partial sums)
// whose output is rounded once into the NS dtype, with the `αC + β·AB` combination in the GEMM
// epilogue (D ≠ C, so no copies). The CPU reference rounds AB first and then the combination;
// the summation order differs too — rounding-order differences of the same formula. What is
// NOT admitted is a rounding the semantics do not have: folding aI into B and computing
// (aI + B)·X rounds aI + B to the NS dtype first, which a generated 1×1 case measured at 8×
// the control's error on the H200; X ← aX + BX is therefore one GEMM whose epilogue adds aX.
//
// Symmetric products (X·Xᵀ, A·A; in gram R·R, Z·Q, Z·R, Z·T — polynomials in one symmetric
// matrix) compute only their lower-triangle blocks and mirror them (symmetric_product.hpp):
// each computed element is still one fp32-accumulated dot over the full K, rounded once. The
// batch is the per-head split (one call over all heads). A run that recurs (same addresses,
// shape and configuration) is replayed as a CUDA graph from its second occurrence
// (graph_cache.hpp). Runs are bit-identical run to run. Iteration i takes cfg.at(i): a
// per-iteration schedule changes only the scalars of its launches (they are part of the graph key).
// The standard NS of matrices small enough (per-head blocks: m ≤ 128, n ≤ 4096) runs instead as
// one resident kernel under the same rounding model where that is faster (ns_resident.hpp);
// where its last round would be part-filled, those matrices may run at the same time on the
// multiprocessors its clusters leave idle, on the streamed kernel (ns_streamed.hpp, where it pays).
// Which matrix takes which path depends only on the shape and the device, so runs stay
// bit-identical.
#pragma once
#include <array>
#include <cstdint>
#include <optional>

#include <cublas_api.h>
#include <cuda_runtime_api.h>

#include "impl/math/cuda/device_buffer.hpp"
#include "impl/math/cuda/graph_cache.hpp"
#include "impl/math/cuda/lt_gemm.hpp"
#include "impl/math/cuda/ns_kernels.hpp"
#include "impl/math/cuda/ns_resident.hpp"
#include "impl/math/cuda/ns_streamed.hpp"
#include "impl/math/cuda/symmetric_product.hpp"
#include "impl/math/newton_schulz.hpp"

namespace muoncheck::impl::cuda {

// Which route a run takes. A user chooses only `resident` (--ns-kernel default | resident |
// gemms); the default picks every route by shape and device (ns_split_for, resident_pays,
// streamed_tail). Tests and the bench force one of the production routes where the default
// would not take it (a fallback included); the experiments beside them live in dev/cuda/.
struct NsOptions {
  enum class Resident { by_shape, always, never };   // always: wherever resident_fits
  Resident resident = Resident::by_shape;            // only without a forced split
  // Every symmetric product on this split (fitted to m; where it cannot run, its fallback), on the
  // GEMMs: forcing a split turns the resident kernel off.
  std::optional<SymmetricPlan> split;
  // A resident run's part-filled last round (resident_partial_round): streamed beside the kernel
  // wherever it fits (true) or on the kernel (false); unset: streamed where that measured faster.
  std::optional<bool> streamed_tail;
  bool graphs = true;
};

// The split the default gives every symmetric m×m product of an NS (X·Xᵀ and the m×m products,
// either loop, any batch and inner dimension: measured to depend on m alone).
SymmetricPlan ns_split_for(int64_t m);

// The GEMM of X' = alpha·A·X + beta·C that the NS issues (A m×m, X, C and D m×n, batched,
// strided): its shape and the alignments of these addresses. c: d where beta is 0.
GemmProblem ns_apply_problem(DType t, int batch, int64_t m, int64_t n, const void* a, const void* b, const void* c,
                             void* d);

// The GEMM work of one run: nominal counts every product in full (2·M·N·K each, the
// algorithm's flops); issued counts what the symmetric splits actually launch; symmetric counts
// each symmetric product as its exact lower triangle with the diagonal, m(m+1)·K (the roofline's
// numerator; bench/ns_side_by_side.py's ns_flops is the same count).
struct NsFlops {
  double nominal = 0, issued = 0, symmetric = 0;
};

class NsDevice {
 public:
  // handle: unused by the GEMMs (cuBLASLt has its own handle here); kept so that callers
  // own one cuBLAS context per stream. stream: where every launch goes.
  NsDevice(cublasHandle_t handle, cudaStream_t stream, NsOptions options = {});

  // x: batch × m × n elements of cfg.dtype, m ≤ n. Normalizes each matrix (X/(‖X‖_F + 1e-7))
  // and returns where NS(X) lies: x itself or a workspace buffer of this NsDevice, valid until
  // its next run (no copy back); x's contents are then unspecified. Asynchronous on the stream.
  void* run(void* x, int batch, int64_t m, int64_t n, const NsConfig& cfg);

  static NsFlops flops(int batch, int64_t m, int64_t n, const NsConfig& cfg, const NsOptions& options = {});

  // Symmetric products issued as the full GEMM although the plan named a split (cuBLASLt had no
  // algorithm for its blocks), counted each time the launches are issued (the eager run and the
  // graph capture; a replay issues none): a benchmark of a split reports it.
  int64_t split_fallbacks() const { return split_fallbacks_; }
  // Symmetric products issued on each split (counted as split_fallbacks is): a run under the
  // strips shows here whether the strips kernel took any of them.
  int64_t issued_as(SymmetricSplit s) const { return issued_as_[static_cast<size_t>(s)]; }

  // Whether the last run was the resident kernel (ns_resident.hpp) rather than the GEMMs.
  bool ran_resident() const { return resident_; }
  // How many matrices of the last resident run, the batch's last ones, ran on the streamed kernel
  // beside it (ns_streamed.hpp), on the run's stream.
  int streamed_matrices() const { return tail_; }

 private:
  // The split of every symmetric product of an NS of m×m results under these options (X·Xᵀ and
  // the m×m products take the same one).
  static SymmetricPlan split_of(const NsOptions& o, int64_t m);

  void reserve(int batch, int64_t m, int64_t n, const NsConfig& cfg);
  // How many of a resident run's last matrices run streamed beside the kernel.
  int tail_for(const void* x, int batch, int64_t m, int64_t n, const NsConfig& cfg) const;
  void* iterate(void* x, int batch, int64_t m, int64_t n, const NsConfig& cfg);
  void* on_gemms(void* x, int batch, int64_t m, int64_t n, const NsConfig& cfg);   // normalize, then the GEMMs
  void* standard(void* x, int batch, int64_t m, int64_t n, const NsConfig& cfg);
  void* gram(void* x, int batch, int64_t m, int64_t n, const NsConfig& cfg);
  // D = alpha·A·op(B) + beta·C for the batch, D known symmetric (m×m).
  void symmetric(SymmetricPlan plan, int batch, int64_t m, int64_t k, float alpha, const void* a, int64_t lda,
                 int64_t sa, const void* b, bool b_transposed, int64_t ldb, int64_t sb, float beta, const void* c,
                 void* d);
  // D (m×n) = alpha·A (m×m)·B (m×n) + beta·C (m×n), batched.
  void apply(int batch, int64_t m, int64_t n, float alpha, const void* a, const void* b, float beta, const void* c,
             void* d);

  cudaStream_t stream_;
  NsOptions options_;
  DType dtype_ = DType::bf16;
  bool resident_ = false;   // this run is one resident kernel (ns_resident.hpp)
  int tail_ = 0;            // of which the last tail_ matrices run streamed beside it
  SymmetricPlan split_;
  int64_t split_fallbacks_ = 0;
  std::array<int64_t, 5> issued_as_{};   // by SymmetricSplit
  LtGemm gemm_;
  SymmetricProduct sym_{gemm_};
  GraphCache graphs_;
  DeviceBuffer x2_, a_, b_, q_, q2_, t_, scratch_, streamed_scratch_;
};

}  // namespace muoncheck::impl::cuda
