#include "properties/verdict.hpp"

#include <algorithm>
#include <cmath>

namespace muoncheck {

std::string status_name(Status s) {
  switch (s) {
    case Status::pass: return "PASS";
    case Status::fail: return "FAIL";
    case Status::unsupported: return "UNSUPPORTED";
    case Status::skipped: return "SKIPPED";
  }
  return "?";
}

Verdict Verdict::judge(std::string invariant, double metric, double threshold, std::string message) {
  // NaN metrics fail: a check that cannot compute its number has not passed.
  const bool ok = !std::isnan(metric) && metric <= threshold;
  return {std::move(invariant), ok ? Status::pass : Status::fail, metric, threshold, std::move(message)};
}

Verdict Verdict::skip(std::string invariant, std::string why) {
  return {std::move(invariant), Status::skipped, 0.0, 0.0, std::move(why)};
}

Verdict Verdict::unsupported(std::string invariant, std::string why) {
  return {std::move(invariant), Status::unsupported, 0.0, 0.0, std::move(why)};
}

const std::vector<std::string>& invariant_ids() {
  static const std::vector<std::string> ids = {
      "trajectory-conforms", "step-conforms",      "grad-plumbing-exact", "ns-once-per-matrix-per-step",
      "tagging-matches",     "gas-invariant",      "dp-invariant",        "stage-invariant",
      "bucket-invariant",    "overflow-skip-clean", "scaler-state-exact",   "comm-dtype-respected",
      "gathers-once-per-step", "ranks-agree",       "deterministic",       "checkpoint-resume-exact"};
  return ids;
}

bool is_invariant_id(const std::string& id) {
  const auto& ids = invariant_ids();
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

}  // namespace muoncheck
