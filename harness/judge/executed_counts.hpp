// Counts that cannot hide: how many of a run's invariant verdicts were executed (PASS or
// FAIL) out of all it reported (SKIPPED, UNSUPPORTED and INCONCLUSIVE included: a question
// the scenario's precision cannot answer was not judged), and the gate every
// judging command applies to them. A scenario that executed nothing is not OK, whatever
// the reason (an UNSUPPORTED scenario has shown nothing about conformance either), and a
// run whose executed share is below --min-executed is not OK. Each reason is one line
// that says why and how to reproduce it.
#pragma once
#include <string>
#include <vector>

#include "harness/judge/scenario_result.hpp"

namespace muoncheck {

// The default gate: `muoncheck check` executes most of its verdicts; a verify run that lacks
// the variants' traces for the relational invariants executes about half (docs/invariants.md).
constexpr double kDefaultMinExecuted = 0.5;

// A scenario none of whose verdicts ran.
struct IdleScenario {
  std::string scenario;
  std::string why;     // "executed 0 of 14 invariant verdicts (14 UNSUPPORTED: ...)"
  std::string repro;   // one command line that shows it again
};

struct ExecutedCounts {
  int executed = 0;    // PASS or FAIL
  int verdicts = 0;    // every verdict
  int skipped = 0, unsupported = 0, inconclusive = 0;   // none of them executed
  std::vector<IdleScenario> idle;
  double share() const { return verdicts > 0 ? static_cast<double>(executed) / verdicts : 0.0; }

  // Counts r's verdicts; when none was executed, r becomes idle with `idle_repro`.
  void add(const ScenarioResult& r, const std::string& idle_repro);
};

int executed_count(const ScenarioResult& r);

// The repro of an idle scenario: its run line with its first invariant (which, like all of
// them, did not execute there): its repro vector with that invariant.
std::string idle_repro_line(const ScenarioResult& r);

ExecutedCounts executed_counts_of(const std::vector<ScenarioResult>& results);

// "executed 13 of 14 invariant verdicts"; with the share for a whole run.
std::string executed_text(int executed, int verdicts);
std::string executed_text(const ExecutedCounts& c);

// Why the counts make the run not OK (empty: they do not), one line each with a repro:
// every idle scenario, then a share below `min_executed` (reproduced by `run_repro`).
std::vector<std::string> executed_problems(const ExecutedCounts& c, double min_executed, const std::string& run_repro);

// This process's command line ("muoncheck check --dp 2"), the repro of a whole run.
std::string this_command_line();

}  // namespace muoncheck
