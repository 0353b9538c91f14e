// The step engine: docs/semantics.md §4 for a whole model, generic over the arithmetic policy
// (ExactArith<Real> for the oracle, ControlArith for the control). It owns the
// training state in its own number type, so a float128 run never passes through
// double between steps. Invariant: a skipped step changes no state and runs no NS.
#pragma once
#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/trajectory.hpp"
#include "oracle/adamw.hpp"
#include "oracle/clip.hpp"
#include "oracle/model.hpp"
#include "oracle/muon.hpp"
#include "oracle/oracle.hpp"
#include "oracle/scaler.hpp"

namespace muoncheck::oracle {

template <class T>
struct EngineState {
  std::vector<Mat<T>> weight;    // fp32 master weights (matrix view)
  std::vector<Mat<T>> momentum;  // Muon params; 0×0 for AdamW params
  std::vector<Mat<T>> adam_m, adam_v;  // AdamW params; 0×0 for Muon params
  ScalerState scaler;
  int good_steps = 0;
};

template <class Ar>
class Engine {
 public:
  using T = typename Ar::T;

  Engine(const Scenario& s, Ar ar);
  // Replaces the state (stepwise checks); empty optimizer tensors mean zeros.
  void load(const TrainingState& st);
  // Runs optimizer step t from the current state and returns its record.
  StepRecord step(int t);

  const EngineState<T>& state() const { return st_; }
  const std::vector<ParamTag>& tags() const { return tags_; }
  TrainingState training_state() const;

 private:
  // The reduced, scaled G of §4.1–2, summed in the order the stage reduces (stage
  // 0/1: ranks' accumulated gradients at the boundary; 2/3: every micro-step, then
  // accumulated); adds the samples' losses to `loss`, sets `overflow`.
  std::vector<Mat<T>> reduced_gradient(int t, T& loss, bool& overflow) const;
  std::vector<ParamState> param_states(const std::vector<Mat<T>>* grad) const;
  bool muon(size_t p) const { return tags_[p].use_muon; }

