// AdamW against hand-computed values: gradients straight from the data generator,
// two steps of bias-corrected moments, decoupled decay, a param group's lr_scale
// and weight_decay; Muon's first step against its closed form.
#include <gtest/gtest.h>

#include <cmath>

#include "core/datagen.hpp"
#include "oracle/oracle.hpp"
#include "scenarios.hpp"

namespace muoncheck::oracle {
namespace {

Scenario one_vector() {
  Scenario s = testing::small_mixed("adam-by-hand");
  s.model.params = {testing::param("final.norm.weight", {4})};
  s.engine.dp = s.engine.gas = s.engine.micro_batch = 1;
  s.steps = 2;
  s.optimizer.adam = {1e-2, 0.9, 0.95, 1e-8};
  s.optimizer.weight_decay = 0.3;  // overridden by the group below
  s.optimizer.groups = {ParamGroup{"norm", 0.5, 0.1}};
  return s;
}

// g_e = (1/n)(w_e x_e − y_e) x_e for the single sample of step t.
std::vector<double> hand_grad(const Scenario& s, int t, const std::vector<double>& w) {
  std::vector<double> g(w.size());
  for (size_t e = 0; e < w.size(); ++e) {
    const double x = data::input_value(s.seed, 0, t, 0, e), y = data::target_value(s.seed, 0, t, 0, e);
    g[e] = (w[e] * x - y) * x / static_cast<double>(w.size());
  }
  return g;
}

TEST(OracleAdamW, twoStepsMatchHandComputation) {
  const Scenario s = one_vector();
  const Trajectory tr = run_oracle(s, Precision::float64);
  const double lr = 1e-2 * 0.5, wd = 0.1, b1 = 0.9, b2 = 0.95, eps = 1e-8;
  std::vector<double> w = tr.initial[0].weight, m(4, 0.0), v(4, 0.0);
  for (int t = 0; t < 2; ++t) {
    const std::vector<double> g = hand_grad(s, t, w);
    const ParamState& got = tr.steps[t].params[0];
    for (size_t e = 0; e < 4; ++e) {
      EXPECT_DOUBLE_EQ(got.grad[e], g[e]) << "step " << t << " elem " << e;
      m[e] = b1 * m[e] + (1 - b1) * g[e];
      v[e] = b2 * v[e] + (1 - b2) * g[e] * g[e];
      const double mh = m[e] / (1 - std::pow(b1, t + 1)), vh = v[e] / (1 - std::pow(b2, t + 1));
      w[e] = w[e] * (1 - lr * wd) - lr * mh / (std::sqrt(vh) + eps);
      EXPECT_NEAR(got.adam_m[e], m[e], 1e-15);
      EXPECT_NEAR(got.adam_v[e], v[e], 1e-15);
      EXPECT_NEAR(got.weight[e], w[e], 1e-14);
    }
    EXPECT_TRUE(got.momentum.empty());
    EXPECT_EQ(tr.steps[t].good_steps_after, t + 1);
  }
  // The first step of Adam moves each weight by about lr·sign(g): the bias correction is on.
  for (size_t e = 0; e < 4; ++e) {
    const double g0 = hand_grad(s, 0, tr.initial[0].weight)[e];
    if (std::fabs(g0) > 1e-6) {
      EXPECT_NEAR(tr.steps[0].params[0].weight[e] - tr.initial[0].weight[e] * (1 - lr * wd), -lr * std::copysign(1.0, g0), 1e-6);
    }
  }
}

// Muon's first step, ema + Nesterov: M = (1−β)G, U = (1−β)G + β(1−β)G, and
// NS is invariant to a positive scale of its input up to the 1e-7 guard.
TEST(OracleAdamW, muonFirstStepMomentumAndDecay) {
  Scenario s = testing::small_mixed("muon-by-hand");
  s.model.params = {testing::param("w.weight", {8, 16})};
  s.steps = 1;
  s.optimizer.weight_decay = 0.5;
  const Trajectory tr = run_oracle(s, Precision::float64);
  const ParamState& p = tr.steps[0].params[0];
  for (size_t e = 0; e < p.grad.size(); ++e) EXPECT_EQ(p.momentum[e], (1.0 - 0.95) * p.grad[e]);  // β·0 + (1−β)G
  EXPECT_TRUE(p.adam_m.empty());
  // W1 = W0(1 − lr·wd) − lr·O with ‖O‖_F ≈ √8 (8 singular values ≈ 1, deepspeed scale 1).
  double n2 = 0;
  for (size_t e = 0; e < p.weight.size(); ++e) {
    const double o = (tr.initial[0].weight[e] * (1 - 0.02 * 0.5) - p.weight[e]) / 0.02;
    n2 += o * o;
  }
  EXPECT_GT(std::sqrt(n2), 0.6 * std::sqrt(8.0));
  EXPECT_LT(std::sqrt(n2), 1.25 * std::sqrt(8.0));
}

}  // namespace
}  // namespace muoncheck::oracle
