#include "properties/tensor_error.hpp"

#include <cmath>
#include <limits>

namespace muoncheck {

double relative_error(const std::vector<double>& x, const std::vector<double>& exact) {
  if (x.size() != exact.size()) return std::numeric_limits<double>::infinity();
  long double diff = 0, norm = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const long double d = static_cast<long double>(x[i]) - exact[i];
    diff += d * d;
    norm += static_cast<long double>(exact[i]) * exact[i];
  }
  if (std::isnan(static_cast<double>(diff))) return std::numeric_limits<double>::infinity();
  return static_cast<double>(std::sqrt(diff) / std::max(std::sqrt(norm), 1e-30L));
}

double allowed_error(const Tolerance& t, double control_error, DType storage) {
  return t.alpha * control_error + t.floor_ulps * unit_roundoff(storage);
}

std::vector<NamedTensor> state_tensors(const ParamState& p) {
  std::vector<NamedTensor> out = {{"weight", &p.weight}};
  if (!p.momentum.empty()) out.push_back({"momentum", &p.momentum});
  if (!p.adam_m.empty()) out.push_back({"adam_m", &p.adam_m}), out.push_back({"adam_v", &p.adam_v});
  return out;
}

BandCheck check_band(const Scenario& s, const std::vector<ParamState>& impl, const std::vector<ParamState>& exact,
                     const std::vector<ParamState>& control) {
  BandCheck b;
  for (size_t p = 0; p < exact.size(); ++p) {
    const auto want = state_tensors(exact[p]);
    const auto have = p < impl.size() ? state_tensors(impl[p]) : std::vector<NamedTensor>{};
    const auto ctrl = p < control.size() ? state_tensors(control[p]) : std::vector<NamedTensor>{};
    for (size_t k = 0; k < want.size(); ++k) {
      const auto* got = k < have.size() && std::string(have[k].kind) == want[k].kind ? have[k].values : nullptr;
      const auto* noise = k < ctrl.size() && std::string(ctrl[k].kind) == want[k].kind ? ctrl[k].values : nullptr;
      const double e_impl = got ? relative_error(*got, *want[k].values) : std::numeric_limits<double>::infinity();
      const double e_ctrl = noise ? relative_error(*noise, *want[k].values) : 0.0;
      const double ratio = e_impl / allowed_error(s.tolerance, e_ctrl);
      if (!(ratio <= b.worst_ratio)) {  // NaN-safe: a NaN ratio becomes the worst
        b.worst_ratio = std::isnan(ratio) ? std::numeric_limits<double>::infinity() : ratio;
        b.worst_impl_error = e_impl;
        b.worst_control_error = e_ctrl;
        b.where = "param " + s.model.params[p].name + " " + want[k].kind;
      }
    }
  }
  return b;
}

TrainingState state_before(const Scenario& s, const Trajectory& t, int step) {
  TrainingState st;
  if (step == 0) {
    st.params = t.initial;
    st.scaler.scale = initial_loss_scale(s.loss_scaler);
    st.scaler.hysteresis = s.loss_scaler.hysteresis;
    return st;
  }
  const auto& prev = t.steps.at(step - 1);
  st.params = prev.params;
  for (auto& p : st.params) p.grad.clear();
  st.scaler = prev.scaler_after;
  st.good_steps = prev.good_steps_after;
  return st;
}

}  // namespace muoncheck
