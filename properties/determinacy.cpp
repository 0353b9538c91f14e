#include "properties/determinacy.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "properties/tensor_error.hpp"

namespace muoncheck {

namespace {

std::string figure(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", x);
  return buf;
}

}  // namespace

double spread_over_update(double ensemble_error, const std::vector<double>& exact, const std::vector<double>& exact_before) {
  // A non-finite exact state (a step that starts from the state an undetermined step left
  // infinite) has no relative error to speak of: nothing there is determined.
  for (const auto* x : {&exact, &exact_before})
    for (double v : *x)
      if (!std::isfinite(v)) return INFINITY;
  if (!std::isfinite(ensemble_error)) return INFINITY;
  return update_sensitivity(ensemble_error, exact, exact_before);
}

bool is_undetermined(double spread) { return !(spread < kUndeterminedAt); }

void Undetermined::note_spread(double s, const std::string& where) {
  if (!(s <= spread)) spread = std::isnan(s) ? INFINITY : s, spread_where = where;
}

void Undetermined::note_tensor(double r, const std::string& where) {
  ++tensors;
  if (!(r <= ratio)) ratio = std::isnan(r) ? INFINITY : r, ratio_where = where;
}

void Undetermined::merge(const Undetermined& o, const std::string& prefix) {
  if (o.spread > spread) spread = o.spread, spread_where = prefix + o.spread_where;
  if (o.tensors > 0 && (tensors == 0 || o.ratio > ratio)) ratio = o.ratio, ratio_where = prefix + o.ratio_where;
  tensors += o.tensors;
  if (reason.empty() && !o.reason.empty()) reason = prefix + o.reason;
}

Verdict settle(Verdict v, const Undetermined& u, const Scenario& s) {
  v.spread = u.spread;
  v.spread_where = u.spread_where;
  if (v.status != Status::pass || u.tensors == 0) return v;
  v.status = Status::inconclusive;
  v.metric = std::max(v.metric, u.ratio);
  const std::string why = u.reason.empty() ? "the control ensemble's own spread is " + figure(u.spread) + " updates at " +
                                                 u.spread_where + " (undetermined at >= " + figure(kUndeterminedAt) +
                                                 ": valid rounding orders disagree by more than the step's update)"
                                           : u.reason;
  v.message = "INCONCLUSIVE: " + why + "; " + std::to_string(u.tensors) + " undetermined tensor(s)" +
              (u.ratio_where.empty() ? "" : ", worst band ratio there " + figure(u.ratio) + " at " + u.ratio_where) +
              "; the determined part: " + v.message;
  return v;
}

std::string inconclusive_cause(const Scenario& s) {
  const auto& o = s.optimizer;
  const std::string ns = std::string(dtype_name(o.ns_dtype));
  std::vector<std::string> causes;
  // Gram's one restart (iteration 2) is placed for 5 iterations whatever the coefficients: past
  // them its rounding error grows with every iteration (measured: Polar Express's 8 in bf16 are
  // undetermined in Gram form and determined in the standard loop; docs/invariants.md).
  if (o.ns_method == NsMethod::gram && o.ns_dtype != DType::fp32 && o.ns_steps > 5)
    causes.push_back("Gram Newton-Schulz in " + ns + " with " + std::to_string(o.ns_steps) +
                     " iterations, past the 5 its one restart is placed for (its rounding error grows with every "
                     "further iteration, whatever the coefficients)");
  if (o.ns_dtype != DType::fp32)
    for (const auto& p : s.model.params) {
      const auto v = matrix_view(p.shape);
      const int64_t side = std::min(v.rows, v.cols);
      if (v.rows > 1 && v.cols > 1 && s.engine.global_batch() < side) {
        causes.push_back(ns + " Newton-Schulz on a rank-deficient gradient (" + p.name + ": global batch " +
                         std::to_string(s.engine.global_batch()) + " below its smaller side " + std::to_string(side) +
                         ", so rounding noise in the null space is amplified to O(1))");
        break;
      }
    }
  if (causes.empty()) return "no known cause in the configuration: the valid rounding orders themselves disagree by more than an update";
  std::string out;
  for (const auto& c : causes) out += (out.empty() ? "" : "; and ") + c;
  return out + "; a user training with it gets no well-defined update either";
}

}  // namespace muoncheck
