// The sweep against another implementation, with our own engine behind the CaseRunner (what a
// resident worker gives for DeepSpeed): with a fault switched on it finds the fault, confirms it
// in float128, shrinks it to a case that keeps the feature the fault needs and saves the case and
// its trace; the correct engine passes the same cases; an implementation that raises is grouped
// into one ERROR defect shrunk to the smallest stage that raises; declines are counted by feature;
// three runners side by side give the record one runner gives.
#include <cmath>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <filesystem>

#include "core/scenario_io.hpp"
#include "properties/generators/scenario_gen.hpp"
#include "harness/sweep/symptom.hpp"
#include "harness/sweep/impl_sweep.hpp"
#include "harness/sweep/impl_sweep_report.hpp"
#include "harness/traces/trace_observation.hpp"
#include "properties/generators/focus.hpp"
#include "tests/harness/engine_as_implementation.hpp"

namespace muoncheck {
namespace {

ImplSweepOptions options(const std::string& dir, int cases) {
  ImplSweepOptions o;
  o.impl = "ours";
  o.cases = cases;
  o.seed = 1;
  o.cases_dir = (std::filesystem::path(::testing::TempDir()) / dir).string();
  o.max_shrink_judgements = 25;
  o.max_shrink_seconds = 60;
  return o;
}

bool has(const std::vector<std::string>& v, const std::string& prefix) {
  return std::any_of(v.begin(), v.end(), [&](const auto& x) { return x.rfind(prefix, 0) == 0; });
}

TEST(ImplSweep, findsConfirmsAndShrinksAFaultKeepingTheFeatureItNeeds) {
  const auto gen = deepspeed_scenario(generators::focus_for_fault("clip-muon-update"), 1);
  const ImplSweepResult r = run_impl_sweep(options("impl-sweep-fault", 5), gen, {our_engine({"clip-muon-update"})});
  ASSERT_FALSE(r.failures.empty());
  ASSERT_FALSE(r.defects.empty());
  const ImplDefect& d = r.defects.front();
  EXPECT_FALSE(d.error);
  EXPECT_TRUE(has(d.features, "clip")) << "the minimal case dropped the clipping the fault needs";
  EXPECT_LE(d.shrunk_size.elements, d.original_size.elements);
  EXPECT_GT(d.shrink_steps, 0);
  EXPECT_TRUE(std::filesystem::exists(d.path));
  EXPECT_TRUE(std::filesystem::exists(d.path.substr(0, d.path.size() - 5) + ".trace.json"));
  int grouped = 0;
  for (const auto& f : r.failures) grouped += f.defect >= 0;
  int occurrences = 0;
  for (const auto& x : r.defects) occurrences += x.occurrences;
  EXPECT_EQ(grouped, occurrences);
  // Not noise: the correct engine passes the saved minimal case.
  const Scenario saved = load_scenario(d.path);
  ImplSweepOptions once = options("impl-sweep-fault-clean", 1);
  const ImplSweepResult clean =
      run_impl_sweep(once, rc::gen::just(saved), {our_engine({})});
  EXPECT_TRUE(clean.failures.empty()) << clean.failures.front().message;
}

TEST(ImplSweep, theCorrectEnginePassesTheSameCases) {
  const auto gen = deepspeed_scenario(generators::focus_for_fault("clip-muon-update"), 1);
  const ImplSweepResult r = run_impl_sweep(options("impl-sweep-clean", 5), gen, {our_engine({})});
  EXPECT_EQ(r.cases_run, 5);
  EXPECT_TRUE(r.failures.empty()) << r.failures.front().message;
}

TEST(ImplSweep, errorsGroupIntoOneDefectAndDeclinesAreCountedByFeature) {
  const CaseRunner raising = [](const Scenario& s, const FixSet&) {
    Trace t = trace_from_observation(s, observation_of(impl::run_impl(s)), {}, 0);
    if (s.engine.gas > 2) {
      t.unsupported = "engine.gas " + std::to_string(s.engine.gas) + ": not here";
      t.steps.clear();
    } else if (s.engine.stage >= 2) {
      t.error = "RuntimeError: size of tensor a must match b";
      t.steps.clear();
    }
    return t;
  };
  ImplSweepOptions o = options("impl-sweep-errors", 12);
  const ImplSweepResult r = run_impl_sweep(o, deepspeed_scenario({}, 1), {raising});
  int declined = 0;
  for (const auto& [feature, n] : r.declines_by_feature) {
    EXPECT_EQ(feature.rfind("engine.gas ", 0), 0u) << feature;
    declined += n;
  }
  EXPECT_EQ(declined, r.declined);
  ASSERT_GT(r.errors, 0) << "seed 1 draws no stage-2/3 case within gas <= 2";
  ASSERT_EQ(r.defects.size(), 1u);
  const ImplDefect& d = r.defects.front();
  EXPECT_TRUE(d.error);
  EXPECT_EQ(d.shrunk.engine.stage, 2) << "shrunk to the smallest stage that raises";
  EXPECT_EQ(d.occurrences, r.errors);
}

// Past --max-defects no failure is lost: one with the defect's lead symptom and every feature of
// its minimal case (stage and dtype included) is attributed to it; any other is unattributed and
// saved with a repro line whose case file exists.
TEST(ImplSweep, pastTheDefectCapEveryFailureIsAttributedOrListedWithItsRepro) {
  const CaseRunner raising = [](const Scenario& s, const FixSet&) {
    Trace t = trace_from_observation(s, observation_of(impl::run_impl(s)), {}, 0);
    if (s.engine.stage == 2) t.error = "RuntimeError: size of tensor a (" + std::to_string(s.steps) + ") must match b";
    else if (s.engine.stage == 3) t.error = "ValueError: another defect";
    else return t;
    t.steps.clear();
    return t;
  };
  ImplSweepOptions o = options("impl-sweep-cap", 30);
  o.max_defects = 1;
  const ImplSweepResult r = run_impl_sweep(o, deepspeed_scenario({}, 1), {raising});
  ASSERT_EQ(r.defects.size(), 1u);
  int attributed = 0, unattributed = 0;
  for (const auto& f : r.failures) {
    ASSERT_FALSE(f.symptoms.empty());
    const bool same_kind = f.symptoms.front() == r.defects.front().symptom &&
                           std::all_of(r.defects.front().features.begin(), r.defects.front().features.end(),
                                       [&](const auto& x) { return has(f.features, x); });
    if (f.defect == 0) {
      ++attributed;
      EXPECT_TRUE(same_kind) << f.symptoms.front();
    } else {
      ++unattributed;
      EXPECT_FALSE(same_kind) << "a failure of the defect's kind was left unattributed: " << f.symptoms.front();
      EXPECT_EQ(f.repro.rfind("muoncheck repro ", 0), 0u) << f.repro;
      const std::string path = f.repro.substr(16, f.repro.find(" --for") - 16);
      EXPECT_TRUE(std::filesystem::exists(path)) << path;
    }
  }
  EXPECT_EQ(attributed, r.defects.front().occurrences);
  EXPECT_GT(attributed, 1) << "seed 1 draws more than one case of the first error's stage";
  EXPECT_GT(unattributed, 0) << "seed 1 draws no case of the other error's stage";
}

// `--workers 3` against `--workers 1`, same seed: a faulty engine (so there are failures and a
// defect to shrink) that also declines gas > 2 (so there are declines). Shrinking is bounded by
// judgements only, so both shrink the same path.
TEST(ImplSweep, threeRunnersSideBySideGiveTheRecordOneRunnerGives) {
  const CaseRunner faulty = [engine = our_engine({"clip-muon-update"})](const Scenario& s, const FixSet&) {
    if (s.engine.gas > 2) {
      Trace t = engine(s, {});
      t.unsupported = "engine.gas " + std::to_string(s.engine.gas) + ": not here";
      t.steps.clear();
      return t;
    }
    return engine(s, {});
  };
  const auto gen = deepspeed_scenario(generators::focus_for_fault("clip-muon-update"), 1);
  ImplSweepOptions o = options("impl-sweep-workers", 8);
  o.max_shrink_seconds = 1e6;
  Concurrency one, three;
  const ImplSweepResult r1 = run_impl_sweep(o, gen, {one.wrap(faulty)});
  const ImplSweepResult r3 = run_impl_sweep(o, gen, {three.wrap(faulty), three.wrap(faulty), three.wrap(faulty)});
  EXPECT_EQ(one.most.load(), 1);
  EXPECT_GE(three.most.load(), 2) << "the three runners never ran cases at the same time";
  EXPECT_EQ(r1.workers, 1);
  EXPECT_EQ(r3.workers, 3);
  ASSERT_FALSE(r1.failures.empty());
  ASSERT_FALSE(r1.defects.empty());
  EXPECT_GT(r1.defects.front().shrink_steps, 0);
  EXPECT_GT(r1.declined, 0) << "seed 1 draws no case with gas > 2";
  EXPECT_EQ(r1.counts.executed, r3.counts.executed);
  EXPECT_EQ(r1.counts.verdicts, r3.counts.verdicts);
  EXPECT_EQ(record_without_timings(o, r1).dump(1), record_without_timings(o, r3).dump(1));
}

// The symptom reads the failing verdict's worst-case record, whatever its message says.
TEST(FailureSymptom, namesTheTensorAndItsRoleTheMiscountAndTheStages) {
  Scenario s;
  s.model.params = {{"l0.mlp.up_proj.weight", {4, 3}, {}}, {"l0.norm.weight", {4}, {}}, {"l2.conv.weight", {2, 3, 3, 3}, {}}};
  auto band = [](int step, std::string param, std::string tensor) {
    WorstCase w;
    w.step = step, w.param = std::move(param), w.tensor = std::move(tensor), w.error = 9.84, w.band = 4e-8;
    return Verdict::located("trajectory-conforms", 1e9, 1.0, w, "worst at ");
  };
  auto count = [](std::string param, double have, double want, std::string note) {
    WorstCase w;
    w.measure = WorstCase::Measure::count;
    w.step = 0, w.param = std::move(param), w.tensor = "NS calls", w.error = have, w.band = want, w.note = std::move(note);
    return Verdict::located("ns-once-per-matrix-per-step", 1, 0, w);
  };
  EXPECT_EQ(verdict_symptom(s, band(0, "l0.mlp.up_proj.weight", "momentum")), "trajectory-conforms: momentum of a Muon matrix");
  EXPECT_EQ(verdict_symptom(s, band(2, "l0.norm.weight", "weight")), "trajectory-conforms: weight of an AdamW param");
  EXPECT_EQ(verdict_symptom(s, band(1, "l2.conv.weight", "momentum (not exported by the implementation)")),
            "trajectory-conforms: momentum (not exported by the implementation) of a Muon weight of rank 4");
  EXPECT_EQ(verdict_symptom(s, count("q", 1, 0, "skipped step")), "ns-once-per-matrix-per-step: NS on a skipped step");
  EXPECT_EQ(verdict_symptom(s, count("q", 0, 1, "")), "ns-once-per-matrix-per-step: NS call missing");
  EXPECT_EQ(verdict_symptom(s, count("q", 2, 1, "")), "ns-once-per-matrix-per-step: NS call extra");
  EXPECT_EQ(verdict_symptom(s, count("", 3, 0, "tied to no param")), "ns-once-per-matrix-per-step: NS calls tied to no param");
  WorstCase d;
  d.measure = WorstCase::Measure::difference;
  d.step = 1, d.param = "l0.norm.weight", d.error = 0.2, d.band = 0.01;
  d.compared = "stage 0, dp 1 × gas 1 × mb 1, buckets 5/5 vs stage 1, dp 1 × gas 1 × mb 1, buckets 5/5";
  d.kind = "stage 0 vs stage 1";
  EXPECT_EQ(verdict_symptom(s, Verdict::located("stage-invariant", 20, 1, d)), "stage-invariant: stage 0 vs stage 1");
  EXPECT_EQ(verdict_symptom(s, Verdict::located("gas-invariant", 20, 1, d)), "gas-invariant");
  EXPECT_EQ(verdict_symptom(s, Verdict::judge("trajectory-conforms", INFINITY, 1, "the implementation failed: x")),
            "trajectory-conforms");
  EXPECT_EQ(error_symptom("RuntimeError: The size of tensor a (36) must match the size of tensor b (3)"),
            "ERROR: RuntimeError: The size of tensor a (N) must match the size of tensor b (N)");
}

}  // namespace
}  // namespace muoncheck
