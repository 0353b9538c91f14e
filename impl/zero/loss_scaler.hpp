// The loss scaler's bookkeeping (SPEC §4.3/4.8): none (S = 1), static, or dynamic with
// hysteresis — on overflow the counter decrements, and at 1 the scale halves (not below
// min_scale); after scale_window consecutive good steps the scale doubles and the
// counter resets. Every rank runs its own copy on the same all-reduced flag.
#pragma once
#include "core/scenario.hpp"
#include "core/trajectory.hpp"

namespace muoncheck::impl {

class LossScaler {
 public:
  explicit LossScaler(const LossScalerConfig& c);
  double scale() const { return state_.scale; }
  const ScalerState& state() const { return state_; }
  void on_overflow();
  void on_good_step();

 private:
  LossScalerConfig cfg_;
  ScalerState state_;
};

}  // namespace muoncheck::impl
