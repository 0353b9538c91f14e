#include "harness/cli/sweep_impl.hpp"

#include <cstdio>
#include <filesystem>
#include <memory>
#include <vector>

#include "core/error.hpp"
#include "harness/cli/option_table.hpp"
#include "harness/cli/options_from_args.hpp"
#include "harness/external/deepspeed_region.hpp"
#include "harness/external/deepspeed_worker.hpp"
#include "harness/external/torch_region.hpp"
#include "harness/external/torch_worker.hpp"
#include "harness/report/report_views.hpp"
#include "harness/sweep/impl_sweep.hpp"
#include "harness/sweep/impl_sweep_report.hpp"
#include "harness/sweep/sweep_report.hpp"
#include "core/atomic_file.hpp"

namespace muoncheck {

void reject_workers_without_impl(const cli::Args& args) {
  if (args.value("workers"))
    throw Error(ErrorKind::Usage, "--workers needs --impl: it sets how many resident workers of that implementation run "
                                  "side by side (our own engine's sweep runs one case at a time)");
}

Outcome run_impl_sweep_command(const cli::Args& args, int cases, double budget_seconds) {
  const std::string impl = *args.value("impl");
  external::ResidentWorkerOptions w;
  const bool torch = impl.rfind("torch", 0) == 0;   // else deepspeed (its parser names both in the error)
  w.implementation = torch ? "torch" : "deepspeed";
  w.version = torch ? external::torch_version_from_impl(impl) : external::deepspeed_version_from_impl(impl);
  w.dp = std::max(1, dp_from(args));
  w.site = args.value("impl-site") ? *args.value("impl-site")
                                   : torch ? external::default_torch_site(w.version) : external::default_deepspeed_site(w.version);
  w.device = backend_from(args) == impl::ComputeBackend::cuda ? "cuda" : "cpu";
  w.case_timeout = std::chrono::milliseconds(static_cast<long long>(1000 * seconds_from(args, "case-timeout-s")));
  if (w.case_timeout.count() <= 0) throw Error(ErrorKind::Usage, "--case-timeout-s must be positive");
  if (const auto file = args.value("known-defects")) w.known_defects = std::filesystem::absolute(*file).string();
  // N independent workers, each its own process and log; the sweep hands each the next case.
  const int n = workers_from(args);
  std::vector<std::unique_ptr<external::ResidentWorker>> workers;
  std::vector<CaseRunner> runners;
  for (int k = 1; k <= n; ++k) {
    external::ResidentWorkerOptions wk = w;
    wk.worker = n > 1 ? k : 0;
    workers.push_back(std::make_unique<external::ResidentWorker>(
        wk, torch ? external::torch_worker_command(wk) : external::deepspeed_worker_command(wk)));
    runners.push_back([&worker = *workers.back()](const Scenario& s, const FixSet& fixes) { return worker.run(s, fixes); });
  }

  ImplSweepOptions o;
  o.impl = impl;
  o.cases = cases;
  o.seed = seed_from(args);
  o.budget_seconds = budget_seconds;
  o.cases_dir = option_text(args, "cases-dir");
  o.max_defects = positive_int_from(args, "max-defects");
  o.max_shrink_seconds = seconds_from(args, "shrink-seconds");
  o.control_members = control_members_from(args);
  o.min_executed = min_executed_from(args);
  o.progress = [](int done, int total, double s, int f, int d) { print_sweep_progress(stderr, done, total, s, f, d); };
  // Attribution uses the registry given, else the plugin's own next to it (adapters/NAME/).
  if (const auto file = args.value("known-defects")) {
    o.registry = load_known_defects(*file);
    o.known_defects_given = true;
  } else if (const std::string own = "adapters/" + w.implementation + "/known_defects.json"; std::filesystem::exists(own)) {
    o.registry = load_known_defects(own);
  }
  if (!o.registry.defects.empty() && o.registry.implementation != w.implementation)
    throw Error(ErrorKind::Usage, "--known-defects " + o.registry.path + ": a registry for \"" + o.registry.implementation +
                                      "\", not for --impl " + w.implementation);
  o.version = w.version;
  if (const auto json = args.value("json")) check_writable(*json);
  const auto views = view_paths_from(args);
  generators::Focus focus;
  if (const auto f = args.value("focus")) focus = generators::focus_for_fault(*f);
  const ImplSweepResult r = run_impl_sweep(o, torch ? external::torch_scenario(focus, w.dp) : external::deepspeed_scenario(focus, w.dp),
                                           std::move(runners));
  print_impl_sweep_summary(stdout, o, r);
  int restarts = 0;
  std::vector<std::string> logs;
  for (const auto& worker : workers) restarts += worker->restarts(), logs.push_back(worker->log_path());
  std::printf("worker restarts: %d (summed over %d worker%s; log%s %s)\n", restarts, n, n == 1 ? "" : "s",
              n == 1 ? "" : "s", joined(logs, ", ").c_str());
  nlohmann::json record = impl_sweep_json(o, r);
  record["worker_restarts"] = restarts;   // summed over the workers
  record["worker_logs"] = logs;
  if (const auto json = args.value("json")) {
    write_file_atomically(*json, record.dump(2) + "\n");
    std::printf("report: %s\n", json->c_str());
  }
  write_report_views(record, views);
  return r.failed() || !coverage_problems(r.coverage, o.min_executed, this_command_line()).empty()
             ? Outcome::conformance_failure
             : Outcome::success;
}

}  // namespace muoncheck
