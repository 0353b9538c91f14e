// Newton–Schulz side by side, in the manner of llm.c's kernel checks: the same matrices through
// the float128 oracle, every control ensemble member (the scenario dtype's honest rounding), the
// CPU implementation and — where a GPU is present — the CUDA implementation. Each line prints the
// relative error of each against the oracle; the implementations must sit within the band the
// ensemble sets (alpha · worst member + floor, the verdicts' rule), and the ensemble must be able
// to fail: NS one iteration short, and with a per-iteration schedule an iteration on its
// neighbour's triple, lie outside it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/datagen.hpp"
#include "core/ns_schedules.hpp"
#include "core/dtype.hpp"
#include "impl/math/compute.hpp"
#include "impl/math/newton_schulz.hpp"
#include "oracle/arith.hpp"
#include "oracle/control_ensemble.hpp"
#include "oracle/muon.hpp"
#include "oracle/newton_schulz.hpp"
#include "oracle/real.hpp"

namespace muoncheck {
namespace {

struct Case {
  int64_t rows, cols;
  NsMethod method;
  DType dtype;
  const char* schedule = nullptr;   // a named per-iteration schedule, else the default triple
};

OptimizerConfig optimizer_of(const Case& k) {
  OptimizerConfig o;
  o.ns_method = k.method;
  o.ns_dtype = k.dtype;
  if (k.schedule) {
    o.ns_schedule = k.schedule;
    o.ns_coefficients = find_ns_schedule(k.schedule)->coefficients;
    o.ns_steps = static_cast<int>(o.ns_coefficients.size());
  }
  return o;
}

std::vector<double> sample(int64_t r, int64_t c, uint64_t seed) {
  std::vector<double> out(static_cast<size_t>(r * c));
  for (size_t e = 0; e < out.size(); ++e) out[e] = data::unit_value(data::hash6(seed, 17, r, c, static_cast<int64_t>(e), 0));
  return out;
}

template <class T>
oracle::Mat<T> as_oracle(const std::vector<double>& x, int64_t r, int64_t c) {
  oracle::Mat<T> m(r, c);
  for (size_t i = 0; i < x.size(); ++i) m.a[i] = T(x[i]);
  return m;
}

template <class T>
double rel_err(const std::vector<T>& x, const std::vector<double>& ref) {
  long double d = 0, n = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const long double diff = static_cast<long double>(x[i]) - ref[i];
    d += diff * diff;
    n += static_cast<long double>(ref[i]) * ref[i];
  }
  return static_cast<double>(std::sqrt(d / n));
}

std::vector<double> impl_ns(impl::Compute& c, const std::vector<double>& u, const Case& k, const impl::NsConfig& cfg) {
  impl::Mat m(k.rows, k.cols);
  for (size_t i = 0; i < u.size(); ++i) m.v[i] = static_cast<float>(u[i]);
  const auto o = c.orthogonalize_scaled(m, 1, cfg, ScaleRule::deepspeed);
  const double s = impl::scale_factor(ScaleRule::deepspeed, k.rows, k.cols);
  std::vector<double> out(o.v.size());
  for (size_t i = 0; i < out.size(); ++i) out[i] = o.v[i] / s;
  return out;
}

constexpr double kAlpha = 4.0;   // the default tolerance (scenario-format.md): alpha 4, floor 4 ulps
constexpr double kFloorUlps = 4.0;

class NsSideBySide : public ::testing::TestWithParam<Case> {};

TEST_P(NsSideBySide, ImplementationsSitInsideTheEnsembleBand) {
  const Case k = GetParam();
  const auto u = sample(k.rows, k.cols, 8600);
  const OptimizerConfig opt = optimizer_of(k);
  const oracle::NsParams p = oracle::NsParams::from(opt);
  const impl::NsConfig cfg = impl::NsConfig::from(opt);
  const auto exact_m = oracle::newton_schulz(oracle::ExactArith<oracle::f128>{}, as_oracle<oracle::f128>(u, k.rows, k.cols), p);
  std::vector<double> exact(exact_m.a.size());
  for (size_t i = 0; i < exact.size(); ++i) exact[i] = static_cast<double>(exact_m.a[i]);

  double worst_member = 0;
  std::string members;
  for (const auto& v : oracle::control_members(oracle::kDefaultControlMembers)) {
    oracle::ControlArith ar{DType::fp32, DType::fp32, DType::fp32, k.dtype, v};
    const auto m = oracle::newton_schulz(ar, as_oracle<double>(u, k.rows, k.cols), p);
    const double e = rel_err(m.a, exact);
    worst_member = std::max(worst_member, e);
    char buf[24];
    std::snprintf(buf, sizeof buf, " %.2e", e);
    members += buf;
  }
  const double band = kAlpha * worst_member + kFloorUlps * unit_roundoff(DType::fp32);
  const auto cpu = impl::make_cpu_compute();
  const double cpu_err = rel_err(impl_ns(*cpu, u, k, cfg), exact);
  std::printf("%4lldx%-4lld %-8s %-4s %-15s members%s | band %.2e | cpu %.2e (%.2f of band)", static_cast<long long>(k.rows),
              static_cast<long long>(k.cols), k.method == NsMethod::gram ? "gram" : "standard", dtype_name(k.dtype).data(),
              k.schedule ? k.schedule : "default", members.c_str(), band, cpu_err, cpu_err / band);
  EXPECT_LE(cpu_err, band);
  if (impl::cuda_device_count() > 0) {
    const auto gpu = impl::make_compute(impl::ComputeBackend::cuda, 0);
    const double gpu_err = rel_err(impl_ns(*gpu, u, k, cfg), exact);
    std::printf(" | cuda %.2e (%.2f of band)", gpu_err, gpu_err / band);
    EXPECT_LE(gpu_err, band);
  } else {
    std::printf(" | cuda: no device");
  }
  std::printf("\n");

  // The band has teeth: the same implementation one iteration short (a plausible off-by-one)
  // lies outside it, in every dtype.
  // A schedule: its second iteration on the first one's triple (a schedule index off by one).
  // Not its last: Polar Express ends on polynomials that only hold σ ≈ 1 (8 iterations converge
  // to fp32 precision after 7), so its last triple, or its last iteration, changes nothing here.
  impl::NsConfig broken = cfg;
  if (k.schedule) {
    broken.coefficients[1] = broken.coefficients[0];
  } else {
    broken.steps -= 1;
  }
  const double broken_err = rel_err(impl_ns(*cpu, u, k, broken), exact);
  std::printf("%*s %s: cpu %.2e (%.2f of band)\n", 10, "", k.schedule ? "iteration 1 on iteration 0's triple" : "one step short",
              broken_err, broken_err / band);
  EXPECT_FALSE(broken_err <= band) << "the broken NS must leave the band (a non-finite one does)";
}

INSTANTIATE_TEST_SUITE_P(Shapes, NsSideBySide,
                         ::testing::Values(Case{64, 64, NsMethod::standard, DType::fp32}, Case{32, 96, NsMethod::gram, DType::fp32},
                                           Case{96, 32, NsMethod::standard, DType::bf16}, Case{32, 96, NsMethod::gram, DType::bf16},
                                           Case{48, 80, NsMethod::gram, DType::fp16}, Case{80, 48, NsMethod::standard, DType::fp16},
                                           Case{64, 64, NsMethod::standard, DType::fp32, "quintic"},
                                           Case{32, 96, NsMethod::gram, DType::fp32, "polar_express"},
                                           Case{96, 32, NsMethod::standard, DType::bf16, "polar_express_5"},
                                           Case{48, 80, NsMethod::gram, DType::fp16, "quintic"}));

// Every scale rule means one number on both sides (the oracle's and our engine's), and the
// rules are told apart: max_dim (emerging-optimizers' default) is moonlight without the 0.2.
TEST(NsSideBySide, scaleRulesAgreeBetweenOracleAndEngine) {
  for (const ScaleRule rule : {ScaleRule::deepspeed, ScaleRule::moonlight, ScaleRule::spectral, ScaleRule::max_dim})
    for (const auto& [r, c] : {std::pair<int64_t, int64_t>{64, 176}, {176, 64}, {63, 3}, {8, 8}})
      EXPECT_DOUBLE_EQ(impl::scale_factor(rule, r, c), oracle::muon_scale<double>(rule, r, c)) << int(rule) << " " << r << "x" << c;
  EXPECT_DOUBLE_EQ(impl::scale_factor(ScaleRule::max_dim, 63, 3), 5 * impl::scale_factor(ScaleRule::moonlight, 63, 3));
  EXPECT_NE(impl::scale_factor(ScaleRule::max_dim, 63, 3), impl::scale_factor(ScaleRule::spectral, 63, 3));
}

}  // namespace
}  // namespace muoncheck
