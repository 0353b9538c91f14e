#include "harness/cli/sweep_impl.hpp"

#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <vector>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/scenario_io.hpp"
#include "harness/cli/option_table.hpp"
#include "harness/cli/options_from_args.hpp"
#include "harness/external/implementation.hpp"
#include "harness/external/resolved_scenario.hpp"
#include "harness/install/data_root.hpp"
#include "harness/judge/scenario_selection.hpp"
#include "harness/judge/verify_traces.hpp"
#include "harness/report/console_table.hpp"
#include "harness/report/report_views.hpp"
#include "harness/run/finish_run.hpp"
#include "harness/sweep/impl_sweep.hpp"
#include "harness/sweep/impl_sweep_report.hpp"
#include "harness/sweep/sweep_report.hpp"

namespace muoncheck {

namespace {

// N resident workers of the implementation --impl names, each its own process and log.
struct ImplWorkers {
  external::Implementation impl;
  external::ResidentWorkerOptions options;
  std::vector<std::unique_ptr<external::ResidentWorker>> workers;

  std::vector<CaseRunner> runners() {
    std::vector<CaseRunner> out;
    for (auto& w : workers)
      out.push_back([&worker = *w](const Scenario& s, const FixSet& fixes) { return worker.run(s, fixes); });
    return out;
  }
  int restarts() const {
    int n = 0;
    for (const auto& w : workers) n += w->restarts();
    return n;
  }
  std::vector<std::string> logs() const {
    std::vector<std::string> out;
    for (const auto& w : workers) out.push_back(w->log_path());
    return out;
  }
};

external::ResidentWorkerOptions worker_options(const cli::Args& args, const external::Implementation& impl,
                                               const std::string& version) {
  external::ResidentWorkerOptions w;
  w.implementation = impl.name;
  w.version = version;
  w.dp = std::max(1, dp_from(args));
  if (args.flag("installed") && args.value("impl-site"))
    throw Error(ErrorKind::Usage, "--installed judges the environment's own " + impl.name + "; --impl-site names another");
  w.site = args.flag("installed")      ? std::string()   // the environment's own package, as the job installed it
           : args.value("impl-site") ? *args.value("impl-site")
                                     : external::default_site(impl, version);
  w.device = backend_from(args) == impl::ComputeBackend::cuda ? "cuda" : "cpu";
  w.case_timeout = std::chrono::milliseconds(static_cast<long long>(1000 * seconds_from(args, "case-timeout-s")));
  if (w.case_timeout.count() <= 0) throw Error(ErrorKind::Usage, "--case-timeout-s must be positive");
  w.fixes = args.values("fix");
  if (const auto file = args.value("known-defects")) w.known_defects = std::filesystem::absolute(*file).string();
  return w;
}

// What the implementation ran as, for a repro line: where it was loaded from and the fixes applied
// (without them the line would run another implementation than the one that failed).
std::vector<std::string> implementation_flags(const cli::Args& args) {
  std::vector<std::string> out;
  if (args.flag("installed")) out.push_back("--installed");
  if (const auto site = args.value("impl-site")) out.insert(out.end(), {"--impl-site", *site});
  for (const auto& fix : args.values("fix")) out.insert(out.end(), {"--fix", fix});
  if (const auto file = args.value("known-defects")) out.insert(out.end(), {"--known-defects", *file});
  return out;
}

ImplWorkers start_workers(const cli::Args& args, int n, int dp = 0) {
  const auto [name, version] = external::split_impl(*args.value("impl"));
  ImplWorkers out{external::implementation_named(name), {}, {}};
  out.options = worker_options(args, out.impl, version);
  if (dp > 0) out.options.dp = dp;
  for (int k = 1; k <= n; ++k) {
    external::ResidentWorkerOptions wk = out.options;
    wk.worker = n > 1 ? k : 0;
    out.workers.push_back(std::make_unique<external::ResidentWorker>(wk, external::worker_command(out.impl, wk)));
  }
  return out;
}

// The base scenario at the worker's dp (an overflow injection names a rank of that world).
rc::Gen<Scenario> base_scenario(const generators::Focus& f, int dp) {
  return rc::gen::map(generators::scenario(f), [dp](Scenario s) {
    s.engine.dp = dp;
    for (auto& inj : s.overflow) inj.rank %= dp;
    return s;
  });
}

// The case of a drawn configuration: the scenario the plugin maps it onto (loaded and validated
// here), carrying the configuration; or the base scenario carrying why it cannot run.
Scenario mapped_case(Scenario base, const nlohmann::json& config, external::ResidentWorker& mapper, int dp) {
  const std::string who = "plugin " + mapper.options().implementation;
  const external::MapAnswer a = mapper.map(config, scenario_to_json(base));
  base.impl_config = config.dump();
  if (!a.declined.empty()) {
    base.impl_problem = kDeclinedDraw + a.declined;
    return base;
  }
  if (!a.value) {
    base.impl_problem = a.error;
    return base;
  }
  Scenario m;
  try {
    m = parse_scenario(*a.value, "<" + who + " map>", "");
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::BadInput) throw;
    base.impl_problem = who + ": map returned a scenario muoncheck cannot load: " + e.what();
    return base;
  }
  if (m.engine.dp != dp) {
    base.impl_problem = who + ": map changed engine.dp to " + std::to_string(m.engine.dp) + " (its worker runs dp " +
                        std::to_string(dp) + ")";
    return base;
  }
  m.name = base.name;
  m.source = "<generated>";
  m.impl_config = config.dump();
  // declined on this device in any world: known before a worker is asked to run it
  const external::MapAnswer d = mapper.declines(config, resolved_scenario_json(m));
  if (!d.declined.empty()) m.impl_problem = kDeclinedDraw + d.declined;
  else if (!d.value) m.impl_problem = d.error;
  return m;
}

}  // namespace

