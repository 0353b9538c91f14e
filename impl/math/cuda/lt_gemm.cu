// cuBLASLt plans for row-major GEMMs; see lt_gemm.hpp for the rounding rule.
#include "impl/math/cuda/lt_gemm.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "impl/math/cuda/cuda_check.hpp"

namespace muoncheck::impl::cuda {
namespace {

constexpr size_t kWorkspaceBytes = size_t{32} << 20;   // cuBLASLt's advice for Hopper

cudaDataType_t cuda_type(DType t) {
  switch (t) {
    case DType::fp32: return CUDA_R_32F;
    case DType::bf16: return CUDA_R_16BF;
    case DType::fp16: return CUDA_R_16F;
  }
  return CUDA_R_32F;
}

// A column-major layout of rows×cols with leading dimension ld, batched as the problem is.
cublasLtMatrixLayout_t layout(const GemmProblem& p, uint64_t rows, uint64_t cols, int64_t ld, int64_t stride) {
  cublasLtMatrixLayout_t l = nullptr;
  check(cublasLtMatrixLayoutCreate(&l, cuda_type(p.dtype), rows, cols, ld), "cublasLtMatrixLayoutCreate");
  const int32_t count = p.batch;
  check(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)),
        "cublasLtMatrixLayoutSetAttribute(batch count)");
  if (p.pointer_array) {
    const uint32_t mode = CUBLASLT_BATCH_MODE_POINTER_ARRAY;
    check(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_MODE, &mode, sizeof(mode)),
          "cublasLtMatrixLayoutSetAttribute(batch mode)");
  } else {
    check(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)),
          "cublasLtMatrixLayoutSetAttribute(batch stride)");
  }
  return l;
}

}  // namespace

int alignment(const void* base, int64_t stride_bytes) {
  const uint64_t bits = reinterpret_cast<uintptr_t>(base) | static_cast<uint64_t>(stride_bytes) | 256u;
  return static_cast<int>(bits & (~bits + 1));   // lowest set bit, at most 256
}

// Row-major D = op(A)·op(B) is column-major Dᵀ = op(B)ᵀ·op(A)ᵀ: cuBLASLt's A is our B.
struct LtGemm::Plan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algo{};
  bool found = false;

  explicit Plan(const GemmProblem& p) {
    check(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
    const cublasOperation_t op_a = p.tb ? CUBLAS_OP_T : CUBLAS_OP_N, op_b = p.ta ? CUBLAS_OP_T : CUBLAS_OP_N;
    check(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof(op_a)), "TRANSA");
    check(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof(op_b)), "TRANSB");
    const auto n = static_cast<uint64_t>(p.n), m = static_cast<uint64_t>(p.m), k = static_cast<uint64_t>(p.k);
    a = layout(p, p.tb ? k : n, p.tb ? n : k, p.ldb, p.sb);
    b = layout(p, p.ta ? m : k, p.ta ? k : m, p.lda, p.sa);
    c = layout(p, n, m, p.ldc, p.sc);
    d = layout(p, n, m, p.ldd, p.sd);
  }
  ~Plan() {
    for (auto* l : {a, b, c, d})
      if (l != nullptr) (void)cublasLtMatrixLayoutDestroy(l);
    if (desc != nullptr) (void)cublasLtMatmulDescDestroy(desc);
  }

  void search(cublasLtHandle_t h, const GemmProblem& p, int rank) {
    cublasLtMatmulPreference_t pref = nullptr;
    check(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
    const uint64_t ws = kWorkspaceBytes;
    const uint32_t reductions = CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;   // split-K only in fp32
    // cuBLASLt's A is our B (and vice versa): alignments follow the swap.
    const uint32_t al_a = p.align_b, al_b = p.align_a, al_c = p.align_c, al_d = p.align_d;
    struct {
      cublasLtMatmulPreferenceAttributes_t attr;
      const void* v;
      size_t size;
    } const attrs[] = {{CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)},
                       {CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &reductions, sizeof(reductions)},
                       {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &al_a, sizeof(al_a)},
                       {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &al_b, sizeof(al_b)},
                       {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &al_c, sizeof(al_c)},
                       {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &al_d, sizeof(al_d)}};
    for (const auto& x : attrs) check(cublasLtMatmulPreferenceSetAttribute(pref, x.attr, x.v, x.size), "preference");
    std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<size_t>(rank) + 1);
    int count = 0;
    const cublasStatus_t s =
        cublasLtMatmulAlgoGetHeuristic(h, desc, a, b, c, d, pref, rank + 1, results.data(), &count);
    (void)cublasLtMatmulPreferenceDestroy(pref);
    found = s == CUBLAS_STATUS_SUCCESS && count > rank && results[static_cast<size_t>(rank)].state == CUBLAS_STATUS_SUCCESS;
    if (found) algo = results[static_cast<size_t>(rank)].algo;
  }
};

LtGemm::LtGemm(int heuristic_rank) : heuristic_rank_(heuristic_rank) {
  if (heuristic_rank < 0 || heuristic_rank > 15) throw Error(ErrorKind::Internal, "LtGemm: heuristic rank outside [0, 15]");
  check(cublasLtCreate(&handle_), "cublasLtCreate");
  (void)workspace(0);
}

void* LtGemm::workspace(int lane) {
  if (lane < 0) throw Error(ErrorKind::Internal, "LtGemm: negative workspace lane");
  while (static_cast<int>(workspaces_.size()) <= lane) {
    workspaces_.push_back(std::make_unique<DeviceBuffer>());
    workspaces_.back()->reserve(kWorkspaceBytes);
  }
  return workspaces_[static_cast<size_t>(lane)]->get();
}

LtGemm::~LtGemm() {
  plans_.clear();
  if (handle_ != nullptr) (void)cublasLtDestroy(handle_);
}

LtGemm::Plan* LtGemm::plan(const GemmProblem& p) {
  auto it = plans_.find(p);
  if (it == plans_.end()) {
    auto made = std::make_unique<Plan>(p);
    made->search(handle_, p, heuristic_rank_);
    it = plans_.emplace(p, std::move(made)).first;
  }
  return it->second->found ? it->second.get() : nullptr;
}

bool LtGemm::supports(const GemmProblem& p) { return plan(p) != nullptr; }

void LtGemm::run(const GemmProblem& p, float alpha, const void* a, const void* b, float beta, const void* c, void* d,
                 cudaStream_t stream, int lane) {
  Plan* pl = plan(p);
  if (pl == nullptr)
    throw Error(ErrorKind::Infrastructure,
                "cuBLASLt: no fp32-accumulating algorithm of heuristic rank " + std::to_string(heuristic_rank_) +
                    " for a " + std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k) +
                    " GEMM (batch " + std::to_string(p.batch) + ")");
  check(cublasLtMatmul(handle_, pl->desc, &alpha, b, pl->a, a, pl->b, &beta, c, pl->c, d, pl->d, &pl->algo,
                       workspace(lane), kWorkspaceBytes, stream),
        "cublasLtMatmul");
}

}  // namespace muoncheck::impl::cuda
