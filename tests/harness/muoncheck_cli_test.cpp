// The `muoncheck` binary end to end: exit codes (0 ok, 1 conformance failure,
// 2 bad input/usage), one-line errors that name the file and field, repro lines, and
// the executed-count gate (a scenario that judged nothing, a share below --min-executed).
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "core/scenario_io.hpp"

#include "run_muoncheck.hpp"

namespace {

using Result = muoncheck::testing::RunResult;
Result run(const std::string& args) { return muoncheck::testing::run_muoncheck(args); }

std::string write_temp(const std::string& name, const std::string& text) {
  const auto dir = std::filesystem::temp_directory_path() / "muoncheck_cli_test";
  std::filesystem::create_directories(dir);
  const auto path = (dir / name).string();
  std::ofstream(path) << text;
  return path;
}

TEST(MuoncheckCli, HelpForEveryCommand) {
  for (const char* c : {"check", "run", "oracle", "certify", "golden"}) {
    const auto r = run(std::string(c) + " --help");
    EXPECT_EQ(r.exit_code, 0) << c;
    EXPECT_NE(r.output.find("usage: muoncheck"), std::string::npos) << c;
  }
}

TEST(MuoncheckCli, BadScenarioIsExit2WithFileAndPath) {
  const auto path = write_temp("bad.json", R"({"name": "bad", "model": {"params": [{"name": "w", "shape": [4, 4]}]}, "engine": {"dp": 0}})");
  const auto r = run("run " + path);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("bad.json: at /engine/dp: expected an integer in [1, 64], got number 0"), std::string::npos) << r.output;
}

TEST(MuoncheckCli, UnknownOptionAndFaultAreUsageErrors) {
  EXPECT_EQ(run("run two-layer-gas1-z2 --no-such-flag").exit_code, 2);
  const auto r = run("run two-layer-gas1-z2 --fault no-such-fault --invariant tagging-matches");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("no-such-fault"), std::string::npos) << r.output;
}

TEST(MuoncheckCli, CleanRunExits0AndFaultRunExits1WithAReproLine) {
  const std::string cheap = " --oracle-precision double --invariant ns-once-per-matrix-per-step --invariant tagging-matches";
  EXPECT_EQ(run("run scenarios/two-layer-gas4-z3.json" + cheap).exit_code, 0);
  const auto r = run("run scenarios/two-layer-gas4-z3.json --fault zero3-muon-per-microbatch" + cheap);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("muoncheck run scenarios/two-layer-gas4-z3.json --fault zero3-muon-per-microbatch "
                          "--oracle-precision double --invariant ns-once-per-matrix-per-step"),
            std::string::npos)
      << r.output;
}

TEST(MuoncheckCli, EveryJudgingCommandTakesMinExecuted) {
  for (const char* c : {"check", "run", "verify", "sweep", "mutants", "nightly"}) {
    const auto r = run(std::string(c) + " --help");
    EXPECT_EQ(r.exit_code, 0) << c;
    EXPECT_NE(r.output.find("--min-executed"), std::string::npos) << c << ":\n" << r.output;
  }
  const auto r = run("run two-layer-gas4-z3 --min-executed 1.5");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--min-executed expects a fraction in [0, 1]"), std::string::npos) << r.output;
}

