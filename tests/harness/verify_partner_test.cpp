// A relational verdict judged from traces: a partner run that crashed in the implementation makes
// the relation an ERROR (a failed verdict saying so), never a PASS of the partners that did run.
#include <gtest/gtest.h>

#include "core/scenario_io.hpp"
#include "harness/judge/verify_traces.hpp"
#include "harness/traces/trace_observation.hpp"
#include "impl/run_impl.hpp"
#include "properties/observation.hpp"
#include "properties/variants.hpp"

namespace muoncheck {
namespace {

Trace traced(const Scenario& s) { return trace_from_observation(s, observation_of(impl::run_impl(s)), {}, 0); }

const Verdict& verdict(const ScenarioResult& r, const std::string& id) {
  for (const auto& v : r.verdicts)
    if (v.invariant == id) return v;
  throw std::runtime_error("no verdict " + id);
}

TEST(VerifyPartners, aCrashedPartnerMakesTheRelationAnErrorNotAPass) {
  Scenario s = load_scenario("scenarios/stage0-basic.json");
  VerifyOptions o;
  o.precision = oracle::Precision::float64;
  o.only = {"stage-invariant"};
  const auto stages = stage_variants(s);
  ASSERT_GE(stages.size(), 2u);
  std::vector<std::pair<Scenario, Trace>> partners;
  for (const auto& v : stages) partners.emplace_back(v, traced(v));
  // the control: every partner ran, the relation holds
  const auto clean = verify_one_trace(s, traced(s), partners, o);
  EXPECT_EQ(verdict(clean, "stage-invariant").status, Status::pass) << verdict(clean, "stage-invariant").message;
  // one partner crashed (its trace says so), the others ran: ERROR, whatever the others showed
  partners.front().second.error = "RuntimeError: rank 1 died";
  const auto crashed = verify_one_trace(s, traced(s), partners, o);
  const Verdict& v = verdict(crashed, "stage-invariant");
  EXPECT_EQ(v.status, Status::fail) << v.message;
  EXPECT_EQ(v.message.rfind("ERROR: ", 0), 0u) << v.message;
  EXPECT_NE(v.message.find("rank 1 died"), std::string::npos) << v.message;
  // a partner that declined is no crash: the relation is judged on the others, the decline noted
  partners.front().second.error.clear();
  partners.front().second.unsupported = "engine.stage 1: not mapped";
  const auto declined = verify_one_trace(s, traced(s), partners, o);
  EXPECT_EQ(verdict(declined, "stage-invariant").status, Status::pass) << verdict(declined, "stage-invariant").message;
}

}  // namespace
}  // namespace muoncheck
