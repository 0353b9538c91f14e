// Golden digests notice any change of the trajectory and say where; a changed
// scenario is reported as stale with the command that regenerates it.
#include <gtest/gtest.h>

#include "core/scenario_io.hpp"
#include "harness/golden.hpp"
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

}  // namespace
}  // namespace muoncheck
