// A scenario whose run fails in a collective becomes an error of that scenario;
// the other scenarios are still judged, the report is written with it marked, and the run
// ends in an Infrastructure error (exit 3) only when nothing else failed. Plus the trace
// loader's bounds on NS call counts (which verify turns into one record per call).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include "core/error.hpp"
#include "core/scenario_io.hpp"
#include "harness/report/report.hpp"
#include "harness/run/suite.hpp"
#include "harness/traces/trace_io.hpp"
#include "impl/comm/communicator.hpp"

namespace muoncheck {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;

Scenario tiny(const std::string& name, int dp) {
  return parse_scenario(nlohmann::json::parse(R"({"name": ")" + name + R"(", "steps": 1,
      "model": {"params": [{"name": "w", "shape": [2, 3]}]}, "engine": {"dp": )" + std::to_string(dp) + "}}"),
                        name + ".json");
}

TEST(ScenarioError, ACollectiveFailureErrorsOneScenarioAndTheRestRunWithTheReportWritten) {
  const auto dir = std::filesystem::temp_directory_path() / ("muoncheck-scenario-error-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  SuiteOptions o;
  o.command = "run";
  o.report_path = (dir / "r.json").string();
  o.judge.only = {"tagging-matches"};
  // The implementation's run of "broken" fails in rank 1's collective, as a mismatch would.
  o.judge.on_run = [](const Scenario& s, const Observation&, int) {
    if (s.name == "broken")
      throw impl::CommError(ErrorKind::Infrastructure, 1, "all_reduce",
                            "rank 1: all_reduce (grad_reduce, step 0) mismatched across ranks: ...");
  };
  try {
    run_suite({tiny("broken", 2), tiny("fine", 2)}, o);
    ADD_FAILURE() << "a run with an errored scenario and nothing else failing returned";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Infrastructure);
    EXPECT_THAT(e.what(), StartsWith("1 of 2 scenarios could not be judged; first: broken: rank 1: all_reduce"));
  }
  const auto report = read_report(o.report_path);
  ASSERT_EQ(report["scenarios"].size(), 2u);
  EXPECT_EQ(report["scenarios"][0]["error"]["kind"], "infrastructure");
  EXPECT_THAT(report["scenarios"][0]["error"]["message"].get<std::string>(), HasSubstr("mismatched across ranks"));
  EXPECT_EQ(report["scenarios"][0]["repro"][0], "muoncheck run broken.json");
  EXPECT_FALSE(report["scenarios"][1].contains("error"));
  EXPECT_EQ(report["scenarios"][1]["executed"], 1);
  EXPECT_EQ(report["summary"]["errors"], 1);
  EXPECT_EQ(report["summary"]["ok"], false);
  std::filesystem::remove_all(dir);
}

TEST(ScenarioError, AFailingVerdictOutranksTheError) {
  ScenarioResult errored;
  errored.scenario = "broken";
  errored.error = ScenarioError{ErrorKind::Infrastructure, "rank 0: connect failed"};
  ScenarioResult failed;
  failed.scenario = "bad";
  failed.verdicts.push_back(Verdict{});
  failed.verdicts.back().invariant = "gas-invariant";
  failed.verdicts.back().status = Status::fail;
  const RunMetadata meta{"run", "cpu"};
  const auto only_error = summarize({errored}, {}, meta);
  EXPECT_THROW(throw_if_only_errors(only_error, {errored}), Error);
  const auto both = summarize({errored, failed}, {}, meta);
  EXPECT_EQ(both.errors, 1);
  EXPECT_NO_THROW(throw_if_only_errors(both, {errored, failed}));   // exit 1 says it louder
  EXPECT_FALSE(both.ok());
}

std::string trace_error(const std::string& step_fields) {
  const std::string text = R"({"format": "muoncheck-trace/1", "implementation": {"name": "x", "version": "1"},
    "scenario": {"name": "t"}, "dtypes": {}, "tags": [{"name": "w", "use_muon": true}],
    "steps": [{"step": 0, "loss_scale_after": 1, "params": [{"weight": [1]}], )" + step_fields + "}]}";
  try {
    trace_from_text(text, "t.trace.json");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    return e.what();
  }
  return "";
}

TEST(TraceLimits, NsCallCountsNearTwoToThirtyAreBadInputNotAGigabyte) {
  EXPECT_EQ(trace_error(R"("ns_calls": [65536])"), "");
  EXPECT_THAT(trace_error(R"("ns_calls": [1073741823])"),
              StartsWith("t.trace.json: at /steps/0/ns_calls/0: expected a count (integer in [0, 65536]), got number 1073741823"));
  EXPECT_THAT(trace_error(R"("ns_calls": [0], "ns_unattributed": 1073741823)"),
              StartsWith("t.trace.json: at /steps/0/ns_unattributed: expected an integer in [0, 65536]"));
  EXPECT_THAT(trace_error(R"("ns_calls": [1e400])"), StartsWith("t.trace.json: at /steps/0/ns_calls/0: expected a number within"));
}

TEST(TraceLimits, NsCallsOfTheWholeTraceAreBounded) {
  std::string steps;
  for (int i = 0; i < 65; ++i)
    steps += std::string(i ? "," : "") + R"({"step": )" + std::to_string(i) +
             R"(, "loss_scale_after": 1, "ns_calls": [65536], "params": [{"weight": [1]}]})";
  const std::string text = R"({"format": "muoncheck-trace/1", "implementation": {"name": "x", "version": "1"},
    "scenario": {"name": "t"}, "dtypes": {}, "tags": [{"name": "w"}], "steps": [)" + steps + "]}";
  try {
    trace_from_text(text, "t.trace.json");
    ADD_FAILURE() << "65 x 65536 NS calls loaded";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), StartsWith("t.trace.json: at /steps/64/ns_calls/0: expected at most 4194304 NS calls in the whole trace"));
  }
}

TEST(TraceLimits, DeepNestingInATraceIsBadInput) {
  const std::string deep = std::string(60000, '[') + std::string(60000, ']');
  try {
    trace_from_text(R"({"format": "muoncheck-trace/1", "implementation": {"name": "x", "version": "1", "details": {"a": )" +
                        deep + "}}}",
                    "deep.trace.json");
    ADD_FAILURE() << "loaded";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    EXPECT_THAT(e.what(), AllOf(StartsWith("deep.trace.json: at /implementation/details/a/0/"), HasSubstr("nested at most 64 deep")));
  }
}

}  // namespace
}  // namespace muoncheck
