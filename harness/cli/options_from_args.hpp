// The option bundles a command hands on, read from its arguments through the option table's
// parsers (option_table.hpp): what the judge runs and how, and which report views to write.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "harness/cli/cli_args.hpp"
#include "harness/judge/judge_scenario.hpp"
#include "harness/run/suite.hpp"
#include "harness/report/report_views.hpp"

namespace muoncheck {

// --fault, --mode, --oracle-precision (read at `precision_key`: a command's own default), --invariant,
// --timeout-ms, --backend, --comm, --ns-kernel, --control-members, --dp; and the run flags of those.
JudgeOptions judge_options_from(const cli::Args& args, std::string_view precision_key = "oracle-precision");
// The flags `muoncheck run` needs to judge as this command line does: each judging option whose
// text here (given, or this command's default) differs from run's default, as `--NAME TEXT`.
std::vector<std::string> run_flags_from(const cli::Args& args, std::string_view precision_key);
// The option-table keys judge_options_from reads, then `more`: the option list of a command
// that takes every judging option (check, run).
std::vector<std::string> with_judge_options(const std::vector<std::string>& more);
// --junit, --summary-md; checks both targets writable, so call it before the work.
ViewPaths view_paths_from(const cli::Args& args);
// The last sentence of a suite command's --help (check, run, verify): when it exits 1.
inline constexpr const char* kSuiteExitHelp =
    "Exit 1 on any FAIL, on a scenario that executed no invariant (all SKIPPED/UNSUPPORTED), or when\n"
    "fewer than --min-executed of the verdicts ran";

// What a suite command (check, run) runs with: the judge's options, the views, --min-executed
// and the report at `report_key`'s option (checked writable when given, before the suite runs).
SuiteOptions suite_options_from(const cli::Args& args, std::string command, std::string_view report_key);

}  // namespace muoncheck
