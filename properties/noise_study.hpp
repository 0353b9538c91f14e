// How the control ensemble behaves on a scenario, measured against the exact oracle:
// the old single-control band beside the ensemble band, the sensitivity of the weight
// band to one step's update, and the leave-one-out ratios that justify `alpha`: member
// k's error over the largest error of the other members — how far one more valid
// rounding sequence (an implementation) lands beyond an ensemble that lacks it.
#pragma once
#include <string>
#include <vector>

#include "core/scenario.hpp"
#include "core/trajectory.hpp"
#include "properties/tensor_error.hpp"

namespace muoncheck {

struct NoiseStudy {
  std::string scenario;
  int members = 0;
  // Weight bands (relative, worst over steps and params): alpha·err(member 0) + floor
  // (the old single control) and alpha·max_k err(member k) + floor.
  double single_band = 0.0, ensemble_band = 0.0;
  // The ensemble weight band over ‖ΔW*‖ of the step (free-running), worst, and where.
  double sensitivity = 0.0;
  std::string sensitivity_where;
  // Leave-one-out over every state tensor whose other members' errors are above the
  // floor: the largest ratio, the share of (tensor, member) pairs above 1 (iid samples
  // give 1/K), and the number of pairs.
  double loo_max = 0.0, loo_share_above_1 = 0.0;
  long loo_pairs = 0;
  std::string loo_max_where;
};

NoiseStudy study_noise(const Scenario& s, const Trajectory& exact, const ControlEnsemble& members);

}  // namespace muoncheck
