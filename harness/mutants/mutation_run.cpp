#include "harness/mutants/mutation_run.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "core/error.hpp"
#include "harness/report/console_table.hpp"
#include "harness/judge/executed_counts.hpp"
#include "harness/judge/scenario_selection.hpp"
#include "impl/faults/fault_catalogue.hpp"

namespace muoncheck {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

bool any_fail(const std::vector<ScenarioResult>& rs) {
  for (const auto& r : rs)
    for (const auto& v : r.verdicts)
      if (v.status == Status::fail) return true;
  return false;
}

}  // namespace

std::string kill_status_name(KillStatus k) {
  switch (k) {
    case KillStatus::killed: return "KILLED";
    case KillStatus::killed_incidentally: return "KILLED-INCIDENTALLY";
    case KillStatus::survived: return "SURVIVED";
  }
  return "?";
}

int MutationRun::killed() const {
  return static_cast<int>(std::count_if(faults.begin(), faults.end(), [](const auto& f) { return f.status == KillStatus::killed; }));
}

bool MutationRun::ok() const { return control_clean && killed() == static_cast<int>(faults.size()); }

MutationRun run_mutants(const std::vector<Scenario>& control_scenarios, const std::vector<std::string>& faults,
                        const std::string& scenario_dir, const JudgeOptions& given) {
  const auto start = std::chrono::steady_clock::now();
  JudgeOptions base = given;   // faults live in the implementation: every run shares the oracle's results
  if (!base.memo) base.memo = std::make_shared<oracle::ResultMemo>();
  std::vector<ScenarioResult> control;
  std::fprintf(stdout, "control: %zu scenarios, no fault\n", control_scenarios.size());
  for (const auto& s : control_scenarios) {
    control.push_back(judge_scenario_or_error(s, base));
    print_scenario_table(stdout, control.back());
  }
  auto run = run_mutants_after(std::move(control), faults, scenario_dir, base);
  run.seconds = seconds_since(start);
  return run;
}

MutationRun run_mutants_after(std::vector<ScenarioResult> control, const std::vector<std::string>& faults,
                              const std::string& scenario_dir, const JudgeOptions& given) {
  const auto start = std::chrono::steady_clock::now();
  JudgeOptions base = given;   // faults live in the implementation: every run shares the oracle's results
  if (!base.memo) base.memo = std::make_shared<oracle::ResultMemo>();
  MutationRun run;
  run.control = std::move(control);
  run.control_clean = !any_fail(run.control);
  for (const auto& id : faults) {
    const impl::FaultInfo* fault = impl::find_fault(id);
    if (!fault) throw Error(ErrorKind::Usage, "muoncheck mutants: no fault \"" + id + "\" in the catalogue");
    const auto t0 = std::chrono::steady_clock::now();
    FaultOutcome out;
    out.fault = id;
    JudgeOptions o = base;
    o.faults = {id};
    for (const auto& s : select_scenarios(fault->scenarios, scenario_dir, false)) {
      out.results.push_back(judge_scenario_or_error(s, o));
      for (const auto& v : out.results.back().verdicts)
        if (v.status == Status::fail) {
          const bool symptom = std::find(fault->symptoms.begin(), fault->symptoms.end(), v.invariant) != fault->symptoms.end();
          out.kills.push_back({s.name, v.invariant, symptom});
        }
    }
    const bool by_symptom = std::any_of(out.kills.begin(), out.kills.end(), [](const Kill& k) { return k.symptom; });
    out.status = by_symptom ? KillStatus::killed : out.kills.empty() ? KillStatus::survived : KillStatus::killed_incidentally;
    out.seconds = seconds_since(t0);
    const ExecutedCounts c = executed_counts_of(out.results);
    std::fprintf(stdout, "fault %-28s %s (%.1f s, %s)\n", id.c_str(), kill_status_name(out.status).c_str(), out.seconds,
                 executed_text(c.executed, c.verdicts).c_str());
    std::fflush(stdout);
    run.faults.push_back(std::move(out));
  }
  run.seconds = seconds_since(start);
  return run;
}

void print_kill_table(std::FILE* out, const MutationRun& run) {
  std::fprintf(out, "\nKill table (* = an invariant naming the fault's real symptom)\n");
  std::fprintf(out, "  %-28s %-20s %s\n", "fault", "status", "failed (scenario: invariants)");
  for (const auto& f : run.faults) {
    std::string by;
    std::string last_scenario;
    for (const auto& k : f.kills) {
      if (k.scenario != last_scenario) by += (by.empty() ? "" : "; ") + k.scenario + ":";
      by += " " + k.invariant + (k.symptom ? "*" : "");
      last_scenario = k.scenario;
    }
    std::fprintf(out, "  %-28s %-20s %s\n", f.fault.c_str(), kill_status_name(f.status).c_str(), by.empty() ? "-" : by.c_str());
  }
  std::fprintf(out, "\ncontrol (no fault): %s; mutation score %d/%zu killed by a symptom invariant; %.1f s\n",
               run.control_clean ? "clean" : "FAILED", run.killed(), run.faults.size(), run.seconds);
}

std::vector<ScenarioResult> fault_results(const MutationRun& run) {
  std::vector<ScenarioResult> all;
  for (const auto& f : run.faults) all.insert(all.end(), f.results.begin(), f.results.end());
  return all;
}

nlohmann::json mutants_json(const MutationRun& run) {
  nlohmann::json faults = nlohmann::json::array();
  for (const auto& f : run.faults) {
    nlohmann::json kills = nlohmann::json::array();
    for (const auto& k : f.kills) kills.push_back({{"scenario", k.scenario}, {"invariant", k.invariant}, {"symptom", k.symptom}});
    const impl::FaultInfo* fault = impl::find_fault(f.fault);
    const ExecutedCounts c = executed_counts_of(f.results);
    faults.push_back({{"fault", f.fault}, {"status", kill_status_name(f.status)}, {"kills", kills},
                      {"executed", c.executed}, {"verdicts", c.verdicts},
                      {"scenarios", fault ? fault->scenarios : std::vector<std::string>{}},
                      {"symptoms", fault ? fault->symptoms : std::vector<std::string>{}}, {"seconds", f.seconds}});
  }
  return {{"control_clean", run.control_clean}, {"killed", run.killed()}, {"total", run.faults.size()},
          {"score", run.faults.empty() ? 1.0 : static_cast<double>(run.killed()) / run.faults.size()},
          {"seconds", run.seconds}, {"faults", faults}};
}

}  // namespace muoncheck
