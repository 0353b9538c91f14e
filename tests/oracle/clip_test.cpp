// Clipping (§4.5). raw_grad: every G scaled by max_norm/(N + 1e-6) when N > max_norm,
// seen in Muon's momentum and Adam's first moment. update: N over the Muon
// updates (and the others' G) — on a case where ‖G‖ < max_norm < ‖O‖ only update clips.
#include <gtest/gtest.h>

#include <cmath>

#include "oracle/oracle.hpp"
#include "scenarios.hpp"

namespace muoncheck::oracle {
namespace {

Scenario clip_case(double max_norm, ClipMode mode) {
  Scenario s = testing::small_mixed("clip");
  s.steps = 1;
  s.optimizer.clip = {max_norm, mode};
  return s;
}

double norm_of_step(const std::vector<double>& before, const std::vector<double>& after, double lr) {
  double n2 = 0;
  for (size_t i = 0; i < before.size(); ++i) n2 += (after[i] - before[i]) * (after[i] - before[i]) / (lr * lr);
  return std::sqrt(n2);
}

TEST(OracleClip, rawGradScalesEveryGradientByMaxNormOverNormPlusEps) {
  const Trajectory free = run_oracle(clip_case(0.0, ClipMode::raw_grad), Precision::float64);
  const double N = free.steps[0].grad_norm;
  ASSERT_GT(N, 0.05);
  const double max_norm = N / 4;
  const Trajectory tr = run_oracle(clip_case(max_norm, ClipMode::raw_grad), Precision::float64);
  EXPECT_EQ(tr.steps[0].grad_norm, N) << "grad_norm is taken before clipping";
  const double f = max_norm / (N + 1e-6);
  const ParamState& muon = tr.steps[0].params[1];
  for (size_t e = 0; e < muon.grad.size(); ++e) EXPECT_NEAR(muon.momentum[e], 0.05 * f * muon.grad[e], 1e-17);
  const ParamState& adam = tr.steps[0].params[0];
  for (size_t e = 0; e < adam.grad.size(); ++e) {
    EXPECT_DOUBLE_EQ(adam.grad[e], free.steps[0].params[0].grad[e]) << "the record keeps the unclipped G";
    EXPECT_NEAR(adam.adam_m[e], 0.1 * f * adam.grad[e], 1e-17);
  }
  // Below the threshold nothing changes.
  const Trajectory loose = run_oracle(clip_case(2 * N, ClipMode::raw_grad), Precision::float64);
  for (size_t p = 0; p < 4; ++p) EXPECT_EQ(loose.steps[0].params[p].weight, free.steps[0].params[p].weight);
}

TEST(OracleClip, updateModeClipsTheMuonUpdateWhereRawGradDoesNot) {
  Scenario s = clip_case(0.0, ClipMode::raw_grad);
  s.model.params = {testing::param("a.weight", {24, 16}), testing::param("b.weight", {16, 24})};
  const Trajectory free = run_oracle(s, Precision::float64);
  const double N = free.steps[0].grad_norm;
  const double unclipped = norm_of_step(free.initial[0].weight, free.steps[0].params[0].weight, 0.02);
  const double max_norm = 2.0;
  ASSERT_LT(N, max_norm) << "raw_grad must not clip here";
  ASSERT_GT(unclipped, max_norm) << "‖O‖ of a 24×16 update is about √16·√1.5";

  s.optimizer.clip = {max_norm, ClipMode::raw_grad};
  const Trajectory raw = run_oracle(s, Precision::float64);
  s.optimizer.clip = {max_norm, ClipMode::update};
  const Trajectory upd = run_oracle(s, Precision::float64);
  for (size_t p = 0; p < 2; ++p) EXPECT_EQ(raw.steps[0].params[p].weight, free.steps[0].params[p].weight);

  // update mode: the joint norm of both Muon updates becomes max_norm/(N_O + 1e-6)·N_O.
  double n2 = 0, o2 = 0;
  for (size_t p = 0; p < 2; ++p) {
    const double c = norm_of_step(upd.initial[p].weight, upd.steps[0].params[p].weight, 0.02);
    const double o = norm_of_step(free.initial[p].weight, free.steps[0].params[p].weight, 0.02);
    n2 += c * c;
    o2 += o * o;
    // Momentum is advanced with the unclipped G in update mode.
    EXPECT_EQ(upd.steps[0].params[p].momentum, free.steps[0].params[p].momentum);
  }
  const double NO = std::sqrt(o2);
  EXPECT_NEAR(std::sqrt(n2), max_norm * NO / (NO + 1e-6), 1e-9);
  EXPECT_NE(upd.steps[0].params[0].weight, raw.steps[0].params[0].weight);
}

}  // namespace
}  // namespace muoncheck::oracle
