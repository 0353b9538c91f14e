// The oracle's public face: the exact Muon trajectory of a scenario (docs/semantics.md §1–7),
// computed in a chosen precision, and the control (the same semantics with the
// scenario's dtypes emulated). Results are plain core::Trajectory data. The
// oracle depends on core/ and Boost only; it never includes impl/.
#pragma once
#include <string>
#include <vector>

#include "core/scenario.hpp"
#include "core/trajectory.hpp"

namespace muoncheck::oracle {

enum class Precision { float64, float128, bin50 };
std::string precision_name(Precision p);               // "double", "float128", "bin50"
bool parse_precision(const std::string& s, Precision& out);

// Tagging of §3, decided on the layer shape. `placeholders` says the params were
// built as partitioned placeholders (zero.Init); it must not change the answer.
std::vector<ParamTag> tag_params(const Scenario& s, bool placeholders);

// The exact trajectory: state after every step, losses, scales, NS calls.
Trajectory run_oracle(const Scenario& s, Precision p);

// The control's reference member: the oracle with round-to-nearest-even into the
// scenario's storage, accumulation, communication and NS dtypes wherever the CPU
// implementation rounds, in its order. Judging uses the whole ensemble
// (control_ensemble.hpp); this one member is `muoncheck oracle --control`.
Trajectory run_control(const Scenario& s);

// The initial state (weights from the data generator, zero optimizer state).
TrainingState initial_state(const Scenario& s);

// One exact step from a given state (stepwise checks feed the implementation's
// own state in here, so an error is located at the step where it first appears).
StepRecord step_from(const Scenario& s, int step, const TrainingState& before, Precision p);

}  // namespace muoncheck::oracle
