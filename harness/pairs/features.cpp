#include "harness/pairs/features.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/scenario_io.hpp"
#include "harness/pairs/format_fields.hpp"
#include "oracle/oracle.hpp"
#include "oracle/scaler.hpp"

namespace muoncheck::pairs {

namespace {

// A feature's definition: its name, level and source, and its values: given here, or (empty)
// those the schema gives the field `from` (an enum's values, no/yes for a boolean).
struct FeatureSpec {
  std::string name;
  Level level;
  Source source;
  std::vector<std::string> values;
  std::string from;
};

std::vector<Feature> derive_features() {
  using L = Level;
  using S = Source;
  const std::vector<std::string> yes_no = {"no", "yes"}, buckets = {"whole", "split", "cuts-param"};
  const std::vector<FeatureSpec> specs = {
      {"stage", L::scenario, S::config, {"0", "1", "2", "3"}, ""},
      {"dp", L::scenario, S::config, {"1", "2", "3+"}, ""},
      {"gas", L::scenario, S::config, {"1", "2+"}, ""},
      {"param_dtype", L::scenario, S::config, {}, "engine.param_dtype"},
      {"grad_accum_dtype", L::scenario, S::config, {}, "engine.grad_accum_dtype"},
      {"comm_dtype", L::scenario, S::config, {}, "engine.comm_dtype"},
      {"ns_method", L::scenario, S::config, {}, "optimizer.ns_method"},
      {"ns_dtype", L::scenario, S::config, {}, "optimizer.ns_dtype"},
      {"ns_steps", L::scenario, S::config, {"5", "<5", ">5"}, ""},
      {"clip_mode", L::scenario, S::config, {"off", "raw_grad", "update"}, ""},
      {"clip_binds", L::scenario, S::oracle, yes_no, ""},
      {"scaler", L::scenario, S::config, {}, "loss_scaler.type"},
      {"overflows", L::scenario, S::oracle, yes_no, ""},
      {"scale_grows", L::scenario, S::oracle, yes_no, ""},
      // max_dim (the third-party implementations' rule) is judged by scenarios/impls/, not yet by
      // the covering array of the default suite.
      {"scale_rule", L::scenario, S::config, {"deepspeed", "moonlight", "spectral"}, ""},
      {"momentum_form", L::scenario, S::config, {}, "optimizer.momentum_form"},
      {"nesterov", L::scenario, S::config, {}, "optimizer.nesterov"},
      {"weight_decay", L::scenario, S::config, yes_no, ""},
      {"groups", L::scenario, S::config, yes_no, ""},
      {"zero_init", L::scenario, S::config, {}, "engine.zero_init"},
      {"reduce_bucket", L::scenario, S::config, buckets, ""},
      {"allgather_bucket", L::scenario, S::config, buckets, ""},
      {"param_rank", L::param, S::oracle, {"2", "3", "4"}, ""},
      {"block_shape", L::param, S::oracle, {"wide", "square", "tall"}, ""},
      {"per_head", L::param, S::oracle, yes_no, ""},
      {"contiguous_gradients", L::scenario, S::config, {}, "engine.contiguous_gradients"},
      {"offload_optimizer", L::scenario, S::config, {}, "engine.offload_optimizer"},
      {"compile", L::scenario, S::config, {}, "engine.compile"},
      {"ranks", L::scenario, S::config, {}, "engine.ranks"},
      {"ns_coefficients", L::scenario, S::config, {"one-triple", "per-iteration", "named"}, ""},
      {"lr_schedule", L::scenario, S::config, {}, "optimizer.lr_schedule.shape"},
      {"group_lr_schedule", L::scenario, S::config, yes_no, ""},
      {"checkpoint", L::scenario, S::config, {"none", "same", "other-dp", "other-stage"}, ""},
      {"overflow_value", L::scenario, S::config, {}, "overflow[].value"},
      {"scale_drops", L::scenario, S::oracle, {"no", "yes", "to-floor"}, ""},
  };
  const nlohmann::json& schema = scenario_schema();
  std::vector<Feature> out;
  std::vector<std::string> names;
  for (const auto& f : specs) {
    std::vector<std::string> values = f.from.empty() ? f.values : schema_values(schema, f.from);
    if (values.empty())
      throw Error(ErrorKind::Internal, "pairwise feature " + f.name + ": the schema gives " + f.from + " no values");
    out.push_back({f.name, f.level, f.source, std::move(values)});
    names.push_back(f.name);
  }
  std::string wrong;
  for (const auto& field : unclassified(schema_fields(schema))) wrong += "\n  " + field + ": neither a feature nor excluded";
  for (const auto& edge : unknown_features(names)) wrong += "\n  " + edge + ": no such feature";
  if (!wrong.empty())
    throw Error(ErrorKind::Internal, "the pairwise model does not cover the scenario format (harness/pairs/format_fields.cpp):" + wrong);
  return out;
}

}  // namespace

const std::vector<Feature>& features() {
  static const std::vector<Feature> all = derive_features();
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

// same: resumed at the run's own dp and stage; other-dp: at another dp (whatever the stage);
// other-stage: at the run's dp and another stage.
std::string checkpoint_value(const Scenario& s) {
  if (!s.checkpoint) return "none";
  const EngineConfig at = resume_engine(s);
  if (at.dp != s.engine.dp) return "other-dp";
  return at.stage != s.engine.stage ? "other-stage" : "same";
}

// One value per scenario: an injection of each kind in one scenario exercises both, and the
// model takes the first one's (the shipped scenarios inject one kind each).
std::string overflow_value(const Scenario& s) { return to_string(s.overflow.front().value); }

// Did an overflow lower the loss scale (the hysteresis spent), and did a drop end at
// min_scale (the floor)?
std::string scale_drops(const Scenario& s, const Trajectory& oracle) {
  double scale = oracle::initial_scaler(s.loss_scaler).scale;
  std::string out = "no";
  for (const auto& st : oracle.steps) {
    if (st.scaler_after.scale < scale) out = st.scaler_after.scale <= s.loss_scaler.min_scale ? "to-floor" : (out == "to-floor" ? out : "yes");
    scale = st.scaler_after.scale;
  }
  return out;
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
  v["scale_drops"] = scale_drops(s, oracle);
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
  v["contiguous_gradients"] = yes(e.contiguous_gradients);
  v["offload_optimizer"] = to_string(e.offload_optimizer);
  v["compile"] = yes(e.compile);
  v["ranks"] = to_string(e.ranks);
  v["ns_coefficients"] = !o.ns_schedule.empty() ? "named" : o.ns_coefficients.size() > 1 ? "per-iteration" : "one-triple";
  v["lr_schedule"] = to_string(o.lr_schedule.shape);
  v["group_lr_schedule"] = yes(std::any_of(o.groups.begin(), o.groups.end(), [](const ParamGroup& g) { return g.lr_schedule.has_value(); }));
  v["checkpoint"] = checkpoint_value(s);
  if (!s.overflow.empty()) v["overflow_value"] = overflow_value(s);
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
