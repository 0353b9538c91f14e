#include "harness/external/deepspeed_region.hpp"

#include "properties/generators/scenario_gen.hpp"

namespace muoncheck::external {

Scenario into_deepspeed_region(Scenario s, int dp) {
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

rc::Gen<Scenario> deepspeed_scenario(const generators::Focus& f, int dp) {
  return rc::gen::map(generators::scenario(f), [dp](Scenario s) { return into_deepspeed_region(std::move(s), dp); });
}

}  // namespace muoncheck::external
