// Learning-rate schedules in the oracle: with zero weight decay a step's change of every
// weight is its rate times a direction the rate does not touch (Muon's O, AdamW's
// m̂/(√v̂ + eps)), so under a schedule each param's change is f(t) times the constant
// schedule's at the same state — per group, for the group's own schedule — and the control
// follows the same schedule.
#include <gtest/gtest.h>

#include <cmath>

#include "oracle/oracle.hpp"
#include "scenarios.hpp"

namespace muoncheck::oracle {
namespace {

// ‖Δ_sched − factor·Δ_const‖ / ‖Δ_const‖ for param p's weights at step t.
double ratio_error(const Trajectory& sched, const Trajectory& flat, size_t p, int t, double factor) {
  const auto& before = t == 0 ? sched.initial[p].weight : sched.steps[static_cast<size_t>(t - 1)].params[p].weight;
  const auto& a = sched.steps[static_cast<size_t>(t)].params[p].weight;
  const auto& b = flat.steps[static_cast<size_t>(t)].params[p].weight;
  double off = 0, norm = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double da = a[i] - before[i], db = b[i] - before[i];
    off += (da - factor * db) * (da - factor * db);
    norm += db * db;
  }
  return std::sqrt(off / std::max(norm, 1e-300));
}

// `sched` (the run of `s`) with step t run again from its own state before that step, under `flat`.
Trajectory with_step_rerun(const Trajectory& sched, const Scenario& s, const Scenario& flat, int t) {
  TrainingState before = initial_state(s);
  if (t > 0) {
    const StepRecord& prev = sched.steps[static_cast<size_t>(t - 1)];
    before = TrainingState{prev.params, prev.scaler_after, prev.good_steps_after};
  }
  Trajectory one = sched;
  one.steps[static_cast<size_t>(t)] = step_from(flat, t, before, Precision::float64);
  return one;
}

TEST(OracleSchedule, EachParamMovesByItsOwnSchedulesFactor) {
  Scenario s = testing::small_mixed("schedule");
  s.steps = 2;
  s.optimizer.weight_decay = 0.0;
  s.optimizer.lr_schedule = LrSchedule{LrShape::linear_warmup, 4, 0, 0.0, {}};   // 1/4, 2/4
  const std::string adam_name = s.model.params.back().name;
  s.optimizer.groups = {ParamGroup{adam_name, 1.0, std::nullopt, LrSchedule{LrShape::cosine, 0, 2, 0.5, {}}}};   // 1, 0.75
  const Trajectory sched = run_oracle(s, Precision::float64);
  for (int t = 0; t < s.steps; ++t) {
    // The same state through a constant schedule: step t from the scheduled run's state.
    Scenario flat = s;
    flat.optimizer.lr_schedule = {};
    flat.optimizer.groups.front().lr_schedule = LrSchedule{};
    const Trajectory one = with_step_rerun(sched, s, flat, t);
    for (size_t p = 0; p < s.model.params.size(); ++p) {
      const double f = lr_factor(lr_schedule_for(s, s.model.params[p].name), t);
      EXPECT_LT(ratio_error(sched, one, p, t, f), 1e-9) << "step " << t << " " << s.model.params[p].name << " factor " << f;
    }
  }
  EXPECT_DOUBLE_EQ(lr_factor(lr_schedule_for(s, adam_name), 1), 0.75);
}

// A table schedule moves each step by its own factor, including 0 (the weights stay) and a
// factor above 1, and a table shifted by one step is another trajectory.
TEST(OracleSchedule, ATableMovesEachStepByItsFactor) {
  Scenario s = testing::small_mixed("schedule-table");
  s.steps = 3;
  s.optimizer.weight_decay = 0.0;
  s.optimizer.lr_schedule = LrSchedule{LrShape::table, 0, 0, 0.0, {0.0, 1.5, 0.25}};
  const Trajectory sched = run_oracle(s, Precision::float64);
  for (int t = 0; t < s.steps; ++t) {
    Scenario flat = s;
    flat.optimizer.lr_schedule = {};
    const Trajectory one = with_step_rerun(sched, s, flat, t);
    const double f = s.optimizer.lr_schedule.factors[static_cast<size_t>(t)];
    for (size_t p = 0; p < s.model.params.size(); ++p) {
      if (f == 0.0) {
        EXPECT_EQ(sched.steps[0].params[p].weight, sched.initial[p].weight) << s.model.params[p].name;
        continue;
      }
      EXPECT_LT(ratio_error(sched, one, p, t, f), 1e-9) << "step " << t << " " << s.model.params[p].name;
    }
  }
  Scenario shifted = s;
  shifted.optimizer.lr_schedule.factors = {1.5, 0.25, 0.25};
  const Trajectory other = run_oracle(shifted, Precision::float64);
  EXPECT_NE(other.steps[0].params[0].weight, sched.steps[0].params[0].weight);
}

TEST(OracleSchedule, TheControlFollowsTheSchedule) {
  Scenario s = testing::small_mixed("schedule-control");
  s.steps = 1;
  const Trajectory flat = run_control(s);
  s.optimizer.lr_schedule = LrSchedule{LrShape::linear_warmup, 2, 0, 0.0, {}};   // 1/2 at step 0
  const Trajectory half = run_control(s);
  // Rounded arithmetic: the halved update is half the full one to within fp32 rounding.
  EXPECT_LT(ratio_error(half, flat, 1, 0, 0.5), 1e-3);
  EXPECT_GT(ratio_error(half, flat, 1, 0, 1.0), 0.4);
}

}  // namespace
}  // namespace muoncheck::oracle
