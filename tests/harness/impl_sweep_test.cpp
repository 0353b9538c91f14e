// The sweep against another implementation, with our own engine behind the CaseRunner (what a
// resident worker gives for DeepSpeed): with a fault switched on it finds the fault, confirms it
// in float128, shrinks it to a case that keeps the feature the fault needs and saves the case and
// its trace; the correct engine passes the same cases; an implementation that raises is grouped
// into one ERROR defect shrunk to the smallest stage that raises; declines are counted by feature.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "core/scenario_io.hpp"
#include "harness/external/deepspeed_region.hpp"
#include "harness/sweep/impl_sweep.hpp"
#include "harness/traces/trace_observation.hpp"
#include "properties/generators/focus.hpp"

namespace muoncheck {
namespace {

CaseRunner our_engine(std::vector<std::string> faults) {
  return [faults](const Scenario& s) {
    impl::ImplOptions o;
    o.faults = faults;
    return trace_from_observation(s, observation_of(impl::run_impl(s, o)), faults, 0);
  };
}

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
  const auto gen = external::deepspeed_scenario(generators::focus_for_fault("clip-muon-update"), 1);
  const ImplSweepResult r = run_impl_sweep(options("impl-sweep-fault", 5), gen, our_engine({"clip-muon-update"}));
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
      run_impl_sweep(once, rc::gen::just(saved), our_engine({}));
  EXPECT_TRUE(clean.failures.empty()) << clean.failures.front().message;
}

TEST(ImplSweep, theCorrectEnginePassesTheSameCases) {
  const auto gen = external::deepspeed_scenario(generators::focus_for_fault("clip-muon-update"), 1);
  const ImplSweepResult r = run_impl_sweep(options("impl-sweep-clean", 5), gen, our_engine({}));
  EXPECT_EQ(r.cases_run, 5);
  EXPECT_TRUE(r.failures.empty()) << r.failures.front().message;
}

TEST(ImplSweep, errorsGroupIntoOneDefectAndDeclinesAreCountedByFeature) {
  const CaseRunner raising = [](const Scenario& s) {
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
  const ImplSweepResult r = run_impl_sweep(o, external::deepspeed_scenario({}, 1), raising);
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

}  // namespace
}  // namespace muoncheck
