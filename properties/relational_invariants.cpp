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
  double worst = 0, worst_gap = 0, worst_band = 0;
  std::string where;
  const size_t steps = oracle.steps.size();
  if (a.impl->steps.size() != steps || b.impl->steps.size() != steps)
    return Verdict::judge(invariant, INFINITY, 1.0, "the runs have different step counts");
  for (size_t t = 0; t < steps; ++t)
    for (size_t p = 0; p < oracle.steps[t].params.size(); ++p) {
      const auto& exact = oracle.steps[t].params[p].weight;
      const double gap = relative_gap(a.impl->steps[t].params[p].weight, b.impl->steps[t].params[p].weight, exact);
      const double band = allowed_error(s.tolerance, relative_error(a.control->steps[t].params[p].weight, exact) +
                                                         relative_error(b.control->steps[t].params[p].weight, exact));
      const double ratio = gap / band;
      if (!(ratio <= worst)) {
        worst = std::isnan(ratio) ? INFINITY : ratio;
        worst_gap = gap, worst_band = band;
        where = "step " + std::to_string(t) + " " + s.model.params[p].name;
      }
    }
  char buf[200];
  if (where.empty()) {
    std::snprintf(buf, sizeof buf, "%s vs %s: weights bit-identical at every step", a.label.c_str(), b.label.c_str());
    return Verdict::judge(invariant, 0.0, 1.0, buf);
  }
  std::snprintf(buf, sizeof buf, "%s vs %s: worst relative weight difference %.3g (band %.3g) at ", a.label.c_str(),
                b.label.c_str(), worst_gap, worst_band);
  return Verdict::judge(invariant, worst, 1.0, buf + where);
}

}  // namespace muoncheck
