// Reading a muoncheck JSON report for its views: tolerant field access (a missing or mistyped
// field reads as empty/NaN, since a view should render what is there), where the mutants and
// sweep sections are, and the one-line texts several views print.
#pragma once
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

namespace muoncheck::views {

inline std::string str(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}

inline double number(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_number() ? j[key].get<double>() : NAN;
}

// printf-style text of one number.
inline std::string format(const char* f, double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, x);
  return buf;
}

// The mutants section (mutants --json, nightly), or nullptr.
inline const nlohmann::json* mutants_of(const nlohmann::json& report) {
  return report.contains("mutants") && report["mutants"].is_object() ? &report["mutants"] : nullptr;
}

// The sweep's record: a nightly's "sweep" section, or the whole file of `sweep --json`; nullptr if none.
inline const nlohmann::json* sweep_of(const nlohmann::json& report) {
  if (report.contains("sweep") && report["sweep"].is_object()) return &report["sweep"];
  return str(report, "command") == "sweep" ? &report : nullptr;
}

inline bool sweep_failed(const nlohmann::json& sweep) { return sweep.contains("failure") && sweep["failure"].is_object(); }

// "scenario: invariant*, ..." for one fault of the kill table (* = a symptom invariant).
inline std::string kills_text(const nlohmann::json& fault) {
  std::string by;
  for (const auto& k : fault.value("kills", nlohmann::json::array()))
    by += (by.empty() ? "" : ", ") + str(k, "scenario") + ": " + str(k, "invariant") + (k.value("symptom", false) ? "*" : "");
  return by;
}

}  // namespace muoncheck::views
