// The one judging path: an observation of a scenario's run (our engine's, or a trace's), the
// exact oracle, the control ensemble and the variant runs → the per-step records and every
// wanted row of the invariant table (properties/invariant_table.hpp). `run`, `check`,
// `mutants`, `sweep` (through judge_scenario) and `verify` (through verify_traces) all judge
// here; an observation that leaves out a part has the references cut to what it shows.
#pragma once
#include <map>
#include <set>
#include <string>

#include "core/scenario.hpp"
#include "harness/judge/scenario_result.hpp"
#include "oracle/oracle.hpp"
#include "oracle/result_memo.hpp"
#include "properties/invariant_table.hpp"
#include "properties/observation.hpp"

namespace muoncheck {

struct ObservationInputs {
  const Scenario& scenario;
  const Observation& observed;
  const ControlEnsemble& controls;   // the scenario's control ensemble (uncut)
  oracle::ResultMemo& memo;          // the exact oracle and the stepwise steps
  oracle::Precision precision;
  VariantRuns& variants;
  std::set<std::string> only;                 // empty: every invariant
  std::map<std::string, std::string> skipped; // id → why it is not judged (--mode)
};

// The control ensemble that confirms a FAIL of a row judged in its own band (InvariantRow::own_band).
constexpr int kConfirmingMembers = 24;

// Appends the per-step records and the verdicts to `r`, in the table's order; `exact_out`,
// when given, receives the oracle trajectory (uncut).
void judge_observation(ScenarioResult& r, const ObservationInputs& in, Trajectory* exact_out = nullptr);

// `ref` cut down to the parts `o` shows (a trace without momentum is judged on its weights).
Trajectory shown_part_of(Trajectory ref, const Observation& o);

}  // namespace muoncheck
