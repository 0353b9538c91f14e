// The sweep's property as a RapidCheck test: a generated scenario passes every
// single-scenario invariant and the relational ones (gas/dp/stage/bucket invariance),
// judged with the double oracle and confirmed in float128. Also: same seed, same cases.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "core/scenario_io.hpp"
#include "harness/sweep/sweep_runner.hpp"
#include "harness/judge/judge_scenario.hpp"
#include "properties/generators/scenario_gen.hpp"
#include "tests/properties/bounded_property.hpp"

namespace muoncheck {
namespace {

// The invariants that fail on `s` with the double oracle and again in float128.
std::set<std::string> confirmed_failures(const Scenario& s, std::string& message) {
  JudgeOptions quick;
  quick.precision = oracle::Precision::float64;
  std::set<std::string> suspects;
  for (const auto& v : judge_scenario(s, quick).verdicts)
    if (v.status == Status::fail) suspects.insert(v.invariant);
  if (suspects.empty()) return {};
  JudgeOptions sure;
  sure.only = suspects;
  std::set<std::string> confirmed;
  for (const auto& v : judge_scenario(s, sure).verdicts)
    if (v.status == Status::fail) confirmed.insert(v.invariant), message += v.invariant + ": " + v.message + "; ";
  return confirmed;
}

MUONCHECK_RC_PROP(Sweep, everyGeneratedScenarioPassesEveryInvariant, 8) {
  Scenario s = *generators::scenario();
  s.name = "rc-generated";
  std::string message;
  const auto failed = confirmed_failures(s, message);
  if (!failed.empty()) RC_FAIL(message + "scenario: " + scenario_to_json(s).dump());
}

TEST(Sweep, drawsTheSameCasesFromTheSameSeed) {
  for (int i = 0; i < 5; ++i) {
    const auto a = scenario_to_json(sweep_case(7, i, {}, "c"));
    EXPECT_EQ(a, scenario_to_json(sweep_case(7, i, {}, "c"))) << "case " << i;
    EXPECT_NE(a, scenario_to_json(sweep_case(8, i, {}, "c"))) << "case " << i << " of seeds 7 and 8";
  }
}

}  // namespace
}  // namespace muoncheck
