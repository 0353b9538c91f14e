#include "harness/run/suite.hpp"

#include <cstdio>

#include "core/error.hpp"
#include "harness/report/console_table.hpp"
#include "harness/golden/golden_check.hpp"
#include "harness/run/finish_run.hpp"

namespace muoncheck {

SuiteResults judge_suite(const std::vector<Scenario>& scenarios, const SuiteOptions& opts) {
  SuiteResults out;
  auto& results = out.results;
  auto& golden = out.golden;
  JudgeOptions judge = opts.judge;   // one memo for the suite: scenarios share oracle and control results
  if (!judge.memo) judge.memo = std::make_shared<oracle::ResultMemo>();
  for (const auto& s : scenarios) {
    Trajectory exact;
    results.push_back(judge_scenario_or_error(s, judge, &exact));
    if (opts.golden) {
      const bool reusable = opts.judge.precision == oracle::Precision::float128 && !exact.steps.empty();
      const auto c = check_against_golden(s, opts.golden_dir, reusable ? &exact : nullptr);
      golden.push_back({s.name, c.ok, c.worst_relative,
                        c.ok ? "" : c.message + "; " + golden::regenerate_hint(s)});
      print_scenario_table(stdout, results.back());
      print_golden_line(stdout, golden.back());
    } else {
      print_scenario_table(stdout, results.back());
    }
  }
  return out;
}

bool run_suite(const std::vector<Scenario>& scenarios, const SuiteOptions& opts) {
  const auto [results, golden] = judge_suite(scenarios, opts);
  const RunMetadata meta{opts.command, impl::backend_description(impl_options(opts.judge)), opts.min_executed};
  const Summary sum = finish_run(meta, results, golden, {opts.report_path, opts.views});
  throw_if_only_errors(sum, results);   // exit 3, after the report is safely written
  return sum.ok();
}

}  // namespace muoncheck
