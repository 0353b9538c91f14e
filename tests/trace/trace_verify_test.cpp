// The trace format and `muoncheck verify`: our own implementation's traces survive the JSON
// round trip and verify clean; a hand-broken trace fails with the invariant that names the
// break (an extra NS call, a wrong tag, perturbed weights, momentum moved on a skipped step).
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "core/error.hpp"
#include "core/scenario_io.hpp"
#include "harness/traces/trace_observation.hpp"
#include "harness/judge/verify_traces.hpp"
#include "impl/run_impl.hpp"

namespace muoncheck {
namespace {

Scenario shipped(const std::string& name) { return load_scenario("scenarios/" + name + ".json"); }

// Our implementation's trace of a scenario, through the JSON writer and reader.
Trace own_trace(const Scenario& s, const std::string& file) {
  auto j = trace_to_json(trace_from_observation(s, observation_of(impl::run_impl(s)), {}, 0));
  return trace_from_json(j, file);
}

// Built once: the CPU implementation at dp 2 takes a few seconds per scenario.
struct Traces {
  Scenario gas4 = shipped("two-layer-gas4-z2"), gas1 = shipped("two-layer-gas1-z2"), fp16 = shipped("fp16-overflow");
  Trace t_gas4 = own_trace(gas4, "gas4.trace.json"), t_gas1 = own_trace(gas1, "gas1.trace.json"),
        t_fp16 = own_trace(fp16, "fp16.trace.json");
};
const Traces& traces() {
  static const Traces t;
  return t;
}

std::map<std::string, Verdict> verdicts(const std::vector<Scenario>& given, const std::vector<Trace>& ts, size_t which = 0) {
  VerifyOptions o;
  o.precision = oracle::Precision::float64;
  const auto results = verify_traces(match_traces(given, ts), o);
  std::map<std::string, Verdict> out;
  for (const auto& v : results.at(which).verdicts) out[v.invariant] = v;
  return out;
}

// Every verdict passes or is skipped, but the relational ones whose variant traces were not
// given (UNSUPPORTED naming the variant) and those in `unsupported`.
void expect_clean(const std::map<std::string, Verdict>& v, const std::set<std::string>& unsupported = {}) {
  for (const auto& [id, verdict] : v) {
    const bool variant_missing = verdict.status == Status::unsupported &&
                                 (verdict.message.find("no trace of variant") != std::string::npos ||
                                  verdict.message.find("no second trace") != std::string::npos);
    if (unsupported.count(id)) EXPECT_EQ(verdict.status, Status::unsupported) << id << ": " << verdict.message;
    else EXPECT_TRUE(verdict.status == Status::pass || verdict.status == Status::skipped || variant_missing)
        << id << ": " << verdict.message;
  }
}

// A trace whose NS calls are the per-param counts only (as a /1 trace, or an adapter that
// cannot tell ranks apart), so a test can change the counts.
Trace counts_only(Trace t) {
  for (auto& s : t.steps) s.ns_events.reset();
  return t;
}

TEST(TraceFormat, roundTripsThroughJsonIncludingNonFiniteValues) {
  Trace t = traces().t_gas4;
  t.steps[0].params[0].weight[3] = INFINITY;
  t.steps[0].params[0].weight[4] = -INFINITY;
  t.steps[0].params[0].weight[5] = NAN;
  const auto j = trace_to_json(t);
  const auto back = trace_from_json(j, "x.trace.json");
  EXPECT_EQ(trace_to_json(back), j);
  EXPECT_TRUE(std::isnan(back.steps[0].params[0].weight[5]));
  EXPECT_EQ(back.steps[0].params[0].weight[4], -INFINITY);
  EXPECT_EQ(back.steps[1].params[1].weight, t.steps[1].params[1].weight);   // doubles survive exactly
  EXPECT_EQ(j.at("format"), kTraceFormat);
}

// An overflowed step's loss is non-finite; the adapters write it as the elements are written (the
// 0.19.6 DeepSpeed sweep lost a case to a bare `Infinity`, then to a reader that wanted a number).
TEST(TraceFormat, aNonFiniteLossTravelsAsTheElementsDo) {
  Trace t = traces().t_gas4;
  t.steps[0].loss = INFINITY;
  t.steps[1].loss = NAN;
  const auto j = trace_to_json(t);
  EXPECT_EQ(j["steps"][0]["loss"], "inf");
  const auto back = trace_from_json(j, "x.trace.json");
  EXPECT_EQ(back.steps[0].loss, INFINITY);
  EXPECT_TRUE(back.steps[1].loss && std::isnan(*back.steps[1].loss));
  auto wrong = j;
  wrong["steps"][0]["loss"] = "Infinity";
  EXPECT_THROW(trace_from_json(wrong, "x.trace.json"), Error);
}

TEST(TraceFormat, rejectsAnotherFormatVersionAndUnknownKeys) {
  auto j = trace_to_json(traces().t_gas4);
  auto wrong = j;
  wrong["format"] = "muoncheck-trace/3";
  EXPECT_THROW(trace_from_json(wrong, "x"), Error);
  auto unknown = j;
  unknown["steps"][0]["ns_call"] = 1;
  try {
    trace_from_json(unknown, "x.trace.json");
    FAIL() << "an unknown key was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    EXPECT_NE(std::string(e.what()).find("/steps/0/ns_call"), std::string::npos) << e.what();
  }
  auto short_counts = j;
  short_counts["steps"][1]["ns_calls"] = nlohmann::json::array({1});
  EXPECT_THROW(trace_from_json(short_counts, "x"), Error);
}

TEST(Verify, ourImplementationsTracesVerifyClean) {
  const auto& t = traces();
  const auto v = verdicts({t.gas4, t.gas1}, {t.t_gas4, t.t_gas1});
  expect_clean(v);
  EXPECT_EQ(v.at("trajectory-conforms").status, Status::pass);
  EXPECT_EQ(v.at("ns-once-per-matrix-per-step").status, Status::pass);
  EXPECT_EQ(v.at("tagging-matches").status, Status::pass);
  EXPECT_EQ(v.at("gas-invariant").status, Status::pass) << v.at("gas-invariant").message;
}

TEST(Verify, ourFp16OverflowTraceSkipsCleanly) {
  const auto& t = traces();
  const auto v = verdicts({t.fp16}, {t.t_fp16});
  expect_clean(v);
  EXPECT_EQ(v.at("overflow-skip-clean").status, Status::pass) << v.at("overflow-skip-clean").message;
}

TEST(Verify, anExtraNsCallFailsNsOncePerMatrixPerStep) {
  const auto& t = traces();
  Trace broken = counts_only(t.t_gas4);
  broken.steps[1].ns_calls[0] += 1;
  const auto v = verdicts({t.gas4}, {broken});
  EXPECT_EQ(v.at("ns-once-per-matrix-per-step").status, Status::fail);
  EXPECT_NE(v.at("ns-once-per-matrix-per-step").message.find("step 1 param layers.0.weight: 2 NS calls"), std::string::npos)
      << v.at("ns-once-per-matrix-per-step").message;
  EXPECT_EQ(v.at("trajectory-conforms").status, Status::pass);
}

TEST(Verify, anUnattributedNsCallFails) {
  const auto& t = traces();
  Trace broken = counts_only(t.t_gas4);
  broken.steps[0].ns_unattributed = 1;
  EXPECT_EQ(verdicts({t.gas4}, {broken}).at("ns-once-per-matrix-per-step").status, Status::fail);
}

TEST(Verify, aWrongTagFailsTaggingMatches) {
  const auto& t = traces();
  Trace broken = t.t_gas4;
  broken.tags[1].use_muon = false;   // as every rank decided it
  ASSERT_TRUE(broken.tags_by_rank.has_value());
  for (auto& tags : *broken.tags_by_rank) tags[1].use_muon = false;
  const auto v = verdicts({t.gas4}, {broken});
  EXPECT_EQ(v.at("tagging-matches").status, Status::fail);
  EXPECT_NE(v.at("tagging-matches").message.find("layers.1.weight: adamw, expected muon"), std::string::npos)
      << v.at("tagging-matches").message;
}

TEST(Verify, perturbedWeightsFailTrajectoryConformsAndGasInvariant) {
  const auto& t = traces();
  Trace broken = t.t_gas4;
  for (auto& w : broken.steps[2].params[1].weight) w *= 1.001;
  const auto v = verdicts({t.gas4, t.gas1}, {broken, t.t_gas1});
  EXPECT_EQ(v.at("trajectory-conforms").status, Status::fail);
  EXPECT_NE(v.at("trajectory-conforms").message.find("step 2 param layers.1.weight weight"), std::string::npos)
      << v.at("trajectory-conforms").message;
  EXPECT_EQ(v.at("gas-invariant").status, Status::fail);
  EXPECT_EQ(v.at("ns-once-per-matrix-per-step").status, Status::pass);
}

TEST(Verify, momentumChangedOnASkippedStepFailsOverflowSkipClean) {
  const auto& t = traces();
  Trace broken = t.t_fp16;
  int skipped = -1;
  for (const auto& s : broken.steps)
    if (s.skipped) skipped = s.step;
  ASSERT_GE(skipped, 1) << "fp16-overflow is expected to skip a step";
  ASSERT_FALSE(broken.steps[skipped].params[0].momentum.empty());
  broken.steps[skipped].params[0].momentum[3] += 1.0 / 64;
  const auto v = verdicts({t.fp16}, {broken});
  EXPECT_EQ(v.at("overflow-skip-clean").status, Status::fail);
  EXPECT_NE(v.at("overflow-skip-clean").message.find("momentum changed on a skipped step"), std::string::npos)
      << v.at("overflow-skip-clean").message;
}

TEST(Verify, aTraceWithoutMomentumIsJudgedOnItsWeights) {
  const auto& t = traces();
  Trace weights_only = t.t_gas4;
  for (auto& s : weights_only.steps)
    for (auto& p : s.params) p.momentum.clear();
  for (auto& p : weights_only.initial) p.momentum.clear();
  const auto v = verdicts({t.gas4}, {weights_only});
  expect_clean(v, {"step-conforms"});   // it starts the oracle from the trace's state, momentum included
  EXPECT_EQ(v.at("step-conforms").message, "the observation does not show momentum");
  EXPECT_EQ(v.at("trajectory-conforms").status, Status::pass) << v.at("trajectory-conforms").message;
}

TEST(Verify, withoutALossScalerMissingCountersAreNotApplicableAndStepConformsIsJudged) {
  const auto& t = traces();
  ASSERT_EQ(t.gas4.loss_scaler.type, ScalerType::none);
  Trace no_counters = t.t_gas4;   // an implementation without a scaler (torch's) reports none
  for (auto& s : no_counters.steps) s.scaler.reset();
  auto v = verdicts({t.gas4}, {no_counters});
  EXPECT_EQ(v.at("scaler-state-exact").status, Status::skipped) << v.at("scaler-state-exact").message;
  EXPECT_NE(v.at("scaler-state-exact").message.find("not applicable"), std::string::npos);
  EXPECT_EQ(v.at("step-conforms").status, Status::pass) << v.at("step-conforms").message;
  for (auto& w : no_counters.steps[1].params[0].weight) w *= 1.001;   // judged, not waved through
  v = verdicts({t.gas4}, {no_counters});
  EXPECT_EQ(v.at("step-conforms").status, Status::fail) << v.at("step-conforms").message;
}

TEST(Verify, withADynamicScalerMissingCountersAreUnsupported) {
  const auto& t = traces();
  ASSERT_EQ(t.fp16.loss_scaler.type, ScalerType::dynamic);
  Trace no_counters = t.t_fp16;
  for (auto& s : no_counters.steps) s.scaler.reset();
  const auto v = verdicts({t.fp16}, {no_counters});
  for (const char* id : {"scaler-state-exact", "step-conforms"}) {
    EXPECT_EQ(v.at(id).status, Status::unsupported) << id << ": " << v.at(id).message;
    EXPECT_EQ(v.at(id).message, "the observation does not show scaler_counters");
  }
}

TEST(Verify, collectivesInsideAShardedNsTravelInTheNsDtypeAndOnlyAtTheBoundary) {
  const auto& t = traces();
  ASSERT_TRUE(t.t_gas4.collectives_by_rank.has_value());
  const DType ns = t.gas4.optimizer.ns_dtype;
  auto with = [&](DType dtype, const std::string& phase) {
    Trace x = t.t_gas4;
    (*x.collectives_by_rank)[0].push_back({"all_gather", "ns_internal", phase, dtype, 64, 64 * dtype_bytes(dtype), 1});
    return verdicts({t.gas4, t.gas1}, {x, t.t_gas1});   // the gas-1 re-split: what gathers-once-per-step counts against
  };
  auto v = with(ns, "boundary");
  EXPECT_EQ(v.at("comm-dtype-respected").status, Status::pass) << v.at("comm-dtype-respected").message;
  EXPECT_NE(v.at("comm-dtype-respected").message.find("ns_internal"), std::string::npos);
  v = with(ns == DType::fp32 ? DType::bf16 : DType::fp32, "boundary");
  EXPECT_EQ(v.at("comm-dtype-respected").status, Status::fail);
  EXPECT_NE(v.at("comm-dtype-respected").message.find("purpose=ns_internal"), std::string::npos)
      << v.at("comm-dtype-respected").message;
  v = with(ns, "micro_step");
  EXPECT_EQ(v.at("gathers-once-per-step").status, Status::fail) << v.at("gathers-once-per-step").message;
}

TEST(Verify, aDeclinedVariantIsNamedWithTheImplementationsReason) {
  const auto& t = traces();
  Trace declined = t.t_gas1;
  declined.unsupported = "engine.stage 1: not mapped";
  declined.steps.clear();
  const auto v = verdicts({t.gas4}, {t.t_gas4, declined});
  EXPECT_EQ(v.at("gas-invariant").status, Status::unsupported);
  EXPECT_NE(v.at("gas-invariant").message.find("declined by the implementation: engine.stage 1: not mapped"), std::string::npos)
      << v.at("gas-invariant").message;
}

TEST(Verify, anUnsupportedTraceIsUnsupportedNotPassed) {
  const auto& t = traces();
  Trace declined = t.t_gas4;
  declined.unsupported = "no per-head Muon in this version";
  declined.steps.clear();
  const auto v = verdicts({t.gas4}, {trace_from_json(trace_to_json(declined), "u.trace.json")});
  for (const auto& [id, verdict] : v) EXPECT_EQ(verdict.status, Status::unsupported) << id;
}

TEST(Verify, aTraceOfAnotherScenarioIsRejected) {
  const auto& t = traces();
  Trace other = t.t_gas4;
  other.scenario_hash = "0123456789abcdef";
  EXPECT_THROW(match_traces({t.gas4}, {other}), Error);
  EXPECT_THROW(match_traces({t.fp16}, {t.t_gas4}), Error);   // neither named nor a re-split of fp16-overflow
}

TEST(Verify, aReSplitTraceIsMatchedThroughItsEmbeddedScenario) {
  const auto& t = traces();
  const auto cases = match_traces({t.gas4}, {t.t_gas4, t.t_gas1});   // gas1 not given: derived
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases[1].scenario.name, "two-layer-gas1-z2");
  EXPECT_EQ(cases[1].given_source, t.gas4.source);
}

}  // namespace
}  // namespace muoncheck
