#include "harness/golden/golden_digest.hpp"

#include <cmath>
#include <sstream>

#include "core/scenario_io.hpp"

namespace muoncheck::golden {

namespace {

// Four numbers that change whenever any element does: ‖w‖, Σw, Σ(e+1)·w_e, ‖optimizer state‖.
nlohmann::json param_digest(const ParamState& p) {
  double sq = 0, sum = 0, weighted = 0, state = 0;
  for (size_t e = 0; e < p.weight.size(); ++e) {
    sq += p.weight[e] * p.weight[e];
    sum += p.weight[e];
    weighted += static_cast<double>(e + 1) * p.weight[e];
  }
  for (const auto* v : {&p.momentum, &p.adam_m, &p.adam_v})
    for (double x : *v) state += x * x;
  return {std::sqrt(sq), sum, weighted, std::sqrt(state)};
}

double relative(double a, double b) {
  if (a == b) return 0.0;
  if (std::isnan(a) && std::isnan(b)) return 0.0;
  return std::fabs(a - b) / std::max({std::fabs(a), std::fabs(b), 1e-300});
}

}  // namespace

nlohmann::json digest(const Scenario& s, const Trajectory& t, const std::string& precision) {
  nlohmann::json steps = nlohmann::json::array();
  for (const auto& st : t.steps) {
    nlohmann::json params = nlohmann::json::array();
    for (const auto& p : st.params) params.push_back(param_digest(p));
    steps.push_back({{"step", st.step}, {"loss", st.loss}, {"skipped", st.skipped}, {"scale", st.scale},
                     {"grad_norm", std::isfinite(st.grad_norm) ? nlohmann::json(st.grad_norm) : nlohmann::json(nullptr)},
                     {"ns_calls", st.ns_calls.size()}, {"params", params}});
  }
  int muon = 0;
  for (const auto& tag : t.tags) muon += tag.use_muon;
  return {{"format", "muoncheck-golden"},
          {"schema_version", kSchemaVersion},
          {"scenario", s.name},
          {"scenario_hash", scenario_hash(s)},
          {"precision", precision},
          {"muon_params", muon},
          {"digest", "per param: [frobenius norm, sum, index-weighted sum, optimizer-state norm]"},
          {"steps", steps}};
}

Comparison compare(const nlohmann::json& expected, const nlohmann::json& actual) {
  Comparison c;
  if (expected.value("schema_version", 0) != kSchemaVersion) {
    c.stale = true;
    c.message = "golden schema_version " + expected.value("schema_version", nlohmann::json(0)).dump() +
                " differs from " + std::to_string(kSchemaVersion);
    return c;
  }
  if (expected.at("scenario_hash") != actual.at("scenario_hash")) {
    c.stale = true;
    c.message = "the scenario changed since its golden file was written (hash " +
                expected.at("scenario_hash").get<std::string>() + " → " + actual.at("scenario_hash").get<std::string>() + ")";
    return c;
  }
  std::ostringstream where;
  auto check = [&](const std::string& what, const nlohmann::json& a, const nlohmann::json& b) {
    double r;
    if (a.is_number() && b.is_number()) r = relative(a.get<double>(), b.get<double>());
    else r = (a == b) ? 0.0 : INFINITY;
    if (r > c.worst_relative) c.worst_relative = r;
    if (r > kRelativeTolerance && c.message.empty())
      c.message = what + ": golden " + a.dump() + ", oracle " + b.dump();
  };
  check("muon_params", expected.at("muon_params"), actual.at("muon_params"));
  const auto& es = expected.at("steps");
  const auto& as = actual.at("steps");
  if (es.size() != as.size()) {
    c.message = "golden has " + std::to_string(es.size()) + " steps, oracle " + std::to_string(as.size());
    return c;
  }
  for (size_t i = 0; i < es.size(); ++i) {
    const std::string at = "step " + std::to_string(i);
    for (const char* key : {"loss", "skipped", "scale", "grad_norm", "ns_calls"}) check(at + " " + key, es[i].at(key), as[i].at(key));
    const auto& ep = es[i].at("params");
    const auto& ap = as[i].at("params");
    if (ep.size() != ap.size()) {
      c.message = at + ": param count differs";
      return c;
    }
    for (size_t p = 0; p < ep.size(); ++p)
      for (size_t k = 0; k < ep[p].size(); ++k)
        check(at + " param " + std::to_string(p) + " digest[" + std::to_string(k) + "]", ep[p][k], ap[p][k]);
  }
  c.ok = c.message.empty();
  return c;
}

std::string golden_path(const std::string& golden_dir, const Scenario& s) { return golden_dir + "/" + s.name + ".json"; }

std::string regenerate_hint(const Scenario& s) {
  return "if the change is intended, regenerate with: muoncheck golden update " + s.source;
}

}  // namespace muoncheck::golden
