#include "impl/zero/loss_scaler.hpp"

#include <algorithm>

namespace muoncheck::impl {

LossScaler::LossScaler(const LossScalerConfig& c, const FaultSet& faults)
    : cfg_(c), keep_hysteresis_on_growth_(faults.has(Fault::scaler_hysteresis_kept)) {
  state_.scale = initial_loss_scale(c);
  state_.hysteresis = c.hysteresis;
  state_.good_streak = 0;
}

void LossScaler::on_overflow() {
  if (cfg_.type != ScalerType::dynamic) return;
  state_.good_streak = 0;
  if (state_.hysteresis <= 1) state_.scale = std::max(state_.scale / 2.0, cfg_.min_scale);
  else --state_.hysteresis;
}

void LossScaler::on_good_step() {
  if (cfg_.type != ScalerType::dynamic) return;
  if (++state_.good_streak >= cfg_.scale_window) {
    state_.scale *= 2.0;
    state_.good_streak = 0;
    // The counter spent by earlier overflows was kept across the growth, so the next
    // overflow after a growth halved the scale at once.
    if (!keep_hysteresis_on_growth_) state_.hysteresis = cfg_.hysteresis;  // CHECK_EXCL_BR_LINE: fault path
  }
}

}  // namespace muoncheck::impl
