// The loss scaler's whole state, step by step: after every step the implementation's
// scale, hysteresis counter and good-step streak, the scale the step used, its skip
// decision and AdamW's step count must equal the oracle's exactly (docs/semantics.md §4.3, §4.8 in
// docs/semantics.md). overflow-skip-clean compares the scale on skipped steps only; a
// counter that drifts on good steps (a hysteresis not reset on growth, a streak kept
// across an overflow) moves no number until a later overflow, so it is compared here.
#pragma once
#include "core/trajectory.hpp"
#include "properties/run_bundle.hpp"
#include "properties/verdict.hpp"

namespace muoncheck {

Verdict scaler_state_exact(const RunBundle& b);
Verdict scaler_state_exact(const Trajectory& oracle, const Trajectory& impl);

}  // namespace muoncheck
