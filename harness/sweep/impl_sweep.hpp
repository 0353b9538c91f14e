// The property sweep against another implementation (`muoncheck sweep --impl deepspeed`): draws
// scenarios in the region that implementation can express, has it run each one (a CaseRunner: a
// resident worker, or our own engine behind the same interface in tests), judges the trace with
// every invariant a trace can show (harness/judge/verify_traces) under the double oracle,
// confirms a failure in float128 and shrinks it with the implementation in the loop, over sizes
// and over features (case_features.hpp), so a minimal case keeps only what the defect needs.
// Unlike the sweep of our own engine it does not stop at the first failure: failures are grouped
// into defects (the same lead symptom, symptom.hpp, and the features of a defect's minimal
// case all present), each defect shrunk once, to cases that keep that lead symptom. Past
// max_defects a failure that matches no defect is counted unattributed and saved with its repro
// line, never dropped. Declines are counted per feature, never silently skipped.
//
// With N runners (`--workers N`, one resident worker each) N cases are evaluated at once
// (runner_pool.hpp): a case's run, its judgement, its float128 confirmation and its attribution's
// re-runs all happen on the lane that drew it. The cases are still drawn in order on this thread
// from the one generator, and grouped, numbered and recorded in case order; before a defect is
// shrunk the cases in flight finish (their results kept), the shrink runs one candidate at a time,
// then the sweep goes on. What N changes: the hints a case's attribution tries first are the
// explanations recorded before it started, which can pick another minimal fix set for a case that
// has two, never whether it is explained.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <rapidcheck.h>

#include "core/scenario.hpp"
#include "harness/judge/executed_counts.hpp"
#include "harness/sweep/attribution.hpp"
#include "harness/sweep/known_defects.hpp"
#include "harness/sweep/runner_pool.hpp"
#include "harness/sweep/sweep_defaults.hpp"
#include "harness/traces/trace_io.hpp"
#include "oracle/control_ensemble.hpp"
#include "properties/generators/scenario_gen.hpp"

