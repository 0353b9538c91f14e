// When a numeric question has no answer at the scenario's precision. The control ensemble's
// members are valid rounding orders of the same semantics; when they disagree with the exact
// result by at least one step's whole update, the update itself is not determined in the
// scenario's dtypes (Gram Newton–Schulz in bf16 past its 5 designed iterations turns a one-ulp
// difference into an O(1) one), so no band drawn from eight such samples can judge a ninth:
// the verdict is INCONCLUSIVE, with the figure that decided it. The rule, written once here
// and measured in docs/invariants.md ("When the precision decides nothing"):
//
//   spread_over_update = max_k err(control_k) · ‖W*‖ / ‖W*_t − W*_{t−1}‖  ≥  kUndeterminedAt
//
// per step and weight tensor; every tensor of every later step is downstream of an
// undetermined one and undetermined too (free-running and relational checks). A determined
// tensor out of its band still FAILs the verdict; only when every determined tensor passes
// does an undetermined one make it INCONCLUSIVE.
//
// The discrete decisions such a divergence flips (a natural-overflow skip) are judged in
// properties/followed_decisions.hpp.
#pragma once
#include <string>
#include <vector>

#include "core/scenario.hpp"
#include "properties/verdict.hpp"

namespace muoncheck {

// The ensemble's own spread at which a step's update counts as undetermined: one whole update.
inline constexpr double kUndeterminedAt = 1.0;

// max_k err(control_k)·‖W*‖ / ‖W* − W*_before‖: the spread in units of the step's exact update
// (0 when W* did not move, e.g. a skipped step; +inf when the ensemble's error or the exact
// state itself is not finite).
double spread_over_update(double ensemble_error, const std::vector<double>& exact, const std::vector<double>& exact_before);
bool is_undetermined(double spread);   // spread ≥ kUndeterminedAt; NaN counts as undetermined

// What the precision left open in one verdict: the worst spread seen (determined or not), how
// many tensors were undetermined and the worst band ratio among them.
struct Undetermined {
  double spread = 0.0;            // worst spread over update over every weight judged
  std::string spread_where;
  int tensors = 0;                // tensors judged apart as undetermined
  double ratio = 0.0;             // their worst error/allowed (what a FAIL would have said)
  std::string ratio_where;
  std::string reason;             // set when a decision rather than a figure made it (a followed skip)
  void note_spread(double s, const std::string& where);
  void note_tensor(double ratio, const std::string& where);
  void merge(const Undetermined& o, const std::string& prefix);
};

// A numeric verdict judged on its determined tensors, settled: a FAIL stays a FAIL; a PASS
// with undetermined tensors becomes INCONCLUSIVE, metric the worst ratio over all tensors,
// its message naming the figure. Records the figure.
Verdict settle(Verdict determined, const Undetermined& u, const Scenario& s);

// The configuration that makes the scenario's updates undetermined, as the NOTE a user reads
// ("Gram Newton–Schulz in bf16 with 7 iterations, past the 5 its one restart is placed for ..."); a general text
// when no known cause applies.
std::string inconclusive_cause(const Scenario& s);

}  // namespace muoncheck
