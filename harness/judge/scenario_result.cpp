#include "harness/judge/scenario_result.hpp"

#include "harness/judge/executed_counts.hpp"

namespace muoncheck {

StepReport step_report_of(const StepRecord& st, int step) {
  StepReport s;
  s.step = step;
  s.loss = st.loss;
  s.skipped = st.skipped;
  s.scale = st.scale;
  s.ns_calls = static_cast<int>(st.ns_calls.size());
  return s;
}

double scenario_sensitivity(const ScenarioResult& r, std::string* where) {
  for (const char* id : {"step-conforms", "trajectory-conforms"})
    for (const auto& v : r.verdicts)
      if (v.invariant == id && (v.status == Status::pass || v.status == Status::fail || v.status == Status::inconclusive) &&
          v.sensitivity >= 0) {
        if (where) *where = std::string(id) + " at " + v.sensitivity_where;
        return v.sensitivity;
      }
  return -1.0;
}

std::string inconclusive_note(const ScenarioResult& r) {
  std::vector<std::string> ids;
  for (const auto& v : r.verdicts)
    if (v.status == Status::inconclusive) ids.push_back(v.invariant);
  if (ids.empty()) return "";
  std::string list;
  for (const auto& id : ids) list += (list.empty() ? "" : ", ") + id;
  return "NOTE: " + list + " INCONCLUSIVE: the scenario's updates are not determined at its precision; cause: " + r.inconclusive_cause;
}

std::vector<std::string> run_repro(const std::string& source, const std::vector<std::string>& faults,
                                   const std::vector<std::string>& flags) {
  std::vector<std::string> argv = {"muoncheck", "run", source};
  for (const auto& f : faults) argv.insert(argv.end(), {"--fault", f});
  argv.insert(argv.end(), flags.begin(), flags.end());
  return argv;
}

std::string repro_line(const ScenarioResult& r) {
  std::string line;
  for (const auto& a : r.repro) line += (line.empty() ? "" : " ") + a;
  return line;
}

std::string repro_line(const ScenarioResult& r, const std::string& invariant) {
  return repro_line(r) + " --invariant " + invariant;
}

std::vector<std::string> failing_lines(const ScenarioResult& r) {
  std::vector<std::string> lines;
  for (const auto& v : r.verdicts)
    if (v.status == Status::fail) lines.push_back(repro_line(r, v.invariant));
  if (r.error) lines.push_back(repro_line(r));
  else if (executed_count(r) == 0) lines.push_back(idle_repro_line(r));   // judged nothing: not OK either
  return lines;
}

}  // namespace muoncheck
