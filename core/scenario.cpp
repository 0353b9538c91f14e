#include "core/scenario.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"

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

const NsCoefficients& ns_coefficients_at(const OptimizerConfig& o, int iteration) {
  const auto& list = o.ns_coefficients;
  if (list.size() == 1) return list.front();
  if (iteration < 0 || static_cast<size_t>(iteration) >= list.size())
    throw Error(ErrorKind::Internal, "ns_coefficients_at: iteration " + std::to_string(iteration) + " of a list of " +
                                         std::to_string(list.size()) + " triples");
  return list[static_cast<size_t>(iteration)];
}

double lr_factor(const LrSchedule& sch, int t) {
  const double step = static_cast<double>(t) + 1.0;
  switch (sch.shape) {
    case LrShape::constant: return 1.0;
    case LrShape::linear_warmup: return std::min(1.0, step / sch.warmup_steps);
    case LrShape::cosine: {
      if (t < sch.warmup_steps) return step / sch.warmup_steps;
      const double p = std::min(1.0, static_cast<double>(t - sch.warmup_steps) / (sch.total_steps - sch.warmup_steps));
      return sch.min_ratio + (1.0 - sch.min_ratio) * 0.5 * (1.0 + std::cos(M_PI * p));
    }
    case LrShape::table: {
      if (sch.factors.empty()) throw Error(ErrorKind::Internal, "lr_factor: a table schedule without factors");
      const size_t last = sch.factors.size() - 1;
      return sch.factors[std::min(static_cast<size_t>(std::max(t, 0)), last)];
    }
  }
  return 1.0;
}

const LrSchedule& lr_schedule_for(const Scenario& s, const std::string& param_name) {
  const ParamGroup* g = group_for(s, param_name);
  return g && g->lr_schedule ? *g->lr_schedule : s.optimizer.lr_schedule;
}

double muon_lr_at(const Scenario& s, const std::string& param_name, int t) {
  return s.optimizer.lr * lr_scale_for(s, param_name) * lr_factor(lr_schedule_for(s, param_name), t);
}

double adam_lr_at(const Scenario& s, const std::string& param_name, int t) {
  return s.optimizer.adam.lr * lr_scale_for(s, param_name) * lr_factor(lr_schedule_for(s, param_name), t);
}

Scenario without_checkpoint(const Scenario& s) {
  Scenario u = s;
  u.checkpoint.reset();
  return u;
}

EngineConfig resume_engine(const Scenario& s) {
  EngineConfig e = s.engine;
  if (!s.checkpoint) return e;
  const ResumeConfig& r = s.checkpoint->resume;
  if (r.dp) {
    e.gas = s.engine.dp * s.engine.gas / *r.dp;
    e.dp = *r.dp;
  }
  if (r.stage) e.stage = *r.stage;
  if (e.stage != 3) e.zero_init = false;   // zero.Init builds a model; a resumed one is loaded
  return e;
}

}  // namespace muoncheck
