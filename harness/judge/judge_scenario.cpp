#include "harness/judge/judge_scenario.hpp"

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <new>
#include <optional>

#include "core/error.hpp"
#include "core/scenario_io.hpp"
#include "impl/comm/collective_bandwidth.hpp"
#include "impl/run_impl.hpp"
#include "harness/judge/judge_runs.hpp"
#include "oracle/parallel.hpp"
#include "properties/checkpoint_invariant.hpp"
#include "properties/event_invariants.hpp"
#include "properties/numeric_invariants.hpp"
#include "properties/relational_invariants.hpp"
#include "properties/scaler_invariant.hpp"
#include "properties/variants.hpp"

namespace muoncheck {

namespace {

struct Side {
  std::shared_ptr<const impl::ImplResult> impl;
  std::shared_ptr<const ControlEnsemble> controls;
};

// A scenario's run through the implementation and the control ensemble (JudgeRuns: started
// ahead; the ensemble from the memo, shared between variants whose control is the same,
// oracle::control_fingerprint: a bucket variant, stage 2 beside 3, ... and with the other
// judgements of a suite). Unsupported: nothing, and why.
std::optional<Side> run_side(const Scenario& v, JudgeRuns& runs, std::string& why) {
  try {
    auto run = runs.get(v, true);
    return Side{std::move(run.impl), std::move(run.controls)};
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::Unsupported) throw;
    why = e.what();
    return std::nullopt;
  }
}

Verdict relational(const std::string& id, const Scenario& s, const Trajectory& oracle, const Side& base,
                   const Variant& variant, JudgeRuns& runs, const std::string& base_label,
                   const std::function<std::string(const Scenario&)>& label) {
  if (!variant.scenario) return Verdict::skip(id, variant.why_none);
  std::string why;
  auto other = run_side(*variant.scenario, runs, why);
  if (!other) return Verdict::skip(id, "variant " + variant.scenario->name + " unsupported: " + why);
  return compare_runs(id, s, oracle, {base_label, &base.impl->trajectory, base.controls.get()},
                      {label(*variant.scenario), &other->impl->trajectory, other->controls.get()});
}

std::string split_label(const Scenario& s) {
  return "dp " + std::to_string(s.engine.dp) + " × gas " + std::to_string(s.engine.gas) + " × mb " +
         std::to_string(s.engine.micro_batch);
}

void fill_steps(ScenarioResult& r, const RunBundle& b) {
  const auto errors = per_step_errors(b);
  // Every rank logs the same collectives with their logical size; count each once (rank 0's log).
  std::map<int, std::map<std::string, long long>> by_kind, by_purpose;
  if (!b.impl.collectives_by_rank.empty())
    for (const auto& c : b.impl.collectives_by_rank.front())
      if (c.purpose != impl::Purpose::state_export) {
        by_kind[c.step][impl::collective_name(c.kind)] += c.bytes;
        by_purpose[c.step][impl::purpose_name(c.purpose)] += c.bytes;
      }
  for (size_t t = 0; t < b.impl.trajectory.steps.size(); ++t) {
    StepReport s = step_report_of(b.impl.trajectory.steps[t], static_cast<int>(t));
    if (t < b.impl.step_seconds.size()) s.seconds = b.impl.step_seconds[t];
    if (t < b.oracle.steps.size()) s.exact_loss = b.oracle.steps[t].loss;
    s.bytes_by_kind = by_kind[static_cast<int>(t)];
    s.bytes_by_purpose = by_purpose[static_cast<int>(t)];
    if (t < errors.size()) s.error_vs_oracle = errors[t].impl, s.control_error = errors[t].control;
    r.steps.push_back(s);
  }
  r.ranks = b.scenario.engine.dp;
  if (!b.impl.collectives_by_rank.empty() && !b.impl.collective_seconds_by_rank.empty())
    for (const auto purpose : {impl::Purpose::muon_gather, impl::Purpose::muon_exchange}) {
      const auto bw = impl::bandwidth_of(b.impl.collectives_by_rank.front(), b.impl.collective_seconds_by_rank.front(),
                                         purpose, r.ranks);
      if (bw.calls > 0)
        r.timing_by_purpose[impl::purpose_name(purpose)] = bw;
    }
}

// Queues every run the wanted verdicts will read, in the order they read them.
void queue_runs(const Scenario& s, const JudgeOptions& o, JudgeRuns& runs) {
  auto wanted = [&](const std::string& id) { return o.only.empty() || o.only.count(id) > 0; };
  auto side = [&](const Variant& v) {
    if (v.scenario) runs.start(*v.scenario, true);
  };
  runs.start(s, true);
  if (wanted("gas-invariant")) side(gas_variant(s));
  if (wanted("dp-invariant")) side(dp_variant(s));
  if (wanted("stage-invariant"))
    for (const auto& v : stage_variants(s)) runs.start(v, true);
  if (wanted("bucket-invariant")) side(bucket_variant(s));
  if (wanted("gathers-once-per-step"))
    if (const auto v = gas1_resplit(s); v.scenario) runs.start(*v.scenario, false);
  if (wanted("deterministic")) runs.start(s, false, true);
  if (wanted("checkpoint-resume-exact") && s.checkpoint) runs.start(without_checkpoint(s), true);
}

}  // namespace

