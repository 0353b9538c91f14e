// The loss scaler of docs/semantics.md §4.3 as a pure function of (config, state, overflow).
// Scales are powers of two, so double holds them exactly in every precision.
// none/static never change; dynamic halves after `hysteresis` overflows and
// doubles after `scale_window` consecutive good steps.
#pragma once
#include "core/scenario.hpp"
#include "core/trajectory.hpp"

namespace muoncheck::oracle {

ScalerState initial_scaler(const LossScalerConfig& c);

// The state after one step's bookkeeping. Dynamic, overflow: if the counter is 1
// the scale becomes max(S/2, min_scale), else the counter decrements; the good
// streak restarts. Good step: the streak grows; at scale_window S doubles, the
// counter resets to `hysteresis` and the streak restarts.
ScalerState scaler_after(const LossScalerConfig& c, const ScalerState& before, bool overflow);

}  // namespace muoncheck::oracle
