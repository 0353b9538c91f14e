#include "harness/views/html_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "harness/views/html_scenarios.hpp"
#include "harness/views/junit.hpp"
#include "harness/views/report_fields.hpp"

namespace muoncheck {
namespace {

using views::number;
using views::str;
constexpr auto fmt = views::format;

constexpr double kW = 420, kH = 180, kLeft = 56, kRight = 12, kTop = 22, kBottom = 28;

const char* kStyle =
    "body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1100px}"
    "table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top}"
    ".PASS{color:#17692d}.FAIL{color:#b00020;font-weight:bold}.SKIPPED,.UNSUPPORTED{color:#777}.INCONCLUSIVE{color:#8a5a00;font-weight:bold}"
    ".ok{background:#e6f4ea;padding:6px 10px}.bad{background:#fde7e9;padding:6px 10px}"
    "section{border-top:1px solid #ddd;margin-top:18px}.plots{display:flex;gap:16px;flex-wrap:wrap}"
    "code{font-size:12px;word-break:break-all}";

}  // namespace

std::string svg_plot(const std::string& title, const std::vector<PlotSeries>& series, bool log_y) {
  auto usable = [&](double v) { return std::isfinite(v) && (!log_y || v > 0); };
  double lo = INFINITY, hi = -INFINITY;
  size_t n = 0;
  for (const auto& s : series) {
    n = std::max(n, s.y.size());
    for (double v : s.y)
      if (usable(v)) lo = std::min(lo, log_y ? std::log10(v) : v), hi = std::max(hi, log_y ? std::log10(v) : v);
  }
  std::ostringstream out;
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kW << "\" height=\"" << kH << "\" role=\"img\">"
      << "<text x=\"" << kLeft << "\" y=\"14\" font-size=\"12\">" << xml_escape(title) << "</text>";
  if (!std::isfinite(lo)) return out.str() + "<text x=\"60\" y=\"90\" font-size=\"12\">no data</text></svg>";
  if (hi - lo < 1e-12) lo -= 0.5, hi += 0.5;
  const double pw = kW - kLeft - kRight, ph = kH - kTop - kBottom;
  auto px = [&](size_t i) { return kLeft + (n > 1 ? pw * static_cast<double>(i) / static_cast<double>(n - 1) : pw / 2); };
  auto py = [&](double v) { return kTop + ph * (1.0 - ((log_y ? std::log10(v) : v) - lo) / (hi - lo)); };
  out << "<rect x=\"" << kLeft << "\" y=\"" << kTop << "\" width=\"" << pw << "\" height=\"" << ph << "\" fill=\"none\" stroke=\"#bbb\"/>";
  for (double t : {lo, hi}) {   // axis labels: the range's ends
    const double v = log_y ? std::pow(10.0, t) : t;
    out << "<text x=\"2\" y=\"" << py(v) + 4 << "\" font-size=\"10\">" << fmt("%.2g", v) << "</text>";
  }
  out << "<text x=\"" << kLeft << "\" y=\"" << kH - 8 << "\" font-size=\"10\">step 0</text><text x=\"" << kW - kRight - 40
      << "\" y=\"" << kH - 8 << "\" font-size=\"10\">step " << (n ? n - 1 : 0) << "</text>";
  for (const auto& s : series) {   // bands first, under every line
    if (!s.area) continue;
    std::string path;
    size_t first = 0, last = 0;
    for (size_t i = 0; i < s.y.size(); ++i) {
      if (!usable(s.y[i])) continue;
      if (path.empty()) first = i;
      last = i;
      path += std::string(path.empty() ? "M" : " L") + fmt("%.1f", px(i)) + "," + fmt("%.1f", py(s.y[i]));
    }
    if (path.empty()) continue;
    const double floor_y = kTop + ph;
    out << "<path d=\"" << path << " L" << fmt("%.1f", px(last)) << "," << fmt("%.1f", floor_y) << " L" << fmt("%.1f", px(first))
        << "," << fmt("%.1f", floor_y) << " Z\" fill=\"" << s.color << "\" fill-opacity=\"0.15\" stroke=\"" << s.color
        << "\" stroke-dasharray=\"4 3\" stroke-width=\"1\"/>";
  }
  for (size_t k = 0; k < series.size(); ++k) {
    const auto& s = series[k];
    std::string path;
    bool pen_down = false;
    for (size_t i = 0; i < s.y.size(); ++i) {
      if (!usable(s.y[i])) {
        pen_down = false;
        continue;
      }
      if (s.area) continue;   // drawn above
      path += std::string(path.empty() ? "M" : pen_down ? " L" : " M") + fmt("%.1f", px(i)) + "," + fmt("%.1f", py(s.y[i]));
      pen_down = true;
      out << "<circle cx=\"" << fmt("%.1f", px(i)) << "\" cy=\"" << fmt("%.1f", py(s.y[i])) << "\" r=\"2\" fill=\"" << s.color << "\"/>";
    }
    if (!path.empty()) out << "<path d=\"" << path << "\" fill=\"none\" stroke=\"" << s.color << "\" stroke-width=\"1.5\"/>";
    out << "<text x=\"" << kLeft + 8 + 120 * static_cast<double>(k) << "\" y=\"" << kTop + 12 << "\" font-size=\"11\" fill=\"" << s.color
        << "\">" << xml_escape(s.label) << "</text>";
  }
  return out.str() + "</svg>";
}

std::string html_report(const nlohmann::json& report) {
  const auto meta = report.value("metadata", nlohmann::json::object());
  const auto sum = report.value("summary", nlohmann::json::object());
  const bool ok = sum.value("ok", false) && (!report.contains("nightly") || report["nightly"].value("ok", false));
  std::ostringstream out;
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>muoncheck " << xml_escape(str(meta, "command"))
      << "</title><style>" << kStyle << kScenarioStyle << "</style></head><body>\n";
  out << "<h1>muoncheck " << xml_escape(str(meta, "command")) << "</h1>\n<p class=\"" << (ok ? "ok" : "bad") << "\">"
      << (ok ? "OK" : "FAILED") << " — " << sum.value("scenarios", 0) << " scenarios, " << sum.value("pass", 0) << " PASS, "
      << sum.value("fail", 0) << " FAIL, " << sum.value("inconclusive", 0) << " INCONCLUSIVE, " << sum.value("skipped", 0) << " SKIPPED, " << sum.value("unsupported", 0)
      << " UNSUPPORTED; executed " << sum.value("executed", 0) << " of " << sum.value("verdicts", 0) << "; golden failed "
      << sum.value("golden_fail", 0) << "</p>\n";
  out << "<table><tr><th>device</th><td>" << xml_escape(str(meta, "backend")) << "</td></tr><tr><th>commit</th><td><code>"
      << xml_escape(str(meta, "git_commit")) << "</code></td></tr><tr><th>time</th><td>" << xml_escape(str(meta, "time"))
      << "</td></tr><tr><th>host</th><td>" << xml_escape(str(meta, "host")) << "</td></tr></table>\n";

  out << html_scenarios(report);
  if (const auto* mutants = views::mutants_of(report)) {
    const auto& m = *mutants;
    out << "<section><h2>Mutants: " << m.value("killed", 0) << " of " << m.value("total", 0) << " killed</h2><table><tr><th>fault</th><th>status</th><th>killed by</th></tr>\n";
    for (const auto& f : m.value("faults", nlohmann::json::array())) {
      const std::string by = views::kills_text(f);
      const std::string status = str(f, "status");
      out << "<tr><td>" << xml_escape(str(f, "fault")) << "</td><td class=\"" << (status == "KILLED" ? "PASS" : "FAIL") << "\">"
          << xml_escape(status) << "</td><td>" << xml_escape(by) << "</td></tr>\n";
    }
    out << "</table></section>\n";
  }
  if (const auto* sweep = views::sweep_of(report)) {
    const std::string impl = str(*sweep, "impl");
    const auto findings = views::sweep_findings(*sweep);
    out << "<section><h2>Sweep" << (impl.empty() ? "" : " --impl " + xml_escape(impl)) << "</h2><p>seed " << sweep->value("seed", 0)
        << ", " << sweep->value("cases_run", 0) << " cases, " << fmt("%.0f", sweep->value("cases_per_minute", 0.0)) << " cases/min: ";
    if (views::sweep_failed(*sweep)) out << "<span class=\"FAIL\">FAILED</span></p>";
    else out << "<span class=\"PASS\">" << (findings.empty() ? "clean" : "only known defects") << "</span></p>";
    if (!findings.empty()) {
      out << "<table><tr><th>finding</th><th>status</th><th>message</th><th>attribution</th><th>repro</th></tr>\n";
      for (const auto& f : findings)
        out << "<tr><td>" << xml_escape(f.title) << "</td><td class=\"" << (f.known ? "SKIPPED\">known" : "FAIL\">FAIL") << "</td><td>"
            << xml_escape(f.message) << "</td><td>" << xml_escape(f.attribution) << "</td><td><code>" << xml_escape(f.repro) << "</code></td></tr>\n";
      out << "</table>";
    }
    out << "</section>\n";
  }
  out << "</body></html>\n";
  return out.str();
}

}  // namespace muoncheck
