// `muoncheck mutants`: the default suite clean, then once per fault; prints the
// kill table and the mutation score. Exit 1 if a fault survives (or is only
// killed incidentally) or the clean control fails.
#include <cstdio>

#include "core/error.hpp"
#include "harness/commands.hpp"
#include "harness/mutants.hpp"
#include "harness/mutation_plan.hpp"
#include "harness/report.hpp"
#include "harness/scenario_selection.hpp"
#include "harness/suite.hpp"

namespace muoncheck {

namespace {

Outcome run(const cli::Args& args) {
  if (!args.positionals().empty()) throw Error(ErrorKind::Usage, "muoncheck mutants takes no scenarios (see --fault)");
  JudgeOptions o = judge_options_from(args);
  if (!o.faults.empty()) o.faults.clear();   // --fault selects which mutants run, below
  if (!args.value("oracle-precision")) o.precision = oracle::Precision::float64;
  std::vector<std::string> faults = args.values("fault");
  if (faults.empty()) faults = all_fault_ids();
  const auto dir = args.value_or("scenarios", "scenarios");
  const auto control = select_scenarios({}, dir, true);
  const auto result = run_mutants(control, faults, dir, o);
  print_kill_table(stdout, result);
  if (auto path = args.value("json")) {
    std::vector<ScenarioResult> all = result.control;
    for (const auto& f : result.faults) all.insert(all.end(), f.results.begin(), f.results.end());
    auto report = build_report({"mutants", impl::backend_description(impl_options(o)), repro_flags(o)}, all, {});
    report["mutants"] = mutants_json(result);
    write_report(*path, report);
    std::printf("report: %s\n", path->c_str());
  }
  return result.ok() ? Outcome::success : Outcome::conformance_failure;
}

}  // namespace

Command mutants_command() {
  return {{"mutants", "muoncheck mutants [--fault ID]... [--json FILE]",
           "Runs the default suite once clean (the control, which must pass everything) and once per fault of\n"
           "the catalogue on the scenarios that reach its path; prints the kill table and the mutation score.\n"
           "The oracle runs in double here (its error is far below any fp32 band); --oracle-precision overrides.",
           {{"fault", true, true, "only this fault (default: the whole catalogue)"},
            {"json", true, false, "write the report, with its mutants section, to FILE"},
            {"oracle-precision", true, false, "double (default here) | float128 | bin50"},
            {"mode", true, false, "trajectory | stepwise | both (default both)"},
            {"timeout-ms", true, false, "collective timeout per rank in milliseconds (default 60000)"},
            {"backend", true, false, "cpu (default) | cuda"},
            {"comm", true, false, "gloo (default) | nccl"},
            {"dp", true, false, "re-split each scenario's global batch over N ranks"},
            {"control-members", true, false, "size K of the control ensemble that sets the noise band (default 8)"},
            {"scenarios", true, false, "scenarios folder (default scenarios)"}}},
          run};
}

}  // namespace muoncheck
