// The dynamic loss scaler's hysteresis (§4.3) as a pure function, and end to end:
// the scale a step uses and the state after it, with injected overflows.
#include <gtest/gtest.h>

#include "oracle/oracle.hpp"
#include "oracle/scaler.hpp"
#include "scenarios.hpp"

namespace muoncheck::oracle {
namespace {

LossScalerConfig dynamic(int power, int window, int hysteresis, double min_scale = 1.0) {
  LossScalerConfig c;
  c.type = ScalerType::dynamic;
  c.initial_scale_power = power;
  c.scale_window = window;
  c.hysteresis = hysteresis;
  c.min_scale = min_scale;
  return c;
}

TEST(OracleScaler, hysteresisSequence) {
  const LossScalerConfig c = dynamic(4, 3, 2);
  ScalerState s = initial_scaler(c);
  EXPECT_EQ(s.scale, 16.0);
  EXPECT_EQ(s.hysteresis, 2);
  // O = overflow, G = good. Expected scale and counter after each.
  const struct { bool overflow; double scale; int hyst; } seq[] = {
      {true, 16, 1},  // counter 2 → 1, scale kept
      {true, 8, 1},   // counter at 1 → halve
      {true, 4, 1},
      {false, 4, 1}, {false, 4, 1},
      {false, 8, 2},  // third consecutive good step: double, counter reset
      {true, 8, 1},
      {false, 8, 1}, {false, 8, 1},
      {true, 4, 1},   // the streak restarts after an overflow: no doubling happened
      {false, 4, 1}, {false, 4, 1}, {false, 8, 2},
  };
  int i = 0;
  for (const auto& e : seq) {
    s = scaler_after(c, s, e.overflow);
    EXPECT_EQ(s.scale, e.scale) << "after event " << i;
    EXPECT_EQ(s.hysteresis, e.hyst) << "after event " << i;
    ++i;
  }
}

TEST(OracleScaler, minScaleFloorsAndStaticNeverMoves) {
  const LossScalerConfig c = dynamic(1, 1000, 1, 1.0);
  ScalerState s = initial_scaler(c);
  s = scaler_after(c, s, true);
  EXPECT_EQ(s.scale, 1.0);
  s = scaler_after(c, s, true);
  EXPECT_EQ(s.scale, 1.0) << "min_scale";
  LossScalerConfig st = c;
  st.type = ScalerType::static_scale;
  ScalerState t = initial_scaler(st);
  EXPECT_EQ(t.scale, 2.0);
  for (bool o : {true, true, false, true}) t = scaler_after(st, t, o);
  EXPECT_EQ(t.scale, 2.0);
  LossScalerConfig none;
  EXPECT_EQ(initial_scaler(none).scale, 1.0);
}

TEST(OracleScaler, trajectoryReportsScaleUsedAndAfter) {
  Scenario s = testing::small_mixed("scaler-run");
  s.steps = 5;
  s.loss_scaler = dynamic(8, 2, 2);
  for (int step : {0, 1, 4}) s.overflow.push_back({step, 1, 1, "layers.0.up.weight", 3, OverflowValue::nan});
  const Trajectory tr = run_oracle(s, Precision::float64);
  const double used[] = {256, 256, 128, 128, 256};
  const double after[] = {256, 128, 128, 256, 256};
  const bool skipped[] = {true, true, false, false, true};
  for (int t = 0; t < 5; ++t) {
    EXPECT_EQ(tr.steps[t].scale, used[t]) << t;
    EXPECT_EQ(tr.steps[t].scaler_after.scale, after[t]) << t;
    EXPECT_EQ(tr.steps[t].skipped, skipped[t]) << t;
  }
  EXPECT_EQ(tr.steps[4].good_steps_after, 2);
}

}  // namespace
}  // namespace muoncheck::oracle
