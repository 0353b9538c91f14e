// `muoncheck run SCENARIO...`: judges the implementation on the given scenarios.
#include <filesystem>

#include "core/error.hpp"
#include "harness/commands.hpp"
#include "harness/noise_options.hpp"
#include "harness/coverage.hpp"
#include "harness/scenario_selection.hpp"
#include "harness/suite.hpp"
#include "harness/trace_from_impl.hpp"
#include "core/atomic_file.hpp"

namespace muoncheck {

namespace {

Outcome run(const cli::Args& args) {
  SuiteOptions o;
  o.judge = judge_options_from(args);
  o.command = "run";
  o.views = ViewPaths::from(args);
  o.report_path = args.value_or("report", "");
  if (!o.report_path.empty()) check_writable(o.report_path);   // before the suite runs, not after
  o.min_executed = min_executed_from(args);
  const auto scenarios = select_scenarios(args.positionals(), args.value_or("scenarios", "scenarios"), false);
  if (const auto path = args.value("trace")) {   // docs/trace-format.md
    const bool folder = std::filesystem::is_directory(*path);
    if (!folder && scenarios.size() != 1)
      throw Error(ErrorKind::Usage, "--trace FILE takes one scenario; give an existing folder for several");
    for (const auto& s : scenarios) check_writable(folder ? *path + "/" + s.name + ".trace.json" : *path);
    o.judge.on_impl_result = [p = *path, folder](const Scenario& s, const impl::ImplResult& r) {
      save_trace(trace_from_impl(s, r), folder ? p + "/" + s.name + ".trace.json" : p);
    };
  }
  return run_suite(scenarios, o) ? Outcome::success : Outcome::conformance_failure;
}

}  // namespace

std::vector<cli::OptionSpec> judge_option_specs() {
  return {{"fault", true, true, "switch on a fault of the catalogue in the implementation"},
          {"mode", true, false, "trajectory | stepwise | both (default both)"},
          {"oracle-precision", true, false, "double | float128 (default) | bin50"},
          {"invariant", true, true, "judge only this invariant (its id)"},
          {"timeout-ms", true, false, "collective timeout per rank in milliseconds (default 60000)"},
          {"backend", true, false, "cpu (default) | cuda: where the implementation's NS and optimizer math run"},
          {"comm", true, false, "gloo (default, host TCP; cuda ranks share the GPUs) | nccl (one GPU per rank)"},
          {"dp", true, false, "re-split each scenario's global batch over N ranks (same trajectory)"},
          control_members_option(),
          {"report", true, false, "write the JSON report to FILE"},
          {"scenarios", true, false, "folder that bare scenario names are looked up in (default scenarios)"},
          min_executed_option(), report_view_options()[0], report_view_options()[1]};
}

Command run_command() {
  return {{"run", "muoncheck run SCENARIO... [--fault ID]... [--mode trajectory|stepwise|both] [--report FILE] [--oracle-precision P]",
           "Runs the production implementation (ZeRO on Gloo, CPU), the exact oracle and the control on each\n"
           "SCENARIO and judges every applicable invariant. Exit 1 on any FAIL, on a scenario that executed\n"
           "no invariant (all SKIPPED/UNSUPPORTED), or when fewer than --min-executed of the verdicts ran.",
           [] {
             auto options = judge_option_specs();
             options.push_back({"trace", true, false,
                                "also write the implementation's run as a trace (docs/trace-format.md) to FILE, "
                                "or FOLDER/<scenario>.trace.json when FILE is a folder"});
             return options;
           }()},
          run};
}

}  // namespace muoncheck
