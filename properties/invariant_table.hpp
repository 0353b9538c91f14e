// The one table of invariants: each row's id, what it needs from an observation, the variant
// runs it compares against, and the function that judges it. `run`, `check`, `verify`,
// `sweep`, `mutants`, `variants` and the docs (docs/invariants.md, checked by a test) all
// read this table; no other list of invariant ids exists.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/scenario.hpp"
#include "properties/observation.hpp"
#include "properties/run_bundle.hpp"
#include "properties/tensor_error.hpp"
#include "properties/verdict.hpp"

namespace muoncheck {

// The runs a relational invariant compares the scenario's run against.
enum class VariantKind {
  gas,      // the same global batch over another number of micro-steps
  dp,       // ... over another number of ranks
  stage,    // every other ZeRO stage
  bucket,   // smaller reduce/allgather buckets
  gas1,     // the same global batch at gas 1 (gathers-once-per-step counts against it)
  repeat,   // a second, separate run of the scenario itself
  uninterrupted,   // a checkpoint scenario without its checkpoint (the run a resume must continue)
};
std::string variant_kind_name(VariantKind k);   // "gas", "dp", "stage", "bucket", "gas1", "repeat", "uninterrupted"
const std::vector<VariantKind>& all_variant_kinds();

// The scenarios of one kind (repeat: the scenario itself); none, with why, when no faithful
// variant exists (overflow injections pin ranks and micro-steps, gas 1 × micro_batch 1, ...).
struct VariantScenarios {
  std::vector<Scenario> scenarios;
  std::string why_none;
};
VariantScenarios variant_scenarios(const Scenario& s, VariantKind k);

// A variant run as a row sees it; controls null when the row did not ask for them.
struct ObservedRun {
  const Observation* observed = nullptr;
  const ControlEnsemble* controls = nullptr;
};

// Where variant runs come from: our engine runs them (harness/judge/judge_scenario.cpp);
// verify finds them among the traces it was given (harness/judge/verify_traces.cpp).
class VariantRuns {
 public:
  virtual ~VariantRuns() = default;
  // The run of variant `v` of kind `k` (repeat: a second run of the scenario), with its
  // control ensemble when `controls`; nullopt with `why` set when there is none.
  virtual std::optional<ObservedRun> run(const Scenario& v, VariantKind k, bool controls, std::string& why) = 0;
  // A missing variant's verdict: SKIPPED where our engine cannot run it, UNSUPPORTED where an
  // implementation did not trace it (it has not shown the relation).
  virtual Status when_missing() const = 0;
  // Whether variant `v` of kind `k` ran and crashed (an implementation error): a relation with a
  // crashed partner is an ERROR, never a PASS of the partners that did run.
  virtual bool crashed(const Scenario& v, VariantKind k) const {
    (void)v, (void)k;
    return false;
  }
};

// What a row judges: the scenario's own run (bundle) and its variants.
struct Judging {
  const RunBundle& base;
  VariantRuns& variants;
};

struct InvariantRow {
  std::string id;
  std::vector<ObservedPart> needs;      // parts of the observation it reads beyond the always-shown ones
  std::vector<VariantKind> variants;    // variant runs it compares against
  bool variant_controls = false;        // whether those runs need their control ensembles
  Verdict (*judge)(const Judging&) = nullptr;
  bool own_band = false;                // judged in the noise band of the scenario's own control
                                        // ensemble: a FAIL is confirmed with a wider one
                                        // (harness/judge/judge_observation.cpp)
};

// Every invariant, in report order.
const std::vector<InvariantRow>& invariant_table();
const InvariantRow* find_invariant(const std::string& id);   // null: no such id
const std::vector<std::string>& invariant_ids();
bool is_invariant_id(const std::string& id);

// The row's verdict: UNSUPPORTED naming the first part of `needs` the observation lacks,
// else the row's function.
Verdict judge_row(const InvariantRow& row, const Judging& j);

}  // namespace muoncheck
