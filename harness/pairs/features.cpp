#include "harness/pairs/features.hpp"

#include <algorithm>
#include <cmath>

#include "core/scenario_io.hpp"
#include "oracle/oracle.hpp"
#include "oracle/scaler.hpp"

namespace muoncheck::pairs {

const std::vector<Feature>& features() {
  using L = Level;
  using S = Source;
  const std::vector<std::string> dtypes = {"fp32", "bf16", "fp16"}, yes_no = {"no", "yes"},
                                 buckets = {"whole", "split", "cuts-param"};
  static const std::vector<Feature> all = {
      {"stage", L::scenario, S::config, {"0", "1", "2", "3"}},
      {"dp", L::scenario, S::config, {"1", "2", "3+"}},
      {"gas", L::scenario, S::config, {"1", "2+"}},
      {"param_dtype", L::scenario, S::config, dtypes},
      {"grad_accum_dtype", L::scenario, S::config, dtypes},
      {"comm_dtype", L::scenario, S::config, dtypes},
      {"ns_method", L::scenario, S::config, {"standard", "gram"}},
      {"ns_dtype", L::scenario, S::config, dtypes},
      {"ns_steps", L::scenario, S::config, {"5", "<5", ">5"}},
      {"clip_mode", L::scenario, S::config, {"off", "raw_grad", "update"}},
      {"clip_binds", L::scenario, S::oracle, yes_no},
      {"scaler", L::scenario, S::config, {"none", "static", "dynamic"}},
      {"overflows", L::scenario, S::oracle, yes_no},
      {"scale_grows", L::scenario, S::oracle, yes_no},
      {"scale_rule", L::scenario, S::config, {"deepspeed", "moonlight", "spectral"}},   // max_dim: third-party implementations only
      {"momentum_form", L::scenario, S::config, {"ema", "sum"}},
      {"nesterov", L::scenario, S::config, yes_no},
      {"weight_decay", L::scenario, S::config, yes_no},
      {"groups", L::scenario, S::config, yes_no},
      {"zero_init", L::scenario, S::config, yes_no},
      {"reduce_bucket", L::scenario, S::config, buckets},
      {"allgather_bucket", L::scenario, S::config, buckets},
      {"param_rank", L::param, S::oracle, {"2", "3", "4"}},
      {"block_shape", L::param, S::oracle, {"wide", "square", "tall"}},
      {"per_head", L::param, S::oracle, yes_no},
  };
  return all;
}

namespace {

std::string yes(bool b) { return b ? "yes" : "no"; }

// whole: one bucket holds the model; split: cut between params; cuts-param: smaller than a param.
std::string bucket_value(int64_t bucket, const ModelSpec& m) {
  int64_t largest = 0;
  for (const auto& p : m.params) largest = std::max(largest, element_count(p.shape));
  if (bucket >= total_elements(m)) return "whole";
  return bucket < largest ? "cuts-param" : "split";
}

TrainingState state_before(const Scenario& s, const Trajectory& t, size_t step) {
  if (step == 0) return oracle::initial_state(s);
  const auto& prev = t.steps[step - 1];
  return TrainingState{prev.params, prev.scaler_after, prev.good_steps_after};
}

double sum_sq(const std::vector<double>& v) {
  double n = 0;
  for (double x : v) n += x * x;
  return n;
}

// The norm §4.5 takes in update mode at `step`: the unclipped Muon updates O (from one oracle
// step with clipping off: W' = W(1 - lr wd) - lr O) and the other params' G.
double update_norm(const Scenario& s, const Trajectory& t, size_t step) {
  Scenario off = s;
  off.optimizer.clip.max_norm = 0.0;
  const TrainingState before = state_before(s, t, step);
  const StepRecord free = oracle::step_from(off, static_cast<int>(step), before, oracle::Precision::float64);
  double n2 = 0;
  for (size_t p = 0; p < t.tags.size(); ++p) {
    if (!t.tags[p].use_muon) {
      n2 += sum_sq(t.steps[step].params[p].grad);
      continue;
    }
    const std::string& name = s.model.params[p].name;
    const double lr = s.optimizer.lr * lr_scale_for(s, name), keep = 1.0 - lr * weight_decay_for(s, name);
    const auto& w0 = before.params[p].weight;
    const auto& w1 = free.params[p].weight;
    for (size_t i = 0; i < w0.size(); ++i) {
      const double o = (w0[i] * keep - w1[i]) / lr;
      n2 += o * o;
    }
  }
  return std::sqrt(n2);
}

}  // namespace

bool clip_binds(const Scenario& s, const Trajectory& oracle) {
  const auto& c = s.optimizer.clip;
  if (c.max_norm <= 0) return false;
  for (size_t t = 0; t < oracle.steps.size(); ++t) {
    if (oracle.steps[t].skipped) continue;
    const double n = c.mode == ClipMode::raw_grad ? oracle.steps[t].grad_norm : update_norm(s, oracle, t);
    if (n > c.max_norm) return true;
  }
  return false;
}

Exercised exercised(const Scenario& s, const Trajectory& oracle) {
  const auto& e = s.engine;
  const auto& o = s.optimizer;
  Exercised x;
  x.scenario = s.name;
  auto& v = x.values;
  v["stage"] = std::to_string(e.stage);
  v["dp"] = e.dp >= 3 ? "3+" : std::to_string(e.dp);
  v["gas"] = e.gas >= 2 ? "2+" : "1";
  v["param_dtype"] = dtype_name(e.param_dtype);
  v["grad_accum_dtype"] = dtype_name(e.grad_accum_dtype);
  v["comm_dtype"] = dtype_name(e.comm_dtype);
  v["ns_method"] = to_string(o.ns_method);
  v["ns_dtype"] = dtype_name(o.ns_dtype);
  v["ns_steps"] = o.ns_steps < 5 ? "<5" : o.ns_steps == 5 ? "5" : ">5";
  v["clip_mode"] = o.clip.max_norm <= 0 ? "off" : to_string(o.clip.mode);
  v["clip_binds"] = yes(clip_binds(s, oracle));
  v["scaler"] = to_string(s.loss_scaler.type);
  bool skipped = false, grows = false;
  double scale = oracle::initial_scaler(s.loss_scaler).scale;
  for (const auto& st : oracle.steps) {
    skipped = skipped || st.skipped;
    grows = grows || st.scaler_after.scale > scale;
    scale = st.scaler_after.scale;
  }
  v["overflows"] = yes(skipped);
  v["scale_grows"] = yes(grows);
  v["scale_rule"] = to_string(o.scale_rule);
  v["momentum_form"] = to_string(o.momentum_form);
  v["nesterov"] = yes(o.nesterov);
  bool decays = false;
  for (const auto& p : s.model.params) decays = decays || weight_decay_for(s, p.name) > 0;
  v["weight_decay"] = yes(decays);
  v["groups"] = yes(!o.groups.empty());
  v["zero_init"] = yes(e.zero_init);
  v["reduce_bucket"] = bucket_value(e.reduce_bucket_size, s.model);
  if (e.stage >= 1) v["allgather_bucket"] = bucket_value(e.allgather_bucket_size, s.model);
  for (size_t p = 0; p < oracle.tags.size() && p < s.model.params.size(); ++p) {
    const auto& tag = oracle.tags[p];
    if (!tag.use_muon) continue;
    const auto& shape = s.model.params[p].shape;
    const MatrixView mv = matrix_view(shape);
    const int64_t rows = mv.rows / std::max(1, tag.num_heads);
    x.params.push_back({{"param_rank", std::to_string(shape.size())},
                        {"block_shape", rows < mv.cols ? "wide" : rows == mv.cols ? "square" : "tall"},
                        {"per_head", yes(tag.num_heads > 0)}});
  }
  return x;
}

}  // namespace muoncheck::pairs
