// A verdict holds its worst case as data and its message is rendered from it
// (properties/verdict.hpp): the record and the words cannot disagree, and a disagreement is found.
#include <gtest/gtest.h>

#include <cmath>

#include "core/scenario_io.hpp"
#include "harness/judge/judge_scenario.hpp"
#include "properties/verdict.hpp"

namespace muoncheck {
namespace {

WorstCase momentum_at_step_2() {
  WorstCase w;
  w.step = 2, w.param = "l0.w", w.tensor = "momentum", w.error = 0.5, w.band = 0.01;
  return w;
}

TEST(WorstCase, TheMessageIsRenderedFromTheRecord) {
  const Verdict v = Verdict::located("trajectory-conforms", 50, 1, momentum_at_step_2(), "worst at ", "; more");
  EXPECT_EQ(v.message, "worst at step 2 param l0.w momentum: error 0.5 vs control ensemble 0.01; more");
  EXPECT_EQ(worst_case_disagreement(v), "");
  WorstCase c;
  c.measure = WorstCase::Measure::count;
  c.step = 0, c.param = "q", c.tensor = "NS calls", c.error = 1, c.band = 0, c.note = "skipped step";
  EXPECT_EQ(worst_case_text(c), "step 0 param q: 1 NS calls, expected 0 (skipped step)");
  WorstCase d;
  d.measure = WorstCase::Measure::difference;
  d.step = 1, d.param = "w", d.error = 0.2, d.band = 0.01, d.compared = "gas 4 run vs gas 2 run";
  EXPECT_EQ(worst_case_text(d), "gas 4 run vs gas 2 run: worst relative weight difference 0.2 (band 0.01) at step 1 param w");
}

TEST(WorstCase, AMessageThatSaysAnotherPlaceOrFigureDisagrees) {   // planted: record and words apart
  Verdict moved = Verdict::located("trajectory-conforms", 50, 1, momentum_at_step_2(), "worst at ");
  moved.worst->step = 3;   // the record moved, the words did not
  EXPECT_NE(worst_case_disagreement(moved), "");
  Verdict reworded = Verdict::located("trajectory-conforms", 50, 1, momentum_at_step_2(), "worst at ");
  reworded.message = "worst at step 2 param l0.w weight: error 0.5 vs control ensemble 0.01";
  EXPECT_NE(worst_case_disagreement(reworded), "");
  EXPECT_EQ(worst_case_disagreement(Verdict::judge("deterministic", 0, 0, "no worst case")), "");
}

// A real FAIL: the record names the step, the param and the tensor the message names, and the
// judgement itself (judge_observation) checked every verdict the same way.
TEST(WorstCase, AFaultsFailureCarriesItsRecord) {
  JudgeOptions o;
  o.faults = {"stage0-no-newton-schulz"};
  o.only = {"trajectory-conforms", "ns-once-per-matrix-per-step"};
  o.precision = oracle::Precision::float64;
  const auto r = judge_scenario(load_scenario("scenarios/stage0-basic.json"), o);
  int failed = 0;
  for (const auto& v : r.verdicts) {
    ASSERT_EQ(v.status, Status::fail) << v.invariant << ": " << v.message;
    ASSERT_TRUE(v.worst.has_value()) << v.invariant;
    EXPECT_GE(v.worst->step, 0) << v.message;
    EXPECT_FALSE(v.worst->param.empty()) << v.message;
    EXPECT_EQ(worst_case_disagreement(v), "");
    ++failed;
  }
  EXPECT_EQ(failed, 2);
}

}  // namespace
}  // namespace muoncheck
