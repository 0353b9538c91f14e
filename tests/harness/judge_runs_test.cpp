// JudgeRuns (harness/judge_runs.hpp): a scenario asked for twice is one run, a re-run is a
// run of its own, an implementation's Unsupported reaches the caller, queued runs never
// started do not hold up the end — and a judgement's verdicts are the same whether its runs
// go one at a time or side by side.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/scenario_io.hpp"
#include "harness/judge/judge_runs.hpp"
#include "harness/judge/judge_scenario.hpp"
#include "oracle/parallel.hpp"
#include "properties/bitwise.hpp"
#include "properties/invariant_table.hpp"

namespace muoncheck {
namespace {

Scenario small(const std::string& name, int dp, int stage) {
  return parse_scenario(nlohmann::json::parse(R"({"name": ")" + name + R"(", "steps": 2,
      "model": {"params": [{"name": "a", "shape": [6, 4]}, {"name": "b", "shape": [4, 5]}, {"name": "n", "shape": [5]}]},
      "engine": {"dp": )" + std::to_string(dp) + R"(, "gas": 2, "micro_batch": 2, "stage": )" + std::to_string(stage) + "}}"),
                        name + ".json");
}

TEST(JudgeRuns, OneRunPerScenarioAndAReRunOfItsOwn) {
  oracle::ResultMemo memo;
  JudgeRuns runs({}, memo, 2, 2);
  const Scenario s = small("runs", 2, 3);
  runs.start(s, true);
  runs.start(s, false, true);
  const SideRun first = runs.get(s, true), again = runs.get(s, false), second = runs.get(s, false, true);
  EXPECT_EQ(first.impl.get(), again.impl.get()) << "asked twice, run twice";
  ASSERT_NE(first.impl.get(), second.impl.get()) << "the re-run reused the first run";
  EXPECT_EQ(first_bitwise_difference(first.impl->trajectory, second.impl->trajectory), "");
  ASSERT_TRUE(first.controls);
  EXPECT_EQ(first.controls->size(), 2u);
}

TEST(JudgeRuns, UnsupportedReachesTheCaller) {
  oracle::ResultMemo memo;
  JudgeRuns runs({}, memo, 2, 2);
  Scenario none = small("empty", 2, 1);
  none.model.params.clear();
  runs.start(none, true);
  try {
    runs.get(none, true);
    FAIL() << "a scenario without params ran";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
  }
}

TEST(JudgeRuns, RunsNeverStartedDoNotHoldUpTheEnd) {
  oracle::ResultMemo memo;
  {
    JudgeRuns runs({}, memo, 2, 1);
    for (int dp : {1, 2, 3, 4}) runs.start(small("queued-" + std::to_string(dp), dp, 2), true);
    (void)runs.get(small("queued-1", 1, 2), false);
  }   // the rest are dropped or finished here, no hang
  SUCCEED();
}

// Everything of a verdict but its timing.
std::string verdicts_of(const ScenarioResult& r) {
  std::string out;
  for (const auto& v : r.verdicts)
    out += v.invariant + " " + std::to_string(static_cast<int>(v.status)) + " " + std::to_string(v.metric) + " " +
           std::to_string(v.sensitivity) + " " + v.message + "\n";
  return out;
}

TEST(JudgeRuns, VerdictsAreTheSameOneRunAtATimeOrSideBySide) {
  const int threads = oracle::thread_count();
  for (const Scenario& s : {small("side-by-side", 2, 3), small("side-by-side-z1", 4, 1)}) {
    JudgeOptions o;
    o.precision = oracle::Precision::float64;
    o.control_members = 3;
    oracle::set_thread_count(1);
    const auto one = judge_scenario(s, o);
    oracle::set_thread_count(2);
    const auto two = judge_scenario(s, o);
    EXPECT_EQ(verdicts_of(one), verdicts_of(two)) << s.name;
    EXPECT_EQ(one.verdicts.size(), invariant_ids().size());
  }
  oracle::set_thread_count(threads);
}

}  // namespace
}  // namespace muoncheck
