// Attribution by counterfactual (harness/sweep/attribution.hpp) and the known-defect registry
// (known_defects.hpp): ddmin finds the smallest set of fixes under which a case conforms and shows
// each of its fixes is needed; a case no fix set cures is NEW; a claimed attribution whose fixes
// do not make the case conform is REJECTED; a fix that cannot be applied names its entry; a
// malformed registry entry is an error naming the entry and the field. Then the sweep against an
// implementation (our own engine with planted faults as its defects, removing a fault as the fix):
// failures explained by --known-defects pass, a planted new defect fails, a known defect that no
// longer reproduces fails, and every view says what the exit code says.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <set>
#include <thread>
#include <chrono>

#include "core/error.hpp"
#include "harness/sweep/attribution.hpp"
#include "harness/sweep/impl_sweep.hpp"
#include "harness/sweep/impl_sweep_report.hpp"
#include "harness/sweep/known_defects.hpp"
#include "harness/traces/trace_observation.hpp"
#include "harness/views/junit.hpp"
#include "harness/views/summary_markdown.hpp"
#include "core/scenario_io.hpp"
#include "harness/judge/verify_traces.hpp"
#include "impl/run_impl.hpp"
#include "properties/generators/focus.hpp"
#include "tests/harness/engine_as_implementation.hpp"

