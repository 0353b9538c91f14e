#include "core/scenario.hpp"

#include <cmath>

namespace muoncheck {

MatrixView matrix_view(const std::vector<int64_t>& shape) {
  if (shape.size() == 1) return {1, shape[0]};
  MatrixView v{shape[0], 1};
  for (size_t i = 1; i < shape.size(); ++i) v.cols *= shape[i];
  return v;
}

int64_t element_count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

int64_t total_elements(const ModelSpec& model) {
  int64_t n = 0;
  for (const auto& p : model.params) n += element_count(p.shape);
  return n;
}

int param_index(const Scenario& s, const std::string& name) {
  for (size_t i = 0; i < s.model.params.size(); ++i)
    if (s.model.params[i].name == name) return static_cast<int>(i);
  return -1;
}

const ParamGroup* group_for(const Scenario& s, const std::string& param_name) {
  for (const auto& g : s.optimizer.groups)
    if (param_name.find(g.match) != std::string::npos) return &g;
  return nullptr;
}

double lr_scale_for(const Scenario& s, const std::string& param_name) {
  const ParamGroup* g = group_for(s, param_name);
  return g ? g->lr_scale : 1.0;
}

double weight_decay_for(const Scenario& s, const std::string& param_name) {
  const ParamGroup* g = group_for(s, param_name);
  return g && g->weight_decay ? *g->weight_decay : s.optimizer.weight_decay;
}

double initial_loss_scale(const LossScalerConfig& c) {
  if (c.type == ScalerType::none) return 1.0;
  return std::ldexp(1.0, c.initial_scale_power);
}

}  // namespace muoncheck
