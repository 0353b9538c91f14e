// Overflow (§4.3): an injected inf/nan, or a natural one (a scaled gradient past
// the largest finite value of its dtype), skips the step — every state tensor
// bit-identical, no NS call, no Adam step counted — in the oracle and the control.
#include <gtest/gtest.h>

#include <cmath>

#include "oracle/oracle.hpp"
#include "scenarios.hpp"

namespace muoncheck::oracle {
namespace {

void expect_state_unchanged(const std::vector<ParamState>& before, const StepRecord& r) {
  ASSERT_EQ(before.size(), r.params.size());
  for (size_t p = 0; p < before.size(); ++p) {
    EXPECT_EQ(before[p].weight, r.params[p].weight) << p;
    EXPECT_EQ(before[p].momentum, r.params[p].momentum) << p;
    EXPECT_EQ(before[p].adam_m, r.params[p].adam_m) << p;
    EXPECT_EQ(before[p].adam_v, r.params[p].adam_v) << p;
  }
}

Scenario fp16_injected() {
  Scenario s = testing::small_mixed("overflow");
  s.steps = 3;
  s.engine.param_dtype = s.engine.grad_accum_dtype = s.engine.comm_dtype = DType::fp16;
  s.loss_scaler.type = ScalerType::dynamic;
  s.loss_scaler.initial_scale_power = 8;
  s.overflow = {{1, 1, 1, "layers.0.down.weight", 5, OverflowValue::inf}};
  return s;
}

TEST(OracleOverflow, injectedInfSkipsTheStepAndLeavesStateBitIdentical) {
  const Scenario s = fp16_injected();
  for (const Trajectory& tr : {run_oracle(s, Precision::float64), run_oracle(s, Precision::float128), run_control(s)}) {
    SCOPED_TRACE(tr.producer);
    EXPECT_FALSE(tr.steps[0].skipped);
    EXPECT_EQ(tr.steps[0].ns_calls.size(), 2u);
    const StepRecord& r = tr.steps[1];
    EXPECT_TRUE(r.skipped);
    EXPECT_TRUE(r.ns_calls.empty());
    EXPECT_EQ(r.good_steps_after, 1);
    EXPECT_FALSE(std::isfinite(r.grad_norm));
    EXPECT_EQ(r.scaler_after.scale, 256.0) << "hysteresis 2: the first overflow only decrements";
    EXPECT_EQ(r.scaler_after.hysteresis, 1);
    expect_state_unchanged(tr.steps[0].params, r);
    EXPECT_FALSE(tr.steps[2].skipped);
    EXPECT_EQ(tr.steps[2].good_steps_after, 2);
    EXPECT_NE(tr.steps[2].params[1].weight, r.params[1].weight);
  }
}

TEST(OracleOverflow, nanOnAnotherRankAndMicroStepAlsoSkips) {
  Scenario s = fp16_injected();
  s.overflow = {{0, 0, 0, "model.embed_tokens.weight", 0, OverflowValue::nan}};
  const Trajectory tr = run_oracle(s, Precision::float64);
  EXPECT_TRUE(tr.steps[0].skipped);
  expect_state_unchanged(tr.initial, tr.steps[0]);
  EXPECT_EQ(tr.steps[1].good_steps_after, 1);
}

TEST(OracleOverflow, naturalOverflowInFp16SkipsUntilTheScaleFits) {
  Scenario s = fp16_injected();
  s.overflow.clear();
  s.steps = 4;
  s.loss_scaler.initial_scale_power = 24;  // gradients ~1e-2 · 2^24 ≫ 65504
  s.loss_scaler.hysteresis = 1;
  for (const Trajectory& tr : {run_oracle(s, Precision::float64), run_control(s)}) {
    SCOPED_TRACE(tr.producer);
    EXPECT_TRUE(tr.steps[0].skipped);
    EXPECT_EQ(tr.steps[0].scaler_after.scale, std::ldexp(1.0, 23));
    expect_state_unchanged(tr.initial, tr.steps[0]);
  }
  s.engine.param_dtype = s.engine.grad_accum_dtype = s.engine.comm_dtype = DType::fp32;
  EXPECT_FALSE(run_oracle(s, Precision::float64).steps[0].skipped) << "fp32 holds 2^24-scaled gradients";
}

}  // namespace
}  // namespace muoncheck::oracle
