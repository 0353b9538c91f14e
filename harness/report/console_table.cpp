#include "harness/report/console_table.hpp"

#include <cmath>

#include "properties/determinacy.hpp"

namespace muoncheck {

namespace {

std::string metric_text(const Verdict& v) {
  if (v.status == Status::skipped || v.status == Status::unsupported) return "";
  char buf[64];
  if (v.status == Status::inconclusive) {   // the figure that decided it
    std::snprintf(buf, sizeof buf, "spread %.3g >= %.3g", v.spread, kUndeterminedAt);
    return buf;
  }
  std::snprintf(buf, sizeof buf, "%.3g %s %.3g", v.metric, v.status == Status::pass ? "<=" : "> ", v.threshold);
  return buf;
}

// Scenarios whose weight band would hide more than kInsensitiveAbove of an update.
void print_insensitive_scenarios(std::FILE* out, const std::vector<ScenarioResult>& results) {
  std::vector<std::string> lines;
  for (const auto& r : results) {
    std::string where;
    const double s = scenario_sensitivity(r, &where);
    if (s < 0 || s <= kInsensitiveAbove) continue;
    char buf[96];
    std::snprintf(buf, sizeof buf, "band = %.3g of a step's update", s);
    lines.push_back(r.scenario + ": " + buf + " (" + where + ")");
  }
  if (lines.empty()) return;
  std::fprintf(out, "\nInsensitive scenarios (%zu: a bug that changes an update by less than the band can pass):\n", lines.size());
  for (const auto& l : lines) std::fprintf(out, "  %s\n", l.c_str());
}

// Scenarios with INCONCLUSIVE verdicts: each one's NOTE (which verdicts, the cause).
void print_inconclusive_scenarios(std::FILE* out, const std::vector<ScenarioResult>& results) {
  std::vector<std::string> lines;
  for (const auto& r : results)
    if (const auto note = inconclusive_note(r); !note.empty()) lines.push_back(r.scenario + ": " + note);
  if (lines.empty()) return;
  std::fprintf(out, "\nInconclusive scenarios (%zu: neither OK nor FAIL; the structural invariants were judged):\n", lines.size());
  for (const auto& l : lines) std::fprintf(out, "  %s\n", l.c_str());
}

}  // namespace

void print_scenario_table(std::FILE* out, const ScenarioResult& r) {
  std::string sens;
  if (const double x = scenario_sensitivity(r); x >= 0) {
    char buf[64];
    std::snprintf(buf, sizeof buf, ", band %.2g of an update%s", x, x > kInsensitiveAbove ? " INSENSITIVE" : "");
    sens = buf;
  }
  const int executed = executed_count(r);
  const std::string counts = executed_text(executed, static_cast<int>(r.verdicts.size())) +
                             (r.error ? ": ERROR, NOT JUDGED" : executed == 0 ? ": NOTHING JUDGED (not OK)" : "");
  std::fprintf(out, "%s  (%.1f s%s)  %s%s\n", r.scenario.c_str(), r.wall_seconds, sens.c_str(), counts.c_str(),
               r.faults.empty() ? "" : ("  faults: " + [&] {
                 std::string f;
                 for (const auto& x : r.faults) f += (f.empty() ? "" : ",") + x;
                 return f;
               }()).c_str());
  if (r.error)
    std::fprintf(out, "  %-28s %-11s %-22s %s\n", "(scenario)", "ERROR", std::string(kind_name(r.error->kind)).c_str(),
                 r.error->message.c_str());
  for (const auto& v : r.verdicts)
    std::fprintf(out, "  %-28s %-11s %-22s %s\n", v.invariant.c_str(), status_name(v.status).c_str(),
                 metric_text(v).c_str(), v.message.c_str());
  if (const auto note = inconclusive_note(r); !note.empty()) std::fprintf(out, "  %s\n", note.c_str());
  std::fflush(out);
}

void print_golden_line(std::FILE* out, const GoldenResult& g) {
  std::fprintf(out, "  %-28s %-11s %-22s %s\n", ("golden:" + g.scenario).c_str(), g.ok ? "PASS" : "FAIL",
               [&] {
                 char buf[64];
                 std::snprintf(buf, sizeof buf, "%.3g <= 1e-12", g.worst_relative);
                 return std::string(g.ok ? buf : "");
               }().c_str(),
               g.message.c_str());
}

void print_failures_and_summary(std::FILE* out, const std::vector<ScenarioResult>& results,
                                const std::vector<GoldenResult>& golden, const Summary& s) {
  std::vector<std::string> lines;
  for (const auto& r : results)
    for (auto& line : failing_lines(r)) lines.push_back(std::move(line));
  for (const auto& g : golden)
    if (!g.ok) lines.push_back("muoncheck golden check " + g.scenario);
  print_insensitive_scenarios(out, results);
  print_inconclusive_scenarios(out, results);
  if (!lines.empty()) {
    std::fprintf(out, "\nFailing cases (%zu):\n", lines.size());
    for (const auto& l : lines) std::fprintf(out, "  %s\n", l.c_str());
  }
  const std::string verdict = s.ok() ? (s.inconclusive ? "OK (" + std::to_string(s.inconclusive) + " INCONCLUSIVE: not judged)" : "OK")
                                     : (s.fail || s.golden_fail) ? "FAILED" : s.errors ? "ERROR" : "NOT OK";
  const std::string errors = s.errors ? ", " + std::to_string(s.errors) + " scenario ERRORS" : "";
  std::fprintf(out, "\n%zu scenarios%s: %d PASS, %d FAIL, %d INCONCLUSIVE, %d UNSUPPORTED, %d SKIPPED; %s; golden %zu checked, %d failed => %s\n",
               results.size(), errors.c_str(), s.pass, s.fail, s.inconclusive, s.unsupported, s.skipped,
               executed_text(s.counts).c_str(), golden.size(), s.golden_fail, verdict.c_str());
  for (const auto& p : s.executed_problems) std::fprintf(out, "not OK: %s\n", p.c_str());
}

void print_executed_counts(std::FILE* out, const ExecutedCounts& c, const std::vector<std::string>& problems) {
  std::fprintf(out, "%s\n", executed_text(c).c_str());
  for (const auto& p : problems) std::fprintf(out, "not OK: %s\n", p.c_str());
}

}  // namespace muoncheck