// --ns-kernel chooses among the cuda backend's NS paths: without --backend cuda it is a usage
// error that names both options, before anything runs.
TEST(MuoncheckCli, NsKernelNeedsTheCudaBackend) {
  const auto r = run("check --ns-kernel resident");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("--ns-kernel resident"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--backend cuda"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("PASS"), std::string::npos) << r.output;
}

TEST(MuoncheckCli, AScenarioThatJudgedNothingExits1AndSaysHowToReproduce) {
  // two-layer-gas1-z2 has no overflow: its only asked-for invariant is SKIPPED.
  const auto r = run("run two-layer-gas1-z2 --invariant overflow-skip-clean --oracle-precision double");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(r.output.find("=> OK"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("executed 0 of 1 invariant verdicts: NOTHING JUDGED"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("not OK: scenario two-layer-gas1-z2 judged nothing"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("reproduce: muoncheck run /"), std::string::npos) << r.output;   // the data folder's file
  EXPECT_NE(r.output.find("/scenarios/two-layer-gas1-z2.json --oracle-precision double "
                          "--invariant overflow-skip-clean"),
            std::string::npos)
      << r.output;
}

TEST(MuoncheckCli, AnAllUnsupportedScenarioExits1) {
  // A global batch of 8 cannot be spread over 3 ranks: every verdict is UNSUPPORTED.
  const auto r = run("run two-layer-gas4-z3 --dp 3 --invariant ranks-agree --invariant tagging-matches");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(r.output.find("=> OK"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("2 UNSUPPORTED"), std::string::npos) << r.output;
}

TEST(MuoncheckCli, AnExecutedShareBelowMinExecutedExits1) {
  // One of the two asked-for invariants executes (overflow-skip-clean is SKIPPED): 50%.
  const std::string half = "run two-layer-gas4-z3 --oracle-precision double --invariant ns-once-per-matrix-per-step "
                           "--invariant overflow-skip-clean";
  const auto at_gate = run(half);   // the default gate is 0.5
  EXPECT_EQ(at_gate.exit_code, 0) << at_gate.output;
  EXPECT_NE(at_gate.output.find("executed 1 of 2 invariant verdicts (50.0%)"), std::string::npos) << at_gate.output;
  const auto below = run(half + " --min-executed 0.75");
  EXPECT_EQ(below.exit_code, 1) << below.output;
  EXPECT_EQ(below.output.find("=> OK"), std::string::npos) << below.output;
  EXPECT_NE(below.output.find("below --min-executed 0.75"), std::string::npos) << below.output;
  EXPECT_NE(below.output.find("reproduce: muoncheck " + half + " --min-executed 0.75"), std::string::npos) << below.output;
}

TEST(MuoncheckCli, ASweepBelowMinExecutedExits1) {
  // A generated case never executes every invariant (no overflow, relational variants
  // that do not exist, ...), so a gate of 1 cannot be met.
  const auto r = run("sweep --cases 1 --seed 1 --min-executed 1");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("not OK: executed"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("below --min-executed 1"), std::string::npos) << r.output;
}

TEST(MuoncheckCli, ShippedGoldenDigestsMatchTheOracle) {
  // Every shipped scenario: the README's main job (`check`) compares each golden file, so a
  // golden left stale by a change of the scenario's canonical form fails here, not for a user.
  const auto r = run("golden check");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find("FAIL"), std::string::npos) << r.output;
}

TEST(MuoncheckCli, GoldenCheckFailsOnAChangedDigestWithTheRegenerateHint) {
  const auto dir = std::filesystem::temp_directory_path() / "muoncheck_golden_test";
  std::filesystem::create_directories(dir);
  std::ifstream in("golden/stage0-basic.json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto at = text.find("\"loss\": ");
  ASSERT_NE(at, std::string::npos);
  text.insert(at + 8, "1");   // loss 0.x → 10.x
  std::ofstream(dir / "stage0-basic.json") << text;
  const auto r = run("golden check stage0-basic --golden " + dir.string());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  // A bare name is found in the data folder (here the checkout), and the hint names that file.
  EXPECT_NE(r.output.find("if the change is intended, regenerate with: muoncheck golden update /"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("/scenarios/stage0-basic.json"), std::string::npos) << r.output;
}

TEST(MuoncheckCli, OracleShowsTagsAndSteps) {
  const auto r = run("oracle llama2-zero3-init --precision double");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.output.find("14 tagged for Muon"), std::string::npos) << r.output;
}

// `resolve`: the loader's scenario (hash, every default), the preset expanded and tagged.
TEST(MuoncheckCli, ResolvePrintsTheLoadedScenarioExpandedAndTagged) {
  const auto r = run("resolve llama2-zero3-init");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto doc = nlohmann::json::parse(r.output);
  const muoncheck::Scenario s = muoncheck::load_scenario("scenarios/llama2-zero3-init.json");
  EXPECT_EQ(doc["format"], "muoncheck-resolved-scenario/1");
  EXPECT_EQ(doc["hash"], muoncheck::scenario_hash(s));
  EXPECT_EQ(doc["scenario"], muoncheck::scenario_to_json(s));
  ASSERT_EQ(doc["params"].size(), s.model.params.size());
  int muon = 0;
  for (const auto& p : doc["params"]) muon += p["use_muon"].get<bool>();
  EXPECT_EQ(muon, 14);
  EXPECT_EQ(doc["params"][1]["name"], s.model.params[1].name);
  // beside the canonical scenario, always: the fields it omits at their defaults
  EXPECT_EQ(doc["engine_path"]["offload_optimizer"], "none");
  EXPECT_EQ(doc["engine_path"]["compile"], false);
  EXPECT_EQ(doc["lr_schedule"]["shape"], "constant");
  EXPECT_EQ(doc["params"][1]["lr_schedule"]["warmup_steps"], 0);
  EXPECT_TRUE(doc["checkpoint"].is_null());
  const auto c = run("resolve scenarios/deepspeed/ckpt-z2-dp2-to-dp1.json");
  ASSERT_EQ(c.exit_code, 0) << c.output;
  const auto resumed = nlohmann::json::parse(c.output)["checkpoint"]["resume"];
  EXPECT_EQ(resumed["dp"], 1);
  EXPECT_EQ(resumed["gas"], 2);   // the global batch kept: dp 2 × gas 1 resumes as dp 1 × gas 2
  EXPECT_EQ(run("resolve").exit_code, 2);
  EXPECT_EQ(run("resolve no-such-scenario").exit_code, 2);
}

}  // namespace

// Bad input end to end: exit 2 with file and path (never a crash, never
// "internal"), and an unwritable report target fails before any scenario runs.
TEST(MuoncheckCli, HostileInputIsExit2NeverACrashOrInternal) {
  const auto deep = write_temp("deep.trace.json", std::string(60000, '[') + std::string(60000, ']'));
  auto r = run("verify stage0-basic --trace " + deep);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("deep.trace.json: at /0/0/"), std::string::npos) << r.output;
  const auto big = write_temp("bignum.json", R"({"name": "bignum", "model": {"params": [{"name": "w", "shape": [4]}]}, "optimizer": {"lr": 1e400}})");
  r = run("run " + big);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("bignum.json: at /optimizer/lr: expected a number within the range of a double"), std::string::npos) << r.output;
  const auto giant = write_temp("giant.json", R"({"name": "giant", "model": {"params": [{"name": "w", "shape": [2147483648, 2147483648, 2147483648, 2147483648]}]}})");
  r = run("run " + giant);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("giant.json: at /model/params/0/shape/0: expected a positive integer dimension"), std::string::npos) << r.output;
  for (const auto* out : {&r}) EXPECT_EQ(out->output.find("internal"), std::string::npos) << out->output;
}

