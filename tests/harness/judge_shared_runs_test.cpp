// A judgement runs each scenario variant through the implementation once and lets every
// invariant that needs it read that run: gathers-once-per-step's gas-1 re-split is the
// scenario gas-invariant already ran. The verdict must be the one a fresh run gives.
#include <gtest/gtest.h>

#include "core/scenario_io.hpp"
#include "harness/judge/judge_scenario.hpp"
#include "properties/event_invariants.hpp"
#include "properties/variants.hpp"

namespace muoncheck {
namespace {

// Two Muon matrices, dp 2 × gas 4 at stage 3: Muon gathers happen, and gas > 1.
Scenario gas4() {
  return parse_scenario(nlohmann::json::parse(R"({"name": "shared-runs", "steps": 2,
      "model": {"params": [{"name": "a", "shape": [6, 4]}, {"name": "b", "shape": [4, 5]}]},
      "engine": {"dp": 2, "gas": 4, "micro_batch": 1, "stage": 3}})"),
                        "shared-runs.json");
}

const Verdict& find(const ScenarioResult& r, const std::string& id) {
  for (const auto& v : r.verdicts)
    if (v.invariant == id) return v;
  throw std::runtime_error("no verdict " + id);
}

TEST(JudgeSharedRuns, GathersOncePerStepFromTheSharedGas1RunEqualsAFreshRun) {
  const Scenario s = gas4();
  const Variant gas1 = gas1_resplit(s), gas_v = gas_variant(s);
  ASSERT_TRUE(gas1.scenario && gas_v.scenario);
  ASSERT_EQ(scenario_to_json(*gas1.scenario), scenario_to_json(*gas_v.scenario)) << "the two variants are one scenario";

  JudgeOptions o;
  o.precision = oracle::Precision::float64;
  o.control_members = 2;
  o.only = {"gas-invariant", "gathers-once-per-step"};
  const ScenarioResult shared = judge_scenario(s, o);
  o.only = {"gathers-once-per-step"};   // nothing ran the variant before: a run of its own
  const ScenarioResult alone = judge_scenario(s, o);

  const Observation base = observation_of(impl::run_impl(s, impl_options(o)));
  const Observation fresh = observation_of(impl::run_impl(*gas1.scenario, impl_options(o)));
  const Trajectory exact = oracle::run_oracle(s, o.precision);
  const ControlEnsemble none;
  const Verdict want = gathers_once_per_step(RunBundle{s, base, exact, none, o.precision}, &fresh);
  ASSERT_EQ(want.status, Status::pass) << want.message;
  for (const ScenarioResult* r : {&shared, &alone}) {
    const Verdict& got = find(*r, "gathers-once-per-step");
    EXPECT_EQ(got.status, want.status);
    EXPECT_EQ(got.metric, want.metric);
    EXPECT_EQ(got.message, want.message);
  }
  EXPECT_EQ(find(shared, "gas-invariant").status, Status::pass) << find(shared, "gas-invariant").message;
}

}  // namespace
}  // namespace muoncheck
