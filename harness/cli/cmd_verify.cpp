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
#include "harness/cli/sweep_impl.hpp"
#include "core/scenario_io.hpp"
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

// A result for each given scenario no trace was given for: ERROR "no trace for this scenario"
// (the run is not OK: a scenario given and not judged is not a pass).
void add_untraced(const std::vector<Scenario>& scenarios, const std::vector<TraceCase>& cases,
                  std::vector<ScenarioResult>& results) {
  for (const auto& s : scenarios) {
    bool traced = false;
    for (const auto& c : cases) traced = traced || (c.given && c.trace.repeat == 0 && c.scenario.name == s.name);
    if (traced) continue;
    ScenarioResult r;
    r.scenario = s.name;
    r.source = s.source;
    r.scenario_hash = scenario_hash(s);
    r.repro = {"muoncheck", "verify", s.source, "--trace", "TRACE_OF_" + s.name};
    r.error = ScenarioError{ErrorKind::BadInput, "no trace for this scenario"};
    results.push_back(std::move(r));
  }
}

Outcome run(const cli::Args& args) {
  if (args.value("impl")) return run_impl_verify_command(args);
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
  const auto cases = match_traces(scenarios, traces);
  auto results = verify_traces(cases, o);
  add_untraced(scenarios, cases, results);
  for (const auto& r : results) print_scenario_table(stdout, r);
  const RunMetadata meta{"verify", "trace", min_executed};
  const auto sum = finish_run(meta, results, {}, {args.value("report").value_or(""), views});
  return sum.ok() ? Outcome::success : Outcome::conformance_failure;
}

}  // namespace

Command verify_command() {
  return {{"verify", "muoncheck verify SCENARIO... --trace FILE [--trace FILE...] [--report FILE] [--invariant ID]...\n"
                     "muoncheck verify --impl NAME[=VERSION] SCENARIO... [--dp N] [--fix ID]... [--report FILE]",
           "Judges an implementation from its traces (docs/trace-format.md) by every invariant `run` applies,\n"
           "on the same judging path: against the oracle within the band of the control ensemble in the\n"
           "scenario's dtypes (a trace declaring wider dtypes is reported, never given a wider band); an\n"
           "invariant that reads a part the trace leaves out is UNSUPPORTED naming it. A trace names its\n"
           "scenario: a given SCENARIO of that name (judged), or the scenario embedded in the trace when it\n"
           "re-splits a given one (a variant the relational invariants compare against; `muoncheck variants\n"
           "SCENARIO --out-dir DIR` writes the variants they need; \"repeat\": 1 marks the repeat run).\n"
           "A given SCENARIO no trace was given for is an ERROR row, \"no trace for this scenario\".\n"
           "With --impl the implementation's plugin runs the scenarios itself (its generic resident worker, as\n"
           "`sweep --impl` runs it): the plugin gives the configuration that expresses each scenario (or declines\n"
           "it, UNSUPPORTED with its reason), runs it and its re-splits, and each is judged as above.\n" +
               std::string(kSuiteExitHelp) + ".",
           options({"trace", "report", "invariant", "oracle-precision", "control-members", "scenarios",
                    "min-executed", "junit", "summary-md", "impl", "impl-site", "fix", "dp", "backend", "case-timeout-s"})},
          run};
}

}  // namespace muoncheck