TEST(MuoncheckCli, UnwritableReportFailsBeforeTheSuiteRuns) {
  const auto file = write_temp("not-a-folder", "x");
  const auto r = run("check stage0-basic --report " + file + "/latest.json");
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find(file + "/latest.json: cannot create its folder"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Not a directory"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("stage0-basic  ("), std::string::npos) << "the suite ran first:\n" << r.output;
}

// verify reports every scenario it was given: one without a trace is an ERROR row naming it, and
// the run is not OK (a scenario given and not judged is not a pass).
TEST(MuoncheckCli, VerifyWithAGivenScenarioAndNoTraceIsAnErrorNamingIt) {
  const auto dir = std::filesystem::temp_directory_path() / ("muoncheck-untraced-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string trace = (dir / "stage0-basic.trace.json").string();
  ASSERT_EQ(run("run stage0-basic --write-trace " + trace).exit_code, 0);
  const auto both = run("verify stage0-basic four-square-clip --min-executed 0.3 --trace " + trace);
  EXPECT_EQ(both.exit_code, 1) << both.output;
  EXPECT_NE(both.output.find("four-square-clip"), std::string::npos) << both.output;
  EXPECT_NE(both.output.find("no trace for this scenario"), std::string::npos) << both.output;
  const auto one = run("verify stage0-basic --min-executed 0.3 --trace " + trace);   // the control: its one scenario traced
  EXPECT_EQ(one.exit_code, 0) << one.output;
  EXPECT_EQ(one.output.find("no trace for this scenario"), std::string::npos) << one.output;
  std::filesystem::remove_all(dir);
}
