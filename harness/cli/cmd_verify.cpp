// `muoncheck verify SCENARIO... --trace FILE...`: judges an implementation from the traces it
// wrote (docs/trace-format.md) against the oracle, with the same table, repro lines and JSON
// report as `run`.
#include <cstdio>

#include <string>

#include "core/error.hpp"
#include "harness/cli/commands.hpp"
#include "harness/report/report_views.hpp"
#include "harness/cli/option_table.hpp"
#include "harness/cli/options_from_args.hpp"
#include "harness/report/console_table.hpp"
#include "harness/judge/executed_counts.hpp"
#include "harness/report/report.hpp"
#include "harness/judge/scenario_selection.hpp"
#include "harness/judge/verify_traces.hpp"
#include "harness/run/finish_run.hpp"
#include "properties/invariant_table.hpp"
#include "core/atomic_file.hpp"

namespace muoncheck {

namespace {

Outcome run(const cli::Args& args) {
  if (args.positionals().empty()) throw Error(ErrorKind::Usage, "muoncheck verify: give at least one scenario");
  const auto paths = args.values("trace");
  if (paths.empty()) throw Error(ErrorKind::Usage, "muoncheck verify: give at least one --trace FILE");
  if (const auto report = args.value("report")) check_writable(*report);   // before any judging
  const auto views = view_paths_from(args);
  VerifyOptions o;
  const double min_executed = min_executed_from(args);
  o.precision = precision_from(args);
  o.control_members = control_members_from(args);
  o.flags = run_flags_from(args, "oracle-precision");
  for (const auto& id : args.values("invariant")) {
    if (!is_invariant_id(id)) throw Error(ErrorKind::Usage, "--invariant: \"" + id + "\" is not an invariant");
    o.only.insert(id);
  }
  const auto scenarios = select_scenarios(args.positionals(), option_text(args, "scenarios"), false);
  std::vector<Trace> traces;
  for (const auto& path : paths) traces.push_back(load_trace(path));
  const auto results = verify_traces(match_traces(scenarios, traces), o);
  for (const auto& r : results) print_scenario_table(stdout, r);
  const RunMetadata meta{"verify", "trace", min_executed};
  const auto sum = finish_run(meta, results, {}, {args.value("report").value_or(""), views});
  return sum.ok() ? Outcome::success : Outcome::conformance_failure;
}

}  // namespace

Command verify_command() {
  return {{"verify", "muoncheck verify SCENARIO... --trace FILE [--trace FILE...] [--report FILE] [--invariant ID]...",
           "Judges an implementation from its traces (docs/trace-format.md) by every invariant `run` applies,\n"
           "on the same judging path: against the oracle within the band of the control ensemble in the\n"
           "scenario's dtypes (a trace declaring wider dtypes is reported, never given a wider band); an\n"
           "invariant that reads a part the trace leaves out is UNSUPPORTED naming it. A trace names its\n"
           "scenario: a given SCENARIO of that name (judged), or the scenario embedded in the trace when it\n"
           "re-splits a given one (a variant the relational invariants compare against; `muoncheck variants\n"
           "SCENARIO --out-dir DIR` writes the variants they need; \"repeat\": 1 marks the repeat run).\n" +
               std::string(kSuiteExitHelp) + ".",
           options({"trace", "report", "invariant", "oracle-precision", "control-members", "scenarios",
                    "min-executed", "junit", "summary-md"})},
          run};
}

}  // namespace muoncheck
