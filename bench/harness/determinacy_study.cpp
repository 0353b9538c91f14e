// Where the determinacy rule (properties/determinacy.hpp) cuts: for the first N cases of a
// sweep (or named scenarios), the control ensemble's own spread over a step's update — worst
// over the free-running steps and weights, the figure trajectory-conforms decides with — and
// the configuration beside it (NS method, dtype and iterations, whether a Muon matrix sees a
// rank-deficient gradient). Only the oracle (double) and the 8-member ensemble run, no
// implementation, so a thousand cases take minutes. Numbers are printed, never asserted.
//   determinacy_study [--cases N] [--seed S] [--save-above X DIR] [SCENARIO...]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "core/scenario_io.hpp"
#include "harness/judge/scenario_selection.hpp"
#include "harness/sweep/sweep_runner.hpp"
#include "oracle/control_ensemble.hpp"
#include "oracle/oracle.hpp"
#include "properties/determinacy.hpp"
#include "properties/tensor_error.hpp"

namespace mc = muoncheck;

namespace {

// The worst spread over every step and weight, and where.
double figure(const mc::Scenario& s, std::string& where) {
  const auto exact = mc::oracle::run_oracle(s, mc::oracle::Precision::float64);
  const auto controls = mc::oracle::run_control_ensemble(s, mc::oracle::kDefaultControlMembers);
  double worst = 0;
  for (size_t t = 0; t < exact.steps.size(); ++t) {
    const auto& before = t == 0 ? exact.initial : exact.steps[t - 1].params;
    const auto members = mc::member_params(controls, t);
    for (size_t p = 0; p < exact.steps[t].params.size(); ++p) {
      const auto& w = exact.steps[t].params[p].weight;
      const double e = mc::ensemble_error(mc::member_tensors(members, p, "weight"), w);
      const double x = mc::spread_over_update(e, w, before[p].weight);
      if (!(x <= worst)) worst = x, where = "step " + std::to_string(t) + " " + s.model.params[p].name;
    }
  }
  return worst;
}

std::string config(const mc::Scenario& s) {
  const auto& o = s.optimizer;
  int smallest_side = 1 << 30;
  for (const auto& p : s.model.params) {
    const auto v = mc::matrix_view(p.shape);
    if (v.rows > 1 && v.cols > 1) smallest_side = std::min<int>(smallest_side, static_cast<int>(std::min(v.rows, v.cols)));
  }
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s %s %d  batch %d  min side %d%s  steps %d  param %s", o.ns_method == mc::NsMethod::gram ? "gram" : "standard",
                std::string(mc::dtype_name(o.ns_dtype)).c_str(), o.ns_steps, s.engine.global_batch(),
                smallest_side == (1 << 30) ? 0 : smallest_side, s.engine.global_batch() < smallest_side ? " (rank-deficient)" : "",
                s.steps, std::string(mc::dtype_name(s.engine.param_dtype)).c_str());
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  int cases = 200;
  uint64_t seed = 1;
  double save_above = INFINITY;
  std::string save_dir;
  std::vector<std::string> named;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--cases" && i + 1 < argc) cases = std::atoi(argv[++i]);
    else if (a == "--seed" && i + 1 < argc) seed = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--save-above" && i + 2 < argc) save_above = std::atof(argv[++i]), save_dir = argv[++i];
    else named.push_back(a);
  }
  std::vector<mc::Scenario> scenarios;
  if (!named.empty()) scenarios = mc::select_scenarios(named, "scenarios", false);
  else
    for (int i = 0; i < cases; ++i)
      scenarios.push_back(mc::sweep_case(seed, i, {}, "sweep-s" + std::to_string(seed) + "-c" + std::to_string(i + 1)));
  for (const auto& s : scenarios) {
    std::string where;
    double x = 0;
    try {
      x = figure(s, where);
    } catch (const std::exception& e) {
      std::printf("%-22s error: %s\n", s.name.c_str(), e.what());
      continue;
    }
    std::printf("%-22s %10.3g %-3s %s  (%s)\n", s.name.c_str(), x, mc::is_undetermined(x) ? ">=1" : "", config(s).c_str(), where.c_str());
    if (x >= save_above && !save_dir.empty()) {
      std::filesystem::create_directories(save_dir);
      mc::save_scenario(s, (std::filesystem::path(save_dir) / (s.name + ".json")).string());
    }
  }
  return 0;
}
