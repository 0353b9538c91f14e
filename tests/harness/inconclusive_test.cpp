// INCONCLUSIVE: a numeric verdict whose question has no answer at the scenario's precision
// (properties/determinacy.hpp). The two minimal cases of a false FAIL where the update is not determined (tests/harness/cases/), both
// false FAILs before: neither FAILs on the CPU, the first is INCONCLUSIVE, the second's
// natural-overflow skip (made by every valid order from the implementation's state) is followed.
// The other side of the rule is the same case at full rank; structural invariants still catch
// a fault there; a skip no valid order makes still FAILs; the report and its views say it.
#include <gtest/gtest.h>

#include "core/scenario_io.hpp"
#include "harness/judge/executed_counts.hpp"
#include "harness/judge/judge_scenario.hpp"
#include "harness/report/report.hpp"
#include "harness/views/html_report.hpp"
#include "harness/views/junit.hpp"
#include "harness/views/report_diff.hpp"
#include "harness/views/summary_markdown.hpp"
#include "impl/run_impl.hpp"
#include "oracle/control_ensemble.hpp"
#include "oracle/oracle.hpp"
#include "properties/determinacy.hpp"
#include "properties/followed_decisions.hpp"
#include "properties/scaler_invariant.hpp"

namespace muoncheck {
namespace {

const char* kChaotic = "tests/harness/cases/sweep-s11-c1009.json";   // Gram NS bf16, 7 iterations, rank 4 of 5
const char* kFlippedSkip = "tests/harness/cases/sweep-s5-c26.json";  // the same NS, then a natural fp16 overflow

const Verdict& verdict(const ScenarioResult& r, const std::string& id) {
  for (const auto& v : r.verdicts)
    if (v.invariant == id) return v;
  throw std::runtime_error("no verdict " + id);
}

ScenarioResult judged(const Scenario& s, std::vector<std::string> faults = {}) {
  JudgeOptions o;
  o.faults = std::move(faults);
  return judge_scenario(s, o);
}

void expect_no_fail(const ScenarioResult& r) {
  for (const auto& v : r.verdicts) EXPECT_NE(v.status, Status::fail) << r.scenario << " " << v.invariant << ": " << v.message;
}

TEST(Inconclusive, ChaoticCaseIsInconclusiveWithTheFigureNotFail) {
  const auto r = judged(load_scenario(kChaotic));
  expect_no_fail(r);
  for (const char* id : {"trajectory-conforms", "step-conforms", "bucket-invariant"}) {
    const auto& v = verdict(r, id);
    EXPECT_EQ(v.status, Status::inconclusive) << id << ": " << v.message;
    EXPECT_GE(v.spread, 100.0) << id;   // 853 updates measured (docs/invariants.md)
    EXPECT_NE(v.message.find("spread"), std::string::npos) << v.message;
  }
  EXPECT_EQ(executed_count(r), 7);   // of 15: the 5 INCONCLUSIVE are not executed, nor the 3 SKIPPED
  const auto note = inconclusive_note(r);
  EXPECT_NE(note.find("Gram Newton-Schulz in bf16 with 7 iterations"), std::string::npos) << note;
}

TEST(Inconclusive, TheSameCaseAtFullRankIsJudged) {
  Scenario s = load_scenario(kChaotic);
  s.engine.dp = 8;   // global batch 8 spans the 15×5 matrix: the spread falls to 0.14 of an update
  const auto r = judged(s);
  for (const char* id : {"trajectory-conforms", "step-conforms"}) {
    const auto& v = verdict(r, id);
    EXPECT_EQ(v.status, Status::pass) << id << ": " << v.message;
    EXPECT_GT(v.spread, 0.01) << id;
    EXPECT_LT(v.spread, kUndeterminedAt) << id;
  }
  EXPECT_TRUE(inconclusive_note(r).empty());
}

TEST(Inconclusive, ASkipSomeValidOrderMakesIsFollowed) {
  const auto r = judged(load_scenario(kFlippedSkip));
  expect_no_fail(r);
  for (const char* id : {"ns-once-per-matrix-per-step", "overflow-skip-clean", "scaler-state-exact"}) {
    const auto& v = verdict(r, id);
    EXPECT_EQ(v.status, Status::pass) << id << ": " << v.message;
    EXPECT_NE(v.message.find("decision followed: step 1 skipped"), std::string::npos) << v.message;
  }
  EXPECT_EQ(verdict(r, "trajectory-conforms").status, Status::inconclusive);
}

TEST(Inconclusive, ASkipNoValidOrderMakesStillFails) {
  const Scenario s = load_scenario(kFlippedSkip);
  const auto impl = impl::run_impl(s, {});
  const auto exact = oracle::run_oracle(s, oracle::Precision::float64);
  ASSERT_TRUE(impl.trajectory.steps.at(1).skipped);
  ASSERT_FALSE(exact.steps.at(1).skipped);
  auto agreeing = [](int) { return std::vector<bool>{false, true}; };
  auto none = [](int) { return std::vector<bool>{false, false}; };
  EXPECT_EQ(scaler_state_exact(decisions_followed(s, exact, impl.trajectory, agreeing), impl.trajectory).status, Status::pass);
  EXPECT_EQ(scaler_state_exact(decisions_followed(s, exact, impl.trajectory, none), impl.trajectory).status, Status::fail);
}

TEST(Inconclusive, StructuralInvariantsStillFailAFaultyImplementation) {
  const auto no_ns = judged(load_scenario(kChaotic), {"stage0-no-newton-schulz"});
  EXPECT_EQ(verdict(no_ns, "ns-once-per-matrix-per-step").status, Status::fail);
  EXPECT_EQ(verdict(no_ns, "trajectory-conforms").status, Status::inconclusive);
  const auto moved = judged(load_scenario(kFlippedSkip), {"momentum-on-overflow"});
  EXPECT_EQ(verdict(moved, "overflow-skip-clean").status, Status::fail) << verdict(moved, "overflow-skip-clean").message;
}

TEST(Inconclusive, ADeterminedFailStaysFail) {
  Undetermined u;
  u.note_spread(853, "step 0 w");
  u.note_tensor(8.0, "step 0 w");
  const Scenario s = load_scenario(kChaotic);
  EXPECT_EQ(settle(Verdict::judge("trajectory-conforms", 3.0, 1.0, "momentum out"), u, s).status, Status::fail);
  const Verdict v = settle(Verdict::judge("trajectory-conforms", 0.5, 1.0, "momentum in"), u, s);
  EXPECT_EQ(v.status, Status::inconclusive);
  EXPECT_EQ(v.metric, 8.0);
  EXPECT_EQ(v.spread, 853);
  EXPECT_EQ(settle(Verdict::judge("trajectory-conforms", 0.5, 1.0, "in"), Undetermined{}, s).status, Status::pass);
  EXPECT_TRUE(is_undetermined(kUndeterminedAt));
  EXPECT_TRUE(is_undetermined(NAN));
  EXPECT_FALSE(is_undetermined(0.99));
}

TEST(Inconclusive, EveryViewSaysItAndDiffCallsItARegression) {
  const auto r = judged(load_scenario(kChaotic));
  const RunMetadata meta{"run", "cpu", 0.0};
  const auto report = build_report(meta, {r}, {}, summarize({r}, {}, meta));
  const auto& s = report.at("scenarios").at(0);
  bool found = false;
  for (const auto& v : s.at("invariants"))
    if (v.at("id") == "trajectory-conforms") {
      EXPECT_EQ(v.at("status"), "INCONCLUSIVE");
      EXPECT_GE(v.at("determinacy").at("spread_over_update").get<double>(), 1.0);
      found = true;
    }
  EXPECT_TRUE(found);
  EXPECT_EQ(report.at("summary").at("inconclusive"), 5);
  EXPECT_EQ(report.at("summary").at("fail"), 0);
  EXPECT_NE(s.at("notes").at(0).get<std::string>().find("Gram"), std::string::npos);
  EXPECT_TRUE(s.at("repro").empty());   // nothing to reproduce: not a failure
  const auto xml = junit_xml(report);
  EXPECT_NE(xml.find("<skipped message=\"INCONCLUSIVE: INCONCLUSIVE: the control ensemble"), std::string::npos) << xml;
  EXPECT_NE(summary_markdown(report).find("### Inconclusive"), std::string::npos);
  EXPECT_NE(html_report(report).find("class=\"INCONCLUSIVE\">INCONCLUSIVE"), std::string::npos);

  auto passed = report;
  for (auto& v : passed["scenarios"][0]["invariants"])
    if (v["status"] == "INCONCLUSIVE") v["status"] = "PASS";
  const auto d = diff_reports(passed, report);
  ASSERT_FALSE(d.regressions.empty());
  EXPECT_NE(d.regressions.front().find("PASS -> INCONCLUSIVE"), std::string::npos) << d.regressions.front();
}

}  // namespace
}  // namespace muoncheck
