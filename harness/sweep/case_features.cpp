#include "harness/sweep/case_features.hpp"

#include <algorithm>

namespace muoncheck {

std::vector<std::string> case_features(const Scenario& s) {
  const auto& e = s.engine;
  const auto& o = s.optimizer;
  std::vector<std::string> f = {"stage " + std::to_string(e.stage), std::string(dtype_name(e.param_dtype))};
  if (e.gas > 1) f.push_back("gas > 1");
  if (e.dp > 1) f.push_back("dp > 1");
  if (o.clip.max_norm > 0) f.push_back(o.clip.mode == ClipMode::raw_grad ? "clip raw_grad" : "clip update");
  if (s.loss_scaler.type == ScalerType::dynamic) f.push_back("dynamic loss scaler");
  if (s.loss_scaler.type == ScalerType::static_scale && s.loss_scaler.initial_scale_power != 0)
    f.push_back("static loss scale");
  const AdamConfig adam_default;
  if (o.adam.lr != adam_default.lr || o.adam.beta1 != adam_default.beta1 || o.adam.beta2 != adam_default.beta2 ||
      o.adam.eps != adam_default.eps)
    f.push_back("AdamW params");
  if (o.weight_decay != 0) f.push_back("weight decay");
  if (o.momentum != 0.95) f.push_back("momentum " + std::to_string(o.momentum).substr(0, 4));
  if (o.per_head) f.push_back("per-head");
  if (e.zero_init) f.push_back("zero-init");
  if (!s.overflow.empty()) f.push_back("injected overflow");
  for (const size_t rank : {3, 4})   // a conv or batched weight, which Muon flattens
    if (std::any_of(s.model.params.begin(), s.model.params.end(),
                    [&](const ParamSpec& p) { return p.shape.size() == rank; }))
      f.push_back("weight of rank " + std::to_string(rank));
  return f;
}

}  // namespace muoncheck
