// Our own engine behind the CaseRunner interface, as the tests of the sweep against another
// implementation use it: scenarios DeepSpeed can express, and the engine with planted faults as
// the implementation's defects (removing a fault is a known defect's fix).
#pragma once
#include <algorithm>
#include <string>
#include <vector>

#include "harness/sweep/impl_sweep.hpp"
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

}  // namespace muoncheck
