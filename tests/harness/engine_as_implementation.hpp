// Our own engine behind the CaseRunner interface, as the tests of the sweep against another
// implementation use it: scenarios DeepSpeed can express, and the engine with planted faults as
// the implementation's defects (removing a fault is a known defect's fix).
#pragma once
#include <atomic>
#include <chrono>
#include <thread>
#include <algorithm>
#include <string>
#include <vector>

#include "harness/sweep/impl_sweep.hpp"
#include "harness/sweep/impl_sweep_report.hpp"
#include "harness/sweep/known_defects.hpp"
#include "harness/traces/trace_observation.hpp"
#include "properties/generators/scenario_gen.hpp"

namespace muoncheck {

// Scenarios DeepSpeed can express (what its plugin's knobs map onto), as these tests have drawn them.
inline Scenario into_deepspeed_region(Scenario s, int dp) {
  auto& o = s.optimizer;
  auto& e = s.engine;
  o.momentum_form = MomentumForm::ema;
  o.nesterov = true;
  o.ns_steps = 5;
  o.ns_coefficients = {NsCoefficients{}};   // DeepSpeed's fixed quintic
  o.ns_schedule.clear();
  o.ns_dtype = o.ns_method == NsMethod::standard ? DType::bf16 : DType::fp16;   // what DeepSpeed's NS computes in
  o.scale_rule = ScaleRule::deepspeed;
  o.groups.clear();
  e.grad_accum_dtype = e.param_dtype;
  e.comm_dtype = e.param_dtype;
  if (e.param_dtype == DType::fp16 && s.loss_scaler.type == ScalerType::none) {
    s.loss_scaler.type = ScalerType::static_scale;   // DeepSpeed's fp16 always scales: by 1 here
    s.loss_scaler.initial_scale_power = 0;
  }
  if (e.param_dtype != DType::fp16) s.loss_scaler = LossScalerConfig{};
  e.dp = dp;
  // DeepSpeed asserts bucket sizes are multiples of its 4-byte alignment in 16-bit elements (2):
  // a precondition of its config, not a defect; rounded up, so every drawn size stays expressible.
  e.reduce_bucket_size += e.reduce_bucket_size % 2;
  e.allgather_bucket_size += e.allgather_bucket_size % 2;
  for (auto& inj : s.overflow) inj.rank %= dp;
  return s;
}

inline rc::Gen<Scenario> deepspeed_scenario(const generators::Focus& f, int dp) {
  return rc::gen::map(generators::scenario(f), [dp](Scenario s) { return into_deepspeed_region(std::move(s), dp); });
}


// Our engine as the implementation under test, with `faults` planted; a fix of `registry` of kind
// "fault" switches its fault off for that run, any other fix does not apply (attribution's tests).
inline CaseRunner our_engine(std::vector<std::string> faults, KnownDefects registry = {}) {
  return [faults, registry](const Scenario& s, const FixSet& fixes) {
    impl::ImplOptions o;
    o.faults = faults;
    for (const auto& id : fixes) {
      const KnownDefect* d = registry.find(id);
      if (!d || d->fix.kind != "fault") {
        Trace t = trace_from_observation(s, observation_of(impl::run_impl(s)), {}, 0);
        t.steps.clear();
        t.error = std::string(kFixDoesNotApply) + "known defect " + id + ": not a fix this engine can apply";
        return t;
      }
      o.faults.erase(std::remove(o.faults.begin(), o.faults.end(), d->fix.target), o.faults.end());
    }
    return trace_from_observation(s, observation_of(impl::run_impl(s, o)), o.faults, 0);
  };
}

// A sweep's record without its timings (wall time, time in the implementation, rate, worker count):
// what must not depend on the number of runners.
inline nlohmann::json record_without_timings(const ImplSweepOptions& o, const ImplSweepResult& r) {
  nlohmann::json j = impl_sweep_json(o, r);
  for (const char* timing : {"seconds", "implementation_seconds", "implementation_share", "cases_per_minute", "workers",
                             "step_seconds", "overhead_seconds_per_case", "overhead_share"})
    j.erase(timing);
  return j;
}

// Counts the calls in progress over every runner it wraps, and the most at once. With
// `fixed_only`, only the calls that apply fixes (attribution's re-runs), and each waits up to
// `hold` for another to be in progress: re-runs that can overlap are seen to.
struct Concurrency {
  bool fixed_only = false;
  std::chrono::milliseconds hold{0};
  std::atomic<int> now{0}, most{0};
  CaseRunner wrap(CaseRunner run) {
    return [this, run](const Scenario& s, const FixSet& fixes) {
      if (fixed_only && fixes.empty()) return run(s, fixes);
      const int n = ++now;
      for (int m = most.load(); n > m && !most.compare_exchange_weak(m, n);) {}
      Trace t = run(s, fixes);
      for (const auto until = std::chrono::steady_clock::now() + hold;
           most.load() < 2 && std::chrono::steady_clock::now() < until;)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      --now;
      return t;
    };
  }
};

}  // namespace muoncheck
