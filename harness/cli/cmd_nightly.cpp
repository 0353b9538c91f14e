// `muoncheck nightly`: what a nightly GPU CI job runs — every scenario with the
// golden comparison, the mutants (reusing the suite as their clean control) and a
// budgeted property sweep — into one JSON report that records the device.
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "core/error.hpp"
#include "harness/sweep/sweep_report.hpp"
#include "harness/sweep/sweep_runner.hpp"
#include "harness/cli/commands.hpp"
#include "harness/report/report_views.hpp"
#include "harness/cli/option_table.hpp"
#include "harness/cli/options_from_args.hpp"
#include "harness/cli/sweep_impl.hpp"
#include "harness/external/implementation.hpp"
#include "harness/report/console_table.hpp"
#include "harness/judge/executed_counts.hpp"
#include "harness/mutants/mutation_run.hpp"
#include "harness/report/report.hpp"
#include "harness/judge/scenario_selection.hpp"
#include "harness/run/finish_run.hpp"
#include "harness/run/suite.hpp"
#include "impl/faults/fault_catalogue.hpp"
#include "core/atomic_file.hpp"

namespace muoncheck {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

Outcome run(const cli::Args& args) {
  if (!args.positionals().empty()) throw Error(ErrorKind::Usage, "muoncheck nightly takes no scenarios");
  if (args.value("impl"))   // another implementation: its budgeted sweep is its nightly
    return run_impl_sweep_command(args, positive_int_from(args, "sweep-cases"), seconds_from(args, "budget/nightly"));
  reject_workers_without_impl(args);
  const auto start = std::chrono::steady_clock::now();
  SuiteOptions so;
  so.judge = judge_options_from(args);
  if (!so.judge.faults.empty()) throw Error(ErrorKind::Usage, "muoncheck nightly runs every fault itself; drop --fault");
  so.command = "nightly";
  so.golden = true;
  so.golden_dir = option_text(args, "golden");
  const double budget = seconds_from(args, "budget/nightly");
  const auto dir = option_text(args, "scenarios");
  const auto report_path = option_text(args, "report/nightly");
  const double min_executed = min_executed_from(args);
  // The sweep's own options, parsed (and so rejected) before the hours of work, not after.
  const int sweep_cases = positive_int_from(args, "sweep-cases");
  // A new seed each night (the UTC date) unless given, so the sweep explores instead of re-running one tuned seed.
  const std::uint64_t seed = seed_from(args, "seed/nightly");
  const std::string seed_source = option_text(args, "seed/nightly") == "date" ? "the UTC date" : "given";
  check_writable(report_path);   // before the hours of work, not after
  const auto views = view_paths_from(args);

  so.judge.memo = std::make_shared<oracle::ResultMemo>();   // the suite's oracle results serve the mutants too
  std::printf("== suite: every scenario, golden comparison\n");
  const auto suite = judge_suite(select_scenarios({}, dir, true), so);
  const double suite_seconds = seconds_since(start);

  std::printf("\n== mutants: every fault of the catalogue (control: the suite above)\n");
  const auto mutants = run_mutants_after(suite.results, impl::fault_ids(), dir, so.judge);
  print_kill_table(stdout, mutants);

  std::printf("\n== sweep: generated scenarios until the budget is spent; seed %llu (%s; --seed %llu repeats it)\n",
              static_cast<unsigned long long>(seed), seed_source.c_str(), static_cast<unsigned long long>(seed));
  SweepOptions sw;
  sw.cases = sweep_cases;
  sw.seed = seed;
  sw.budget_seconds = std::max(60.0, budget - seconds_since(start));
  sw.backend = so.judge.backend;
  sw.comm = so.judge.comm;
  sw.timeout = so.judge.timeout;
  sw.control_members = so.judge.control_members;
  sw.min_executed = min_executed;
  const auto sweep = run_sweep(sw);
  print_sweep_summary(stdout, sw, sweep);

  // Each part passes its own --min-executed gate: the suite, the fault runs, the sweep's cases.
  const RunMetadata meta{"nightly", impl::backend_description(impl_options(so.judge)), min_executed};
  const Summary suite_sum = summarize(suite.results, suite.golden, meta);
  const Summary fault_sum = summarize(fault_results(mutants), {}, meta);
  const auto sweep_problems = sweep_executed_problems(sw, sweep);
  std::printf("\nmutants (fault runs): ");
  print_executed_counts(stdout, fault_sum.counts, fault_sum.executed_problems);
  const bool mutants_ok = mutants.ok() && fault_sum.executed_problems.empty();
  const bool sweep_ok = !sweep.failure && sweep_problems.empty();
  const double seconds = seconds_since(start);
  const bool ok = suite_sum.ok() && mutants_ok && sweep_ok;
  finish_run(meta, suite.results, suite.golden, suite_sum,
             {report_path, views, RunConsole::failures_and_summary, [&](nlohmann::json& report) {
                report["mutants"] = mutants_json(mutants);
                report["mutants"]["executed"] = fault_sum.counts.executed;
                report["mutants"]["verdicts"] = fault_sum.counts.verdicts;
                report["mutants"]["executed_problems"] = fault_sum.executed_problems;
                report["sweep"] = sweep_json(sw, sweep);
                report["nightly"] = {{"seconds", seconds}, {"suite_seconds", suite_seconds}, {"budget_seconds", budget},
                                     {"seed", seed}, {"seed_from", seed_source}, {"ok", ok}};
              }});
  std::printf("nightly: %.0f s; suite %s (%s), mutants %d/%zu%s, sweep %d cases %s; report: %s\n", seconds,
              suite_sum.ok() ? "OK" : "FAILED", executed_text(suite_sum.counts).c_str(), mutants.killed(),
              mutants.faults.size(), fault_sum.executed_problems.empty() ? "" : " (NOT OK: executed counts)",
              sweep.cases_run, sweep.failure ? "FOUND A COUNTEREXAMPLE" : sweep_problems.empty() ? "clean" : "NOT OK: executed counts",
              report_path.c_str());
  if (mutants_ok && sweep_ok) throw_if_only_errors(suite_sum, suite.results);   // exit 3, report written
  return ok ? Outcome::success : Outcome::conformance_failure;
}

}  // namespace

