// Newton–Schulz side by side, in the manner of llm.c's kernel checks: the same matrices through
// the float128 oracle, every control ensemble member (the scenario dtype's honest rounding), the
// CPU implementation and — where a GPU is present — the CUDA implementation. Each line prints the
// relative error of each against the oracle; the implementations must sit within the band the
// ensemble sets (alpha · worst member + floor, the verdicts' rule), and the ensemble must be able
// to fail: an update with one entry nudged by a percent lies outside it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/datagen.hpp"
#include "core/dtype.hpp"
#include "impl/math/compute.hpp"
#include "impl/math/newton_schulz.hpp"
#include "oracle/arith.hpp"
#include "oracle/control_ensemble.hpp"
#include "oracle/newton_schulz.hpp"
#include "oracle/real.hpp"

namespace muoncheck {
namespace {

struct Case {
  int64_t rows, cols;
  NsMethod method;
  DType dtype;
};

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

std::vector<double> impl_ns(impl::Compute& c, const std::vector<double>& u, const Case& k, int steps = 5) {
  impl::Mat m(k.rows, k.cols);
  for (size_t i = 0; i < u.size(); ++i) m.v[i] = static_cast<float>(u[i]);
  impl::NsConfig cfg;
  cfg.method = k.method;
  cfg.dtype = k.dtype;
  cfg.steps = steps;
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
  oracle::NsParams p;
  p.method = k.method;
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
  const double cpu_err = rel_err(impl_ns(*cpu, u, k), exact);
  std::printf("%4lldx%-4lld %-8s %-4s members%s | band %.2e | cpu %.2e (%.2f of band)", static_cast<long long>(k.rows),
              static_cast<long long>(k.cols), k.method == NsMethod::gram ? "gram" : "standard", dtype_name(k.dtype).data(),
              members.c_str(), band, cpu_err, cpu_err / band);
  EXPECT_LE(cpu_err, band);
  if (impl::cuda_device_count() > 0) {
    const auto gpu = impl::make_compute(impl::ComputeBackend::cuda, 0);
    const double gpu_err = rel_err(impl_ns(*gpu, u, k), exact);
    std::printf(" | cuda %.2e (%.2f of band)", gpu_err, gpu_err / band);
    EXPECT_LE(gpu_err, band);
  } else {
    std::printf(" | cuda: no device");
  }
  std::printf("\n");

  // The band has teeth: the same implementation one iteration short (a plausible off-by-one)
  // lies outside it, in every dtype.
  const double short_err = rel_err(impl_ns(*cpu, u, k, 4), exact);
  std::printf("%*s one step short: cpu %.2e (%.2f of band)\n", 10, "", short_err, short_err / band);
  EXPECT_GT(short_err, band) << "NS one step short must leave the band";
}

INSTANTIATE_TEST_SUITE_P(Shapes, NsSideBySide,
                         ::testing::Values(Case{64, 64, NsMethod::standard, DType::fp32}, Case{32, 96, NsMethod::gram, DType::fp32},
                                           Case{96, 32, NsMethod::standard, DType::bf16}, Case{32, 96, NsMethod::gram, DType::bf16},
                                           Case{48, 80, NsMethod::gram, DType::fp16}, Case{80, 48, NsMethod::standard, DType::fp16}));

}  // namespace
}  // namespace muoncheck
