#include "properties/tensor_error.hpp"

#include <cmath>
#include <cstdio>
#include <limits>

#include "core/error.hpp"

namespace muoncheck {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();

long double norm_of(const std::vector<double>& x) {
  long double n = 0;
  for (double v : x) n += static_cast<long double>(v) * v;
  return std::sqrt(n);
}
}  // namespace

double relative_error(const std::vector<double>& x, const std::vector<double>& exact) {
  if (x.size() != exact.size()) return kInf;
  long double diff = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const long double d = static_cast<long double>(x[i]) - exact[i];
    diff += d * d;
  }
  if (std::isnan(static_cast<double>(diff))) return kInf;
  return static_cast<double>(std::sqrt(diff) / std::max(norm_of(exact), 1e-30L));
}

double allowed_error(const Tolerance& t, double control_error, DType storage) {
  return t.alpha * control_error + t.floor_ulps * unit_roundoff(storage);
}

double ensemble_error(const std::vector<const std::vector<double>*>& members, const std::vector<double>& exact) {
  if (members.empty()) throw Error(ErrorKind::Internal, "noise band: the control ensemble is empty");
  double worst = 0.0;
  for (const auto* m : members) {
    if (m == nullptr) throw Error(ErrorKind::Internal, "noise band: a control member lacks a tensor the oracle has");
    worst = std::max(worst, relative_error(*m, exact));
  }
  return worst;
}

std::vector<NamedTensor> state_tensors(const ParamState& p) {
  std::vector<NamedTensor> out;
  for (const auto& [kind, values] : {std::pair<const char*, const std::vector<double>*>{"weight", &p.weight},
                                     {"momentum", &p.momentum}, {"adam_m", &p.adam_m}, {"adam_v", &p.adam_v}})
    if (!values->empty()) out.push_back({kind, values});
  return out;
}

const std::vector<double>* find_tensor(const ParamState& p, const std::string& kind) {
  for (const auto& t : state_tensors(p))
    if (t.kind == kind) return t.values;
  return nullptr;
}

std::string BandCheck::where() const {
  WorstCase w;
  w.step = step, w.param = param, w.tensor = tensor;
  return where_text(w);
}

void BandCheck::merge(const BandCheck& o, int at_step, const std::string& of_param) {
  const std::string prefix = (at_step >= 0 ? "step " + std::to_string(at_step) + " " : "") +
                             (of_param.empty() ? "" : "param " + of_param + " ");
  if (!(o.worst_ratio <= worst_ratio)) {   // NaN-safe: a NaN ratio becomes the worst
    worst_ratio = std::isnan(o.worst_ratio) ? kInf : o.worst_ratio;
    worst_impl_error = o.worst_impl_error;
    worst_control_error = o.worst_control_error;
    step = at_step >= 0 ? at_step : o.step;
    param = of_param.empty() ? o.param : of_param;
    tensor = o.tensor;
  }
  if (o.sensitivity > sensitivity) sensitivity = o.sensitivity, sensitivity_where = prefix + o.sensitivity_where;
  undetermined.merge(o.undetermined, prefix);
  for (const auto& [kind, worst] : o.by_kind) {
    const double ratio = std::isnan(worst.first) ? kInf : worst.first;
    auto it = by_kind.find(kind);
    if (it == by_kind.end() || !(ratio <= it->second.first)) by_kind[kind] = {ratio, prefix + worst.second};
  }
}

std::string per_kind_summary(const BandCheck& b) {
  if (b.by_kind.size() < 2) return "";
  std::string out;
  for (const auto& [kind, worst] : b.by_kind) {
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, "%.3g", worst.first);
    std::string where = worst.second;
    while (!where.empty() && where.back() == ' ') where.pop_back();
    out += (out.empty() ? "" : ", ") + kind + " " + ratio + " (" + where + ")";
  }
  return out;
}

double update_sensitivity(double allowed, const std::vector<double>& exact, const std::vector<double>& exact_before) {
  if (exact.size() != exact_before.size()) return 0.0;
  long double d = 0;
  for (size_t i = 0; i < exact.size(); ++i) {
    const long double x = static_cast<long double>(exact[i]) - exact_before[i];
    d += x * x;
  }
  if (!(d > 0) || !std::isfinite(static_cast<double>(d))) return 0.0;
  return static_cast<double>(allowed * norm_of(exact) / std::sqrt(d));
}

BandCheck check_band(const Scenario& s, const StepSides& sides) {
  BandCheck b;
  const auto& exact = *sides.exact;
  for (size_t p = 0; p < exact.size(); ++p) {
    const std::string& name = s.model.params[p].name;
    const ParamState none;
    const ParamState& have = p < sides.impl->size() ? (*sides.impl)[p] : none;
    for (const auto& want : state_tensors(exact[p])) {
      const auto members = member_tensors(sides.members, p, want.kind);
      const auto* got = find_tensor(have, want.kind);
      BandCheck c;
      c.worst_impl_error = got ? relative_error(*got, *want.values) : kInf;
      c.worst_control_error = ensemble_error(members, *want.values);
      const double allowed = allowed_error(s.tolerance, c.worst_control_error);
      c.worst_ratio = c.worst_impl_error / allowed;
      c.tensor = want.kind + (got ? "" : " (not exported by the implementation)");
      bool undetermined = sides.downstream_of_undetermined;
      if (want.kind == "weight" && sides.exact_before && p < sides.exact_before->size()) {
        const auto& before = (*sides.exact_before)[p].weight;
        c.sensitivity = update_sensitivity(allowed, *want.values, before), c.sensitivity_where = "weight";
        const double spread = spread_over_update(c.worst_control_error, *want.values, before);
        c.undetermined.note_spread(spread, "weight");
        undetermined = undetermined || is_undetermined(spread);
      }
      if (undetermined) {   // judged apart: the band says nothing here
        c.undetermined.note_tensor(c.worst_ratio, c.where());
        c.worst_ratio = 0.0, c.tensor.clear();
      } else {
        c.by_kind[want.kind] = {c.worst_ratio, ""};
      }
      b.merge(c, -1, name);
    }
    // A tensor the exact state does not have (momentum of an AdamW param) is a tagging error.
    for (const auto& extra : state_tensors(have))
      if (find_tensor(exact[p], extra.kind) == nullptr) {
        BandCheck c;
        c.worst_ratio = kInf;
        c.tensor = extra.kind + " (exported by the implementation, absent from the exact state)";
        b.merge(c, -1, name);
      }
  }
  return b;
}

std::vector<const std::vector<ParamState>*> member_params(const ControlEnsemble& e, size_t t) {
  std::vector<const std::vector<ParamState>*> out;
  for (const auto& m : e) {
    if (t >= m.steps.size()) throw Error(ErrorKind::Internal, "noise band: a control member ran fewer steps");
    out.push_back(&m.steps[t].params);
  }
  return out;
}

std::vector<const std::vector<double>*> member_tensors(const std::vector<const std::vector<ParamState>*>& members,
                                                       size_t p, const std::string& kind) {
  std::vector<const std::vector<double>*> out;
  for (const auto* m : members) out.push_back(p < m->size() ? find_tensor((*m)[p], kind) : nullptr);
  return out;
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
