// The CUDA Compute against the CPU reference: the elementwise kernels bit-identical,
// Newton–Schulz (standard, gram, per-head batched, tall, fp32/bf16/fp16, the named per-iteration
// schedules) within the
// band the CPU's own low-precision rounding sets against an fp32 reference, and
// deterministic run to run. Label gpu: skipped without a device.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "gpu_skip.hpp"
#include "ns_test_config.hpp"
#include "relative_error.hpp"
#include "core/error.hpp"
#include "impl/math/compute.hpp"

namespace muoncheck::impl {
namespace {

std::vector<float> values(int64_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 gen(seed);                                // seeded: every run sees the same data
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = d(gen);
  return v;
}

bool bit_equal(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

class CudaCompute : public ::testing::Test {
 protected:
  void SetUp() override {
    MUONCHECK_REQUIRE_GPU();
    gpu = make_compute(ComputeBackend::cuda, 0);
    cpu = make_cpu_compute();
  }
  std::unique_ptr<Compute> gpu, cpu;
};

constexpr int64_t kN = 100003;   // not a multiple of any block size

TEST_F(CudaCompute, ElementwiseKernelsAreBitIdenticalToTheCpuReference) {
  const auto g = values(kN, 1), m0 = values(kN, 2), w0 = values(kN, 3), v0 = values(kN, 4, 0.0f, 1e-3f);
  for (auto form : {MomentumForm::ema, MomentumForm::sum}) {
    auto a = m0, b = m0;
    cpu->momentum_update(a.data(), g.data(), kN, 0.95, form);
    gpu->momentum_update(b.data(), g.data(), kN, 0.95, form);
    EXPECT_TRUE(bit_equal(a, b)) << "momentum_update";
    for (bool nesterov : {true, false}) {
      std::vector<float> ua(kN), ub(kN);
      cpu->muon_input(ua.data(), g.data(), m0.data(), kN, 0.95, form, nesterov);
      gpu->muon_input(ub.data(), g.data(), m0.data(), kN, 0.95, form, nesterov);
      EXPECT_TRUE(bit_equal(ua, ub)) << "muon_input nesterov " << nesterov;
    }
  }
  {
    auto a = w0, b = w0;
    cpu->muon_apply(a.data(), g.data(), kN, 0.02, 0.1);
    gpu->muon_apply(b.data(), g.data(), kN, 0.02, 0.1);
    EXPECT_TRUE(bit_equal(a, b)) << "muon_apply";
  }
  {
    auto wa = w0, wb = w0, ma = m0, mb = m0, va = v0, vb = v0;
    const AdamConfig c;
    cpu->adamw_update(wa.data(), ma.data(), va.data(), g.data(), kN, c, 3, 3e-4, 0.01);
    gpu->adamw_update(wb.data(), mb.data(), vb.data(), g.data(), kN, c, 3, 3e-4, 0.01);
    EXPECT_TRUE(bit_equal(wa, wb) && bit_equal(ma, mb) && bit_equal(va, vb)) << "adamw_update";
  }
  {
    auto a = g, b = g;
    cpu->scale_inplace(a.data(), kN, 1.0 / 65536.0 * 3.0);
    gpu->scale_inplace(b.data(), kN, 1.0 / 65536.0 * 3.0);
    EXPECT_TRUE(bit_equal(a, b)) << "scale_inplace";
  }
}

TEST_F(CudaCompute, NormsAndOverflowChecksAgreeWithTheCpu) {
  auto g = values(kN, 5);
  EXPECT_NEAR(gpu->sum_squares(g.data(), kN), cpu->sum_squares(g.data(), kN), 1e-12 * cpu->sum_squares(g.data(), kN));
  EXPECT_EQ(gpu->sum_squares(g.data(), kN), gpu->sum_squares(g.data(), kN));   // fixed reduction order
  EXPECT_TRUE(gpu->all_finite(g.data(), kN));
  g[kN - 1] = std::numeric_limits<float>::infinity();
  EXPECT_FALSE(gpu->all_finite(g.data(), kN));
  g[kN - 1] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE(gpu->all_finite(g.data(), kN));
  EXPECT_TRUE(gpu->all_finite(g.data(), 0));
}

struct NsCase {
  const char* name;
  int64_t rows, cols;
  int heads;
  NsMethod method;
  DType dtype;
  const char* schedule = nullptr;   // a named per-iteration schedule (core/ns_schedules.hpp), else the one triple
};

NsConfig config_of(const NsCase& c) { return ns_test_config(c.method, c.dtype, c.schedule); }

class CudaNs : public CudaCompute, public ::testing::WithParamInterface<NsCase> {};

// err(cuda) ≤ 4·err(cpu) + 8u against the fp32 CPU NS: the conformance rule in small.
TEST_P(CudaNs, StaysWithinTheCpuRoundingBandOfAnFp32Reference) {
  const NsCase c = GetParam();
  Mat u(c.rows, c.cols);
  u.v = values(c.rows * c.cols, static_cast<uint32_t>(c.rows * 131 + c.cols));
  const NsConfig cfg = config_of(c);
  NsConfig ref_cfg = cfg;
  ref_cfg.dtype = DType::fp32;
  const Mat ref = cpu->orthogonalize_scaled(u, c.heads, ref_cfg, ScaleRule::deepspeed);
  const Mat on_cpu = cpu->orthogonalize_scaled(u, c.heads, cfg, ScaleRule::deepspeed);
  const Mat on_gpu = gpu->orthogonalize_scaled(u, c.heads, cfg, ScaleRule::deepspeed);
  const double e_cpu = relative_error(on_cpu.v, ref.v), e_gpu = relative_error(on_gpu.v, ref.v);
  const double band = 4 * e_cpu + 8 * unit_roundoff(c.dtype == DType::fp32 ? DType::fp32 : c.dtype) +
                      (c.dtype == DType::fp32 ? 1e-4 : 0.0);   // fp32: both are the reference's peers
  EXPECT_LE(e_gpu, band) << c.name << ": err(cuda) " << e_gpu << ", err(cpu) " << e_cpu;
  const Mat again = gpu->orthogonalize_scaled(u, c.heads, cfg, ScaleRule::deepspeed);
  EXPECT_TRUE(bit_equal(on_gpu.v, again.v)) << c.name << ": two runs differ";
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, CudaNs,
    ::testing::Values(NsCase{"square_standard_bf16", 64, 64, 0, NsMethod::standard, DType::bf16},
                      NsCase{"wide_standard_bf16", 48, 160, 0, NsMethod::standard, DType::bf16},
                      NsCase{"tall_standard_bf16", 160, 48, 0, NsMethod::standard, DType::bf16},
                      NsCase{"wide_gram_fp16", 40, 176, 0, NsMethod::gram, DType::fp16},
                      NsCase{"tall_gram_fp16", 176, 40, 0, NsMethod::gram, DType::fp16},
                      NsCase{"square_gram_fp16", 96, 96, 0, NsMethod::gram, DType::fp16},
                      NsCase{"wide_standard_fp32", 48, 160, 0, NsMethod::standard, DType::fp32},
                      NsCase{"wide_gram_fp32", 40, 176, 0, NsMethod::gram, DType::fp32},
                      NsCase{"per_head_4_bf16", 64, 64, 4, NsMethod::standard, DType::bf16},
                      NsCase{"per_head_8_gram_fp16", 128, 64, 8, NsMethod::gram, DType::fp16},
                      NsCase{"per_head_2_tall_fp16", 256, 64, 2, NsMethod::gram, DType::fp16},
                      NsCase{"row_vector_bf16", 1, 64, 0, NsMethod::standard, DType::bf16},
                      NsCase{"wide_standard_quintic_bf16", 48, 160, 0, NsMethod::standard, DType::bf16, "quintic"},
                      NsCase{"tall_standard_polar_express_bf16", 160, 48, 0, NsMethod::standard, DType::bf16,
                             "polar_express"},
                      NsCase{"wide_gram_polar_express_5_fp16", 40, 176, 0, NsMethod::gram, DType::fp16,
                             "polar_express_5"},
                      NsCase{"per_head_4_quintic_bf16", 64, 64, 4, NsMethod::standard, DType::bf16, "quintic"},
                      NsCase{"per_head_8_gram_polar_express_5_fp32", 128, 64, 8, NsMethod::gram, DType::fp32,
                             "polar_express_5"}),
    [](const auto& info) { return std::string(info.param.name); });

// A recurring run is replayed from a CUDA graph that holds each iteration's scalars: a schedule
// that differs from the captured one in its last triple only must not replay that graph.
TEST_F(CudaCompute, AnotherScheduleOnTheSameBuffersIsNotReplayedFromTheCapturedGraph) {
  Mat u(48, 160);
  u.v = values(48 * 160, 29);
  NsCase c{"wide_gram_quintic_fp32", 48, 160, 0, NsMethod::gram, DType::fp32, "quintic"};
  const NsConfig captured = config_of(c);
  NsConfig last_changed = captured;
  last_changed.coefficients.back() = last_changed.coefficients[3];
  Mat first;
  for (int r = 0; r < 3; ++r) first = gpu->orthogonalize_scaled(u, 0, captured, ScaleRule::deepspeed);   // eager, capture, replay
  const Mat other = gpu->orthogonalize_scaled(u, 0, last_changed, ScaleRule::deepspeed);
  const Mat want = cpu->orthogonalize_scaled(u, 0, last_changed, ScaleRule::deepspeed);
  EXPECT_GT(relative_error(other.v, first.v), 1e-3) << "the second schedule ran the first one's graph";
  EXPECT_LE(relative_error(other.v, want.v), 1e-4);
}

// --ns-kernel (compute.hpp): resident runs the call on the resident kernel and gemms on the
// GEMMs, both within the band of the fp32 reference and different in their bits (another order
// of the fp32 sums: a path that ignored the choice would match the other one exactly); a call
// the resident kernel cannot run is Unsupported, naming the option.
TEST_F(CudaCompute, NsKernelChoosesThePathAndRefusesWhatTheResidentKernelCannotRun) {
  const auto resident = make_compute(ComputeBackend::cuda, 0, NsKernel::resident);
  const auto gemms = make_compute(ComputeBackend::cuda, 0, NsKernel::gemms);
  Mat u(3 * 128, 1024);   // three heads of 128 × 1024
  u.v = values(3 * 128 * 1024, 37);
  const NsConfig cfg = ns_test_config(NsMethod::standard, DType::bf16, nullptr);
  NsConfig ref_cfg = cfg;
  ref_cfg.dtype = DType::fp32;
  const Mat ref = cpu->orthogonalize_scaled(u, 3, ref_cfg, ScaleRule::deepspeed);
  const double e_cpu = relative_error(cpu->orthogonalize_scaled(u, 3, cfg, ScaleRule::deepspeed).v, ref.v);
  const Mat on_resident = resident->orthogonalize_scaled(u, 3, cfg, ScaleRule::deepspeed);
  const Mat on_gemms = gemms->orthogonalize_scaled(u, 3, cfg, ScaleRule::deepspeed);
  const double band = 4 * e_cpu + 8 * unit_roundoff(DType::bf16);
  EXPECT_LE(relative_error(on_resident.v, ref.v), band);
  EXPECT_LE(relative_error(on_gemms.v, ref.v), band);
  EXPECT_FALSE(bit_equal(on_resident.v, on_gemms.v)) << "both choices ran the same path";
  try {
    (void)resident->orthogonalize_scaled(u, 3, ref_cfg, ScaleRule::deepspeed);   // fp32: not the kernel's
    ADD_FAILURE() << "--ns-kernel resident ran an fp32 NS";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported) << e.what();
    EXPECT_NE(std::string(e.what()).find("--ns-kernel resident"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace muoncheck::impl
