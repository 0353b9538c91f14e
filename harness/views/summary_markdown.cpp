#include "harness/views/summary_markdown.hpp"

#include <sstream>

#include "harness/views/report_fields.hpp"

namespace muoncheck {
namespace {

using views::str;

// Markdown table cells: a pipe or a newline would break the row.
std::string cell(std::string s) {
  for (auto& c : s)
    if (c == '|' || c == '\n') c = c == '|' ? '/' : ' ';
  return s;
}

}  // namespace

std::string summary_markdown(const nlohmann::json& report) {
  std::ostringstream out;
  const auto meta = report.value("metadata", nlohmann::json::object());
  const auto sum = report.value("summary", nlohmann::json::object());
  const bool ok = sum.value("ok", false) && (!report.contains("nightly") || report["nightly"].value("ok", false));
  out << "## muoncheck " << str(meta, "command") << ": " << (ok ? "OK" : "FAILED") << "\n\n";
  out << "| scenarios | PASS | FAIL | INCONCLUSIVE | SKIPPED | UNSUPPORTED | executed | golden failed |\n|---|---|---|---|---|---|---|---|\n";
  out << "| " << sum.value("scenarios", 0) << " | " << sum.value("pass", 0) << " | " << sum.value("fail", 0) << " | "
      << sum.value("inconclusive", 0) << " | " << sum.value("skipped", 0) << " | " << sum.value("unsupported", 0) << " | " << sum.value("executed", 0) << " of "
      << sum.value("verdicts", 0) << " (" << views::format("%.1f", 100.0 * sum.value("executed_share", 0.0)) << " %) | "
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
  for (const auto& p : sum.value("executed_problems", nlohmann::json::array())) out << "- not OK: " << cell(p.get<std::string>()) << "\n";
  bool inconclusive_heading = false;   // neither OK nor FAIL: the question had no answer at the scenario's precision
  for (const auto& s : report.value("scenarios", nlohmann::json::array()))
    for (const auto& inv : s.value("invariants", nlohmann::json::array()))
      if (str(inv, "status") == "INCONCLUSIVE") {
        if (!inconclusive_heading) out << "\n### Inconclusive (not judged)\n\n", inconclusive_heading = true;
        out << "- **" << cell(str(s, "scenario")) << "** " << str(inv, "id") << ": " << cell(str(inv, "message")) << "\n";
      }
  if (inconclusive_heading) out << "\n";

  if (const auto* mutants = views::mutants_of(report)) {
    const auto& m = *mutants;
    out << "### Mutants: " << m.value("killed", 0) << " of " << m.value("total", 0) << " killed"
        << (m.value("control_clean", false) ? ", control clean" : ", CONTROL NOT CLEAN") << "\n\n| fault | status | killed by |\n|---|---|---|\n";
    for (const auto& f : m.value("faults", nlohmann::json::array())) {
      out << "| " << str(f, "fault") << " | " << str(f, "status") << " | " << cell(views::kills_text(f)) << " |\n";
    }
    out << "\n";
  }
  if (const auto* sweep = views::sweep_of(report)) {
    const std::string impl = str(*sweep, "impl");
    out << "### Sweep" << (impl.empty() ? "" : " --impl " + cell(impl)) << ": seed " << sweep->value("seed", 0) << ", "
        << sweep->value("cases_run", 0) << " cases, " << views::format("%.0f", sweep->value("cases_per_minute", 0.0)) << " cases/min: ";
    if (sweep->value("inconclusive_cases", 0) > 0) out << sweep->value("inconclusive_cases", 0) << " INCONCLUSIVE, ";
    const auto findings = views::sweep_findings(*sweep);
    if (views::sweep_failed(*sweep)) out << "FAILED\n\n";
    else out << (findings.empty() ? "clean\n" : "only known defects\n\n");
    for (const auto& f : findings) {
      out << "- " << (f.known ? "known: " : "**") << cell(f.title) << (f.known ? "" : "**") << ": " << cell(f.message) << "\n";
      if (!f.attribution.empty()) out << "  - attribution: " << cell(f.attribution) << "\n";
      if (!f.repro.empty()) out << "  - repro: `" << f.repro << "`\n";
      if (!f.regenerate.empty()) out << "  - regenerate: `" << f.regenerate << "`\n";
    }
    for (const auto& p : sweep->value("coverage_problems", nlohmann::json::array()))
      if (p.is_string()) out << "- not OK: " << cell(p.get<std::string>()) << "\n";
  }
  return out.str();
}

}  // namespace muoncheck
