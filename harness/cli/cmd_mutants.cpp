// `muoncheck mutants`: the default suite clean, then once per fault; prints the
// kill table, the mutation score and the executed counts. Exit 1 if a fault survives
// (or is only killed incidentally), the clean control fails, or the counts fail the
// --min-executed gate (executed_counts.hpp).
#include <cstdio>

#include "core/error.hpp"
#include "harness/cli/commands.hpp"
#include "harness/report/report_views.hpp"
#include "harness/cli/option_table.hpp"
#include "harness/cli/options_from_args.hpp"
#include "harness/report/console_table.hpp"
#include "harness/judge/executed_counts.hpp"
#include "harness/mutants/mutation_run.hpp"
#include "impl/faults/fault_catalogue.hpp"
#include "harness/report/report.hpp"
#include "harness/judge/scenario_selection.hpp"
#include "harness/run/finish_run.hpp"
#include "harness/run/suite.hpp"
#include "core/atomic_file.hpp"

namespace muoncheck {

namespace {

Outcome run(const cli::Args& args) {
  if (!args.positionals().empty()) throw Error(ErrorKind::Usage, "muoncheck mutants takes no scenarios (see --fault)");
  JudgeOptions o = judge_options_from(args, "oracle-precision/mutants");   // double unless given
  if (!o.faults.empty()) o.faults.clear();   // --fault selects which mutants run, below
  std::vector<std::string> faults = args.values("fault");
  if (faults.empty()) faults = impl::fault_ids();
  const auto dir = option_text(args, "scenarios");
  const auto control = select_scenarios({}, dir, true);
  if (const auto path = args.value("json")) check_writable(*path);   // before the runs, not after
  const auto views = view_paths_from(args);
  const double min_executed = min_executed_from(args);
  const auto result = run_mutants(control, faults, dir, o);
  print_kill_table(stdout, result);
  // The gate covers every verdict judged here: the control's and the fault runs'.
  std::vector<ScenarioResult> all = result.control;
  for (const auto& r : fault_results(result)) all.push_back(r);
  const RunMetadata meta{"mutants", impl::backend_description(impl_options(o)), min_executed};
  const Summary sum = finish_run(meta, all, {},
                                 {args.value("json").value_or(""), views, RunConsole::executed_counts_only,
                                  [&](nlohmann::json& report) { report["mutants"] = mutants_json(result); }});
  if (result.ok()) throw_if_only_errors(sum, all);   // exit 3 when only errors stood in the way
  return result.ok() && sum.executed_problems.empty() ? Outcome::success : Outcome::conformance_failure;
}

}  // namespace

Command mutants_command() {
  return {{"mutants", "muoncheck mutants [--fault ID]... [--json FILE]",
           "Runs the default suite once clean (the control, which must pass everything) and once per fault of\n"
           "the catalogue on the scenarios that reach its path; prints the kill table and the mutation score.\n"
           "The oracle runs in double here (its error is far below any fp32 band); --oracle-precision overrides.\n"
           "Exit 1 when a fault survives or is only killed incidentally, the control fails, a scenario (control\n"
           "or fault run) executed no invariant, or fewer than --min-executed of all verdicts ran.",
           options({"fault/mutants", "json", "oracle-precision/mutants", "mode", "timeout-ms", "backend", "comm",
                    "dp", "control-members", "scenarios", "min-executed", "junit", "summary-md", "ranks", "store"})},
          run};
}

}  // namespace muoncheck
