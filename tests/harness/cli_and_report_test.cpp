// The argument parser rejects what it does not know; the report carries its
// schema, metadata, verdicts, executed counts, repro lines and a summary, and is
// written atomically; a scenario that judged nothing or a run below --min-executed
// is not OK.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "harness/cli/cli_args.hpp"
#include "harness/report/console_table.hpp"
#include "harness/judge/executed_counts.hpp"
#include "harness/cli/option_table.hpp"
#include "harness/report/report.hpp"

namespace muoncheck {
namespace {

const cli::CommandSpec kSpec{"run", "muoncheck run ...", "", {{"fault", true, true, "", ""}, {"mode", true, false, "", ""}, {"json", false, false, "", ""}}};

TEST(CliArgs, ParsesValuesRepeatsAndPositionals) {
  const auto a = cli::Args::parse(kSpec, {"x.json", "--fault", "a", "--fault=b", "--mode", "stepwise", "--json", "y.json"});
  EXPECT_EQ(a.positionals(), (std::vector<std::string>{"x.json", "y.json"}));
  EXPECT_EQ(a.values("fault"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(a.value_or("mode", ""), "stepwise");
  EXPECT_TRUE(a.flag("json"));
}

TEST(CliArgs, UnknownOptionsMissingValuesAndRepeatsAreUsageErrors) {
  for (const std::vector<std::string>& argv : std::vector<std::vector<std::string>>{
           {"--fualt", "x"}, {"--mode"}, {"--mode", "a", "--mode", "b"}, {"--json=yes"}}) {
    try {
      cli::Args::parse(kSpec, argv);
      ADD_FAILURE() << "accepted " << argv[0];
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Usage) << e.what();
    }
  }
}

ScenarioResult failing_result() {
  ScenarioResult r;
  r.scenario = "s";
  r.source = "scenarios/s.json";
  r.faults = {"zero3-muon-per-microbatch"};
  r.repro = run_repro(r.source, r.faults, {"--mode", "trajectory"});
  r.verdicts = {Verdict::judge("gas-invariant", 9.0, 1.0, "too far"), Verdict::judge("ranks-agree", 0, 0, "ok"),
                Verdict::skip("overflow-skip-clean", "no overflow")};
  r.steps = {StepReport{0, 1.5, false, 1.0, 2, {{"all_gather_v", 4096}}, {{"param_gather", 4096}}, 1e-7, 2e-7}};
  return r;
}

// The report of a run, its summary computed once as finish_run computes it.
nlohmann::json report_of(const RunMetadata& meta, const std::vector<ScenarioResult>& results) {
  return build_report(meta, results, {}, summarize(results, {}, meta));
}

TEST(Report, CarriesVerdictsReproLinesAndSummary) {
  const auto report = report_of({"run", "cpu"}, {failing_result()});
  EXPECT_EQ(report.at("schema"), kReportSchema);
  for (const char* key : {"time", "git_commit", "argv", "backend", "compiler", "gloo_version", "host"})
    EXPECT_TRUE(report.at("metadata").contains(key)) << key;
  const auto& s = report.at("scenarios").at(0);
  EXPECT_EQ(s.at("invariants").at(0).at("status"), "FAIL");
  EXPECT_EQ(s.at("steps").at(0).at("bytes_by_kind").at("all_gather_v"), 4096);
  EXPECT_EQ(report.at("repro").at(0),
            "muoncheck run scenarios/s.json --fault zero3-muon-per-microbatch --mode trajectory --invariant gas-invariant");
  EXPECT_EQ(report.at("summary").at("fail"), 1);
  EXPECT_EQ(report.at("summary").at("pass"), 1);
  EXPECT_EQ(report.at("summary").at("skipped"), 1);
  EXPECT_FALSE(report.at("summary").at("ok").get<bool>());
}

ScenarioResult result_with(std::string name, std::vector<Verdict> verdicts, std::vector<std::string> flags = {}) {
  ScenarioResult r;
  r.scenario = name;
  r.source = "scenarios/" + name + ".json";
  r.repro = run_repro(r.source, {}, flags);
  r.verdicts = std::move(verdicts);
  return r;
}

TEST(Report, CarriesExecutedCountsPerScenarioAndInTheSummary) {
  const auto report = report_of({"run", "cpu"}, {failing_result()});
  const auto& s = report.at("scenarios").at(0);
  EXPECT_EQ(s.at("executed"), 2);   // FAIL and PASS; the SKIPPED one is not executed
  EXPECT_EQ(s.at("verdicts"), 3);
  const auto& sum = report.at("summary");
  EXPECT_EQ(sum.at("executed"), 2);
  EXPECT_EQ(sum.at("verdicts"), 3);
  EXPECT_DOUBLE_EQ(sum.at("executed_share").get<double>(), 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(sum.at("min_executed").get<double>(), kDefaultMinExecuted);
  EXPECT_TRUE(sum.at("idle_scenarios").empty());
  EXPECT_TRUE(sum.at("executed_problems").empty());
}

// A scenario whose every verdict was SKIPPED is not OK although nothing FAILED: the summary,
// the report and the console say so, with a line that reproduces it.
TEST(ExecutedCounts, AnAllSkippedScenarioIsNotOk) {
  const auto judged = result_with("judged", {Verdict::judge("ranks-agree", 0, 0, "ok"), Verdict::judge("deterministic", 0, 0, "ok")});
  const auto idle = result_with("idle", {Verdict::skip("overflow-skip-clean", "no step overflows in this scenario"),
                                         Verdict::skip("gas-invariant", "injections pin a micro-step")},
                                {"--oracle-precision", "double"});
  const RunMetadata meta{"run", "cpu"};
  EXPECT_TRUE(summarize({judged}, {}, meta).ok());
  const auto s = summarize({judged, idle}, {}, meta);
  EXPECT_EQ(s.fail, 0);
  EXPECT_FALSE(s.ok());
  ASSERT_EQ(s.counts.idle.size(), 1u);
  EXPECT_EQ(s.counts.idle[0].repro, "muoncheck run scenarios/idle.json --oracle-precision double --invariant overflow-skip-clean");
  ASSERT_EQ(s.executed_problems.size(), 1u);   // 2 of 4 executed: the share itself is at the default gate
  EXPECT_NE(s.executed_problems[0].find("scenario idle judged nothing: executed 0 of 2 invariant verdicts (2 SKIPPED"),
            std::string::npos) << s.executed_problems[0];

  const auto report = build_report(meta, {judged, idle}, {}, s);
  EXPECT_FALSE(report.at("summary").at("ok").get<bool>());
  EXPECT_EQ(report.at("summary").at("idle_scenarios"), nlohmann::json::array({"idle"}));
  EXPECT_EQ(report.at("scenarios").at(1).at("executed"), 0);
  EXPECT_EQ(report.at("scenarios").at(1).at("repro").at(0), s.counts.idle[0].repro);

  char buf[4096] = {};
  std::FILE* out = fmemopen(buf, sizeof buf - 1, "w");
  print_failures_and_summary(out, {judged, idle}, {}, s);
  std::fclose(out);
  const std::string text(buf);
  EXPECT_EQ(text.find("=> OK"), std::string::npos) << text;
  EXPECT_NE(text.find("=> NOT OK"), std::string::npos) << text;
  EXPECT_NE(text.find("not OK: scenario idle judged nothing"), std::string::npos) << text;
}

TEST(ExecutedCounts, AnAllUnsupportedScenarioIsNotOkEither) {
  const auto judged = result_with("judged", {Verdict::judge("ranks-agree", 0, 0, "ok")});
  const auto declined = result_with("declined", {Verdict::unsupported("trajectory-conforms", "no per-head Muon"),
                                                 Verdict::unsupported("ns-once-per-matrix-per-step", "no per-head Muon")});
  const auto s = summarize({judged, declined}, {}, {"verify", "trace", 0.0});   // even with no share gate
  EXPECT_FALSE(s.ok());
  ASSERT_EQ(s.counts.idle.size(), 1u);
  EXPECT_NE(s.counts.idle[0].why.find("2 UNSUPPORTED; trajectory-conforms: no per-head Muon"), std::string::npos)
      << s.counts.idle[0].why;
}

TEST(ExecutedCounts, AShareBelowMinExecutedIsNotOkWithTheRunAsRepro) {
  const auto r = result_with("partly", {Verdict::judge("ranks-agree", 0, 0, "ok"), Verdict::skip("gas-invariant", "x"),
                                        Verdict::skip("dp-invariant", "x"), Verdict::skip("overflow-skip-clean", "x")});
  EXPECT_FALSE(summarize({r}, {}, {"run", "cpu", 0.5}).ok());   // 1 of 4
  EXPECT_TRUE(summarize({r}, {}, {"run", "cpu", 0.25}).ok());   // exactly at the gate
  const auto problems = executed_problems(executed_counts_of({r}), 0.5, "muoncheck run partly");
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("executed 1 of 4 invariant verdicts (25.0%), below --min-executed 0.5"), std::string::npos)
      << problems[0];
  EXPECT_NE(problems[0].find("reproduce: muoncheck run partly"), std::string::npos) << problems[0];
}

TEST(ExecutedCounts, MinExecutedMustBeAFraction) {
  const cli::CommandSpec spec{"run", "", "", options({"min-executed"})};
  EXPECT_DOUBLE_EQ(min_executed_from(cli::Args::parse(spec, {})), kDefaultMinExecuted);
  EXPECT_DOUBLE_EQ(min_executed_from(cli::Args::parse(spec, {"--min-executed", "0.9"})), 0.9);
  for (const char* bad : {"1.5", "-0.1", "nan", "half"}) {
    try {
      min_executed_from(cli::Args::parse(spec, {"--min-executed", bad}));
      ADD_FAILURE() << "accepted " << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Usage) << e.what();
    }
  }
}

TEST(Report, WrittenAtomicallyWithoutLeftovers) {
  const auto dir = std::filesystem::temp_directory_path() / "muoncheck_report_test";
  std::filesystem::remove_all(dir);
  const auto path = (dir / "r.json").string();
  write_file_atomically(path, "old");
  write_report(path, report_of({"run", "cpu"}, {failing_result()}));
  EXPECT_EQ(read_report(path).at("schema"), kReportSchema);
  int files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++files;
  EXPECT_EQ(files, 1);   // no temporary left beside it
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace muoncheck
