// Golden digests notice any change of the trajectory and say where; a changed
// scenario is reported as stale with the command that regenerates it.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/scenario_io.hpp"
#include "harness/golden/golden_digest.hpp"
#include "harness/golden/golden_check.hpp"
#include "oracle/oracle.hpp"

namespace muoncheck {
namespace {

Scenario tiny() {
  return parse_scenario(nlohmann::json::parse(R"({"name": "tiny", "steps": 2,
    "model": {"params": [{"name": "w", "shape": [4, 8]}, {"name": "n", "shape": [8]}]}})"), "scenarios/tiny.json");
}

TEST(Golden, IdenticalDigestsCompareEqual) {
  const auto s = tiny();
  const auto t = oracle::run_oracle(s, oracle::Precision::float64);
  const auto d = golden::digest(s, t, "double");
  const auto c = golden::compare(d, d);
  EXPECT_TRUE(c.ok) << c.message;
  EXPECT_EQ(c.worst_relative, 0.0);
}

TEST(Golden, OneChangedWeightIsFoundAndLocated) {
  const auto s = tiny();
  auto t = oracle::run_oracle(s, oracle::Precision::float64);
  const auto want = golden::digest(s, t, "double");
  t.steps[1].params[0].weight[7] += 1e-9;
  const auto c = golden::compare(want, golden::digest(s, t, "double"));
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.message.find("step 1 param 0"), std::string::npos) << c.message;
}

TEST(Golden, ChangedScenarioIsStaleWithAHint) {
  const auto s = tiny();
  auto s2 = s;
  s2.optimizer.lr = 0.03;
  const auto c = golden::compare(golden::digest(s, oracle::run_oracle(s, oracle::Precision::float64), "double"),
                                 golden::digest(s2, oracle::run_oracle(s2, oracle::Precision::float64), "double"));
  EXPECT_FALSE(c.ok);
  EXPECT_TRUE(c.stale);
  EXPECT_NE(golden::regenerate_hint(s).find("muoncheck golden update scenarios/tiny.json"), std::string::npos);
}

// Bad input: a golden file is read bounded like every input; a hostile one fails that
// golden check with the file and JSON path, and never crashes the suite.
TEST(Golden, HostileGoldenFileFailsItsCheckWithFileAndPath) {
  const auto dir = std::filesystem::temp_directory_path() / ("muoncheck-golden-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto s = tiny();
  const auto exact = oracle::run_oracle(s, oracle::Precision::float128);
  const auto path = golden::golden_path(dir.string(), s);
  std::ofstream(path) << R"({"format": "muoncheck-golden", "steps": [{"loss": 1e400}]})";
  auto c = check_against_golden(s, dir.string(), &exact);
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.message.rfind(path + ": at /steps/0/loss: expected a number within the range of a double", 0), 0u) << c.message;
  std::ofstream(path) << "{\"a\": " + std::string(60000, '[') + std::string(60000, ']') + "}";
  c = check_against_golden(s, dir.string(), &exact);
  EXPECT_FALSE(c.ok);
  EXPECT_NE(c.message.find("nested at most 64 deep"), std::string::npos) << c.message;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace muoncheck
