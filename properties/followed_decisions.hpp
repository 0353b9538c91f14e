// Discrete decisions a numeric divergence can flip: a natural-overflow skip. Where the
// precision does not determine the state (properties/determinacy.hpp) a chaotic step can move
// the weights so far that the next fp16 gradient overflows in one valid order and not in
// another. Such a decision is judged against the decisions valid orders make from the implementation's
// own state, in the scenario's dtypes: one that the exact step or some control member also makes is followed (the structural
// invariants then judge the implementation against the trajectory of decisions it took, the
// scaler rule applied to them); one that no valid order makes is judged against the oracle's,
// and still FAILs.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "core/scenario.hpp"
#include "core/trajectory.hpp"
#include "properties/run_bundle.hpp"
#include "properties/verdict.hpp"

namespace muoncheck {

// The skip decisions some valid order makes at step t (empty: none known).
using ValidDecisions = std::function<std::vector<bool>(int step)>;

// The oracle's trajectory with the implementation's skip decisions followed where they differ
// from the oracle's and some valid order makes them; the scaler state, the scale each step
// used and AdamW's step count follow from the decisions by the scaler rule. `followed` gets a
// line per followed step. The oracle itself when nothing differs.
Trajectory decisions_followed(const Scenario& s, const Trajectory& oracle, const Trajectory& impl,
                              const ValidDecisions& valid, std::vector<std::string>* followed = nullptr);

// The valid decisions of a judged run at a step: the exact step's and every control member's,
// each stepping from the implementation's own state before the step (the memo's steps, the very
// ones step-conforms judges with).
ValidDecisions valid_decisions(const RunBundle& b);

// `judge` against the oracle's trajectory with the run's valid decisions followed; its message
// names each followed step. The oracle's own trajectory (no copy) when no decision differs.
Verdict judged_on_followed(const RunBundle& b, const std::function<Verdict(const Trajectory& reference)>& judge);

}  // namespace muoncheck
