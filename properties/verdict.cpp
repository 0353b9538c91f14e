#include "properties/verdict.hpp"

#include <cmath>

namespace muoncheck {

std::string status_name(Status s) {
  switch (s) {
    case Status::pass: return "PASS";
    case Status::fail: return "FAIL";
    case Status::unsupported: return "UNSUPPORTED";
    case Status::skipped: return "SKIPPED";
    case Status::inconclusive: return "INCONCLUSIVE";
  }
  return "?";
}

namespace {
Verdict make(std::string invariant, Status status, double metric, double threshold, std::string message) {
  Verdict v;
  v.invariant = std::move(invariant);
  v.status = status;
  v.metric = metric;
  v.threshold = threshold;
  v.message = std::move(message);
  return v;
}
}  // namespace

Verdict Verdict::judge(std::string invariant, double metric, double threshold, std::string message) {
  // NaN metrics fail: a check that cannot compute its number has not passed.
  const bool ok = !std::isnan(metric) && metric <= threshold;
  return make(std::move(invariant), ok ? Status::pass : Status::fail, metric, threshold, std::move(message));
}

Verdict Verdict::skip(std::string invariant, std::string why) {
  return make(std::move(invariant), Status::skipped, 0.0, 0.0, std::move(why));
}

Verdict Verdict::unsupported(std::string invariant, std::string why) {
  return make(std::move(invariant), Status::unsupported, 0.0, 0.0, std::move(why));
}

}  // namespace muoncheck
