#include "properties/noise_study.hpp"

#include <algorithm>

namespace muoncheck {

NoiseStudy study_noise(const Scenario& s, const Trajectory& exact, const ControlEnsemble& members) {
  NoiseStudy n;
  n.scenario = s.name;
  n.members = static_cast<int>(members.size());
  const double floor = allowed_error(s.tolerance, 0.0);
  long above = 0;
  for (size_t t = 0; t < exact.steps.size(); ++t) {
    const auto ms = member_params(members, t);
    for (size_t p = 0; p < exact.steps[t].params.size(); ++p)
      for (const auto& want : state_tensors(exact.steps[t].params[p])) {
        std::vector<double> e;
        for (const auto* v : member_tensors(ms, p, want.kind)) e.push_back(v ? relative_error(*v, *want.values) : 0.0);
        const std::string where = "step " + std::to_string(t) + " " + s.model.params[p].name + " " + want.kind;
        if (want.kind == "weight") {
          const double band = allowed_error(s.tolerance, *std::max_element(e.begin(), e.end()));
          n.single_band = std::max(n.single_band, allowed_error(s.tolerance, e[0]));
          n.ensemble_band = std::max(n.ensemble_band, band);
          const auto& before = t == 0 ? exact.initial[p].weight : exact.steps[t - 1].params[p].weight;
          const double sens = update_sensitivity(band, *want.values, before);
          if (sens > n.sensitivity) n.sensitivity = sens, n.sensitivity_where = where;
        }
        for (size_t k = 0; k < e.size() && e.size() > 1; ++k) {
          double others = 0.0;
          for (size_t j = 0; j < e.size(); ++j)
            if (j != k) others = std::max(others, e[j]);
          if (others * s.tolerance.alpha <= floor) continue;   // below the floor the band is the floor
          const double r = e[k] / others;
          ++n.loo_pairs;
          above += r > 1.0;
          if (r > n.loo_max) n.loo_max = r, n.loo_max_where = where + " member " + std::to_string(k);
        }
      }
  }
  n.loo_share_above_1 = n.loo_pairs ? static_cast<double>(above) / n.loo_pairs : 0.0;
  return n;
}

}  // namespace muoncheck
