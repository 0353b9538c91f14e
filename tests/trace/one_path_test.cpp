// One judging path: `verify` on the traces of our engine's runs (what `run --write-trace DIR` writes:
// the scenario's run, every variant run and the repeat) executes what `run` executes on those
// runs, with identical verdicts; and every fault of the catalogue is killed through `verify` of
// the faulty traces as it is through `run`.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "core/scenario_io.hpp"
#include "harness/judge/judge_scenario.hpp"
#include "harness/judge/verify_traces.hpp"
#include "harness/traces/trace_observation.hpp"
#include "impl/faults/fault_catalogue.hpp"
#include "properties/invariant_table.hpp"

namespace muoncheck {
namespace {

Scenario shipped(const std::string& name) { return load_scenario("scenarios/" + name + ".json"); }

struct Judged {
  ScenarioResult run, verify;
};

// `run` on `s` with every run it reads written as a trace (through the JSON writer and reader),
// then `verify` of those traces.
Judged run_and_verify(const Scenario& s, const std::vector<std::string>& faults, const std::set<std::string>& only) {
  JudgeOptions o;
  o.precision = oracle::Precision::float64;
  o.faults = faults;
  o.only = only;
  std::vector<Trace> traces;
  o.on_run = [&](const Scenario& v, const Observation& r, int repeat) {
    const std::string file = v.name + (repeat ? ".repeat" : "") + ".trace.json";
    traces.push_back(trace_from_json(trace_to_json(trace_from_observation(v, r, faults, repeat)), file));
  };
  Judged j;
  j.run = judge_scenario(s, o);
  VerifyOptions vo;
  vo.precision = o.precision;
  vo.only = only;
  const auto results = verify_traces(match_traces({s}, traces), vo);
  EXPECT_EQ(results.size(), 1u);
  if (!results.empty()) j.verify = results.front();
  return j;
}

bool executed(const Verdict& v) { return v.status == Status::pass || v.status == Status::fail; }

TEST(OnePath, VerifyOfOurTracesExecutesWhatRunExecutesWithIdenticalVerdicts) {
  int run_executed = 0, verify_executed = 0;
  for (const char* name : {"two-layer-gas4-z3", "fp16-overflow", "per-head-window-z1"}) {
    const auto j = run_and_verify(shipped(name), {}, {});
    ASSERT_EQ(j.run.verdicts.size(), invariant_table().size()) << name;
    ASSERT_EQ(j.verify.verdicts.size(), j.run.verdicts.size()) << name;
    for (size_t i = 0; i < j.run.verdicts.size(); ++i) {
      const auto& a = j.run.verdicts[i];
      const auto& b = j.verify.verdicts[i];
      ASSERT_EQ(a.invariant, b.invariant);
      run_executed += executed(a);
      verify_executed += executed(b);
      if (!executed(a)) continue;
      EXPECT_EQ(status_name(b.status), status_name(a.status)) << name << " " << a.invariant << ": " << b.message;
      EXPECT_EQ(b.metric, a.metric) << name << " " << a.invariant;
    }
  }
  std::printf("run executed %d, verify of the same runs' traces %d\n", run_executed, verify_executed);
  EXPECT_GE(verify_executed * 100, run_executed * 95);
}

TEST(OnePath, EveryCatalogueFaultIsKilledThroughVerifyAsThroughRun) {
  for (const auto& fault : impl::fault_catalogue()) {
    if (!fault.implemented) continue;
    const std::set<std::string> symptoms(fault.symptoms.begin(), fault.symptoms.end());
    bool by_run = false, by_verify = false;
    for (const auto& name : fault.scenarios) {
      const auto j = run_and_verify(shipped(name), {std::string(fault.id)}, symptoms);
      for (const auto& v : j.run.verdicts) by_run = by_run || v.status == Status::fail;
      for (const auto& v : j.verify.verdicts) by_verify = by_verify || v.status == Status::fail;
      if (by_run && by_verify) break;
    }
    EXPECT_TRUE(by_run) << fault.id << ": no symptom failed through run";
    EXPECT_TRUE(by_verify) << fault.id << ": no symptom failed through verify of its traces";
  }
}

}  // namespace
}  // namespace muoncheck
