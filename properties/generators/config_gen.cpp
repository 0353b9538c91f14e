#include "properties/generators/config_gen.hpp"

#include <algorithm>
#include <string>

#include "core/ns_schedules.hpp"
#include "properties/generators/choice.hpp"
#include "properties/generators/model_gen.hpp"

namespace muoncheck::generators {

namespace {

// The options of `all` that are at least `min` (keeping their weights).
std::vector<std::pair<int, int>> at_least(std::vector<std::pair<int, int>> all, int min) {
  std::erase_if(all, [min](const auto& o) { return o.second < min; });
  return all;
}

std::vector<std::pair<int, DType>> dtype_options(DType same, int same_w, int fp32_w, int bf16_w, int fp16_w) {
  return {{same_w, same}, {fp32_w, DType::fp32}, {bf16_w, DType::bf16}, {fp16_w, DType::fp16}};
}

// A group matches a dotted component of one param's name ("mlp", "l1", "q_proj", ...).
ParamGroup pick_group(const ModelSpec& m) {
  const ParamSpec& p = *rc::gen::elementOf(m.params);
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t dot; (dot = p.name.find('.', start)) != std::string::npos; start = dot + 1)
    parts.push_back(p.name.substr(start, dot - start));
  parts.push_back(p.name.substr(start));
  std::erase_if(parts, [](const std::string& s) { return s == "weight" || s == "model" || s.empty(); });
  ParamGroup g;
  g.match = parts.empty() ? p.name : *rc::gen::elementOf(parts);
  g.lr_scale = *weighted<double>({{40, 0.5}, {30, 2.0}, {20, 0.1}, {10, 0.0}});
  g.weight_decay = *weighted<std::optional<double>>({{50, std::nullopt}, {25, 0.0}, {25, 0.1}});
  return g;
}

}  // namespace

rc::Gen<int64_t> bucket_size(const ModelSpec& m, int dp, bool below_largest_muon) {
  int64_t largest = 1, largest_muon = 1;
  for (const auto& p : m.params) {
    largest = std::max(largest, element_count(p.shape));
    if (is_muon_param(p)) largest_muon = std::max(largest_muon, element_count(p.shape));
  }
  const int64_t total = total_elements(m);
  // Every bucket is one collective round trip per micro-step or step (~0.1–1 ms on
  // loopback, more under load), and a reduce-scatter bucket holds dp chunks, so a
  // model cut into total·dp/bucket pieces costs that many round trips. At most
  // kMaxChunks keeps a case well under a second: a 1-element bucket appears on tiny
  // models (total·dp ≤ kMaxChunks); larger ones get their smallest at total·dp/kMaxChunks.
  constexpr int64_t kMaxChunks = 48;
  const int64_t smallest = (total * dp + kMaxChunks - 1) / kMaxChunks;
  if (below_largest_muon) {
    const int64_t hi = std::max<int64_t>(1, largest_muon - 1);
    return range(std::min(smallest, hi), hi);
  }
  return weighted_gen<int64_t>({
      {40, rc::gen::just<int64_t>(500000000)},
      {15, range(total, total + 64)},                        // one bucket holds the model
      {5, rc::gen::just<int64_t>(int64_t{smallest})},        // one element (small models)
      {25, range(std::min(smallest, largest), largest)},     // a param spans buckets
      {15, range(std::min(std::max(smallest, largest / 2 + 1), 2 * largest), 2 * largest)},   // around the largest param
  });
}

rc::Gen<EngineConfig> engine(const ModelSpec& m, const Focus& f, bool fp16_params) {
  return rc::gen::exec([m, f, fp16_params] {
    EngineConfig e;
    e.stage = *int_range(f.min_stage, f.max_stage);
    // 16-bit communication at any dp: the control ensemble's ring-order members cover the
    // order in which a ring reduction adds each element's rank terms.
    e.dp = *weighted<int>(at_least({{30, 1}, {37, 2}, {10, 3}, {16, 4}, {1, 5}, {2, 6}, {4, 8}}, f.min_dp));
    e.gas = *weighted<int>(at_least({{35, 1}, {30, 2}, {10, 3}, {15, 4}, {10, 8}}, f.min_gas));
    e.micro_batch = *weighted<int>({{60, 1}, {30, 2}, {10, 3}});
    e.zero_init = e.stage == 3 && (f.zero_init || *chance(50));
    e.reduce_bucket_size = *bucket_size(m, e.dp, f.small_buckets);
    e.allgather_bucket_size = *bucket_size(m, e.dp, false);
    e.contiguous_gradients = !*chance(20);
    e.param_dtype = fp16_params ? DType::fp16 : *weighted<DType>({{50, DType::fp32}, {30, DType::bf16}, {20, DType::fp16}});
    e.grad_accum_dtype = *weighted<DType>(dtype_options(e.param_dtype, 60, 30, 5, 5));
    e.comm_dtype = f.low_precision_comm ? *weighted<DType>({{60, DType::bf16}, {40, DType::fp16}})
                                        : *weighted<DType>(dtype_options(e.param_dtype, 50, 25, 15, 10));
    // Natural fp16 overflow (a loss scale pushed to the edge of the range) with a 16-bit
    // reduction over 3+ ranks: whether a partial sum passes 65520 depends on the order the
    // ranks' terms are added, so two correct implementations can disagree on skipping the
    // step (seed 2, case 191: a ring order overflows where rank order does not). That is a
    // semantic ambiguity, not noise, and no band can judge it; those cases reduce in fp32
    // (or, when the focus needs 16-bit communication, over 2 ranks, where a + b has one order).
    if (fp16_params && e.dp >= 3 && e.comm_dtype != DType::fp32) {
      if (f.low_precision_comm) e.dp = 2;
      else e.comm_dtype = DType::fp32;
    }
    return e;
  });
}