  Scenario s_;
  Ar ar_;
  std::vector<ParamTag> tags_;
  std::vector<Layout> layout_;
  EngineState<T> st_;
};

template <class Ar>
Engine<Ar>::Engine(const Scenario& s, Ar ar) : s_(s), ar_(ar), tags_(tag_params(s, false)) {
  const size_t n = s_.model.params.size();
  for (size_t p = 0; p < n; ++p) {
    const Layout L = layout_of(s_.model.params[p]);
    layout_.push_back(L);
    st_.weight.push_back(initial_weight<T>(s_, static_cast<int>(p)));
    st_.momentum.push_back(muon(p) ? Mat<T>(L.rows, L.cols) : Mat<T>());
    st_.adam_m.push_back(muon(p) ? Mat<T>() : Mat<T>(L.rows, L.cols));
    st_.adam_v.push_back(muon(p) ? Mat<T>() : Mat<T>(L.rows, L.cols));
  }
  st_.scaler = initial_scaler(s_.loss_scaler);
}

template <class Ar>
void Engine<Ar>::load(const TrainingState& in) {
  if (in.params.size() != layout_.size())
    throw Error(ErrorKind::BadInput, "step_from: state has " + std::to_string(in.params.size()) +
                                         " params, scenario " + s_.name + " has " + std::to_string(layout_.size()));
  auto take = [&](const std::vector<double>& v, size_t p, const char* what, bool wanted) {
    const Layout& L = layout_[p];
    if (!wanted) return Mat<T>();
    if (v.empty() && std::string(what) != "weight") return Mat<T>(L.rows, L.cols);
    if (static_cast<int64_t>(v.size()) != L.rows * L.cols)
      throw Error(ErrorKind::BadInput, "step_from: " + s_.model.params[p].name + "." + what + " has " +
                                           std::to_string(v.size()) + " elements, expected " +
                                           std::to_string(L.rows * L.cols));
    return from_doubles<T>(v, L.rows, L.cols);
  };
  for (size_t p = 0; p < layout_.size(); ++p) {
    const ParamState& ps = in.params[p];
    st_.weight[p] = take(ps.weight, p, "weight", true);
    st_.momentum[p] = take(ps.momentum, p, "momentum", muon(p));
    st_.adam_m[p] = take(ps.adam_m, p, "adam_m", !muon(p));
    st_.adam_v[p] = take(ps.adam_v, p, "adam_v", !muon(p));
  }
  st_.scaler = in.scaler;
  st_.good_steps = in.good_steps;
}

template <class Ar>
std::vector<Mat<typename Ar::T>> Engine<Ar>::reduced_gradient(int t, T& loss, bool& overflow) const {
  const EngineConfig& e = s_.engine;
  const T factor = T(st_.scaler.scale) / T(e.global_batch());
  // Natural overflow: a value that rounds to inf in the dtype it lives in — the scaled
  // micro-step gradient in param_dtype, the accumulation in grad_accum_dtype, the
  // reduction's operands and partial sums in comm_dtype. Each is judged against its own
  // dtype (an fp32 accumulator holding 7e4 from fp16 gradients has not overflowed), at
  // the IEEE threshold: halfway between the largest finite value and the next power of
  // two (65520 for fp16), where round-to-nearest-even first gives inf. Injected inf/nan
  // are non-finite and caught the same way.
  auto overflow_threshold = [](DType d) {
    const double m = max_finite(d);
    return T((m + std::ldexp(1.0, std::ilogb(m) + 1)) / 2);
  };
  const T param_limit = overflow_threshold(e.param_dtype), accum_limit = overflow_threshold(e.grad_accum_dtype),
          comm_limit = overflow_threshold(e.comm_dtype);
  auto over = [](const T& x, const T& limit) { return !real_isfinite(x) || real_abs(x) >= limit; };

  std::vector<Mat<T>> Wf(st_.weight.size());
  for (size_t p = 0; p < Wf.size(); ++p) {
    Wf[p] = st_.weight[p];
    for (T& v : Wf[p].a) v = ar_.param(v);  // the model copy the forward/backward reads
  }
  auto zeros = [&] {
    std::vector<Mat<T>> z;
    for (const auto& L : layout_) z.emplace_back(L.rows, L.cols);
    return z;
  };
  // Rank r's scaled gradient of micro-step k, as autograd hands it over (param_dtype).
  auto micro = [&](int r, int k) {
    std::vector<Mat<T>> g = micro_step_gradients(s_, t, r, k, Wf, loss, [this](const T& x) { return ar_.backward(x); });
    for (size_t p = 0; p < g.size(); ++p)
      for (T& v : g[p].a) v = ar_.param(v * factor);
    for (const OverflowInjection& inj : s_.overflow) {
      if (inj.step != t || inj.micro_step != k || inj.rank != r) continue;
      const int p = param_index(s_, inj.param);
      if (p < 0 || inj.index < 0 || inj.index >= g[p].size())
        throw Error(ErrorKind::BadInput, s_.name + ": overflow injection names " + inj.param + "[" +
                                             std::to_string(inj.index) + "], which does not exist");
      g[p].a[inj.index] = inj.value == OverflowValue::inf ? T(std::numeric_limits<double>::infinity())
                                                          : T(std::numeric_limits<double>::quiet_NaN());
    }
    for (const auto& m : g)
      for (const T& v : m.a) overflow = overflow || over(v, param_limit);
    return g;
  };
  // acc += x, rounded after each add (grad_accum_dtype).
  auto accumulate = [&](std::vector<Mat<T>>& acc, const std::vector<Mat<T>>& x) {
    for (size_t p = 0; p < acc.size(); ++p)
      for (size_t i = 0; i < acc[p].a.size(); ++i) {
        acc[p].a[i] = ar_.accum(acc[p].a[i] + x[p].a[i]);
        overflow = overflow || over(acc[p].a[i], accum_limit);
      }
  };
  // The cross-rank sum of every element, its terms added in the order the arithmetic's
  // reduction takes them (rank order, or a ring walk that starts at a rank set by the
  // element's position in its tensor or in the model's flat gradient); operands and
  // partial sums in comm_dtype.
  int64_t total = 0;
  for (const auto& L : layout_) total += L.rows * L.cols;
  auto reduce_ranks = [&](const std::vector<std::vector<Mat<T>>>& terms) {
    std::vector<Mat<T>> sum = zeros();
    const int dp = static_cast<int>(terms.size());
    const int dir = ar_.reduce_direction();
    int64_t flat = 0;
    for (size_t p = 0; p < sum.size(); ++p)
      for (size_t i = 0; i < sum[p].a.size(); ++i, ++flat) {
        int r = ar_.reduce_first(static_cast<int64_t>(i), flat, total, dp);
        T acc(0);
        for (int j = 0; j < dp; ++j, r = (r + dir + dp) % dp) {
          const T c = ar_.comm(terms[r][p].a[i]);
          acc = j == 0 ? c : ar_.comm(acc + c);
          overflow = overflow || over(c, comm_limit) || over(acc, comm_limit);
        }
        sum[p].a[i] = acc;
      }
    return sum;
  };

  std::vector<Mat<T>> G = zeros();
  std::vector<std::vector<Mat<T>>> terms(static_cast<size_t>(e.dp));
  if (e.stage <= 1) {
    // Stage 0/1 reduce once, at the boundary: each rank accumulates its micro-steps,
    // then the ranks' accumulated gradients are reduced.
    for (int r = 0; r < e.dp; ++r) {
      terms[r] = zeros();
      for (int k = 0; k < e.gas; ++k) accumulate(terms[r], micro(r, k));
    }
    G = reduce_ranks(terms);
  } else {
    // Stage 2/3 reduce every micro-step (the gradient is partitioned): the ranks'
    // micro-step gradients are reduced, and the reduced sums accumulated.
    for (int k = 0; k < e.gas; ++k) {
      for (int r = 0; r < e.dp; ++r) terms[r] = micro(r, k);
      accumulate(G, reduce_ranks(terms));
    }
  }
  return G;
}

template <class Ar>
StepRecord Engine<Ar>::step(int t) {
  StepRecord rec;
  rec.step = t;
  rec.scale = st_.scaler.scale;
  T loss(0);
  bool overflow = false;
  std::vector<Mat<T>> G = reduced_gradient(t, loss, overflow);
  rec.loss = to_double(loss / T(s_.engine.global_batch()));

  T norm_sq(0);  // unscale (§4.4); the norm is of the unscaled, unclipped G
  for (auto& g : G)
    for (T& v : g.a) { v = ar_.fp32(v / T(rec.scale)); norm_sq += v * v; }
  const T norm = real_sqrt(norm_sq);
  rec.grad_norm = to_double(norm);
  if (overflow) {  // §4.3: nothing but the scaler moves
    rec.skipped = true;
    st_.scaler = scaler_after(s_.loss_scaler, st_.scaler, true);
    rec.scaler_after = st_.scaler;
    rec.good_steps_after = st_.good_steps;
    rec.params = param_states(&G);
    return rec;
  }

  const OptimizerConfig& o = s_.optimizer;
  std::vector<Mat<T>> D = G;  // what the optimizers consume: G, or G clipped (§4.5)
  if (o.clip.mode == ClipMode::raw_grad) {
    const T f = clip_factor(norm, o.clip.max_norm);
    if (f != T(1))
      for (auto& d : D)
        for (T& v : d.a) v = ar_.fp32(v * f);
  }
  // Muon: momentum from D, then O = NS(U)·scale, replacing D for Muon params.
  // Params are independent tasks (NS cost ∝ rows·cols·min(rows, cols) per head).
  std::vector<size_t> muon_params;
  std::vector<double> cost;
  for (size_t p = 0; p < D.size(); ++p) {
    if (!muon(p)) continue;
    const int H = std::max(1, tags_[p].num_heads);
    const double r = static_cast<double>(layout_[p].rows / H), c = static_cast<double>(layout_[p].cols);
    muon_params.push_back(p);
    cost.push_back(H * r * c * std::min(r, c));
    rec.ns_calls.push_back(NsCall{t, static_cast<int>(p), 0, tags_[p].num_heads});
  }
  parallel_tasks(cost, [&](size_t i) {
    const size_t p = muon_params[i];
    const Mat<T> U = advance_momentum(ar_, st_.momentum[p], D[p], o, s_.engine.stage >= 1);
    D[p] = orthogonalized_update(ar_, U, tags_[p].num_heads, o);
  });
  if (o.clip.mode == ClipMode::update) {  // N over Muon updates and the others' G
    T n2(0);
    for (const auto& d : D) n2 += frobenius_sq(d);
    const T f = clip_factor(real_sqrt(n2), o.clip.max_norm);
    if (f != T(1))
      for (auto& d : D)
        for (T& v : d.a) v = ar_.fp32(v * f);
  }
  const int t_adam = st_.good_steps + 1;
  for (size_t p = 0; p < D.size(); ++p) {
    const std::string& name = s_.model.params[p].name;
    const double wd = weight_decay_for(s_, name);   // the rates of step t: lr · lr_scale · schedule factor
    if (muon(p)) apply_muon_update(ar_, st_.weight[p], D[p], muon_lr_at(s_, name, t), wd);
    else adamw_update(ar_, st_.weight[p], st_.adam_m[p], st_.adam_v[p], D[p], o.adam, adam_lr_at(s_, name, t), wd, t_adam);
  }
  st_.good_steps = t_adam;
  st_.scaler = scaler_after(s_.loss_scaler, st_.scaler, false);
  rec.scaler_after = st_.scaler;
  rec.good_steps_after = st_.good_steps;
  rec.params = param_states(&G);
  return rec;
}

template <class Ar>
std::vector<ParamState> Engine<Ar>::param_states(const std::vector<Mat<T>>* grad) const {
  std::vector<ParamState> out(layout_.size());
  for (size_t p = 0; p < out.size(); ++p) {
    out[p].weight = to_doubles(st_.weight[p]);
    if (grad) out[p].grad = to_doubles((*grad)[p]);
    out[p].momentum = to_doubles(st_.momentum[p]);
    out[p].adam_m = to_doubles(st_.adam_m[p]);
    out[p].adam_v = to_doubles(st_.adam_v[p]);
  }
  return out;
}

template <class Ar>
TrainingState Engine<Ar>::training_state() const {
  return TrainingState{param_states(nullptr), st_.scaler, st_.good_steps};
}

// Instantiated once each, in engine_<type>.cpp, so the heavy types compile in parallel.
extern template class Engine<ExactArith<f64>>;
extern template class Engine<ExactArith<f128>>;
extern template class Engine<ExactArith<bin50>>;
extern template class Engine<ControlArith>;

}  // namespace muoncheck::oracle
