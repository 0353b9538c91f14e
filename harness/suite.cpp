#include "harness/suite.hpp"

#include <cstdio>

#include "core/error.hpp"
#include "harness/console_table.hpp"
#include "harness/golden_check.hpp"
#include "harness/commands.hpp"

namespace muoncheck {

JudgeOptions judge_options_from(const cli::Args& args) {
  JudgeOptions o;
  o.faults = args.values("fault");
  const auto mode = args.value_or("mode", "both");
  if (mode == "trajectory") o.mode = CheckMode::trajectory;
  else if (mode == "stepwise") o.mode = CheckMode::stepwise;
  else if (mode == "both") o.mode = CheckMode::both;
  else throw Error(ErrorKind::Usage, "--mode expects trajectory|stepwise|both, got \"" + mode + "\"");
  const auto p = args.value_or("oracle-precision", "float128");
  if (!oracle::parse_precision(p, o.precision))
    throw Error(ErrorKind::Usage, "--oracle-precision expects double|float128|bin50, got \"" + p + "\"");
  for (const auto& id : args.values("invariant")) {
    if (!is_invariant_id(id)) throw Error(ErrorKind::Usage, "--invariant: unknown invariant \"" + id + "\"");
    o.only.insert(id);
  }
  o.timeout = std::chrono::milliseconds(args.int_value_or("timeout-ms", 60000));
  return o;
}

std::string repro_flags(const JudgeOptions& o) {
  std::string f;
  if (o.mode != CheckMode::both) f += o.mode == CheckMode::trajectory ? "--mode trajectory" : "--mode stepwise";
  if (o.precision != oracle::Precision::float128)
    f += (f.empty() ? "" : " ") + std::string("--oracle-precision ") + oracle::precision_name(o.precision);
  return f;
}

bool run_suite(const std::vector<Scenario>& scenarios, const SuiteOptions& opts) {
  std::vector<ScenarioResult> results;
  std::vector<GoldenResult> golden;
  for (const auto& s : scenarios) {
    results.push_back(judge_scenario(s, opts.judge));
    if (opts.golden) {
      const auto c = check_against_golden(s, opts.golden_dir);
      golden.push_back({s.name, c.ok, c.worst_relative,
                        c.ok ? "" : c.message + "; " + golden::regenerate_hint(s)});
      print_scenario_table(stdout, results.back());
      print_golden_line(stdout, golden.back());
    } else {
      print_scenario_table(stdout, results.back());
    }
  }
  const auto flags = repro_flags(opts.judge);
  print_failures_and_summary(stdout, results, golden, flags);
  if (!opts.report_path.empty()) {
    RunMetadata meta{opts.command, "cpu", flags};
    write_report(opts.report_path, build_report(meta, results, golden));
    std::printf("report: %s\n", opts.report_path.c_str());
  }
  return summarize(results, golden).ok();
}

}  // namespace muoncheck
