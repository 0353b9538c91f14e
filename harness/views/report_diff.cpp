#include "harness/views/report_diff.hpp"

#include "harness/views/report_fields.hpp"

#include <cmath>
#include <cstdio>
#include <map>

namespace muoncheck {
namespace {

using views::str;

struct Entry {
  std::string status;
  double ratio = NAN;   // metric / threshold (PASS/FAIL with a positive threshold)
};

// "scenario" -> "invariant" -> entry; golden under the invariant "golden".
std::map<std::string, std::map<std::string, Entry>> index_of(const nlohmann::json& r) {
  std::map<std::string, std::map<std::string, Entry>> out;
  for (const auto& s : r.value("scenarios", nlohmann::json::array())) {
    auto& inv = out[str(s, "scenario")];
    for (const auto& v : s.value("invariants", nlohmann::json::array())) {
      Entry e{str(v, "status"), NAN};
      if (v.contains("metric") && v["metric"].is_number() && v.contains("threshold") && v["threshold"].is_number() &&
          v["threshold"].get<double>() > 0)
        e.ratio = v["metric"].get<double>() / v["threshold"].get<double>();
      inv[str(v, "id")] = e;
    }
  }
  for (const auto& g : r.value("golden", nlohmann::json::array())) out[str(g, "scenario")]["golden"] = Entry{str(g, "status"), NAN};
  return out;
}

bool executed(const std::string& status) { return status == "PASS" || status == "FAIL"; }

std::string ratio_text(double r) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", r);
  return buf;
}

}  // namespace

ReportDiff diff_reports(const nlohmann::json& old_report, const nlohmann::json& new_report) {
  ReportDiff d;
  const auto before = index_of(old_report), after = index_of(new_report);
  for (const auto& [scenario, invariants] : before) {
    const auto it = after.find(scenario);
    if (it == after.end()) {
      d.regressions.push_back(scenario + ": scenario missing from the new report");
      continue;
    }
    for (const auto& [id, was] : invariants) {
      const auto now_it = it->second.find(id);
      const std::string where = scenario + " " + id + ": ";
      if (now_it == it->second.end()) {
        if (executed(was.status)) d.regressions.push_back(where + "judged before (" + was.status + "), absent now");
        continue;
      }
      const Entry& now = now_it->second;
      if (now.status == "FAIL" && was.status != "FAIL") {
        d.regressions.push_back(where + was.status + " -> FAIL");
      } else if (was.status == "PASS" && now.status == "INCONCLUSIVE") {
        d.regressions.push_back(where + "PASS -> INCONCLUSIVE (no longer judged: the precision no longer determines the answer)");
      } else if (executed(was.status) && !executed(now.status)) {
        d.regressions.push_back(where + was.status + " -> " + now.status + " (no longer executed)");
      } else if (was.status == "FAIL" && now.status == "PASS") {
        d.improvements.push_back(where + "FAIL -> PASS");
      } else if (!executed(was.status) && executed(now.status)) {
        d.improvements.push_back(where + was.status + " -> " + now.status + " (newly executed)");
      } else if (was.status == "PASS" && now.status == "PASS" && std::isfinite(was.ratio) && std::isfinite(now.ratio) &&
                 now.ratio > kRatioFloor && now.ratio > kRatioGrowth * was.ratio) {
        d.regressions.push_back(where + "ratio to the band " + ratio_text(was.ratio) + " -> " + ratio_text(now.ratio) +
                                " (more than " + ratio_text(kRatioGrowth) + "x, now above " + ratio_text(kRatioFloor) + ")");
      }
    }
  }
  auto faults = [](const nlohmann::json& r) {
    std::map<std::string, std::string> out;
    if (const auto* mutants = views::mutants_of(r))
      for (const auto& f : mutants->value("faults", nlohmann::json::array())) out[str(f, "fault")] = str(f, "status");
    return out;
  };
  const auto old_faults = faults(old_report), new_faults = faults(new_report);
  for (const auto& [fault, status] : old_faults) {
    const auto it = new_faults.find(fault);
    const std::string now = it == new_faults.end() ? "absent" : it->second;
    if (status == "KILLED" && now != "KILLED") d.regressions.push_back("mutant " + fault + ": KILLED -> " + now);
    if (status != "KILLED" && now == "KILLED") d.improvements.push_back("mutant " + fault + ": " + status + " -> KILLED");
  }
  // The sweep: failing tonight and not last night is a regression naming each unexplained finding;
  // while both fail, a finding whose message is new tonight is one too.
  auto unexplained = [](const nlohmann::json& r) {
    std::map<std::string, std::string> out;   // message -> "title (repro)"
    if (const auto* sweep = views::sweep_of(r))
      for (const auto& f : views::sweep_findings(*sweep))
        if (!f.known) out[f.message] = f.title + (f.repro.empty() ? "" : " (" + f.repro + ")");
    return out;
  };
  auto failed = [](const nlohmann::json& r) {
    const auto* sweep = views::sweep_of(r);
    return sweep && views::sweep_failed(*sweep);
  };
  const auto old_found = unexplained(old_report), new_found = unexplained(new_report);
  if (failed(new_report) && !failed(old_report) && new_found.empty())
    d.regressions.push_back("sweep: not OK now (was OK)");
  for (const auto& [message, where] : new_found)
    if (!failed(old_report) || !old_found.count(message)) d.regressions.push_back("sweep: found " + where + ": " + message);
  if (failed(old_report) && !failed(new_report)) d.improvements.push_back("sweep: OK now (was not OK)");
  return d;
}

}  // namespace muoncheck
