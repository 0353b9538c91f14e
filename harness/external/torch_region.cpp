#include "harness/external/torch_region.hpp"

#include "properties/generators/scenario_gen.hpp"

namespace muoncheck::external {

Scenario into_torch_region(Scenario s, int dp) {
  auto& o = s.optimizer;
  auto& e = s.engine;
  o.momentum_form = MomentumForm::ema;
  o.ns_method = NsMethod::standard;
  o.ns_dtype = DType::bf16;
  o.per_head = false;
  o.clip.mode = ClipMode::raw_grad;
  if (e.param_dtype == DType::fp16) e.param_dtype = DType::bf16;
  s.loss_scaler = LossScalerConfig{};
  s.overflow.clear();
  s.checkpoint.reset();
  e.offload_optimizer = OffloadDevice::none;
  e.compile = false;
  if (e.stage == 1) e.stage = 2;
  e.zero_init = false;
  if (e.stage == 0 || (e.comm_dtype != DType::fp32 && e.comm_dtype != e.param_dtype)) e.comm_dtype = e.param_dtype;
  e.grad_accum_dtype = e.stage == 0 ? e.param_dtype : e.comm_dtype;   // FSDP2 accumulates in its reduce_dtype
  e.dp = dp;
  return s;
}

rc::Gen<Scenario> torch_scenario(const generators::Focus& f, int dp) {
  return rc::gen::map(generators::scenario(f), [dp](Scenario s) { return into_torch_region(std::move(s), dp); });
}

}  // namespace muoncheck::external