rc::Gen<OptimizerConfig> optimizer(const ModelSpec& m, const Focus& f) {
  return rc::gen::exec([m, f] {
    OptimizerConfig o;
    o.lr = *weighted<double>({{60, 0.02}, {15, 0.01}, {15, 0.05}, {10, 0.1}});
    o.momentum = *weighted<double>({{60, 0.95}, {20, 0.9}, {10, 0.5}, {10, 0.0}});
    o.nesterov = !*chance(30);
    o.momentum_form = *weighted<MomentumForm>({{70, MomentumForm::ema}, {30, MomentumForm::sum}});
    o.ns_method = *weighted<NsMethod>({{55, NsMethod::gram}, {45, NsMethod::standard}});
    const DType ns_default = o.ns_method == NsMethod::standard ? DType::bf16 : DType::fp16;
    o.ns_dtype = *weighted<DType>(dtype_options(ns_default, 60, 20, 10, 10));
    // Gram NS restarts only once (at iteration 2), so its rounding error grows with every
    // further iteration; up to 8 steps are generated where R stays finite: in fp16 R
    // overflows beyond 5 steps (every valid rounding sequence gives inf), in bf16 and fp32
    // it does not. DeepSpeed uses 5.
    o.ns_steps = o.ns_method == NsMethod::standard ? *weighted<int>({{70, 5}, {10, 1}, {10, 3}, {10, 8}})
                 : o.ns_dtype == DType::fp16        ? *weighted<int>({{75, 5}, {12, 1}, {13, 3}})
                                                    : *weighted<int>({{55, 5}, {10, 1}, {10, 3}, {8, 6}, {7, 7}, {10, 8}});
    if (*chance(15)) o.ns_coefficients = {{1.5, -0.5, 0.0}};   // the cubic iteration
    o.scale_rule = *weighted<ScaleRule>({{50, ScaleRule::deepspeed}, {25, ScaleRule::moonlight}, {25, ScaleRule::spectral}});
    o.weight_decay = *weighted<double>({{60, 0.0}, {20, 0.01}, {20, 0.1}});
    o.per_head = f.per_head || *chance(25);
    if (*chance(30)) {
      o.adam.lr = *weighted<double>({{50, 3e-4}, {30, 1e-3}, {20, 1e-2}});
      const auto betas = *weighted<std::pair<double, double>>({{50, {0.9, 0.95}}, {30, {0.9, 0.999}}, {20, {0.8, 0.9}}});
      o.adam.beta1 = betas.first, o.adam.beta2 = betas.second;
      o.adam.eps = *weighted<double>({{50, 1e-10}, {50, 1e-8}});
    }
    const int groups = f.groups ? *int_range(1, 2) : *weighted<int>({{65, 0}, {25, 1}, {10, 2}});
    for (int i = 0; i < groups; ++i) o.groups.push_back(pick_group(m));
    if (f.groups && o.groups.front().lr_scale == 1.0) o.groups.front().lr_scale = 0.5;
    if (f.clip) {
      o.clip = {*weighted<double>({{40, 1e-3}, {30, 1e-2}, {30, 0.1}}), ClipMode::raw_grad};
    } else {
      // `update` mode with every NS dtype: the ensemble's members give ‖O‖ (and so the
      // one clip factor every AdamW step is scaled by) independent noise draws.
      const int update_weight = 10;
      const int mode = *weighted<int>({{60, 0}, {30, 1}, {update_weight, 2}});   // none, raw_grad, update
      if (mode > 0)
        o.clip = {*weighted<double>({{30, 1e-2}, {20, 1e-3}, {20, 0.1}, {20, 1.0}, {10, 10.0}}),
                  mode == 1 ? ClipMode::raw_grad : ClipMode::update};
    }
    // A named per-iteration schedule (drawn last, so the draws above keep their values): its
    // length is the iteration count. Gram NS in 16 bits takes only 5-iteration ones: past 5 its
    // one restart no longer holds the rounding error (Polar Express's 8 in bf16 are undetermined,
    // docs/invariants.md), and in fp16 R overflows (see above).
    if (f.ns_schedule || *chance(10)) {
      std::vector<std::pair<int, const NsSchedule*>> fit;
      for (const auto& sch : ns_schedules())
        if (o.ns_method != NsMethod::gram || o.ns_dtype == DType::fp32 || sch.coefficients.size() <= 5) fit.push_back({1, &sch});
      const NsSchedule* sch = *weighted<const NsSchedule*>(fit);
      o.ns_schedule = sch->name;
      o.ns_coefficients = sch->coefficients;
      o.ns_steps = static_cast<int>(sch->coefficients.size());
    }
    return o;
  });
}

}  // namespace muoncheck::generators
