#include "harness/views/html_scenarios.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <vector>

#include "harness/views/html_report.hpp"
#include "harness/views/junit.hpp"
#include "harness/views/report_fields.hpp"

namespace muoncheck {

const char* const kScenarioStyle =
    "table.index td:nth-child(3),table.index td:nth-child(4){text-align:right;font-variant-numeric:tabular-nums}"
    "tr.failing{background:#fde7e9}tr.attention{background:#fff4d6}"
    ".INSENSITIVE{color:#8a5a00;font-weight:bold}.ERROR{color:#b00020;font-weight:bold}"
    "details{border-top:1px solid #ddd;margin-top:10px;padding-top:4px}summary{cursor:pointer;font-weight:bold}"
    "p.repro:target,tr:target{background:#fff2a8}ul.notes li{margin:2px 0}";

namespace {

using views::number;
using views::str;
constexpr auto fmt = views::format;
using nlohmann::json;

// Scenario names are file stems; anything else becomes '-' so the anchor is a valid fragment.
std::string anchor_text(const std::string& s) {
  std::string out;
  for (char c : s) out.push_back(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ? c : '-');
  return out;
}

std::string metric_text(double x) { return std::isfinite(x) ? fmt("%.3g", x) : "non-finite"; }

// How a scenario stands, in the index's order: failing (a FAIL, an ERROR, a golden FAIL, or
// nothing judged), needing attention (INCONCLUSIVE or INSENSITIVE), passing.
enum class Standing { failing = 0, attention = 1, passing = 2 };

struct Row {
  const json* s = nullptr;
  std::string name;
  std::map<std::string, int> counts;   // by status
  double worst_ratio = NAN;            // over executed verdicts with a positive threshold
  std::string worst_id;
  double sensitivity = NAN;
  std::string sensitivity_where;
  bool insensitive = false;
  std::string golden;                  // "PASS", "FAIL" or "" (not checked)
  std::string golden_message;
  bool error = false;
  Standing standing = Standing::passing;
};

Row row_of(const json& s, const std::map<std::string, const json*>& golden) {
  Row r;
  r.s = &s;
  r.name = str(s, "scenario");
  int executed = 0;
  for (const auto& v : s.value("invariants", json::array())) {
    const std::string status = str(v, "status");
    ++r.counts[status];
    if (status != "PASS" && status != "FAIL") continue;
    ++executed;
    const double m = number(v, "metric"), t = number(v, "threshold");   // a null metric: non-finite
    const double ratio = std::isfinite(m) ? m / t : INFINITY;
    if (t > 0 && (std::isnan(r.worst_ratio) || ratio > r.worst_ratio)) r.worst_ratio = ratio, r.worst_id = str(v, "id");
  }
  if (s.contains("sensitivity") && s["sensitivity"].is_object()) {
    r.sensitivity = number(s["sensitivity"], "band_over_update");
    r.sensitivity_where = str(s["sensitivity"], "where");
    r.insensitive = s["sensitivity"].value("insensitive", false);
  }
  if (const auto g = golden.find(r.name); g != golden.end())
    r.golden = str(*g->second, "status"), r.golden_message = str(*g->second, "message");
  r.error = s.contains("error") && s["error"].is_object();
  if (r.counts["FAIL"] > 0 || r.error || r.golden == "FAIL" || executed == 0) r.standing = Standing::failing;
  else if (r.counts["INCONCLUSIVE"] > 0 || r.insensitive) r.standing = Standing::attention;
  return r;
}

std::string counts_text(const Row& r) {
  std::string t;
  if (r.error) t = "<span class=\"ERROR\">ERROR</span>";
  for (const char* status : {"FAIL", "INCONCLUSIVE", "PASS", "SKIPPED", "UNSUPPORTED"})
    if (const auto it = r.counts.find(status); it != r.counts.end() && it->second > 0)
      t += (t.empty() ? "" : ", ") + std::string("<span class=\"") + status + "\">" + std::to_string(it->second) + " " + status + "</span>";
  return t.empty() ? "no verdict" : t;
}

std::string sensitivity_text(const Row& r) {
  if (std::isnan(r.sensitivity)) return "";
  return metric_text(r.sensitivity) + (r.insensitive ? " <span class=\"INSENSITIVE\">INSENSITIVE</span>" : "");
}

// The repro line of `invariant`'s FAIL among the scenario's lines (they end in "--invariant ID").
std::string repro_for(const json& s, const std::string& invariant) {
  const std::string tail = "--invariant " + invariant;
  for (const auto& line : s.value("repro", json::array()))
    if (line.is_string()) {
      const auto l = line.get<std::string>();
      if (l.size() >= tail.size() && (l.compare(l.size() - tail.size(), tail.size(), tail) == 0 ||
                                      l.find(tail + " ") != std::string::npos))
        return l;
    }
  return "";
}

void write_index(std::ostream& out, const std::vector<Row>& rows) {
  int failing = 0;
  for (const auto& r : rows) failing += r.standing == Standing::failing;
  out << "<h2 id=\"index\">Scenarios: " << failing << " failing of " << rows.size() << "</h2>\n"
      << "<table class=\"index\"><tr><th>scenario</th><th>verdicts</th><th>worst ratio (metric / threshold)</th>"
      << "<th>sensitivity (band over an update)</th><th>golden</th></tr>\n";
  for (const auto& r : rows) {
    const char* cls = r.standing == Standing::failing ? "failing" : r.standing == Standing::attention ? "attention" : "passing";
    out << "<tr class=\"" << cls << "\"><td><a href=\"#" << scenario_anchor(r.name) << "\">" << xml_escape(r.name) << "</a></td><td>"
        << counts_text(r) << "</td><td>" << (std::isnan(r.worst_ratio) ? "" : metric_text(r.worst_ratio) + " " + xml_escape(r.worst_id))
        << "</td><td>" << sensitivity_text(r) << "</td><td class=\"" << xml_escape(r.golden) << "\">"
        << (r.golden.empty() ? "" : xml_escape(r.golden)) << "</td></tr>\n";
  }
  out << "</table>\n";
}

// The console's closing notes (console_table.cpp), from the report's fields.
void write_notes(std::ostream& out, const std::vector<Row>& rows) {
  std::vector<const Row*> insensitive, inconclusive;
  for (const auto& r : rows) {
    if (r.insensitive) insensitive.push_back(&r);
    if (r.s->contains("notes") && !(*r.s)["notes"].empty()) inconclusive.push_back(&r);
  }
  if (!insensitive.empty()) {
    out << "<p class=\"INSENSITIVE\">Insensitive scenarios (" << insensitive.size()
        << ": a bug that changes an update by less than the band can pass):</p><ul class=\"notes\">\n";
    for (const auto* r : insensitive)
      out << "<li><a href=\"#" << scenario_anchor(r->name) << "\">" << xml_escape(r->name) << "</a>: band = "
          << metric_text(r->sensitivity) << " of a step's update (" << xml_escape(r->sensitivity_where) << ")</li>\n";
    out << "</ul>\n";
  }
  if (!inconclusive.empty()) {
    out << "<p class=\"INCONCLUSIVE\">Inconclusive scenarios (" << inconclusive.size()
        << ": neither OK nor FAIL; the structural invariants were judged):</p><ul class=\"notes\">\n";
    for (const auto* r : inconclusive)
      for (const auto& note : (*r->s)["notes"])
        if (note.is_string())
          out << "<li><a href=\"#" << scenario_anchor(r->name) << "\">" << xml_escape(r->name) << "</a>: "
              << xml_escape(note.get<std::string>()) << "</li>\n";
    out << "</ul>\n";
  }
}

void write_failing_cases(std::ostream& out, const json& report) {
  const auto repro = report.value("repro", json::array());
  if (repro.empty()) return;
  out << "<h2>Failing cases (" << repro.size() << ")</h2>\n";
  for (const auto& line : repro)
    if (line.is_string()) out << "<p><code>" << xml_escape(line.get<std::string>()) << "</code></p>\n";
}

void write_verdicts(std::ostream& out, const Row& r) {
  const json& s = *r.s;
  out << "<table><tr><th>invariant</th><th>status</th><th>metric / threshold</th><th>message</th></tr>\n";
  if (r.error)
    out << "<tr><td>(scenario)</td><td class=\"ERROR\">ERROR</td><td>" << xml_escape(str(s["error"], "kind")) << "</td><td>"
        << xml_escape(str(s["error"], "message")) << "</td></tr>\n";
  for (const auto& v : s.value("invariants", json::array())) {
    const std::string status = str(v, "status"), id = str(v, "id");
    std::string cell = xml_escape(status);
    if (status == "FAIL" && !repro_for(s, id).empty())
      cell = "<a href=\"#" + repro_anchor(r.name, id) + "\" title=\"the line that reproduces it\">FAIL</a>";
    out << "<tr><td>" << xml_escape(id) << "</td><td class=\"" << xml_escape(status) << "\">" << cell << "</td><td>"
        << metric_text(number(v, "metric")) << " / " << metric_text(number(v, "threshold")) << "</td><td>"
        << xml_escape(str(v, "message")) << "</td></tr>\n";
  }
  if (!r.golden.empty())
    out << "<tr><td>golden</td><td class=\"" << xml_escape(r.golden) << "\">" << xml_escape(r.golden) << "</td><td></td><td>"
        << xml_escape(r.golden_message) << "</td></tr>\n";
  out << "</table>\n";
}

void write_plots(std::ostream& out, const json& s) {
  std::vector<double> err, control, band, loss, exact_loss;
  bool has_band = false;
  for (const auto& st : s.value("steps", json::array())) {
    err.push_back(number(st, "error_vs_oracle"));
    control.push_back(number(st, "control_error"));
    band.push_back(number(st, "band"));
    has_band = has_band || std::isfinite(band.back());
    loss.push_back(number(st, "loss"));
    exact_loss.push_back(number(st, "exact_loss"));
  }
  if (err.empty()) return;
  std::vector<PlotSeries> errors;
  if (has_band) errors.push_back({"band (allowed)", "#1a5fb4", band, true});
  errors.push_back({"implementation", "#b00020", err});
  errors.push_back({"control ensemble", "#1a5fb4", control});
  out << "<div class=\"plots\">" << svg_plot("weight error vs exact, per step", errors, true)
      << svg_plot("loss per step", {{"implementation", "#b00020", loss}, {"exact", "#1a5fb4", exact_loss}}, false) << "</div>\n";
}

void write_repro(std::ostream& out, const Row& r) {
  for (const auto& line : r.s->value("repro", json::array())) {
    if (!line.is_string()) continue;
    const std::string l = line.get<std::string>();
    const auto at = l.rfind("--invariant ");
    std::string id;
    if (at != std::string::npos) id = " id=\"" + repro_anchor(r.name, l.substr(at + 12, l.find(' ', at + 12) - at - 12)) + "\"";
    out << "<p class=\"repro\"" << id << "><code>" << xml_escape(l) << "</code></p>\n";
  }
}

// Failing scenarios open; the others (INSENSITIVE and INCONCLUSIVE ones too: they pass, and the
// index and the notes above already say so) collapsed to one line.
void write_scenario(std::ostream& out, const Row& r) {
  const bool open = r.standing == Standing::failing;
  if (open) {
    out << "<section id=\"" << scenario_anchor(r.name) << "\"><h2>" << xml_escape(r.name) << "</h2>\n";
  } else {
    out << "<details id=\"" << scenario_anchor(r.name) << "\"><summary>" << xml_escape(r.name) << " — " << counts_text(r);
    if (!std::isnan(r.sensitivity)) out << "; band " << sensitivity_text(r) << " of an update";
    out << "</summary>\n";
  }
  if (r.insensitive)
    out << "<p class=\"INSENSITIVE\">INSENSITIVE: the band is " << metric_text(r.sensitivity) << " of a step's update ("
        << xml_escape(r.sensitivity_where) << "): a bug that changes an update by less can pass</p>\n";
  write_verdicts(out, r);
  for (const auto& note : r.s->value("notes", json::array()))
    if (note.is_string()) out << "<p class=\"INCONCLUSIVE\">" << xml_escape(note.get<std::string>()) << "</p>\n";
  write_plots(out, *r.s);
  write_repro(out, r);
  out << "<p><a href=\"#index\">index</a></p>\n" << (open ? "</section>\n" : "</details>\n");
}

}  // namespace

std::string scenario_anchor(const std::string& scenario) { return "s-" + anchor_text(scenario); }
std::string repro_anchor(const std::string& scenario, const std::string& invariant) {
  return "repro-" + anchor_text(scenario) + "-" + anchor_text(invariant);
}

std::string html_scenarios(const json& report) {
  std::map<std::string, const json*> golden;
  for (const auto& g : report.value("golden", json::array())) golden[str(g, "scenario")] = &g;
  std::vector<Row> rows;
  const auto& scenarios = report.contains("scenarios") && report["scenarios"].is_array() ? report["scenarios"] : json::array();
  for (const auto& s : scenarios) rows.push_back(row_of(s, golden));
  if (rows.empty()) return "";
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.standing < b.standing; });
  std::ostringstream out;
  write_index(out, rows);
  write_notes(out, rows);
  write_failing_cases(out, report);
  for (const auto& r : rows) write_scenario(out, r);
  return out.str();
}

}  // namespace muoncheck
