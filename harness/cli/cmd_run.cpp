// `muoncheck run SCENARIO...`: judges the implementation on the given scenarios.
#include <filesystem>

#include <string>

#include "core/error.hpp"
#include "harness/cli/commands.hpp"
#include "harness/cli/option_table.hpp"
#include "harness/cli/options_from_args.hpp"
#include "harness/judge/executed_counts.hpp"
#include "harness/judge/scenario_selection.hpp"
#include "harness/run/suite.hpp"
#include "harness/traces/trace_observation.hpp"
#include "core/atomic_file.hpp"

namespace muoncheck {

namespace {

Outcome run(const cli::Args& args) {
  SuiteOptions o = suite_options_from(args, "run", "report");
  const auto scenarios = select_scenarios(args.positionals(), option_text(args, "scenarios"), false);
  if (const auto path = args.value("write-trace")) {   // docs/trace-format.md
    const bool folder = std::filesystem::is_directory(*path);
    if (!folder && scenarios.size() != 1)
      throw Error(ErrorKind::Usage, "--write-trace FILE takes one scenario; give an existing folder for several");
    for (const auto& s : scenarios) check_writable(folder ? *path + "/" + s.name + ".trace.json" : *path);
    // A folder receives every run the judgement read (the variants and the repeat too, named
    // as `muoncheck variants` names them), a file the scenario's own run only.
    o.judge.on_run = [p = *path, folder, faults = o.judge.faults](const Scenario& s, const Observation& r, int repeat) {
      if (!folder && (repeat != 0 || s.source.rfind("<variant of ", 0) == 0)) return;
      const std::string name = s.name + (repeat ? ".repeat" + std::to_string(repeat) : "") + ".trace.json";
      save_trace(trace_from_observation(s, r, faults, repeat), folder ? p + "/" + name : p);
    };
  }
  return run_suite(scenarios, o) ? Outcome::success : Outcome::conformance_failure;
}

}  // namespace

Command run_command() {
  return {{"run", "muoncheck run SCENARIO... [--fault ID]... [--mode trajectory|stepwise|both] [--report FILE] [--oracle-precision P]",
           "Runs the production implementation (ZeRO on Gloo, CPU), the exact oracle and the control on each\n"
           "SCENARIO and judges every applicable invariant.\n" + std::string(kSuiteExitHelp) + ".",
           options(with_judge_options({"report", "scenarios", "min-executed", "junit", "summary-md", "write-trace"}))},
          run};
}

}  // namespace muoncheck
