#include "harness/run/finish_run.hpp"

#include <cstdio>

#include "harness/report/console_table.hpp"

namespace muoncheck {

Summary finish_run(const RunMetadata& meta, const std::vector<ScenarioResult>& results,
                   const std::vector<GoldenResult>& golden, const RunEnd& end) {
  Summary sum = summarize(results, golden, meta);
  finish_run(meta, results, golden, sum, end);
  return sum;
}

void finish_run(const RunMetadata& meta, const std::vector<ScenarioResult>& results,
                const std::vector<GoldenResult>& golden, const Summary& sum, const RunEnd& end) {
  if (end.console == RunConsole::failures_and_summary) print_failures_and_summary(stdout, results, golden, sum);
  else print_executed_counts(stdout, sum.counts, sum.executed_problems);
  if (!end.report_path.empty() || end.views.any()) {
    auto report = build_report(meta, results, golden, sum);
    if (end.extend) end.extend(report);
    if (!end.report_path.empty()) {
      write_report(end.report_path, report);
      std::printf("report: %s\n", end.report_path.c_str());
    }
    write_report_views(report, end.views);
  }
}

}  // namespace muoncheck
