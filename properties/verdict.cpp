#include "properties/verdict.hpp"

#include <cmath>
#include <cstdio>

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

Verdict Verdict::located(std::string invariant, double metric, double threshold, WorstCase worst,
                         const std::string& before, const std::string& after) {
  Verdict v = judge(std::move(invariant), metric, threshold, before + worst_case_text(worst) + after);
  v.worst = std::move(worst);
  return v;
}

Verdict Verdict::skip(std::string invariant, std::string why) {
  return make(std::move(invariant), Status::skipped, 0.0, 0.0, std::move(why));
}

Verdict Verdict::unsupported(std::string invariant, std::string why) {
  return make(std::move(invariant), Status::unsupported, 0.0, 0.0, std::move(why));
}

namespace {
std::string number(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", x);
  return buf;
}
}  // namespace

std::string where_text(const WorstCase& w) {
  std::string out;
  auto add = [&](const std::string& part) {
    if (!part.empty()) out += (out.empty() ? "" : " ") + part;
  };
  if (w.step >= 0) add("step " + std::to_string(w.step));
  if (!w.param.empty()) add("param " + w.param);
  if (w.measure == WorstCase::Measure::band) add(w.tensor);
  return out;
}

std::string worst_case_text(const WorstCase& w) {
  switch (w.measure) {
    case WorstCase::Measure::band:
      return where_text(w) + ": error " + number(w.error) + " vs control ensemble " + number(w.band);
    case WorstCase::Measure::count:
      return where_text(w) + ": " + number(w.error) + " " + w.tensor + ", expected " + number(w.band) +
             (w.note.empty() ? "" : " (" + w.note + ")");
    case WorstCase::Measure::difference:
      return w.compared + ": worst relative weight difference " + number(w.error) + " (band " + number(w.band) + ") at " +
             where_text(w);
  }
  return "";
}

std::string worst_case_disagreement(const Verdict& v) {
  if (!v.worst) return "";
  const std::string says = worst_case_text(*v.worst);
  if (v.message.find(says) != std::string::npos) return "";
  return v.invariant + ": the message \"" + v.message + "\" does not say its worst case \"" + says + "\"";
}

}  // namespace muoncheck
