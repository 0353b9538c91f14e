// The property sweep behind `muoncheck sweep`: draws scenarios from the general
// generator (same seed → same cases), judges each with the double-precision oracle,
// confirms a failure in float128, shrinks it to a minimal scenario, saves it under
// out/cases/ and states the one command line that reproduces it.
#pragma once
#include <cmath>
#include <cstdint>
#include <map>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/scenario.hpp"
#include "harness/judge/executed_counts.hpp"
#include "harness/judge/judge_scenario.hpp"
#include "harness/sweep/attribution.hpp"
#include "properties/generators/focus.hpp"
#include "harness/sweep/sweep_defaults.hpp"
#include "properties/generators/scenario_gen.hpp"

namespace muoncheck {

struct SweepOptions {
  int cases = kDefaultSweepCases;
  uint64_t seed = kDefaultSweepSeed;
  double budget_seconds = 0;              // 0: no limit; else no new case starts after it
  std::vector<std::string> faults;        // switched on in the implementation
  generators::Focus focus;                // narrows the general generator (default: none)
  std::string cases_dir = kDefaultCasesDir;
  int max_shrink_judgements = 400;        // each judges only the confirmed invariants
  double max_shrink_seconds = kDefaultShrinkSeconds;
  std::chrono::milliseconds timeout = kDefaultCollectiveTimeout;
  impl::ComputeBackend backend = impl::ComputeBackend::cpu;   // where the implementation runs
  impl::CommBackend comm = impl::CommBackend::gloo;
  int control_members = oracle::kDefaultControlMembers;   // the noise ensemble of every judgement
  double min_executed = kDefaultMinExecuted;   // --min-executed, over every case's first judgement
  // --shard I/N (shard = I - 1): this run judges only the cases whose 0-based index is I - 1 modulo
  // N, drawn from the same seeded sequence, so N shards are disjoint and together are the sweep.
  int shard = 0, shards = 1;
  // Called after every case: (cases done, cases asked, seconds, confirmed failures, unconfirmed).
  std::function<void(int, int, double, int, int)> progress;
};

struct SweepCounterexample {
  int found_after = 0;                    // the 1-based case that failed
  std::vector<std::string> invariants;    // confirmed in float128 on the shrunk case
  std::string message;                    // the first confirmed verdict's message
  Scenario original, shrunk;
  generators::ScenarioSize original_size, shrunk_size;
  int shrink_steps = 0, shrink_judgements = 0;
  std::string path;                       // the saved minimal scenario
  std::string repro;                      // `muoncheck run PATH --invariant ID --fault ID...`
  std::string regenerate;                 // `muoncheck sweep --seed S --cases N ...`: the case again, from its seed
  Attribution attribution;                // with a known-defect registry (own_attribution.hpp)
};

struct UnconfirmedCase {
  int index = 0;
  std::vector<std::string> invariants;    // failed in double, passed in float128
  std::string message;
};

// How close the cases came to the determinacy rule (properties/determinacy.hpp): each case's
// figure is its worst control-ensemble spread over a step's update, over its numeric verdicts.
struct SpreadTally {
  std::map<std::string, int> by_decade;   // "1e-03" counts figures in [1e-3, 1e-2); "0", "inf"
  double widest_conclusive = 0.0;          // the largest figure of a case with no INCONCLUSIVE verdict
  int widest_conclusive_case = 0;
  double narrowest_inconclusive = INFINITY;   // the smallest figure of a case with one
  int narrowest_inconclusive_case = 0;
  void add(int case_number, double figure, bool inconclusive);
};

// What one case contributed to the sweep's record, kept per case so that the records of shards
// merge into the record of the whole sweep (sweep_merge.hpp) by adding them in case order.
struct SweepCaseRecord {
  int number = 0;                         // 1-based, in the whole sweep
  bool unsupported = false, inconclusive = false;
  double spread = 0.0;                    // its worst control-ensemble spread (SpreadTally)
  ExecutedCounts counts;                  // its first judgement's counts alone
  std::optional<UnconfirmedCase> unconfirmed;
  bool failed = false;                    // confirmed in float128: the sweep stops here
};

struct SweepResult {
  int cases_run = 0;
  int unsupported = 0;                    // cases the implementation declined (UNSUPPORTED)
  int inconclusive = 0;                   // cases with an INCONCLUSIVE verdict (judged on, never shrunk towards)
  SpreadTally spread;
  double seconds = 0;
  bool budget_exhausted = false;
  std::vector<UnconfirmedCase> unconfirmed;
  std::optional<SweepCounterexample> failure;
  ExecutedCounts counts;                      // over each case's first judgement (double oracle, every invariant)
  std::vector<SweepCaseRecord> cases;     // in case order
  // Adds one case to every count above and to `cases`.
  void add(const SweepCaseRecord& c);
  std::string known_defects;              // the registry given with --known-defects ("" for none)
  std::vector<std::string> known_defect_problems;   // entries that no longer reproduce or whose fix fails
  double cases_per_minute() const { return seconds > 0 ? 60.0 * cases_run / seconds : 0.0; }
  // A counterexample not explained by a known defect, or a known-defect problem (coverage apart).
  bool failed() const { return (failure && !failure->attribution.known) || !known_defect_problems.empty(); }
};

// How many of the o.cases cases are this shard's.
int shard_size(const SweepOptions& o);
// Whether the 0-based case `index` belongs to this run's shard.
inline bool in_shard(const SweepOptions& o, int index) { return index % o.shards == o.shard; }

// The i-th (0-based) scenario of a sweep with this seed and focus, named `name`.
Scenario sweep_case(uint64_t seed, int index, const generators::Focus& focus, const std::string& name);

SweepResult run_sweep(const SweepOptions& o);

// Why the sweep's executed counts make it not OK (a case that judged nothing, a share below
// o.min_executed); empty when they do not. The repro of the share is the sweep of the same
// seed and cases.
std::vector<std::string> sweep_executed_problems(const SweepOptions& o, const SweepResult& r);

}  // namespace muoncheck