impl::ImplOptions impl_options(const JudgeOptions& o) {
  impl::ImplOptions io;
  io.faults = o.faults;
  io.timeout = o.timeout;
  io.backend = o.backend;
  io.comm = o.comm;
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
  auto wanted = [&](const std::string& id) { return o.only.empty() || o.only.count(id) > 0; };
  auto finish = [&] {
    r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
  };

  std::string why;
  const auto memo = o.memo ? o.memo : std::make_shared<oracle::ResultMemo>();
  // Side by side only on the CPU backend: two NCCL or CUDA runs at once share the GPUs in
  // ways nobody has measured here (NCCL kernels of two communicators can wait on each other).
  const bool host_only = o.backend == impl::ComputeBackend::cpu && o.comm == impl::CommBackend::gloo;
  JudgeRuns runs(impl_options(o), *memo, o.control_members, host_only ? oracle::thread_count() : 1);
  queue_runs(s, o, runs);
  auto base = run_side(s, runs, why);
  if (!base) {
    for (const auto& id : invariant_ids())
      if (wanted(id)) r.verdicts.push_back(Verdict::unsupported(id, why));
    return finish();
  }
  if (o.on_impl_result) o.on_impl_result(s, *base->impl);
  const auto exact_run = memo->exact(s, o.precision);
  const Trajectory& exact = *exact_run;
  if (exact_out) *exact_out = exact;
  const RunBundle b{s, *base->impl, exact, *base->controls, o.precision, memo.get()};
  fill_steps(r, b);

  const bool trajectory_mode = o.mode != CheckMode::stepwise, stepwise_mode = o.mode != CheckMode::trajectory;
  auto add = [&](const std::string& id, const std::function<Verdict()>& judge) {
    if (wanted(id)) r.verdicts.push_back(judge());
  };
  add("trajectory-conforms", [&] { return trajectory_mode ? trajectory_conforms(b) : Verdict::skip("trajectory-conforms", "--mode stepwise"); });
  add("step-conforms", [&] { return stepwise_mode ? step_conforms(b) : Verdict::skip("step-conforms", "--mode trajectory"); });
  add("grad-plumbing-exact", [&] { return grad_plumbing_exact(b); });
  add("ns-once-per-matrix-per-step", [&] { return ns_once_per_matrix_per_step(b); });
  add("tagging-matches", [&] { return tagging_matches(b); });
  add("gas-invariant", [&] {
    return relational("gas-invariant", s, exact, *base, gas_variant(s), runs, split_label(s), split_label);
  });
  add("dp-invariant", [&] {
    return relational("dp-invariant", s, exact, *base, dp_variant(s), runs, split_label(s), split_label);
  });
  add("stage-invariant", [&] {
    Verdict worst = Verdict::skip("stage-invariant", "no other stage");
    for (const auto& v : stage_variants(s)) {
      auto verdict = relational("stage-invariant", s, exact, *base, {v, ""}, runs, "stage " + std::to_string(s.engine.stage),
                                [](const Scenario& x) { return "stage " + std::to_string(x.engine.stage); });
      if (worst.status == Status::skipped || (verdict.status != Status::skipped && !(verdict.metric <= worst.metric)))
        worst = verdict;
    }
    return worst;
  });
  add("bucket-invariant", [&] {
    auto label = [](const Scenario& x) { return "buckets " + std::to_string(x.engine.reduce_bucket_size) + "/" + std::to_string(x.engine.allgather_bucket_size); };
    return relational("bucket-invariant", s, exact, *base, bucket_variant(s), runs, label(s), label);
  });
  add("overflow-skip-clean", [&] { return overflow_skip_clean(b); });
  add("scaler-state-exact", [&] { return scaler_state_exact(b); });
  add("comm-dtype-respected", [&] { return comm_dtype_respected(b); });
  add("gathers-once-per-step", [&] {
    const auto v = gas1_resplit(s);
    if (!v.scenario) return gathers_once_per_step(b, nullptr);
    return gathers_once_per_step(b, runs.get(*v.scenario, false).impl.get());
  });
  add("ranks-agree", [&] { return ranks_agree(b); });
  add("deterministic", [&] { return deterministic(b, *runs.get(s, false, true).impl); });
  add("checkpoint-resume-exact", [&] {
    if (!s.checkpoint) return Verdict::skip("checkpoint-resume-exact", "no checkpoint in the scenario");
    const auto other = run_side(without_checkpoint(s), runs, why);
    if (!other) return Verdict::skip("checkpoint-resume-exact", "the uninterrupted run is unsupported: " + why);
    return checkpoint_resume_exact(b, *other->impl, *other->controls);
  });
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
