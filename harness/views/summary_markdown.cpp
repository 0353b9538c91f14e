#include "harness/views/summary_markdown.hpp"

#include <cstdio>
#include <sstream>

namespace muoncheck {
namespace {

std::string str(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : std::string();
}

// Markdown table cells: a pipe or a newline would break the row.
std::string cell(std::string s) {
  for (auto& c : s)
    if (c == '|' || c == '\n') c = c == '|' ? '/' : ' ';
  return s;
}

std::string fixed(double x, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, x);
  return buf;
}

}  // namespace

std::string summary_markdown(const nlohmann::json& report) {
  std::ostringstream out;
  const auto meta = report.value("metadata", nlohmann::json::object());
  const auto sum = report.value("summary", nlohmann::json::object());
  const bool ok = sum.value("ok", false) && (!report.contains("nightly") || report["nightly"].value("ok", false));
  out << "## muoncheck " << str(meta, "command") << ": " << (ok ? "OK" : "FAILED") << "\n\n";
  out << "| scenarios | PASS | FAIL | SKIPPED | UNSUPPORTED | executed | golden failed |\n|---|---|---|---|---|---|---|\n";
  out << "| " << sum.value("scenarios", 0) << " | " << sum.value("pass", 0) << " | " << sum.value("fail", 0) << " | "
      << sum.value("skipped", 0) << " | " << sum.value("unsupported", 0) << " | " << sum.value("executed", 0) << " of "
      << sum.value("verdicts", 0) << " (" << fixed(100.0 * sum.value("executed_share", 0.0), 1) << " %) | "
      << sum.value("golden_fail", 0) << " |\n\n";
  out << "Device: " << cell(str(meta, "backend")) << "; commit `" << str(meta, "git_commit") << "`";
  if (meta.contains("gpus")) out << "; GPUs " << meta["gpus"].get<int>();
  out << "\n\n";

  const auto repro = report.value("repro", nlohmann::json::array());
  if (!repro.empty()) {
    out << "### Failures (" << repro.size() << ")\n\n";
    for (const auto& s : report.value("scenarios", nlohmann::json::array()))
      for (const auto& inv : s.value("invariants", nlohmann::json::array()))
        if (str(inv, "status") == "FAIL") out << "- **" << cell(str(s, "scenario")) << "** " << str(inv, "id") << ": " << cell(str(inv, "message")) << "\n";
    out << "\nRepro:\n\n```\n";
    for (const auto& r : repro) out << r.get<std::string>() << "\n";
    out << "```\n\n";
  }
  for (const auto& p : sum.value("coverage_problems", nlohmann::json::array())) out << "- not OK: " << cell(p.get<std::string>()) << "\n";

  if (report.contains("mutants") && report["mutants"].is_object()) {
    const auto& m = report["mutants"];
    out << "### Mutants: " << m.value("killed", 0) << " of " << m.value("total", 0) << " killed"
        << (m.value("control_clean", false) ? ", control clean" : ", CONTROL NOT CLEAN") << "\n\n| fault | status | killed by |\n|---|---|---|\n";
    for (const auto& f : m.value("faults", nlohmann::json::array())) {
      std::string by;
      for (const auto& k : f.value("kills", nlohmann::json::array()))
        by += (by.empty() ? "" : ", ") + str(k, "scenario") + ": " + str(k, "invariant") + (k.value("symptom", false) ? "*" : "");
      out << "| " << str(f, "fault") << " | " << str(f, "status") << " | " << cell(by) << " |\n";
    }
    out << "\n";
  }
  const nlohmann::json* sweep = report.contains("sweep") ? &report["sweep"] : (str(report, "command") == "sweep" ? &report : nullptr);
  if (sweep && sweep->is_object()) {
    out << "### Sweep: seed " << sweep->value("seed", 0) << ", " << sweep->value("cases_run", 0) << " cases, "
        << fixed(sweep->value("cases_per_minute", 0.0), 0) << " cases/min: ";
    if (sweep->contains("failure") && (*sweep)["failure"].is_object())
      out << "FOUND A COUNTEREXAMPLE\n\n" << cell(str((*sweep)["failure"], "message")) << "\n\n```\n" << str((*sweep)["failure"], "repro") << "\n```\n";
    else
      out << "clean\n";
  }
  return out.str();
}

}  // namespace muoncheck
