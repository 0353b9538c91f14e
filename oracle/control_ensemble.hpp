// The control ensemble: K runs of the scenario's dtypes, each a different valid
// rounding sequence (rounding_variant.hpp). Member 0 is the CPU implementation's own
// sequence; the others vary the dot-product order, the elementwise epilogue, where the
// NS norm lives and the ring order of reductions; members 6 and 7 (and any beyond 8) add
// Monte Carlo random rounding for the orders nobody enumerated. Members run as tasks
// on the cores.
#pragma once
#include <string>
#include <vector>

#include "core/scenario.hpp"
#include "core/trajectory.hpp"
#include "oracle/rounding_variant.hpp"

namespace muoncheck::oracle {

inline constexpr int kDefaultControlMembers = 8;

// The first `count` members (count ≥ 1); the same count always gives the same members.
std::vector<RoundingVariant> control_members(int count);

Trajectory run_control(const Scenario& s, const RoundingVariant& member);
std::vector<Trajectory> run_control_ensemble(const Scenario& s, int count);

// What the control's arithmetic reads of a scenario, as a key: two scenarios with the
// same key have bit-identical control ensembles (so a caller may share one). Bucket sizes,
// the gradient layout and zero_init never reach the control; of the stage only whether
// reduction happens every micro-step (2/3) and whether U arrives through a 16-bit gather (≥ 1).
std::string control_fingerprint(const Scenario& s);

// One step of one member from a given state.
StepRecord control_step_from(const Scenario& s, int step, const TrainingState& before, const RoundingVariant& member);

// One step of every member from the same state (stepwise checks: the members' noise
// of the very step the implementation took, from the implementation's own state).
std::vector<StepRecord> control_steps_from(const Scenario& s, int step, const TrainingState& before, int count);

}  // namespace muoncheck::oracle
