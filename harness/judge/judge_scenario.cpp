#include "harness/judge/judge_scenario.hpp"

#include <chrono>
#include <deque>
#include <set>
#include <memory>
#include <new>
#include <optional>

#include "core/error.hpp"
#include "core/scenario_io.hpp"
#include "impl/comm/collective_bandwidth.hpp"
#include "impl/run_impl.hpp"
#include "harness/judge/judge_observation.hpp"
#include "harness/judge/judge_runs.hpp"
#include "oracle/parallel.hpp"
#include "properties/invariant_table.hpp"
#include "properties/determinacy.hpp"
#include "properties/variants.hpp"

namespace muoncheck {

namespace {

// The variant runs of a judgement through our engine (JudgeRuns: started ahead, each with its
// control ensemble from the memo). A variant the engine cannot run is SKIPPED, and why.
class EngineVariantRuns final : public VariantRuns {
 public:
  EngineVariantRuns(JudgeRuns& runs, const JudgeOptions& o) : runs_(runs), options_(o) {}
  std::optional<ObservedRun> run(const Scenario& v, VariantKind k, bool controls, std::string& why) override {
    try {
      held_.push_back(runs_.get(v, controls, k == VariantKind::repeat));
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::Unsupported) throw;
      why = "variant " + v.name + " unsupported: " + e.what();
      return std::nullopt;
    }
    if (options_.on_run && seen_.insert(v.name + (k == VariantKind::repeat ? "\nrepeat" : "")).second)
      options_.on_run(v, *held_.back().observed, k == VariantKind::repeat ? 1 : 0);
    return ObservedRun{held_.back().observed.get(), held_.back().controls.get()};
  }
  Status when_missing() const override { return Status::skipped; }

 private:
  JudgeRuns& runs_;
  const JudgeOptions& options_;
  std::set<std::string> seen_;   // runs already handed to on_run
  std::deque<SideRun> held_;   // keeps every run handed out alive for the judgement
};

void add_timing(ScenarioResult& r, const impl::ImplResult& run) {
  for (size_t t = 0; t < r.steps.size() && t < run.step_seconds.size(); ++t) r.steps[t].seconds = run.step_seconds[t];
  if (!run.collectives_by_rank.empty() && !run.collective_seconds_by_rank.empty())
    for (const auto purpose : {impl::Purpose::muon_gather, impl::Purpose::muon_exchange}) {
      const auto bw = impl::bandwidth_of(run.collectives_by_rank.front(), run.collective_seconds_by_rank.front(), purpose,
                                         r.ranks);
      if (bw.calls > 0) r.timing_by_purpose[impl::purpose_name(purpose)] = bw;
    }
}

// Queues every run the wanted rows will read, in the order they read them.
void queue_runs(const Scenario& s, const JudgeOptions& o, JudgeRuns& runs) {
  runs.start(s, true);
  for (const auto& row : invariant_table()) {
    if (!o.only.empty() && o.only.count(row.id) == 0) continue;
    for (const auto k : row.variants)
      for (const auto& v : variant_scenarios(s, k).scenarios) runs.start(v, row.variant_controls, k == VariantKind::repeat);
  }
}

}  // namespace

impl::ImplOptions impl_options(const JudgeOptions& o) {
  impl::ImplOptions io;
  io.faults = o.faults;
  io.timeout = o.timeout;
  io.backend = o.backend;
  io.comm = o.comm;
  io.ns_kernel = o.ns_kernel;
  return io;
}

ScenarioResult judge_scenario(const Scenario& s, const JudgeOptions& o, Trajectory* exact_out) {
  if (o.dp > 0 && o.dp != s.engine.dp) {   // --dp: the same global batch over o.dp ranks
    JudgeOptions as_written = o;
    as_written.dp = 0;
    const Variant v = dp_resplit(s, o.dp);
    if (v.scenario) return judge_scenario(*v.scenario, as_written, exact_out);
    ScenarioResult r;
    r.scenario = s.name;
    r.source = s.source;
    r.scenario_hash = scenario_hash(s);
    r.faults = o.faults;
    r.repro = run_repro(s.source, o.faults, o.run_flags);
    for (const auto& id : invariant_ids())
      if (o.only.empty() || o.only.count(id) > 0)
        r.verdicts.push_back(Verdict::unsupported(id, "--dp " + std::to_string(o.dp) + ": " + v.why_none));
    return r;
  }
  const auto start = std::chrono::steady_clock::now();
  ScenarioResult r;
  r.scenario = s.name;
  r.source = s.source;
  r.scenario_hash = scenario_hash(s);
  r.faults = o.faults;
  r.repro = run_repro(s.source, o.faults, o.run_flags);
  r.inconclusive_cause = inconclusive_cause(s);
  auto wanted = [&](const std::string& id) { return o.only.empty() || o.only.count(id) > 0; };
  auto finish = [&] {
    r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
  };

  const auto memo = o.memo ? o.memo : std::make_shared<oracle::ResultMemo>();
  // Side by side only on the CPU backend: two NCCL or CUDA runs at once share the GPUs in
  // ways nobody has measured here (NCCL kernels of two communicators can wait on each other).
  const bool host_only = o.backend == impl::ComputeBackend::cpu && o.comm == impl::CommBackend::gloo;
  JudgeRuns runs(impl_options(o), *memo, o.control_members, host_only ? oracle::thread_count() : 1);
  queue_runs(s, o, runs);
  SideRun base;
  try {
    base = runs.get(s, true);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::Unsupported) throw;
    for (const auto& id : invariant_ids())
      if (wanted(id)) r.verdicts.push_back(Verdict::unsupported(id, e.what()));
    return finish();
  }
  if (o.on_run) o.on_run(s, *base.observed, 0);
  EngineVariantRuns variants(runs, o);
  ObservationInputs in{s, *base.observed, *base.controls, *memo, o.precision, variants, o.only, {}};
  if (o.mode == CheckMode::stepwise) in.skipped["trajectory-conforms"] = "--mode stepwise";
  if (o.mode == CheckMode::trajectory) in.skipped["step-conforms"] = "--mode trajectory";
  judge_observation(r, in, exact_out);
  add_timing(r, *base.impl);
  return finish();
}

ScenarioResult judge_scenario_or_error(const Scenario& s, const JudgeOptions& opts, Trajectory* exact_out) {
  const auto t0 = std::chrono::steady_clock::now();
  auto errored = [&](ErrorKind kind, const std::string& message) {
    ScenarioResult r;
    r.scenario = s.name;
    r.source = s.source;
    r.scenario_hash = scenario_hash(s);
    r.faults = opts.faults;
    r.repro = run_repro(s.source, opts.faults, opts.run_flags);
    r.error = ScenarioError{kind, message};
    r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (exact_out) exact_out->steps.clear();
    return r;
  };
  try {
    return judge_scenario(s, opts, exact_out);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::Infrastructure && e.kind() != ErrorKind::Internal) throw;
    return errored(e.kind(), e.what());
  } catch (const std::bad_alloc&) {
    return errored(ErrorKind::Infrastructure, "out of memory judging " + s.name);
  } catch (const std::exception& e) {
    return errored(ErrorKind::Internal, e.what());
  }
}

}  // namespace muoncheck
