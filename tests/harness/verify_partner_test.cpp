// A relational verdict judged from traces: a partner run that crashed in the implementation makes
// the relation an ERROR (a failed verdict saying so), never a PASS of the partners that did run.
#include <gtest/gtest.h>

#include "core/scenario_io.hpp"
#include "harness/judge/verify_traces.hpp"
#include "harness/sweep/impl_sweep.hpp"
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
  EXPECT_TRUE(v.partner_crashed) << "the crash is the verdict's data, not only its words";
  EXPECT_FALSE(verdict(clean, "stage-invariant").partner_crashed);
  EXPECT_EQ(v.message.rfind("ERROR: ", 0), 0u) << v.message;
  EXPECT_NE(v.message.find("rank 1 died"), std::string::npos) << v.message;
  EXPECT_FALSE(fails_this_case(v)) << "a sweep blames the crashed partner, not this case";
  // a partner that declined is no crash: the relation is judged on the others, the decline noted
  partners.front().second.error.clear();
  partners.front().second.unsupported = "engine.stage 1: not mapped";
  const auto declined = verify_one_trace(s, traced(s), partners, o);
  EXPECT_EQ(verdict(declined, "stage-invariant").status, Status::pass) << verdict(declined, "stage-invariant").message;
}

// A sweep tells a crashed partner from a failure of the case by the verdict's field, never by its
// words: a failure whose message reads like a crashed partner's still fails the case, and a
// crashed partner's verdict does not, whatever its message says.
TEST(VerifyPartners, aCrashedPartnerIsTheVerdictsFieldNotItsMessage) {
  Verdict lookalike = Verdict::judge("stage-invariant", 1.0, 0.0, "ERROR: the relation cannot hold: stage 0 vs stage 1 differ");
  EXPECT_TRUE(fails_this_case(lookalike));
  Verdict crashed = Verdict::judge("stage-invariant", INFINITY, 0.0, "partner stage 1: RuntimeError");
  crashed.partner_crashed = true;
  EXPECT_FALSE(fails_this_case(crashed));
  EXPECT_FALSE(fails_this_case(Verdict::judge("stage-invariant", 0.0, 0.0, "held")));
}

}  // namespace
}  // namespace muoncheck