namespace muoncheck {
namespace {

using nlohmann::json;

bool contains(const FixSet& s, const std::string& x) { return std::find(s.begin(), s.end(), x) != s.end(); }

// A synthetic implementation whose case conforms exactly when fixes b and d are both applied.
FixRun needs_b_and_d(const FixSet& fixes) {
  FixRun r;
  r.conforms = contains(fixes, "b") && contains(fixes, "d");
  if (!r.conforms) r.failed = {"trajectory-conforms"}, r.message = "trajectory-conforms: off";
  return r;
}

FixRun failing_case() {
  FixRun f;
  f.failed = {"trajectory-conforms"};
  f.message = "trajectory-conforms: off";
  return f;
}

TEST(Attribution, ddminFindsTheSmallestSetAndShowsEachFixIsNeeded) {
  const Attribution a = attribute({"a", "b", "c", "d", "e"}, failing_case(), needs_b_and_d);
  ASSERT_EQ(a.verdict, AttributionVerdict::explained) << a.text();
  EXPECT_EQ(a.fixes, (FixSet{"b", "d"}));
  EXPECT_TRUE(a.minimal);
  auto ran = [&](const FixSet& s, bool conforms) {
    return std::any_of(a.runs.begin(), a.runs.end(), [&](const FixRun& r) {
      return std::is_permutation(r.fixes.begin(), r.fixes.end(), s.begin(), s.end()) && r.conforms == conforms;
    });
  };
  EXPECT_TRUE(ran({"a", "b", "c", "d", "e"}, true)) << "every fix applied first";
  EXPECT_TRUE(ran({"b", "d"}, true));
  EXPECT_TRUE(ran({"b"}, false)) << "the evidence that d is needed";
  EXPECT_TRUE(ran({"d"}, false)) << "the evidence that b is needed";
  EXPECT_EQ(a.text().rfind("explained by b + d: conforms with these fixes", 0), 0u) << a.text();
  const json j = attribution_json(a);
  EXPECT_EQ(j["verdict"], "explained");
  EXPECT_EQ(j["runs"].size(), a.runs.size());
}

TEST(Attribution, anEarlierCasesSetIsTriedFirstAndStillShownMinimal) {
  const FixSet all = {"a", "b", "c", "d", "e", "f", "g", "h"};
  const Attribution cold = attribute(all, failing_case(), needs_b_and_d);
  // A hint that does not apply here, one that does not conform, then a superset of the cause:
  // the superset is reduced to {b, d} with the same evidence ddmin would give, in fewer re-runs.
  const Attribution warm =
      attribute(all, failing_case(), needs_b_and_d, 64, {{"x"}, {"a"}, {"b", "c", "d"}});
  ASSERT_EQ(warm.verdict, AttributionVerdict::explained) << warm.text();
  EXPECT_EQ(warm.fixes, (FixSet{"b", "d"}));
  EXPECT_TRUE(warm.minimal);
  EXPECT_LT(warm.runs.size(), cold.runs.size()) << cold.text() << " / " << warm.text();
  auto ran = [&](const FixSet& s) {
    return std::any_of(warm.runs.begin(), warm.runs.end(), [&](const FixRun& r) { return r.fixes == s; });
  };
  EXPECT_FALSE(ran({"x"})) << "a hint with a fix not applicable here is passed over";
  EXPECT_TRUE(ran({"b"}) && ran({"d"})) << "each fix of the set shown to be needed";
  // Hints that never conform leave ddmin to find the set, past kMaxHintsTried of them.
  const Attribution wrong = attribute(all, failing_case(), needs_b_and_d, 64, {{"a"}, {"c"}, {"e"}, {"f"}});
  EXPECT_EQ(wrong.fixes, (FixSet{"b", "d"}));
  EXPECT_FALSE(std::any_of(wrong.runs.begin(), wrong.runs.end(), [](const FixRun& r) { return r.fixes == FixSet{"f"}; }));
}

TEST(Attribution, fixesWhoseCodeNeverRanAreLeftOutOfTheSearchAndAWrongReportFallsBackToEveryFix) {
  const FixSet all = {"a", "b", "c", "d", "e", "f", "g", "h"};
  // The implementation reports the fixes whose code did not run with every fix applied.
  auto reporting = [](FixSet unused) {
    return FixTrial([unused](const FixSet& fixes) {
      FixRun r = needs_b_and_d(fixes);
      for (const auto& x : unused)
        if (contains(fixes, x)) r.unused.push_back(x);
      return r;
    });
  };
  const Attribution cold = attribute(all, failing_case(), needs_b_and_d);
  const Attribution pruned = attribute(all, failing_case(), reporting({"a", "e", "f", "g", "h"}));
  ASSERT_EQ(pruned.verdict, AttributionVerdict::explained) << pruned.text();
  EXPECT_EQ(pruned.fixes, (FixSet{"b", "d"}));
  EXPECT_TRUE(pruned.minimal);
  EXPECT_LT(pruned.runs.size(), cold.runs.size()) << cold.text() << " / " << pruned.text();
  EXPECT_TRUE(std::none_of(pruned.runs.begin() + 2, pruned.runs.end(), [](const FixRun& r) { return contains(r.fixes, "a"); }))
      << "no set after every fix holds a fix whose code never ran";
  EXPECT_EQ(attribution_json(pruned)["runs"][1]["unused"], json({"a", "e", "f", "g", "h"}));
  // A report that calls b unused is wrong: without b the case fails, and the search starts from every fix.
  const Attribution misreported = attribute(all, failing_case(), reporting({"b", "e"}));
  ASSERT_EQ(misreported.verdict, AttributionVerdict::explained) << misreported.text();
  EXPECT_EQ(misreported.fixes, (FixSet{"b", "d"}));
  EXPECT_TRUE(misreported.minimal);
}

TEST(Attribution, aFixIsUnusedOnlyWhereNoRunOfTheCaseRanItsCodePartnersIncluded) {
  auto traced = [](json unused) {
    Trace t;
    if (!unused.is_null()) t.impl_details["fixes_unused"] = std::move(unused);
    return t;
  };
  CaseRun c;
  c.trace = traced({"a", "b", "c"});
  EXPECT_EQ(unused_in_every_run(c, {"a", "b", "c", "d"}), (FixSet{"a", "b", "c"}));
  c.partners.emplace_back(Scenario{}, traced({"c", "a"}));   // the stage partner ran b's code
  EXPECT_EQ(unused_in_every_run(c, {"a", "b", "c", "d"}), (FixSet{"a", "c"}));
  c.partners.emplace_back(Scenario{}, traced(nullptr));      // a run that does not say: nothing is known unused
  EXPECT_EQ(unused_in_every_run(c, {"a", "b", "c", "d"}), FixSet{});
}

TEST(Attribution, itsReRunsStopAtTheirTimeBoundKeepingASetThatConforms) {
  // Each re-run takes 20 ms (a case that hangs under some fix sets takes its timeout on each).
  const FixTrial slow = [](const FixSet& fixes) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return needs_b_and_d(fixes);
  };
  const FixSet all = {"a", "b", "c", "d", "e", "f", "g", "h"};
  const Attribution bounded = attribute(all, failing_case(), slow, 64, {}, 0.03);
  EXPECT_EQ(bounded.verdict, AttributionVerdict::explained) << bounded.text();
  EXPECT_FALSE(bounded.minimal);
  EXPECT_LE(bounded.runs.size(), 4u) << "the case, every fix, and at most two re-runs within 30 ms";
  EXPECT_NE(bounded.text().find("may not be minimal"), std::string::npos) << bounded.text();
  EXPECT_TRUE(attribute(all, failing_case(), slow, 64, {}, 0).minimal) << "no bound: shown minimal";
}

TEST(Attribution, aCaseDeclinedWithTheFixesIsUndecidedNotNew) {
  // A fix can make a case inexpressible (the plugin declines what then runs): nothing is judged,
  // so the counterfactual shows neither a known cause nor a new one.
  const FixTrial declined_when_fixed = [](const FixSet& fixes) {
    FixRun r;
    if (!fixes.empty()) r.failed = {"UNSUPPORTED"}, r.message = "declined with the fixes: NS normalization";
    return r;
  };
  const Attribution a = attribute({"a", "b"}, failing_case(), declined_when_fixed);
  EXPECT_EQ(a.verdict, AttributionVerdict::fixed_run_declined) << a.text();
  EXPECT_EQ(a.text().rfind("undecided", 0), 0u) << a.text();
  EXPECT_NE(a.text().find("NS normalization"), std::string::npos) << a.text();
  EXPECT_EQ(attribution_json(a)["verdict"], "fixed-run-declined");
}

TEST(Attribution, aCaseNoFixCuresIsNew) {
  const Attribution a = attribute({"a", "c"}, failing_case(), needs_b_and_d);
  EXPECT_EQ(a.verdict, AttributionVerdict::new_defect);
  EXPECT_EQ(a.runs.size(), 2u) << "the case itself and one re-run with every fix";
  EXPECT_EQ(a.text().rfind("NEW", 0), 0u) << a.text();
  EXPECT_EQ(attribute({}, failing_case(), needs_b_and_d).verdict, AttributionVerdict::new_defect);
}

TEST(Attribution, aClaimIsRejectedWhenItsFixesDoNotMakeTheCaseConform) {
  const Attribution wrong = check_claim({"b"}, failing_case(), needs_b_and_d);
  EXPECT_EQ(wrong.verdict, AttributionVerdict::rejected);
  EXPECT_NE(wrong.text().find("REJECTED"), std::string::npos) << wrong.text();
  EXPECT_EQ(check_claim({"d", "b"}, failing_case(), needs_b_and_d).verdict, AttributionVerdict::confirmed);
}

TEST(Attribution, aFixThatCannotBeAppliedIsItsOwnVerdictNamingTheEntry) {
  const FixTrial stale = [](const FixSet& fixes) {
    FixRun r = needs_b_and_d(fixes);
    if (contains(fixes, "c")) r.conforms = false, r.fix_error = "known defect c: target gone";
    return r;
  };
  const Attribution a = attribute({"a", "b", "c", "d"}, failing_case(), stale);
  EXPECT_EQ(a.verdict, AttributionVerdict::fix_does_not_apply);
  EXPECT_NE(a.text().find("known defect c"), std::string::npos) << a.text();
}

// ---- the registry

std::string write(const std::string& name, const json& j) {
  const auto path = std::filesystem::path(::testing::TempDir()) / name;
  std::ofstream(path) << j.dump(2);
  return path.string();
}

json entry() {
  return {{"id", "clip-over-muon-update"},
          {"title", "t"},
          {"report", "ours"},
          {"versions", {"v1"}},
          {"fix", {{"kind", "fault"}, {"from", "ours"}, {"target", "clip-muon-update"}}},
          {"invariants", {"trajectory-conforms"}},
          {"witness", std::filesystem::absolute("scenarios/four-square-clip.json").string()}};
}

json registry(json entries) {
  return {{"format", "muoncheck-known-defects/1"}, {"implementation", "muoncheck"}, {"defects", entries}};
}

void expect_bad(json e, const std::string& field, const std::string& expected_text) {
  const std::string path = write("bad-registry.json", registry(json::array({entry(), e})));
  try {
    load_known_defects(path);
    FAIL() << "accepted a registry with a bad " << field;
  } catch (const Error& err) {
    const std::string what = err.what();
    EXPECT_EQ(err.kind(), ErrorKind::BadInput);
    EXPECT_NE(what.find(path), std::string::npos) << what;
    EXPECT_NE(what.find("/defects/1 (id '" + e.value("id", std::string()) + "')"), std::string::npos) << "names the entry: " << what;
    EXPECT_NE(what.find(field), std::string::npos) << what;
    EXPECT_NE(what.find(expected_text), std::string::npos) << what;
  }
}

TEST(KnownDefects, loadsAndSaysWhatLivesInAVersion) {
  json other = entry();
  other["id"] = "other";
  other["versions"] = {"v0", "v2"};
  const KnownDefects k = load_known_defects(write("good-registry.json", registry(json::array({entry(), other}))));
  ASSERT_EQ(k.defects.size(), 2u);
  EXPECT_EQ(k.applicable("v1"), (FixSet{"clip-over-muon-update"}));
  EXPECT_EQ(k.applicable("v2"), (FixSet{"other"}));
  EXPECT_EQ(k.find("other")->fix.target, "clip-muon-update");
}

TEST(KnownDefects, aMalformedEntryIsAnErrorNamingTheEntryAndTheField) {
  json e = entry();
  e["id"] = "x1";
  e.erase("versions");
  expect_bad(e, "versions", "required");
  e = entry(), e["id"] = "x2", e["invariants"] = {"no-such-invariant"};
  expect_bad(e, "invariants", "no-such-invariant");
  e = entry(), e["id"] = "x3", e["fix"]["target"] = "no-such-fault";
  expect_bad(e, "target", "a fault of the catalogue");
  e = entry(), e["id"] = "x4", e["fix"] = {{"kind", "replacement"}, {"from", "upstream"}, {"target", "m:f"}};
  expect_bad(e, "pr", "upstream pull request");
  e = entry(), e["id"] = "x5", e["witness"] = "nowhere.json";
  expect_bad(e, "witness", "does not exist");
  e = entry(), e["id"] = "x8", e["fix"] = {{"kind", "replacement"}, {"from", "ours"}, {"target", "m:f"}};
  expect_bad(e, "replacement", "module:attribute");
  e = entry(), e["id"] = "x9",
  e["fix"] = {{"kind", "replacement"}, {"from", "ours"}, {"target", "m:f"}, {"replacement", "r:g"}, {"bound_as", {"no-colon"}}};
  expect_bad(e, "bound_as", "module:attribute names");
  e = entry(), e["id"] = "x10", e["fix"]["bound_as"] = {"m:f"};   // a fault is no replacement
  expect_bad(e, "bound_as", "nothing for a fix of kind fault");
  e = entry(), e["id"] = "x6", e["fix"]["kind"] = "magic";
  expect_bad(e, "kind", "one of");
  e = entry(), e["id"] = "x7", e["colour"] = "red";
  expect_bad(e, "colour", "");
  e = entry(), e["id"] = "x11", e["devices"] = {"tpu"};
  expect_bad(e, "devices", "\"cpu\" or \"cuda\"");
  e = entry();   // the same id twice
  expect_bad(e, "id", "an id no other entry has");
}

// ---- the sweep against an implementation, with known defects

ImplSweepOptions sweep_options(const std::string& dir, int cases, const KnownDefects& k) {
  ImplSweepOptions o;
  o.impl = "ours";
  o.cases = cases;
  o.seed = 1;
  o.cases_dir = (std::filesystem::path(::testing::TempDir()) / dir).string();
  o.max_shrink_judgements = 20;
  o.max_shrink_seconds = 60;
  o.registry = k;
  o.known_defects_given = true;
  o.version = "v1";
  return o;
}

KnownDefects clip_registry() {
  json stage0 = entry();
  stage0["id"] = "stage0-no-ns";
  stage0["fix"]["target"] = "stage0-no-newton-schulz";
  stage0["versions"] = {"v0"};   // not in v1: never tried there
  stage0["witness"] = std::filesystem::absolute("scenarios/stage0-basic.json").string();
  return load_known_defects(write("clip-registry.json", registry(json::array({entry(), stage0}))));
}

int junit_failures(const json& record) {
  const std::string xml = junit_xml(record);
  const auto at = xml.find("failures=\"");
  return std::stoi(xml.substr(at + 10));
}

TEST(KnownDefectSweep, failuresExplainedByKnownDefectsPassAndEveryViewSaysSo) {
  const KnownDefects k = clip_registry();
  const ImplSweepOptions o = sweep_options("known-covered", 4, k);
  const auto gen = deepspeed_scenario(generators::focus_for_fault("clip-muon-update"), 1);
  const ImplSweepResult r = run_impl_sweep(o, gen, {our_engine({"clip-muon-update"}, k)});
  ASSERT_FALSE(r.failures.empty()) << "seed 1 draws no clipping case";
  for (const auto& f : r.failures) {
    EXPECT_EQ(f.attribution.verdict, AttributionVerdict::explained) << f.attribution.text();
    EXPECT_EQ(f.attribution.fixes, (FixSet{"clip-over-muon-update"}));
    EXPECT_TRUE(f.attribution.known);
  }
  EXPECT_EQ(r.known_defects_checked, (std::vector<std::string>{"clip-over-muon-update"}));
  EXPECT_TRUE(r.known_defect_problems.empty()) << r.known_defect_problems.front();
  EXPECT_FALSE(r.failed());
  const json record = impl_sweep_json(o, r);
  EXPECT_EQ(junit_failures(record), 0) << junit_xml(record);
  EXPECT_NE(junit_xml(record).find("<skipped message=\"known defect"), std::string::npos) << junit_xml(record);
  EXPECT_NE(summary_markdown(record).find("only known defects"), std::string::npos) << summary_markdown(record);
}

// Each lane attributes the case it ran: with three runners the re-runs under the fixes overlap
// (one at a time when the sweep attributed on its own thread), and the record is the one a single
// runner gives (one applicable fix: the minimal set cannot depend on the order of the hints).
TEST(KnownDefectSweep, threeRunnersAttributeTheirCasesSideBySideWithTheRecordOfOne) {
  const KnownDefects k = clip_registry();
  ImplSweepOptions o = sweep_options("known-lanes", 5, k);
  o.max_defects = 0;   // nothing shrunk: attribution alone
  const auto gen = deepspeed_scenario(generators::focus_for_fault("clip-muon-update"), 1);
  const CaseRunner faulty = our_engine({"clip-muon-update"}, k);
  Concurrency one{true}, three{true, std::chrono::milliseconds(15000)};
  const ImplSweepResult r1 = run_impl_sweep(o, gen, {one.wrap(faulty)});
  const ImplSweepResult r3 = run_impl_sweep(o, gen, {three.wrap(faulty), three.wrap(faulty), three.wrap(faulty)});
  ASSERT_GE(r1.failures.size(), 3u) << "seed 1 draws fewer than three clipping cases";
  EXPECT_EQ(r1.explained, static_cast<int>(r1.failures.size()));
  EXPECT_GE(three.most.load(), 2) << "attribution's re-runs never ran on two runners at once";
  EXPECT_EQ(record_without_timings(o, r1).dump(1), record_without_timings(o, r3).dump(1));
}

// A worker serves two lanes: while one judges or attributes its case, the other has the worker
// run. The worker still runs one case at a time, the lanes' waits for it are not the
// implementation's time, and the record is the one a single lane gives.
TEST(KnownDefectSweep, twoLanesTakeTurnsWithOneWorkerAndKeepTheRecordOfOne) {
  const KnownDefects k = clip_registry();
  ImplSweepOptions o = sweep_options("known-two-lanes", 5, k);
  o.max_defects = 0;
  const auto gen = deepspeed_scenario(generators::focus_for_fault("clip-muon-update"), 1);
  const CaseRunner faulty = our_engine({"clip-muon-update"}, k);
  Concurrency one, two{false, std::chrono::milliseconds(30)};   // each run holds the worker 30 ms
  std::mutex seen;
  std::set<std::thread::id> callers;   // the lanes that had the worker run
  const CaseRunner counted = [&](const Scenario& s, const FixSet& fixes) {
    {
      std::lock_guard<std::mutex> hold(seen);
      callers.insert(std::this_thread::get_id());
    }
    return faulty(s, fixes);
  };
  o.lanes_per_worker = 1;
  const ImplSweepResult r1 = run_impl_sweep(o, gen, {one.wrap(faulty)});
  o.lanes_per_worker = 2;
  const ImplSweepResult r2 = run_impl_sweep(o, gen, {two.wrap(counted)});
  ASSERT_GE(r1.failures.size(), 3u) << "seed 1 draws fewer than three clipping cases";
  EXPECT_EQ(callers.size(), 2u) << "the worker did not serve two lanes";
  EXPECT_EQ(two.most.load(), 1) << "the worker ran two cases at once";
  EXPECT_EQ(r2.workers, 1);
  EXPECT_EQ(record_without_timings(o, r1).dump(1), record_without_timings(o, r2).dump(1));
}

// Two lanes ask one worker for a 300 ms run at once: the second runs after the first, and each
// case's implementation time is its own run, not its wait for the other's.
TEST(KnownDefectSweep, aLanesWaitForItsWorkerIsNotTheImplementationsTime) {
  std::atomic<int> now{0}, most{0};
  const CaseRunner slow = [&](const Scenario& s, const FixSet&) {
    const int n = ++now;
    for (int m = most.load(); n > m && !most.compare_exchange_weak(m, n);) {}
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    --now;
    Trace t;
    t.scenario_name = s.name;
    return t;
  };
  const std::vector<CaseRunner> lanes = lanes_sharing({slow}, 2);
  ASSERT_EQ(lanes.size(), 2u);
  const Scenario s = load_scenario("scenarios/stage0-basic.json");
  const auto started = std::chrono::steady_clock::now();
  auto a = std::async(std::launch::async, [&] { return run_impl_case(s, lanes[0], false, 0); });
  auto b = std::async(std::launch::async, [&] { return run_impl_case(s, lanes[1], false, 1); });
  const double ca = a.get().seconds, cb = b.get().seconds;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_EQ(most.load(), 1) << "the worker ran two cases at once";
  EXPECT_GE(wall, 0.6);
  EXPECT_LT(std::max(ca, cb), 0.5) << "a lane's wait for the worker counted as the implementation's time";
  EXPECT_GE(std::min(ca, cb), 0.3);
}

TEST(KnownDefectSweep, aPlantedNewDefectFailsTheRunAndIsNamedInEveryView) {
  const KnownDefects k = clip_registry();
  ImplSweepOptions o = sweep_options("known-new", 4, k);
  const auto gen = deepspeed_scenario(generators::focus_for_fault("stage0-no-newton-schulz"), 1);
  const ImplSweepResult r = run_impl_sweep(o, gen, {our_engine({"clip-muon-update", "stage0-no-newton-schulz"}, k)});
  ASSERT_FALSE(r.failures.empty());
  EXPECT_GT(r.fresh, 0) << "no failure was NEW: the stage-0 fault has no fix in the registry";
  EXPECT_TRUE(r.failed());
  const json record = impl_sweep_json(o, r);
  EXPECT_FALSE(record["ok"].get<bool>());
  EXPECT_GE(junit_failures(record), 1) << junit_xml(record);
  const std::string md = summary_markdown(record);
  EXPECT_NE(md.find("FAILED"), std::string::npos) << md;
  EXPECT_NE(md.find("NEW: still fails with every applicable fix (clip-over-muon-update)"), std::string::npos) << md;
  EXPECT_NE(md.find(record["defects"][0]["message"].get<std::string>().substr(0, 40)), std::string::npos) << "names the defect: " << md;
}

TEST(KnownDefectSweep, anAttributionIsRejectedWhenTheFixDoesNotMakeTheCaseConform) {
  const KnownDefects k = clip_registry();
  const Scenario s = load_scenario("scenarios/stage0-basic.json");
  const CaseRunner engine = our_engine({"stage0-no-newton-schulz"}, k);
  auto trial = [&](const FixSet& fixes) {
    const Trace t = engine(s, fixes);
    FixRun r;
    r.conforms = t.error.empty();
    for (const auto& v : verify_one_trace(s, t, {}, VerifyOptions{}).verdicts)
      if (v.status == Status::fail) r.conforms = false, r.failed.push_back(v.invariant), r.message = v.message;
    return r;
  };
  const FixRun failing = trial({});
  ASSERT_FALSE(failing.conforms) << "the stage-0 fault shows on stage0-basic";
  const Attribution claim = check_claim({"clip-over-muon-update"}, failing, trial);
  EXPECT_EQ(claim.verdict, AttributionVerdict::rejected) << claim.text();
  EXPECT_EQ(attribute(k.applicable("v1"), failing, trial).verdict, AttributionVerdict::new_defect);
}

TEST(KnownDefectSweep, aKnownDefectThatNoLongerReproducesFailsTheRun) {
  const KnownDefects k = clip_registry();
  const ImplSweepOptions o = sweep_options("known-fixed", 2, k);
  const ImplSweepResult r = run_impl_sweep(o, deepspeed_scenario({}, 1), {our_engine({}, k)});
  EXPECT_TRUE(r.failures.empty());
  ASSERT_EQ(r.known_defect_problems.size(), 1u);
  EXPECT_NE(r.known_defect_problems.front().find("known defect clip-over-muon-update"), std::string::npos);
  EXPECT_NE(r.known_defect_problems.front().find("no longer reproduces"), std::string::npos) << r.known_defect_problems.front();
  EXPECT_TRUE(r.failed());
  EXPECT_GE(junit_failures(impl_sweep_json(o, r)), 1);
}

// Two defects that show on one witness hide each other's fix there: each entry's check must apply
// the other's fix, both times (witness_needs); without it each check reports its fix as not making
// the witness conform.
TEST(KnownDefectSweep, aWitnessIsJudgedWithTheFixesItNeeds) {
  auto pair_registry = [](const std::string& name, bool with_needs) {
    json a = entry(), b = entry();
    a["id"] = "overflow-momentum", a["fix"]["target"] = "momentum-on-overflow";
    b["id"] = "scaled-grads", b["fix"]["target"] = "muon-on-scaled-grads";
    a["witness"] = b["witness"] = std::filesystem::absolute("scenarios/fp16-overflow.json").string();
    if (with_needs) a["witness_needs"] = {"scaled-grads"}, b["witness_needs"] = {"overflow-momentum"};
    return load_known_defects(write(name, registry(json::array({a, b}))));
  };
  for (const bool with_needs : {false, true}) {
    const KnownDefects k = pair_registry(with_needs ? "needs-registry.json" : "no-needs-registry.json", with_needs);
    const ImplSweepOptions o = sweep_options(with_needs ? "known-needs" : "known-no-needs", 1, k);
    const ImplSweepResult r =
        run_impl_sweep(o, deepspeed_scenario({}, 1), {our_engine({"momentum-on-overflow", "muon-on-scaled-grads"}, k)});
    if (with_needs) {
      EXPECT_TRUE(r.known_defect_problems.empty()) << r.known_defect_problems.front();
      EXPECT_EQ(r.known_defects_checked, (std::vector<std::string>{"overflow-momentum", "scaled-grads"}));
    } else {
      ASSERT_EQ(r.known_defect_problems.size(), 2u);
      for (const auto& p : r.known_defect_problems) EXPECT_NE(p.find("its fix does not make its witness"), std::string::npos) << p;
    }
  }
  json e = entry();
  e["id"] = "x12", e["witness_needs"] = {"no-such-entry"};
  expect_bad(e, "witness_needs", "ids of other entries");
}

// The same fixed implementation as above: a defect that shows on another device only, or whose
// witness this sweep's workers cannot run (another dp, fp16 on a CPU), is listed as not checked
// here, not as one that no longer reproduces.
TEST(KnownDefectSweep, aKnownDefectThisSweepCannotShowIsNotCheckedNotAProblem) {
  json e = entry();
  e["devices"] = {"cuda"};
  const KnownDefects on_gpu = load_known_defects(write("gpu-registry.json", registry(json::array({e}))));
  ImplSweepOptions o = sweep_options("known-gpu-only", 2, on_gpu);
  o.device = "cpu";
  ImplSweepResult r = run_impl_sweep(o, deepspeed_scenario({}, 1), {our_engine({}, on_gpu)});
  EXPECT_TRUE(r.known_defect_problems.empty()) << r.known_defect_problems.front();
  ASSERT_EQ(r.known_defects_unchecked.size(), 1u);
  EXPECT_NE(r.known_defects_unchecked.front().find("shows on cuda only, this sweep runs on cpu"), std::string::npos)
      << r.known_defects_unchecked.front();
  EXPECT_FALSE(r.failed());
  EXPECT_EQ(impl_sweep_json(o, r)["known_defects"]["unchecked"].size(), 1u);

  const KnownDefects k = clip_registry();
  const CaseRunner engine = our_engine({}, k);
  const CaseRunner declines_witness = [&](const Scenario& s, const FixSet& fixes) {
    if (s.name.rfind("known-", 0) != 0) return engine(s, fixes);
    Trace t;
    t.unsupported = "engine.dp 2: this worker has 1 process(es)";
    return t;
  };
  r = run_impl_sweep(sweep_options("known-other-dp", 2, k), deepspeed_scenario({}, 1), {declines_witness});
  EXPECT_TRUE(r.known_defect_problems.empty()) << r.known_defect_problems.front();
  ASSERT_EQ(r.known_defects_unchecked.size(), 1u);
  EXPECT_NE(r.known_defects_unchecked.front().find("cannot run here"), std::string::npos) << r.known_defects_unchecked.front();
}

TEST(KnownDefectSweep, aFixThatNoLongerAppliesFailsTheRunNamingTheEntry) {
  json e = entry();
  e["fix"] = {{"kind", "replacement"}, {"from", "ours"}, {"target", "engine:clip"}, {"replacement", "fixes:clip"}};   // our engine cannot apply it
  const KnownDefects k = load_known_defects(write("stale-registry.json", registry(json::array({e}))));
  const ImplSweepOptions o = sweep_options("known-stale", 2, k);
  const auto gen = deepspeed_scenario(generators::focus_for_fault("clip-muon-update"), 1);
  const ImplSweepResult r = run_impl_sweep(o, gen, {our_engine({"clip-muon-update"}, k)});
  ASSERT_FALSE(r.known_defect_problems.empty());
  EXPECT_NE(r.known_defect_problems.front().find("clip-over-muon-update"), std::string::npos);
  EXPECT_NE(r.known_defect_problems.front().find("does not apply"), std::string::npos) << r.known_defect_problems.front();
  for (const auto& f : r.failures) EXPECT_EQ(f.attribution.verdict, AttributionVerdict::fix_does_not_apply);
  EXPECT_TRUE(r.failed());
}

}  // namespace
}  // namespace muoncheck
