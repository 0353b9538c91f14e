// Golden digests: the oracle's float128 trajectory of each shipped scenario,
// stored compactly (per step: loss, scale, skip, NS count, and four checksums per
// param) under golden/<scenario>.json with a versioned header. Written only by
// `muoncheck golden update`; compared by `muoncheck golden check` and `check`.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/scenario.hpp"
#include "core/trajectory.hpp"

namespace muoncheck::golden {

constexpr int kSchemaVersion = 1;
constexpr double kRelativeTolerance = 1e-12;   // float128 digests agree far below this across hosts

nlohmann::json digest(const Scenario& s, const Trajectory& t, const std::string& precision);

struct Comparison {
  bool ok = false;
  bool missing = false;     // no golden file yet
  bool stale = false;       // the scenario changed since the golden file was written
  double worst_relative = 0.0;
  std::string message;      // first mismatch, with its location
};

Comparison compare(const nlohmann::json& expected, const nlohmann::json& actual);

std::string golden_path(const std::string& golden_dir, const Scenario& s);
std::string regenerate_hint(const Scenario& s);

}  // namespace muoncheck::golden
