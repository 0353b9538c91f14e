#include "harness/suite.hpp"

#include <cstdio>

#include "core/error.hpp"
#include "harness/console_table.hpp"
#include "harness/golden_check.hpp"
#include "harness/commands.hpp"
#include "harness/option_table.hpp"

namespace muoncheck {

JudgeOptions judge_options_from(const cli::Args& args) {
  JudgeOptions o;
  o.faults = args.values("fault");
  o.mode = mode_from(args);
  o.precision = precision_from(args);
  for (const auto& id : args.values("invariant")) {
    if (!is_invariant_id(id)) throw Error(ErrorKind::Usage, "--invariant: unknown invariant \"" + id + "\"");
    o.only.insert(id);
  }
  o.timeout = timeout_from(args);
  o.backend = backend_from(args);
  o.comm = comm_from(args);
  o.control_members = control_members_from(args);
  o.dp = dp_from(args);
  return o;
}

std::string repro_flags(const JudgeOptions& o) {
  std::string f;
  if (o.mode != CheckMode::both) f += o.mode == CheckMode::trajectory ? "--mode trajectory" : "--mode stepwise";
  if (o.precision != oracle::Precision::float128)
    f += (f.empty() ? "" : " ") + std::string("--oracle-precision ") + oracle::precision_name(o.precision);
  if (o.backend != impl::ComputeBackend::cpu) f += (f.empty() ? "" : " ") + std::string("--backend ") + impl::compute_backend_name(o.backend);
  if (o.comm != impl::CommBackend::gloo) f += (f.empty() ? "" : " ") + std::string("--comm ") + impl::comm_backend_name(o.comm);
  if (o.dp > 0) f += (f.empty() ? "" : " ") + std::string("--dp ") + std::to_string(o.dp);
  if (o.control_members != oracle::kDefaultControlMembers)
    f += (f.empty() ? "" : " ") + std::string("--control-members ") + std::to_string(o.control_members);
  return f;
}

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
  const RunMetadata meta{opts.command, impl::backend_description(impl_options(opts.judge)), repro_flags(opts.judge),
                         opts.min_executed};
  print_failures_and_summary(stdout, results, golden, meta);
  if (!opts.report_path.empty() || opts.views.any()) {
    const auto report = build_report(meta, results, golden);
    if (!opts.report_path.empty()) {
      write_report(opts.report_path, report);
      std::printf("report: %s\n", opts.report_path.c_str());
    }
    write_report_views(report, opts.views);
  }
  const Summary sum = summarize(results, golden, meta);
  throw_if_only_errors(sum, results);   // exit 3, after the report is safely written
  return sum.ok();
}

}  // namespace muoncheck
