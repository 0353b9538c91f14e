// `muoncheck nightly`: what a nightly GPU CI job runs — every scenario with the
// golden comparison, the mutants (reusing the suite as their clean control) and a
// budgeted property sweep — into one JSON report that records the device.
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "core/error.hpp"
#include "harness/cmd_sweep_report.hpp"
#include "harness/cmd_sweep_runner.hpp"
#include "harness/commands.hpp"
#include "harness/console_table.hpp"
#include "harness/mutants.hpp"
#include "harness/report.hpp"
#include "harness/scenario_selection.hpp"
#include "harness/suite.hpp"

namespace muoncheck {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

Outcome run(const cli::Args& args) {
  if (!args.positionals().empty()) throw Error(ErrorKind::Usage, "muoncheck nightly takes no scenarios");
  const auto start = std::chrono::steady_clock::now();
  SuiteOptions so;
  so.judge = judge_options_from(args);
  if (!so.judge.faults.empty()) throw Error(ErrorKind::Usage, "muoncheck nightly runs every fault itself; drop --fault");
  so.command = "nightly";
  so.golden = true;
  so.golden_dir = args.value_or("golden", "golden");
  const double budget = args.double_value_or("budget", 3600);
  const auto dir = args.value_or("scenarios", "scenarios");
  const auto report_path = args.value_or("report", "reports/nightly.json");

  std::printf("== suite: every scenario, golden comparison\n");
  const auto suite = judge_suite(select_scenarios({}, dir, true), so);
  const double suite_seconds = seconds_since(start);

  std::printf("\n== mutants: every fault of the catalogue (control: the suite above)\n");
  const auto mutants = run_mutants_after(suite.results, all_fault_ids(), dir, so.judge);
  print_kill_table(stdout, mutants);

  std::printf("\n== sweep: generated scenarios until the budget is spent\n");
  SweepOptions sw;
  sw.cases = args.int_value_or("sweep-cases", 300);
  sw.seed = static_cast<uint64_t>(args.int_value_or("seed", 1));
  sw.budget_seconds = std::max(60.0, budget - seconds_since(start));
  sw.backend = so.judge.backend;
  sw.comm = so.judge.comm;
  sw.timeout = so.judge.timeout;
  const auto sweep = run_sweep(sw);
  print_sweep_summary(stdout, sw, sweep);

  const auto flags = repro_flags(so.judge);
  print_failures_and_summary(stdout, suite.results, suite.golden, flags);
  auto report = build_report({"nightly", impl::backend_description(impl_options(so.judge)), flags}, suite.results, suite.golden);
  report["mutants"] = mutants_json(mutants);
  report["sweep"] = sweep_json(sw, sweep);
  const double seconds = seconds_since(start);
  report["nightly"] = {{"seconds", seconds}, {"suite_seconds", suite_seconds}, {"budget_seconds", budget},
                       {"ok", summarize(suite.results, suite.golden).ok() && mutants.ok() && !sweep.failure}};
  write_report(report_path, report);
  std::printf("nightly: %.0f s; suite %s, mutants %d/%zu, sweep %d cases %s; report: %s\n", seconds,
              summarize(suite.results, suite.golden).ok() ? "OK" : "FAILED", mutants.killed(), mutants.faults.size(),
              sweep.cases_run, sweep.failure ? "FOUND A COUNTEREXAMPLE" : "clean", report_path.c_str());
  return report["nightly"]["ok"].get<bool>() ? Outcome::success : Outcome::conformance_failure;
}

}  // namespace

Command nightly_command() {
  return {{"nightly", "muoncheck nightly [--backend cpu|cuda] [--comm gloo|nccl] [--budget SECONDS] [--report FILE]",
           "The nightly job: every scenario with the golden comparison, the mutants (13 faults, the suite as\n"
           "their clean control) and a property sweep that stops when the budget is spent; one JSON report\n"
           "(default reports/nightly.json) recording the backend and device. Exit 1 on any failure.",
           {{"backend", true, false, "cpu (default) | cuda"},
            {"comm", true, false, "gloo (default) | nccl"},
            {"dp", true, false, "re-split each scenario's global batch over N ranks"},
            {"control-members", true, false, "size K of the control ensemble that sets the noise band (default 8)"},
            {"budget", true, false, "seconds for the whole job; the sweep gets what is left (default 3600, at least 60)"},
            {"sweep-cases", true, false, "most sweep cases (default 300)"},
            {"seed", true, false, "sweep seed (default 1)"},
            {"oracle-precision", true, false, "double | float128 (default) | bin50"},
            {"mode", true, false, "trajectory | stepwise | both (default both)"},
            {"timeout-ms", true, false, "collective timeout per rank in milliseconds (default 60000)"},
            {"report", true, false, "the JSON report (default reports/nightly.json)"},
            {"golden", true, false, "golden folder (default golden)"},
            {"scenarios", true, false, "scenarios folder (default scenarios)"}}},
          run};
}

}  // namespace muoncheck