namespace muoncheck {

struct ImplSweepResult;

struct ImplSweepOptions {
  std::string impl = "deepspeed";         // the --impl value, for repro lines and file names
  int cases = kDefaultSweepCases;
  uint64_t seed = kDefaultSweepSeed;
  double budget_seconds = 0;              // 0: no limit; else no new case starts after it (cases
                                          // already running are still judged)
  std::string cases_dir = kDefaultCasesDir;
  bool relational = true;                 // also run a gas and a stage re-split of each case (same
                                          // trajectory) so gas-/stage-invariant are judged
  int max_defects = kDefaultMaxDefects;                    // defects shrunk; later failures matching none are unattributed
  int max_shrink_judgements = 150;        // each runs the implementation once
  double max_shrink_seconds = kDefaultShrinkSeconds;
  int lanes_per_worker = 2;               // cases in flight per worker: while one lane judges or
                                          // attributes its case, another has the worker run
  int control_members = oracle::kDefaultControlMembers;
  double min_executed = kDefaultMinExecuted;
  std::function<void(int, int, double, int, int)> progress;   // (done, asked, seconds, failures, unconfirmed)
  // Called on the sweep's thread after each case is recorded, with the result so far (its seconds
  // up to now): the CLI writes the partial record from it, so a sweep killed by a CI time limit
  // keeps what it judged.
  std::function<void(const ImplSweepResult&)> recorded;
  // Attribution (attribution.hpp): every confirmed failing case, and each defect's minimal case,
  // re-run with the registry's fixes that live in the implementation's version. With
  // known_defects_given (`--known-defects FILE`) a failure explained by them does not fail the
  // sweep, and each entry's witness is re-run: one that no longer fails (fixed upstream) or that
  // its fix does not make conform fails it.
  KnownDefects registry;                  // empty: nothing to attribute with
  bool known_defects_given = false;
  int max_attribution_runs = 32;          // re-runs per case
  double max_attribution_seconds = 300;   // and their time per case (0: none)
  std::string version;                    // the implementation's version; "" = from its first trace
  std::string device = "cpu";             // where the implementation runs: a witness of an entry that
                                          // shows elsewhere is not re-run (known_defects_unchecked)
  int max_declined_in_a_row = 5000;       // drawn configurations declined before the sweep gives up
};


struct ImplFailure {
  int index = 0;                          // 1-based case
  std::vector<std::string> invariants;    // confirmed in float128
  std::vector<std::string> symptoms;      // one per invariant (symptom.hpp); the first leads
  std::string message;
  std::vector<std::string> features;
  int defect = -1;                        // index into ImplSweepResult::defects; -1: unattributed (its
                                          // lead symptom or features match no defect and the cap was reached)
  std::string repro;                      // unattributed only: the saved case's `muoncheck repro` line
  Attribution attribution;                // by counterfactual, this case itself
};

struct ImplDefect {
  int found_after = 0;
  int occurrences = 0;                    // failing cases grouped here
  bool error = false;                     // the implementation raised, crashed or hung
  std::string symptom;                    // the lead symptom of the failure it was found from; kept
                                          // by every shrink step
  std::string error_text;                 // its error on the minimal case
  std::vector<std::string> invariants;    // failing on the minimal case (float128)
  std::string message;                    // on the minimal case
  std::vector<std::string> features;      // of the minimal case: what the defect needs
  Scenario original, shrunk;
  generators::ScenarioSize original_size, shrunk_size;
  int shrink_steps = 0, shrink_judgements = 0;
  bool shrink_exhausted = false;
  std::string path;                       // the saved minimal scenario
  std::string repro;                      // `muoncheck repro PATH --for deepspeed` (or torch)
  Attribution attribution;                // by counterfactual, on the minimal case
};

struct UnconfirmedImplCase {
  int index = 0;
  std::vector<std::string> invariants;
  std::string message;
};

// Worker-seconds spent in the implementation (summed over the workers: with N workers up to N ×
// the sweep's seconds), and of that, in its own steps and engine set-up (its traces'
// details.step_seconds and engine_setup_seconds): the rest of the workers' time is the harness's.
struct ImplTime {
  double implementation = 0;
  double steps = 0;
};

struct ImplSweepResult {
  std::string implementation;             // "deepspeed 0.19.8", from the traces
  int cases_run = 0, declined = 0, errors = 0;
  int declined_draws = 0;                 // configurations declined when drawn, each drawn again
                                          // (counted in declines_by_feature with the declined cases)
  int partner_runs = 0, partner_errors = 0;         // the gas/stage re-splits run for the relational invariants
  std::map<std::string, int> declines_by_feature;   // the decline's reason up to its first ':'
  std::map<std::string, int> features_drawn;        // over the cases the implementation ran
  int workers = 1;                        // runners the cases ran on side by side
  double seconds = 0;                     // wall time of the sweep
  ImplTime time;                          // every run of the implementation: the cases, their
                                          // partners, shrinking, attribution and witness re-runs
  bool budget_exhausted = false;
  std::vector<ImplFailure> failures;
  std::vector<ImplDefect> defects;
  std::vector<UnconfirmedImplCase> unconfirmed;
  ExecutedCounts counts;                      // over each case's first judgement
  int explained = 0, fresh = 0;           // failing cases explained by registry fixes; NEW ones
  std::vector<std::string> known_defect_problems;   // a witness that no longer fails, a fix that no
                                                    // longer applies or makes it conform (names the entry)
  std::vector<std::string> known_defects_checked;   // entries whose witness reproduced and whose fix held
  std::vector<std::string> known_defects_unchecked;   // entries whose witness cannot run here, each with why
                                                      // (another device, dp or precision): not a problem
  double cases_per_minute() const { return seconds > 0 ? 60.0 * cases_run / seconds : 0.0; }
  // The sweep's verdict: no failure that known defects do not explain (any failure at all
  // without --known-defects), no known-defect problem; coverage is judged apart.
  bool failed() const;
};

// One case as the implementation ran it: the case itself and, for the relational invariants,
// re-splits of it that follow the same exact trajectory (a gas variant, a stage variant).
struct CaseRun {
  Scenario scenario;
  Trace trace;
  std::vector<std::pair<Scenario, Trace>> partners;
  double seconds = 0;   // in the implementation, its partners included
  double step_seconds = 0;   // of that, in its own steps and engine set-up (the traces say)
};

// Each runner (one resident worker) behind `lanes` runners that take turns with it, one run at a
// time; run_impl_case leaves a lane's wait for its turn out of the case's implementation time.
std::vector<CaseRunner> lanes_sharing(std::vector<CaseRunner> runners, int lanes);

// Runs case `s` (and with `with_partners` its gas re-split and stage re-split number `index` of
// its stage variants, when it ran cleanly) on one runner. Touches nothing but its arguments.
CaseRun run_impl_case(const Scenario& s, const CaseRunner& run, bool with_partners, int index, const FixSet& fixes = {});

// Of `fixes`, those whose code ran in none of the case's runs (its own and its partners'), as each
// trace reports them (`fixes_unused`); none when a run does not report.
FixSet unused_in_every_run(const CaseRun& c, const FixSet& fixes);

// Whether a verdict is a failure of the case itself: failed, and not a relation that failed only
// because its re-split partner crashed (Verdict::partner_crashed; that crash is counted apart,
// partner_errors, and is a defect of its own, shrunk when the sweep draws that case).
bool fails_this_case(const Verdict& v);

// The key a decline is counted under: its reason up to the first ':' ("engine.dp 2", "optimizer.per_head").
std::string decline_feature(const std::string& unsupported);

// `runners`: one per worker (at least one), each called from one thread at a time.
ImplSweepResult run_impl_sweep(const ImplSweepOptions& o, const rc::Gen<Scenario>& gen, std::vector<CaseRunner> runners);

}  // namespace muoncheck
