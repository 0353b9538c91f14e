// `muoncheck sweep`: property-based search over generated scenarios (see
// harness/sweep/sweep_runner.hpp). Exit 1 when a (float128-confirmed) counterexample is found,
// whether it reveals a bug or, with --fault, proves the sweep catches that fault, and
// when the executed counts fail the --min-executed gate (executed_counts.hpp).
#include <cstdio>
#include <tuple>

#include "core/error.hpp"
#include "harness/sweep/sweep_report.hpp"
#include "harness/sweep/sweep_runner.hpp"
#include "harness/sweep/own_attribution.hpp"
#include "harness/cli/commands.hpp"
#include "harness/report/report_views.hpp"
#include "harness/cli/option_table.hpp"
#include "harness/cli/options_from_args.hpp"
#include "harness/cli/sweep_impl.hpp"
#include "harness/external/implementation.hpp"
#include "impl/faults/faults.hpp"
#include "core/atomic_file.hpp"

namespace muoncheck {

namespace {

Outcome run(const cli::Args& args) {
  if (!args.positionals().empty())
    throw Error(ErrorKind::Usage, "sweep takes no positional arguments, got \"" + args.positionals().front() + "\"");
  if (args.value("impl") && args.value("shard"))
    throw Error(ErrorKind::Usage, "--shard splits our own sweep; with --impl, split by --seed per machine");
  if (args.value("impl")) return run_impl_sweep_command(args, positive_int_from(args, "cases"), seconds_from(args, "budget/sweep"));
  reject_workers_without_impl(args);
  if (args.flag("installed")) throw Error(ErrorKind::Usage, "--installed needs --impl: it picks where that implementation comes from");
  SweepOptions o;
  o.cases = positive_int_from(args, "cases");
  o.seed = seed_from(args);
  o.budget_seconds = seconds_from(args, "budget/sweep");
  o.faults = args.values("fault");
  (void)impl::FaultSet::from_ids(o.faults);   // an unknown id is a usage error before any case runs
  if (const auto focus = args.value("focus")) o.focus = generators::focus_for_fault(*focus);
  o.cases_dir = option_text(args, "cases-dir");
  o.timeout = timeout_from(args);
  o.control_members = control_members_from(args);
  o.backend = backend_from(args);
  o.comm = comm_from(args);
  o.min_executed = min_executed_from(args);
  std::tie(o.shard, o.shards) = shard_from(args);
  o.progress = [](int done, int total, double s, int f, int u) { print_sweep_progress(stderr, done, total, s, f, u); };

  if (const auto json = args.value("json")) check_writable(*json);   // before the sweep, not after
  const auto views = view_paths_from(args);
  std::optional<KnownDefects> registry;
  if (const auto file = args.value("known-defects")) registry = load_known_defects(*file);   // bad input before the sweep
  SweepResult r = run_sweep(o);
  if (registry) {
    r.known_defects = registry->path;
    r.known_defect_problems = attribute_own_sweep(o, *registry, true, r);
  }
  print_sweep_summary(stdout, o, r);
  if (const auto json = args.value("json")) {
    write_sweep_json(*json, o, r);
    std::printf("report: %s\n", json->c_str());
  }
  write_report_views(sweep_json(o, r), views);
  return r.failed() || !sweep_executed_problems(o, r).empty() ? Outcome::conformance_failure : Outcome::success;
}

}  // namespace

Command sweep_command() {
  return {{"sweep",
           "muoncheck sweep [--cases N] [--seed S] [--budget SECONDS] [--fault ID]... [--shard I/N] [--json FILE]\n"
           "muoncheck sweep --impl NAME[=VERSION] [--installed] [--dp N] [--backend cuda] [--workers N] [--fix ID]... [--cases N] [--json FILE]",
           "Generates scenarios (RapidCheck; same seed, same cases) and judges each against every\n"
           "invariant with the double-precision oracle. A failure is confirmed in float128, shrunk to a\n"
           "minimal scenario saved under out/cases/, and printed with the line that reproduces it.\n"
           "With --fault the sweep hunts for that injected fault and says after how many cases it was found.\n"
           "With --impl the implementation under test is another one (" + external::implementation_names() + ", or\n"
           "any plugin of entry point group muoncheck.implementations), through its plugin's resident worker:\n"
           "each case is a base scenario and a configuration of the plugin's own knobs, drawn together (a knob\n"
           "shrinks towards its default); the plugin maps the configuration onto the scenario judged, or declines\n"
           "it (declines counted per knob and feature); each distinct failure is shrunk with it in the loop;\n"
           "`muoncheck repro CASE --for NAME` turns a minimal case into a standalone script where NAME has a\n"
           "repro template. Its worker's crash or hang, or a malformed answer of its plugin, is an ERROR of the case.\n"
           "--workers N runs N such workers side by side (the implementation is nearly all the time), each\n"
           "serving two cases in turn, one running while the other is judged: the same cases in the same order\n"
           "and the same record as one worker, recorded in case order;\n"
           "a defect is shrunk once the cases in flight are done, one candidate at a time.\n"
           "--shard I/N judges only cases I, I+N, I+2N, ... of the same seeded sequence (names and repro lines as\n"
           "unsharded); `muoncheck merge` joins the N records into the record of the whole sweep.\n"
           "--known-defects FILE (docs/known-defects.md): each failure is attributed by counterfactual to the\n"
           "smallest set of the file's fixes under which it conforms (else it is NEW); a failure so explained does\n"
           "not fail the run, a NEW one, an entry whose witness no longer fails or a fix that no longer applies does.\n"
           "Exit 1 when a counterexample is found (and not explained by --known-defects), when a case executed no invariant (all SKIPPED/UNSUPPORTED)\n"
           "or when fewer than --min-executed of the cases' verdicts ran; 0 otherwise.",
           options({"cases", "seed", "budget/sweep", "fault", "focus", "json", "cases-dir", "timeout-ms",
                    "control-members", "backend", "comm", "min-executed", "junit", "summary-md", "shard", "impl", "impl-site", "installed",
                    "dp", "workers", "max-defects", "known-defects", "shrink-seconds", "attribution-seconds", "case-timeout-s", "ranks", "store", "fix", "knob"})},
          run};
}

}  // namespace muoncheck
