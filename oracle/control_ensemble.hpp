// The control ensemble: K runs of the scenario's dtypes, each a different valid
// rounding sequence (rounding_variant.hpp). Member 0 is the CPU implementation's own
// sequence; the others vary the dot-product order, the elementwise epilogue, where the
// NS norm lives and the ring order of reductions, and from member 4 on add Monte Carlo
// random rounding for the orders nobody enumerated. Members run as tasks on the cores.
#pragma once
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

// One step of every member from the same state (stepwise checks: the members' noise
// of the very step the implementation took, from the implementation's own state).
std::vector<StepRecord> control_steps_from(const Scenario& s, int step, const TrainingState& before, int count);

}  // namespace muoncheck::oracle
