// The features whose 2-way interactions `muoncheck pairs` measures, and the values a
// scenario exercises of each. Config features are read from the Scenario; the dynamic ones
// (does the clip bind, does a step overflow, does the loss scale grow) from what the oracle's
// run of it did; per-parameter ones (rank, block shape, per-head) from the oracle's tags, one
// set per Muon parameter, so a pair of two of them is covered only by one parameter having both.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "core/scenario.hpp"
#include "core/trajectory.hpp"

namespace muoncheck::pairs {

enum class Level { scenario, param };
enum class Source { config, oracle };

struct Feature {
  std::string name;
  Level level;
  Source source;
  std::vector<std::string> values;   // the domain, in report order
};

// Every feature, in report order.
const std::vector<Feature>& features();

// What one scenario exercises: one value per applicable scenario-level feature (absent when the
// feature does not apply, e.g. allgather buckets at stage 0), and for each Muon parameter one
// value per param-level feature.
struct Exercised {
  std::string scenario;
  std::map<std::string, std::string> values;                  // scenario-level feature -> value
  std::vector<std::map<std::string, std::string>> params;     // per Muon param: feature -> value
};

// `oracle` is the oracle's trajectory of `s` (any precision: only skips, scales, the gradient
// norm, weights and tags are read).
Exercised exercised(const Scenario& s, const Trajectory& oracle);

// Does the clip change any good step of the trajectory? raw_grad: ‖G‖ > max_norm. update: the
// norm over the Muon updates (recovered from the oracle's weights by re-running each step with
// clipping off) and the others' G exceeds max_norm.
bool clip_binds(const Scenario& s, const Trajectory& oracle);

}  // namespace muoncheck::pairs
