// `muoncheck sweep`: property-based search over generated scenarios (see
// cmd_sweep_runner.hpp). Exit 1 when a (float128-confirmed) counterexample is found,
// whether it reveals a bug or, with --fault, proves the sweep catches that fault, and
// when the executed counts fail the --min-executed gate (coverage.hpp).
#include <cstdio>

#include "core/error.hpp"
#include "harness/cmd_sweep_report.hpp"
#include "harness/cmd_sweep_runner.hpp"
#include "harness/commands.hpp"
#include "harness/report_views.hpp"
#include "harness/noise_options.hpp"
#include "impl/faults/faults.hpp"
#include "core/atomic_file.hpp"

namespace muoncheck {

namespace {

uint64_t parse_seed(const std::string& text) {
  try {
    size_t used = 0;
    const unsigned long long v = std::stoull(text, &used);
    if (used == text.size() && text.find('-') == std::string::npos) return v;
  } catch (const std::exception&) {
  }
  throw Error(ErrorKind::Usage, "--seed expects a non-negative integer, got \"" + text + "\"");
}

Outcome run(const cli::Args& args) {
  if (!args.positionals().empty())
    throw Error(ErrorKind::Usage, "sweep takes no positional arguments, got \"" + args.positionals().front() + "\"");
  SweepOptions o;
  o.cases = args.int_value_or("cases", 100);
  o.seed = parse_seed(args.value_or("seed", "1"));
  o.budget_seconds = args.double_value_or("budget", 0.0);
  if (o.cases < 1) throw Error(ErrorKind::Usage, "--cases expects a positive integer");
  if (o.budget_seconds < 0) throw Error(ErrorKind::Usage, "--budget expects seconds ≥ 0");
  o.faults = args.values("fault");
  (void)impl::FaultSet::from_ids(o.faults);   // an unknown id is a usage error before any case runs
  if (const auto focus = args.value("focus")) o.focus = generators::focus_for_fault(*focus);
  o.cases_dir = args.value_or("cases-dir", o.cases_dir);
  o.timeout = std::chrono::milliseconds(args.int_value_or("timeout-ms", 30000));
  o.control_members = control_members_from(args);
  const auto backend = args.value_or("backend", "cpu");
  if (!impl::parse_compute_backend(backend, o.backend))
    throw Error(ErrorKind::Usage, "--backend expects cpu|cuda, got \"" + backend + "\"");
  const auto comm = args.value_or("comm", "gloo");
  if (!impl::parse_comm_backend(comm, o.comm)) throw Error(ErrorKind::Usage, "--comm expects gloo|nccl, got \"" + comm + "\"");
  o.min_executed = min_executed_from(args);
  o.progress = [](int done, int total, double s, int f, int u) { print_sweep_progress(stderr, done, total, s, f, u); };

  if (const auto json = args.value("json")) check_writable(*json);   // before the sweep, not after
  const auto views = ViewPaths::from(args);
  const SweepResult r = run_sweep(o);
  print_sweep_summary(stdout, o, r);
  if (const auto json = args.value("json")) {
    write_sweep_json(*json, o, r);
    std::printf("report: %s\n", json->c_str());
  }
  write_report_views(sweep_json(o, r), views);
  return r.failure || !sweep_coverage_problems(o, r).empty() ? Outcome::conformance_failure : Outcome::success;
}

}  // namespace

Command sweep_command() {
  return {{"sweep",
           "muoncheck sweep [--cases N] [--seed S] [--budget SECONDS] [--fault ID]... [--json FILE]",
           "Generates scenarios (RapidCheck; same seed, same cases) and judges each against every\n"
           "invariant with the double-precision oracle. A failure is confirmed in float128, shrunk to a\n"
           "minimal scenario saved under reports/cases/, and printed with the line that reproduces it.\n"
           "With --fault the sweep hunts for that injected fault and says after how many cases it was found.\n"
           "Exit 1 when a counterexample is found, when a case executed no invariant (all SKIPPED/UNSUPPORTED)\n"
           "or when fewer than --min-executed of the cases' verdicts ran; 0 otherwise.",
           {{"cases", true, false, "number of generated scenarios (default 100)"},
            {"seed", true, false, "seed of the case generator (default 1)"},
            {"budget", true, false, "start no new case after SECONDS (default: no limit)"},
            {"fault", true, true, "switch on a fault of the catalogue in the implementation"},
            {"focus", true, false, "bias the generator toward fault ID's code path (default: the general generator)"},
            {"json", true, false, "write the sweep's JSON record to FILE"},
            {"cases-dir", true, false, "folder for minimal scenarios (default reports/cases)"},
            {"timeout-ms", true, false, "collective timeout per rank in milliseconds (default 30000)"},
            control_members_option(),
            {"backend", true, false, "cpu (default) | cuda: where the implementation's NS and optimizer math run"},
            {"comm", true, false, "gloo (default) | nccl (one GPU per rank)"},
            min_executed_option(), report_view_options()[0], report_view_options()[1]}},
          run};
}

}  // namespace muoncheck
