#include "oracle/scaler.hpp"

#include <algorithm>

namespace muoncheck::oracle {

ScalerState initial_scaler(const LossScalerConfig& c) {
  return ScalerState{initial_loss_scale(c), c.hysteresis, 0};
}

ScalerState scaler_after(const LossScalerConfig& c, const ScalerState& before, bool overflow) {
  if (c.type != ScalerType::dynamic) return before;
  ScalerState s = before;
  if (overflow) {
    if (s.hysteresis <= 1) s.scale = std::max(s.scale / 2.0, c.min_scale);
    else s.hysteresis -= 1;
    s.good_streak = 0;
    return s;
  }
  if (++s.good_streak >= c.scale_window) {
    s.scale *= 2.0;
    s.hysteresis = c.hysteresis;
    s.good_streak = 0;
  }
  return s;
}

}  // namespace muoncheck::oracle
