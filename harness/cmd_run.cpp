// `muoncheck run SCENARIO...`: judges the implementation on the given scenarios.
#include "harness/commands.hpp"
#include "harness/scenario_selection.hpp"
#include "harness/suite.hpp"

namespace muoncheck {

namespace {

Outcome run(const cli::Args& args) {
  SuiteOptions o;
  o.judge = judge_options_from(args);
  o.command = "run";
  o.report_path = args.value_or("report", "");
  const auto scenarios = select_scenarios(args.positionals(), args.value_or("scenarios", "scenarios"), false);
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
          {"report", true, false, "write the JSON report to FILE"},
          {"scenarios", true, false, "folder that bare scenario names are looked up in (default scenarios)"}};
}

Command run_command() {
  return {{"run", "muoncheck run SCENARIO... [--fault ID]... [--mode trajectory|stepwise|both] [--report FILE] [--oracle-precision P]",
           "Runs the production implementation (ZeRO on Gloo, CPU), the exact oracle and the control on each\n"
           "SCENARIO and judges every applicable invariant. Exit 1 on any FAIL.",
           judge_option_specs()},
          run};
}

}  // namespace muoncheck
