// The mutation score: the default suite once clean (the control, which must pass
// everything) and once per fault of the catalogue on the scenarios that reach its
// path. A fault is KILLED when a symptom invariant fails, KILLED-INCIDENTALLY when
// only other invariants fail, SURVIVED when nothing fails. Which scenarios reach a fault and
// which invariants name its symptom are its row of the fault catalogue (impl/faults/).
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/judge/judge_scenario.hpp"
#include "harness/judge/scenario_result.hpp"

namespace muoncheck {

enum class KillStatus { killed, killed_incidentally, survived };
std::string kill_status_name(KillStatus k);

struct Kill {
  std::string scenario, invariant;
  bool symptom = false;
};

struct FaultOutcome {
  std::string fault;
  KillStatus status = KillStatus::survived;
  std::vector<Kill> kills;
  std::vector<ScenarioResult> results;
  double seconds = 0;
};

struct MutationRun {
  std::vector<ScenarioResult> control;
  bool control_clean = false;
  std::vector<FaultOutcome> faults;
  double seconds = 0;
  int killed() const;
  bool ok() const;   // clean control and every fault killed by a symptom
};

// `control_scenarios`: the default suite; the faults' scenarios are looked up in `scenario_dir`.
MutationRun run_mutants(const std::vector<Scenario>& control_scenarios, const std::vector<std::string>& faults,
                        const std::string& scenario_dir, const JudgeOptions& base);
// The same with a control already judged (the nightly run reuses its suite results).
MutationRun run_mutants_after(std::vector<ScenarioResult> control, const std::vector<std::string>& faults,
                              const std::string& scenario_dir, const JudgeOptions& base);
// Every fault's scenario results, in fault order (the control's are run.control).
std::vector<ScenarioResult> fault_results(const MutationRun& run);

void print_kill_table(std::FILE* out, const MutationRun& run);
nlohmann::json mutants_json(const MutationRun& run);

}  // namespace muoncheck