Command nightly_command() {
  return {{"nightly", "muoncheck nightly [--backend cpu|cuda] [--comm gloo|nccl] [--budget SECONDS] [--report FILE]",
           "The nightly job: every scenario with the golden comparison, the mutants (the " +
               std::to_string(impl::fault_catalogue().size()) + " faults of the catalogue, the suite\n"
           "as their clean control) and a property sweep that stops when the budget is spent; one JSON report\n"
           "(default out/nightly.json) recording the backend, the device and the sweep's seed (by default the\n"
           "UTC date, YYYYMMDD: each night draws new cases). Exit 1 on any failure, and when\n"
           "the suite, the fault runs or the sweep has a scenario that executed no invariant or executed fewer\n"
           "than --min-executed of its verdicts.\n"
           "With --impl NAME[=VERSION] (" + external::implementation_names() + ", or a plugin) the nightly job of that\n"
           "implementation: its budgeted sweep\n"
           "(`muoncheck sweep --impl`, --sweep-cases cases at most, --workers N resident workers side by side,\n"
           "--json FILE for its record).",
           options({"backend", "comm", "dp", "control-members", "budget/nightly", "sweep-cases", "seed/nightly",
                    "oracle-precision", "mode", "timeout-ms", "report/nightly", "golden", "scenarios", "min-executed",
                    "junit", "summary-md", "impl", "impl-site", "installed", "workers", "max-defects", "known-defects", "shrink-seconds", "attribution-seconds", "case-timeout-s", "cases-dir",
                    "json", "fix"})},
          run};
}

}  // namespace muoncheck
