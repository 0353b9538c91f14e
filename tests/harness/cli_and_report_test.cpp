// The argument parser rejects what it does not know; the report carries its
// schema, metadata, verdicts, repro lines and a summary, and is written atomically.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "harness/cli_args.hpp"
#include "harness/report.hpp"

namespace muoncheck {
namespace {

const cli::CommandSpec kSpec{"run", "muoncheck run ...", "", {{"fault", true, true, ""}, {"mode", true, false, ""}, {"json", false, false, ""}}};

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
  r.verdicts = {Verdict::judge("gas-invariant", 9.0, 1.0, "too far"), Verdict::judge("ranks-agree", 0, 0, "ok"),
                Verdict::skip("overflow-skip-clean", "no overflow")};
  r.steps = {StepReport{0, 1.5, false, 1.0, 2, {{"all_gather_v", 4096}}, {{"param_gather", 4096}}, 1e-7, 2e-7}};
  return r;
}

TEST(Report, CarriesVerdictsReproLinesAndSummary) {
  const auto report = build_report({"run", "cpu", "--mode trajectory"}, {failing_result()}, {});
  EXPECT_EQ(report.at("schema"), kReportSchema);
  for (const char* key : {"time", "git_commit", "argv", "backend", "compiler", "gloo_version", "host"})
    EXPECT_TRUE(report.at("metadata").contains(key)) << key;
  const auto& s = report.at("scenarios").at(0);
  EXPECT_EQ(s.at("invariants").at(0).at("status"), "FAIL");
  EXPECT_EQ(s.at("steps").at(0).at("bytes_by_kind").at("all_gather_v"), 4096);
  EXPECT_EQ(report.at("repro").at(0),
            "muoncheck run scenarios/s.json --invariant gas-invariant --fault zero3-muon-per-microbatch --mode trajectory");
  EXPECT_EQ(report.at("summary").at("fail"), 1);
  EXPECT_EQ(report.at("summary").at("pass"), 1);
  EXPECT_EQ(report.at("summary").at("skipped"), 1);
  EXPECT_FALSE(report.at("summary").at("ok").get<bool>());
}

TEST(Report, WrittenAtomicallyWithoutLeftovers) {
  const auto dir = std::filesystem::temp_directory_path() / "muoncheck_report_test";
  std::filesystem::remove_all(dir);
  const auto path = (dir / "r.json").string();
  write_file_atomically(path, "old");
  write_report(path, build_report({"run", "cpu", ""}, {failing_result()}, {}));
  EXPECT_EQ(nlohmann::json::parse(read_file(path)).at("schema"), kReportSchema);
  int files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++files;
  EXPECT_EQ(files, 1);   // no temporary left beside it
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace muoncheck
