// The control (oracle + dtype rounding) against the exact oracle: its error is
// the rounding noise a correct implementation may show — nonzero, and of the
// order of the dtypes' unit roundoff, growing from fp32 to bf16.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "oracle/oracle.hpp"
#include "scenarios.hpp"

namespace muoncheck::oracle {
namespace {

double rel_err(const std::vector<double>& x, const std::vector<double>& ref) {
  double d = 0, n = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    d += (x[i] - ref[i]) * (x[i] - ref[i]);
    n += ref[i] * ref[i];
  }
  return std::sqrt(d) / std::max(std::sqrt(n), 1e-300);
}

// max over params of the relative error of (weight − initial weight), the part
// the optimizer wrote (the initial weights are exact in every dtype); `whole`:
// of the weight itself, the SPEC's error measure.
double update_err(const Trajectory& c, const Trajectory& x, int step, bool whole = false) {
  double worst = 0;
  for (size_t p = 0; p < x.initial.size(); ++p) {
    std::vector<double> dc = c.steps[step].params[p].weight, dx = x.steps[step].params[p].weight;
    for (size_t i = 0; i < dc.size() && !whole; ++i) { dc[i] -= x.initial[p].weight[i]; dx[i] -= x.initial[p].weight[i]; }
    worst = std::max(worst, rel_err(dc, dx));
  }
  return worst;
}

// global_batch 32 ≥ the matrices' 16 columns: G has full rank. (With rank-deficient
// G, 16-bit NS noise in the null space grows ~a^steps to O(1): the control shows it.)
Scenario full_rank(std::string name) {
  Scenario s = testing::small_mixed(std::move(name));
  s.engine.micro_batch = 8;
  return s;
}

TEST(OracleControl, bf16ScenarioShowsSmallNonzeroRoundingNoise) {
  Scenario s = full_rank("control-bf16");
  s.engine.param_dtype = s.engine.grad_accum_dtype = s.engine.comm_dtype = DType::bf16;
  s.optimizer.ns_method = NsMethod::standard;
  s.optimizer.ns_dtype = DType::bf16;
  const Trajectory exact = run_oracle(s, Precision::float128), ctrl = run_control(s);
  EXPECT_EQ(ctrl.producer, "control");
  for (int t = 0; t < s.steps; ++t) {
    const double e = update_err(ctrl, exact, t);
    EXPECT_GT(e, 1e-3) << "step " << t << ": bf16 (u = 2^-8) must leave a trace";
    EXPECT_LT(e, 0.1) << "step " << t;
    const double w = update_err(ctrl, exact, t, true);
    EXPECT_GT(w, 0.0);
    EXPECT_LT(w, 1e-2);
    EXPECT_EQ(ctrl.steps[t].ns_calls.size(), exact.steps[t].ns_calls.size());
  }
  // Weights stay fp32 values; gradients of a bf16 model are bf16-rounded sums.
  for (double w : ctrl.steps[2].params[1].weight) EXPECT_EQ(static_cast<double>(static_cast<float>(w)), w);
}

TEST(OracleControl, noiseShrinksWithWiderDtypes) {
  Scenario s = full_rank("control-fp32");
  s.optimizer.ns_method = NsMethod::gram;
  s.optimizer.ns_dtype = DType::fp32;
  const Trajectory exact = run_oracle(s, Precision::float64);
  const double e32 = update_err(run_control(s), exact, s.steps - 1, true);
  s.optimizer.ns_dtype = DType::fp16;
  const double e16 = update_err(run_control(s), exact, s.steps - 1, true);
  s.engine.param_dtype = s.engine.grad_accum_dtype = s.engine.comm_dtype = DType::bf16;
  s.optimizer.ns_dtype = DType::bf16;
  const double ebf = update_err(run_control(s), exact, s.steps - 1, true);
  EXPECT_GT(e32, 0.0);
  EXPECT_LT(e32, 1e-6) << "fp32 everywhere: errors of a few fp32 ulps";
  EXPECT_LT(e32, e16);
  EXPECT_LT(e16, ebf);
}

}  // namespace
}  // namespace muoncheck::oracle
