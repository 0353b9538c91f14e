#include "properties/relational_invariants.hpp"

#include <cmath>
#include <cstdio>
#include <vector>

#include "properties/tensor_error.hpp"

namespace muoncheck {

namespace {

// ‖a − b‖ / ‖exact‖
double relative_gap(const std::vector<double>& a, const std::vector<double>& b, const std::vector<double>& exact) {
  if (a.size() != b.size() || a.size() != exact.size()) return INFINITY;
  long double d = 0, n = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const long double x = static_cast<long double>(a[i]) - b[i];
    d += x * x;
    n += static_cast<long double>(exact[i]) * exact[i];
  }
  if (std::isnan(static_cast<double>(d))) return INFINITY;
  return static_cast<double>(std::sqrt(d) / std::max(std::sqrt(n), 1e-30L));
}

}  // namespace

Verdict compare_runs(const std::string& invariant, const Scenario& s, const Trajectory& oracle,
                     const RelationalSide& a, const RelationalSide& b) {
  double worst = 0, worst_gap = 0, worst_band = 0, sensitivity = 0;
  std::string sensitivity_where;
  int worst_step = -1;
  std::string worst_param;
  const size_t steps = oracle.steps.size();
  if (a.impl->steps.size() != steps || b.impl->steps.size() != steps)
    return Verdict::judge(invariant, INFINITY, 1.0, "the runs have different step counts");
  auto weights = [](const ControlEnsemble& e, size_t t, size_t p) { return member_tensors(member_params(e, t), p, "weight"); };
  Undetermined undetermined;
  for (size_t t = 0; t < steps; ++t) {
    const bool downstream = undetermined.tensors > 0;   // both runs free-run past an undetermined step
    for (size_t p = 0; p < oracle.steps[t].params.size(); ++p) {
      const auto& exact = oracle.steps[t].params[p].weight;
      const auto& before = t == 0 ? oracle.initial[p].weight : oracle.steps[t - 1].params[p].weight;
      const bool both = p < a.impl->steps[t].params.size() && p < b.impl->steps[t].params.size();
      const double gap = both ? relative_gap(a.impl->steps[t].params[p].weight, b.impl->steps[t].params[p].weight, exact) : INFINITY;
      const double ea = ensemble_error(weights(*a.controls, t, p), exact), eb = ensemble_error(weights(*b.controls, t, p), exact);
      const double band = allowed_error(s.tolerance, ea + eb);
      const double ratio = gap / band;
      const std::string here = "step " + std::to_string(t) + " " + s.model.params[p].name;
      const double spread = spread_over_update(std::max(ea, eb), exact, before);
      undetermined.note_spread(spread, here);
      const double sens = update_sensitivity(band, exact, before);
      if (sens > sensitivity) sensitivity = sens, sensitivity_where = here;
      if (downstream || is_undetermined(spread)) {   // judged apart (determinacy.hpp)
        undetermined.note_tensor(ratio, here);
        continue;
      }
      if (!(ratio <= worst)) {
        worst = std::isnan(ratio) ? INFINITY : ratio;
        worst_gap = gap, worst_band = band;
        worst_step = static_cast<int>(t), worst_param = s.model.params[p].name;
      }
    }
  }
  Verdict v;
  if (worst_step < 0) {
    v = Verdict::judge(invariant, 0.0, 1.0,
                       a.label + " vs " + b.label + ": weights bit-identical at every " +
                           (undetermined.tensors > 0 ? "determined " : "") + "step");
  } else {
    WorstCase w;
    w.measure = WorstCase::Measure::difference;
    w.step = worst_step, w.param = worst_param, w.error = worst_gap, w.band = worst_band;
    w.compared = a.label + " vs " + b.label;
    v = Verdict::located(invariant, worst, 1.0, w);
  }
  v.sensitivity = sensitivity;
  v.sensitivity_where = sensitivity_where;
  return settle(v, undetermined, s);
}

}  // namespace muoncheck