void reject_workers_without_impl(const cli::Args& args) {
  if (!args.values("knob").empty())
    throw Error(ErrorKind::Usage, "--knob needs --impl: it holds a knob of that implementation's plugin to some of its values");
  if (args.value("workers"))
    throw Error(ErrorKind::Usage, "--workers needs --impl: it sets how many resident workers of that implementation run "
                                  "side by side (our own engine's sweep runs one case at a time)");
}

Outcome run_impl_sweep_command(const cli::Args& args, int cases, double budget_seconds) {
  const int n = workers_from(args);
  ImplWorkers w = start_workers(args, n);
  // The mapper: one more worker at dp 1, asked only to map drawn configurations (on this thread,
  // while the others run cases). Its space is the plugin's: a malformed one ends the sweep here.
  external::ResidentWorkerOptions mo = w.options;
  mo.dp = 1;
  mo.log_path = external::worker_log_path(w.options);
  mo.log_path.insert(mo.log_path.size() - 4, "-map");
  external::ResidentWorker mapper(mo, external::worker_command(w.impl, mo));
  const external::PluginSpace space = external::restricted(mapper.space(), args.values("knob"));

  ImplSweepOptions o;
  o.impl = *args.value("impl");
  o.cases = cases;
  o.seed = seed_from(args);
  o.budget_seconds = budget_seconds;
  o.cases_dir = option_text(args, "cases-dir");
  o.max_defects = positive_int_from(args, "max-defects");
  o.max_shrink_seconds = seconds_from(args, "shrink-seconds");
  o.max_attribution_seconds = seconds_from(args, "attribution-seconds");
  o.control_members = control_members_from(args);
  o.min_executed = min_executed_from(args);
  o.progress = [](int done, int total, double s, int f, int d) { print_sweep_progress(stderr, done, total, s, f, d); };
  // Attribution uses the registry given, else the plugin's own in the data folder (adapters/NAME/),
  // wherever the sweep is started from.
  if (const auto file = args.value("known-defects")) {
    o.registry = load_known_defects(*file);
    o.known_defects_given = true;
  } else if (const std::string own = data_path("adapters/" + w.impl.name + "/known_defects.json"); std::filesystem::exists(own)) {
    o.registry = load_known_defects(own);
  }
  if (!o.registry.defects.empty() && o.registry.implementation != w.impl.name)
    throw Error(ErrorKind::Usage, "--known-defects " + o.registry.path + ": a registry for \"" + o.registry.implementation +
                                      "\", not for --impl " + w.impl.name);
  o.version = w.options.version;
  o.device = w.options.device;
  if (const auto json = args.value("json")) check_writable(*json);
  const auto views = view_paths_from(args);
  generators::Focus focus;
  if (const auto f = args.value("focus")) focus = generators::focus_for_fault(*f);
  const int dp = w.options.dp;
  const rc::Gen<Scenario> gen = rc::gen::apply(
      [&mapper, dp](Scenario base, nlohmann::json config) { return mapped_case(std::move(base), config, mapper, dp); },
      base_scenario(focus, dp), external::config_gen(space));
  auto record_of = [&](const ImplSweepResult& r) {
    nlohmann::json record = impl_sweep_json(o, r);
    record["worker_logs"] = w.logs();
    nlohmann::json knobs = nlohmann::json::array();
    for (const auto& k : space.knobs) knobs.push_back({{"name", k.name}, {"values", k.values}, {"field_knob", !k.fields.empty()}});
    record["space"] = knobs;   // as drawn: --knob holds some knobs to part of their values
    record["knobs_held"] = args.values("knob");
    record["dp"] = dp;
    record["command_line"] = this_command_line();
    return record;
  };
  // The record so far, at most every kPartialRecordSeconds: marked partial until the sweep ends.
  constexpr double kPartialRecordSeconds = 20;
  double written_at = 0;
  if (const auto json = args.value("json"))
    o.recorded = [&, path = *json](const ImplSweepResult& r) {
      if (r.seconds - written_at < kPartialRecordSeconds) return;
      written_at = r.seconds;
      nlohmann::json record = record_of(r);
      record["partial"] = true;   // the sweep was still running when this was written
      write_file_atomically(path, record.dump(2) + "\n");
    };
  const ImplSweepResult r = run_impl_sweep(o, gen, w.runners());
  print_impl_sweep_summary(stdout, o, r);
  const auto logs = w.logs();
  std::printf("worker restarts: %d (summed over %d worker%s; log%s %s)\n", w.restarts(), n, n == 1 ? "" : "s",
              n == 1 ? "" : "s", joined(logs, ", ").c_str());
  nlohmann::json record = record_of(r);
  record["worker_restarts"] = w.restarts();   // summed over the workers
  if (const auto json = args.value("json")) {
    write_file_atomically(*json, record.dump(2) + "\n");
    std::printf("report: %s\n", json->c_str());
  }
  write_report_views(record, views);
  return r.failed() || !executed_problems(r.counts, o.min_executed, this_command_line()).empty()
             ? Outcome::conformance_failure
             : Outcome::success;
}

