// `muoncheck check`: the default conformance suite — every scenario in scenarios/
// on the CPU backend plus the golden comparison; writes out/latest.json.
#include <string>

#include "harness/cli/commands.hpp"
#include "harness/cli/option_table.hpp"
#include "harness/cli/options_from_args.hpp"
#include "harness/judge/scenario_selection.hpp"
#include "harness/run/suite.hpp"
#include "core/atomic_file.hpp"

namespace muoncheck {

namespace {

Outcome run(const cli::Args& args) {
  SuiteOptions o = suite_options_from(args, "check", "report/check");
  o.golden = true;
  o.golden_dir = option_text(args, "golden");
  const auto scenarios = select_scenarios(args.positionals(), option_text(args, "scenarios"), true);
  return run_suite(scenarios, o) ? Outcome::success : Outcome::conformance_failure;
}

}  // namespace

Command check_command() {
  return {{"check", "muoncheck check [SCENARIO...] [--report FILE] [--fault ID]...",
           "The default conformance suite: every scenario in scenarios/ (or those given) through the\n"
           "implementation, the oracle and the control, every invariant, and the golden comparison.\n"
           "Prints the table, writes out/latest.json.\n" + std::string(kSuiteExitHelp) + ".",
           options(with_judge_options({"report/check", "scenarios", "min-executed", "junit", "summary-md", "golden"}))},
          run};
}

}  // namespace muoncheck
