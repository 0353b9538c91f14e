// Error of a tensor against the exact oracle, ‖X − X*‖_F / max(‖X*‖_F, tiny), and the
// noise band every numeric invariant judges with: pass when
//   err(impl) ≤ alpha · max_k err(control_k) + floor_ulps · u(fp32),
// the maximum over a control ensemble of valid rounding sequences (oracle's
// control_ensemble.hpp), so no single order, and no lucky near-zero sample, sets the band.
// Written once here; every numeric and relational invariant uses it.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "core/scenario.hpp"
#include "core/trajectory.hpp"
#include "properties/determinacy.hpp"

namespace muoncheck {

// The control members' trajectories of one scenario (member 0: the CPU implementation's order).
using ControlEnsemble = std::vector<Trajectory>;

double relative_error(const std::vector<double>& x, const std::vector<double>& exact);

// The storage dtype of master weights and optimizer state (always fp32 by design).
constexpr DType kStateDType = DType::fp32;

double allowed_error(const Tolerance& t, double control_error, DType storage = kStateDType);

// The largest member error of one tensor; a member that lacks the tensor counts as infinite.
double ensemble_error(const std::vector<const std::vector<double>*>& members, const std::vector<double>& exact);

// The tensors of a ParamState by name: weight, momentum, adam_m, adam_v (the
// ones present: momentum for Muon params, the Adam moments for the others).
struct NamedTensor {
  std::string kind;
  const std::vector<double>* values;
};
std::vector<NamedTensor> state_tensors(const ParamState& p);
// The tensor of that name, or nullptr when it is absent or empty.
const std::vector<double>* find_tensor(const ParamState& p, const std::string& kind);

// Worst (impl error / allowed) over every param and state tensor of one step, and the
// sensitivity of its weights: the band as a fraction of the step's exact update
// ‖ΔW*‖ (the smallest relative change of an update that would be caught).
struct BandCheck {
  double worst_ratio = 0.0;
  double worst_impl_error = 0.0;
  double worst_control_error = 0.0;
  // Where the worst ratio is: its step (-1: none), param ("" none) and tensor ("momentum",
  // "weight (not exported by the implementation)", "skip decision differs ..."); where() renders them.
  int step = -1;
  std::string param;
  std::string tensor;
  std::string where() const;   // "step 3 param NAME momentum"; "" where nothing is located
  double sensitivity = 0.0;
  std::string sensitivity_where;
  // The worst ratio per kind of tensor (weight, momentum, adam_m, adam_v) and where, so a
  // verdict can show the weights apart from state an implementation keeps in other units.
  std::map<std::string, std::pair<double, std::string>> by_kind;
  // Tensors the precision does not determine (determinacy.hpp), judged apart: not in
  // worst_ratio or by_kind; with the worst spread over update of every weight.
  Undetermined undetermined;
  // Keeps the worst of each; o's worst lies at `at_step` (-1: o's own) of `of_param` ("": o's own).
  void merge(const BandCheck& o, int at_step, const std::string& of_param = "");
};

// "weight 0.26 (step 4 param a), momentum 256 (step 1 param b)" — empty with fewer than two kinds.
std::string per_kind_summary(const BandCheck& b);

// One step's tensors from every side. `exact_before` is the exact state the step started
// from (weights only are read: ΔW* = W*_after − W*_before).
struct StepSides {
  const std::vector<ParamState>* impl;
  const std::vector<ParamState>* exact;
  const std::vector<ParamState>* exact_before;
  std::vector<const std::vector<ParamState>*> members;
  // Downstream of an undetermined step (a free-running trajectory after one): every tensor is.
  bool downstream_of_undetermined = false;
};
BandCheck check_band(const Scenario& s, const StepSides& sides);

// Band as a fraction of the update: allowed·‖W*‖ / ‖W* − W*_before‖ (0 when W* did not move).
double update_sensitivity(double allowed, const std::vector<double>& exact, const std::vector<double>& exact_before);

// The members' params at step t (ensemble order).
std::vector<const std::vector<ParamState>*> member_params(const ControlEnsemble& e, size_t t);
// Every member's tensor `kind` of param p (nullptr where a member lacks it).
std::vector<const std::vector<double>*> member_tensors(const std::vector<const std::vector<ParamState>*>& members,
                                                       size_t p, const std::string& kind);

// The state before step `step` (the initial state for step 0) as a TrainingState.
TrainingState state_before(const Scenario& s, const Trajectory& t, int step);

}  // namespace muoncheck