Outcome run_impl_verify_command(const cli::Args& args) {
  if (args.positionals().empty()) throw Error(ErrorKind::Usage, "muoncheck verify --impl: give at least one scenario");
  if (!args.values("trace").empty())
    throw Error(ErrorKind::Usage, "muoncheck verify: --impl runs the implementation itself; give --trace files without it");
  if (const auto report = args.value("report")) check_writable(*report);
  const auto views = view_paths_from(args);
  std::map<int, ImplWorkers> by_dp;   // one worker per dp the scenarios ask for (--dp: that one)
  VerifyOptions vo;
  vo.precision = precision_from(args);
  vo.control_members = control_members_from(args);
  for (const auto& id : args.values("invariant")) vo.only.insert(id);
  const auto scenarios = select_scenarios(args.positionals(), option_text(args, "scenarios"), false);
  std::vector<ScenarioResult> results;
  for (size_t i = 0; i < scenarios.size(); ++i) {
    const Scenario& given = scenarios[i];
    const int dp = dp_from(args) > 0 ? dp_from(args) : given.engine.dp;
    if (!by_dp.count(dp)) by_dp.emplace(dp, start_workers(args, 1, dp));
    ImplWorkers& w = by_dp.at(dp);
    external::ResidentWorker& worker = *w.workers.front();
    const CaseRunner runner = w.runners().front();
    Scenario s = given;
    if (s.impl_config.empty()) {   // a scenario without its configuration: the plugin's that expresses it
      const external::MapAnswer a = worker.from_scenario(scenario_to_json(given));
      if (a.value) s.impl_config = a.value->dump();
      else if (!a.declined.empty()) s.impl_problem = kDeclinedDraw + a.declined;
      else s.impl_problem = a.error;
    }
    const CaseRun run = run_impl_case(s, runner, true, static_cast<int>(i));
    ScenarioResult r = verify_one_trace(s, run.trace, run.partners, vo);
    r.scenario = given.name + " [" + (run.trace.impl_version.empty() ? w.impl.name : run.trace.implementation()) + "]";
    r.source = given.source;
    r.repro = {"muoncheck", "verify", "--impl", *args.value("impl"), given.source};
    const auto own = implementation_flags(args);
    r.repro.insert(r.repro.end(), own.begin(), own.end());
    const auto flags = run_flags_from(args, "oracle-precision");
    r.repro.insert(r.repro.end(), flags.begin(), flags.end());
    print_scenario_table(stdout, r);
    results.push_back(std::move(r));
  }
  const RunMetadata meta{"verify", "impl " + external::split_impl(*args.value("impl")).first, min_executed_from(args)};
  const auto sum = finish_run(meta, results, {}, {args.value("report").value_or(""), views, RunConsole::failures_and_summary, {}});
  return sum.ok() ? Outcome::success : Outcome::conformance_failure;
}

}  // namespace muoncheck
