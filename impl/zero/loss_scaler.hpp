// The loss scaler's bookkeeping (docs/semantics.md §4.3, §4.8): none (S = 1), static, or dynamic with
// hysteresis — on overflow the counter decrements, and at 1 the scale halves (not below
// min_scale); after scale_window consecutive good steps the scale doubles and the
// counter resets. Every rank runs its own copy on the same all-reduced flag. The fault
// scaler-hysteresis-kept lives on the growth path.
#pragma once
#include "core/scenario.hpp"
#include "core/trajectory.hpp"
#include "impl/faults/faults.hpp"

namespace muoncheck::impl {

class LossScaler {
 public:
  LossScaler(const LossScalerConfig& c, const FaultSet& faults);
  double scale() const { return state_.scale; }
  const ScalerState& state() const { return state_; }
  void restore(const ScalerState& s) { state_ = s; }     // a resume from a checkpoint
  void on_overflow();
  void on_good_step();

 private:
  LossScalerConfig cfg_;
  bool keep_hysteresis_on_growth_;
  ScalerState state_;
};

}  // namespace muoncheck::impl
