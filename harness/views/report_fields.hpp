// Reading a muoncheck JSON report for its views: tolerant field access (a missing or mistyped
// field reads as empty/NaN, since a view should render what is there), where the mutants and
// sweep sections are, and the one-line texts several views print.
#pragma once
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

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

// One thing a sweep record reports as found: a defect (shrunk), a failing case left unshrunk, or a
// problem with the known-defect list. Our own sweep and the sweeps of other implementations write
// the same record (docs/sweeps.md, "The sweep record"): "defects" (each with its message, repro
// line and attribution), "failures" (per case; those of no defect are findings of their own),
// "known_defect_problems", and "ok", the verdict the exit code gave. A record of before that
// shape (one "failure" object) still reads.
struct SweepFinding {
  std::string title;         // "defect 2 (5 cases)", "case 17 (not shrunk)", "known defects"
  std::string message;
  std::string repro;         // a line that reproduces it ("" for a known-defect problem)
  std::string regenerate;    // our own sweep: the line that draws the case again
  std::string attribution;   // what explains it ("" when nothing was asked)
  bool known = false;        // fully explained by a known defect: reported, not a failure
};

inline std::string attribution_text(const nlohmann::json& defect) {
  if (!defect.contains("attribution") || !defect["attribution"].is_object()) return {};
  return str(defect["attribution"], "text");
}

inline bool attributed_known(const nlohmann::json& defect) {
  return defect.contains("attribution") && defect["attribution"].is_object() && defect["attribution"].value("known", false);
}

inline std::vector<SweepFinding> sweep_findings(const nlohmann::json& sweep) {
  std::vector<SweepFinding> out;
  const auto defects = sweep.value("defects", nlohmann::json::array());
  if (defects.is_array() && !defects.empty()) {
    int k = 0;
    for (const auto& d : defects) {
      ++k;
      if (!d.is_object()) continue;
      const int n = d.value("occurrences", 1);
      out.push_back({"defect " + std::to_string(k) + " (" + std::to_string(n) + (n == 1 ? " case)" : " cases)"), str(d, "message"),
                     str(d, "repro"), str(d, "regenerate"), attribution_text(d), attributed_known(d)});
    }
  } else if (sweep.contains("failure") && sweep["failure"].is_object()) {
    const auto& f = sweep["failure"];
    out.push_back({"counterexample", str(f, "message"), str(f, "repro"), str(f, "regenerate"), attribution_text(f), attributed_known(f)});
  }
  for (const auto& f : sweep.value("failures", nlohmann::json::array()))
    if (f.is_object() && f.contains("defect") && f["defect"].is_null())
      out.push_back({"case " + std::to_string(f.value("case", 0)) + " (not shrunk)", str(f, "message"), str(f, "repro"), "",
                     attribution_text(f), attributed_known(f)});
  for (const auto& p : sweep.value("known_defect_problems", nlohmann::json::array()))
    if (p.is_string()) out.push_back({"known defects", p.get<std::string>(), "", "", "", false});
  return out;
}

// What the exit code said: "ok" where the record has it; else any finding not explained as known.
inline bool sweep_failed(const nlohmann::json& sweep) {
  if (sweep.contains("ok") && sweep["ok"].is_boolean()) return !sweep["ok"].get<bool>();
  for (const auto& f : sweep_findings(sweep))
    if (!f.known) return true;
  return false;
}

// "scenario: invariant*, ..." for one fault of the kill table (* = a symptom invariant).
inline std::string kills_text(const nlohmann::json& fault) {
  std::string by;
  for (const auto& k : fault.value("kills", nlohmann::json::array()))
    by += (by.empty() ? "" : ", ") + str(k, "scenario") + ": " + str(k, "invariant") + (k.value("symptom", false) ? "*" : "");
  return by;
}

}  // namespace muoncheck::views
