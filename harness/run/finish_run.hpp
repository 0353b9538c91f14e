// The end of every judging command's run, in one place: the console's failing cases and summary
// (or, for a mutation run whose fault runs fail by design, the executed-count lines only), then the
// JSON report and the views asked for (JUnit, Markdown summary, HTML), all from the one report.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/judge/scenario_result.hpp"
#include "harness/report/report.hpp"
#include "harness/report/report_views.hpp"

namespace muoncheck {

enum class RunConsole { failures_and_summary, executed_counts_only };

struct RunEnd {
  std::string report_path;   // empty: no JSON report file
  ViewPaths views;
  RunConsole console = RunConsole::failures_and_summary;
  // A command's own sections ("mutants", "sweep"), added to the report before anything is written.
  std::function<void(nlohmann::json&)> extend;
};

// Summarizes the run once (summarize) and hands that one summary to the console and the report.
Summary finish_run(const RunMetadata& meta, const std::vector<ScenarioResult>& results,
                   const std::vector<GoldenResult>& golden, const RunEnd& end);
// The same with the run's summary already computed (a command that needs it before the report).
void finish_run(const RunMetadata& meta, const std::vector<ScenarioResult>& results,
                const std::vector<GoldenResult>& golden, const Summary& sum, const RunEnd& end);

}  // namespace muoncheck
