// Runs a list of scenarios through judge_scenario, printing each scenario's table
// as it finishes, then the failing cases and the summary; writes the JSON report.
#pragma once
#include <string>
#include <vector>

#include "harness/judge/executed_counts.hpp"
#include "harness/judge/judge_scenario.hpp"
#include "harness/report/report.hpp"
#include "harness/report/report_views.hpp"

namespace muoncheck {

struct SuiteOptions {
  JudgeOptions judge;
  std::string command;
  std::string report_path;      // empty: no report
  ViewPaths views;              // --junit / --summary-md
  bool golden = false;          // also compare against golden/
  std::string golden_dir = "golden";
  double min_executed = kDefaultMinExecuted;   // --min-executed (executed_counts.hpp)
};


struct SuiteResults {
  std::vector<ScenarioResult> results;
  std::vector<GoldenResult> golden;
};

// Judges every scenario (and the golden comparison when asked), printing each
// scenario's table as it finishes.
SuiteResults judge_suite(const std::vector<Scenario>& scenarios, const SuiteOptions& opts);

// judge_suite, then the failing cases, the summary and the report. True when nothing failed,
// every scenario executed an invariant and the executed share reached min_executed.
bool run_suite(const std::vector<Scenario>& scenarios, const SuiteOptions& opts);

}  // namespace muoncheck
