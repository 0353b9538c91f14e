// One micro-step on one rank: (stage 3) gather the param_dtype model in
// allgather_bucket_size buckets, forward/backward every param on this rank's local
// samples, scale by S/global_batch, round to param_dtype, inject a configured
// overflow, then accumulate (stage 0/1) or reduce-scatter and accumulate (stage 2/3).
#include "core/datagen.hpp"
#include "impl/math/lowp.hpp"
#include "impl/model/linear_model.hpp"
#include "impl/zero/buckets.hpp"
#include "impl/zero/collectives.hpp"
#include "impl/zero/rank_engine.hpp"

#include <limits>

namespace muoncheck::impl {

std::vector<float> RankEngine::gather_model_for_forward(int step) {
  std::vector<float> full(static_cast<size_t>(layout_.total()), 0.0f);
  context(Purpose::param_gather, Phase::micro_step, step);
  for (const Range& b : param_buckets(layout_, s_.engine.allgather_bucket_size)) {
    std::vector<std::vector<Range>> send;
    for (int r = 0; r < dp_; ++r) send.push_back({intersect(b, layout_.owned(r))});
    all_gather_pieces(
        comm_, s_.engine.param_dtype, send,
        [&](Range piece, float* dst) { std::copy_n(model_.begin() + at(piece.begin), piece.size(), dst); },
        [&](int, Range piece, const float* v) { std::copy_n(v, piece.size(), full.begin() + piece.begin); });
  }
  return full;
}

void RankEngine::micro_step(int step, int k) {
  const auto& e = s_.engine;
  const int64_t n = layout_.total();

  // Forward/backward on the param_dtype weights; at stage 3 they exist only for now.
  std::vector<float> gathered;
  if (stage_ == 3) gathered = gather_model_for_forward(step);
  const float* weights = stage_ == 3 ? gathered.data() : model_.data();

  SampleSet batch{s_.seed, step, {}};
  for (int i = 0; i < e.micro_batch; ++i) batch.samples.push_back(data::global_sample(k, rank_, i, dp_, e.micro_batch));
  std::vector<float> grad(static_cast<size_t>(n), 0.0f);   // Σ_j ∂loss_j, fp32
  for (const auto& p : params_)
    loss_local_ += linear_loss_grad(p.index, p.ds_shape, weights + p.flat_offset, batch, grad.data() + p.flat_offset);
  gathered.clear();
  gathered.shrink_to_fit();                                   // released after the backward

  // The micro-step gradient autograd hands over: S/global_batch · Σ_j g(j), in param_dtype.
  const double coef = scaler_.scale() / static_cast<double>(e.global_batch());
  for (int64_t f = 0; f < n; ++f) grad[f] = round_dtype(e.param_dtype, grad[f] * coef);
  for (const auto& inj : s_.overflow) {
    if (inj.step != step || inj.micro_step != k || inj.rank != rank_) continue;
    const int p = param_index(s_, inj.param);
    if (p < 0 || inj.index >= params_[p].numel) continue;
    grad[params_[p].flat_offset + inj.index] = inj.value == OverflowValue::inf
                                                   ? std::numeric_limits<float>::infinity()
                                                   : std::numeric_limits<float>::quiet_NaN();
  }
  if (faults_.has(Fault::straddle_partial_reduce)) {  // CHECK_EXCL_BR_LINE: fault path
    // CHECK_EXCL_START: fault path (straddle-partial-reduce)
    if (local_unreduced_.empty()) local_unreduced_.assign(static_cast<size_t>(n), 0.0f);
    for (int64_t f = 0; f < n; ++f) local_unreduced_[f] += grad[f];
    // CHECK_EXCL_STOP
  }

  const DType acc_t = e.grad_accum_dtype;
  if (stage_ <= 1) {                                          // reduced once, at the boundary
    for (int64_t f = 0; f < n; ++f) grad_acc_[f] = round_dtype(acc_t, static_cast<double>(grad_acc_[f]) + grad[f]);
    return;
  }
  // Stage 2/3: reduce-scatter now, keep only this rank's partition.
  std::vector<float> reduced(static_cast<size_t>(owned_.size()), 0.0f);
  context(Purpose::grad_reduce, Phase::micro_step, step);
  reduce_scatter_flat(comm_, e.comm_dtype, layout_, e.reduce_bucket_size, grad.data(), reduced.data());
  for (size_t i = 0; i < reduced.size(); ++i)
    grad_acc_[i] = round_dtype(acc_t, static_cast<double>(grad_acc_[i]) + reduced[i]);

  if (stage_ == 3 && faults_.has(Fault::zero3_muon_per_microbatch)) {  // CHECK_EXCL_BR_LINE: fault path
    // CHECK_EXCL_START: fault path (zero3-muon-per-microbatch)
    // DeepSpeed #8443: the ZeRO-3 reduction hook ran the Muon update on every
    // micro-step's partial (reduced, unscaled) gradient instead of once per step.
    const double inv_s = 1.0 / scaler_.scale();
    for (float& g : reduced) g = static_cast<float>(g * inv_s);
    const std::vector<float> update = muon_step(step, reduced.data(), true, Phase::micro_step);
    apply_muon(update, step);
    // CHECK_EXCL_STOP
  }
}

}  // namespace muoncheck::impl
