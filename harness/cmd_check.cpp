// `muoncheck check`: the default conformance suite — every scenario in scenarios/
// on the CPU backend plus the golden comparison; writes reports/latest.json.
#include "harness/commands.hpp"
#include "harness/option_table.hpp"
#include "harness/scenario_selection.hpp"
#include "harness/suite.hpp"
#include "core/atomic_file.hpp"

namespace muoncheck {

namespace {

Outcome run(const cli::Args& args) {
  SuiteOptions o;
  o.judge = judge_options_from(args);
  o.command = "check";
  o.views = ViewPaths::from(args);
  o.report_path = option_text(args, "report/check");
  check_writable(o.report_path);   // before the suite runs, not after
  o.golden = true;
  o.golden_dir = option_text(args, "golden");
  o.min_executed = min_executed_from(args);
  const auto scenarios = select_scenarios(args.positionals(), option_text(args, "scenarios"), true);
  return run_suite(scenarios, o) ? Outcome::success : Outcome::conformance_failure;
}

}  // namespace

Command check_command() {
  return {{"check", "muoncheck check [SCENARIO...] [--report FILE] [--fault ID]...",
           "The default conformance suite: every scenario in scenarios/ (or those given) through the\n"
           "implementation, the oracle and the control, every invariant, and the golden comparison.\n"
           "Prints the table, writes reports/latest.json. Exit 1 on any FAIL, on a scenario that executed\n"
           "no invariant (all SKIPPED/UNSUPPORTED), or when fewer than --min-executed of the verdicts ran.",
           options({"fault", "mode", "oracle-precision", "invariant", "timeout-ms", "backend", "comm", "dp",
                    "control-members", "report/check", "scenarios", "min-executed", "junit", "summary-md", "golden"})},
          run};
}

}  // namespace muoncheck
