// The optimizer step at the accumulation boundary (docs/semantics.md §4): reduce, check overflow
// across ranks before any state moves, unscale, clip, Muon once, AdamW, scaler
// bookkeeping, then re-sync the param_dtype model (stage 1/2 all-gather; stage 3 stays
// partitioned).
#include <cmath>

#include "impl/math/lowp.hpp"
#include "impl/zero/buckets.hpp"
#include "impl/zero/collectives.hpp"
#include "impl/zero/rank_engine.hpp"

namespace muoncheck::impl {

void RankEngine::run(int first, int end) {
  result_.trajectory.producer = math_.name() == "cpu" ? "impl:cpu" : "impl:cuda";  // CHECK_EXCL_BR_LINE: another build's backend
  result_.trajectory.tags = tags_;
  result_.scaler_at_start = scaler_.state();
  result_.good_steps_at_start = good_steps_;
  export_state(nullptr);
  for (int t = first; t < (end < 0 ? s_.steps : end); ++t) {
    step_start_ = std::chrono::steady_clock::now();
    for (int k = 0; k < s_.engine.gas; ++k) micro_step(t, k);
    optimizer_step(t);
  }
}

void RankEngine::reduce_at_boundary(int step) {
  const auto& e = s_.engine;
  context(Purpose::grad_reduce, Phase::boundary, step);
  if (stage_ == 0) {
    all_reduce_flat(comm_, e.comm_dtype, layout_, e.reduce_bucket_size, grad_acc_.data());
    grad_ = grad_acc_;
  } else if (stage_ == 1) {
    reduce_scatter_flat(comm_, e.comm_dtype, layout_, e.reduce_bucket_size, grad_acc_.data(), grad_.data());
  } else {
    grad_ = grad_acc_;
  }
  std::fill(grad_acc_.begin(), grad_acc_.end(), 0.0f);
}

void RankEngine::optimizer_step(int step) {
  const auto& opt = s_.optimizer;
  const bool muon_per_micro = stage_ == 3 && faults_.has(Fault::zero3_muon_per_microbatch);  // CHECK_EXCL_BR_LINE: fault path
  StepRecord rec;
  rec.step = step;
  rec.scale = scaler_.scale();
  reduce_at_boundary(step);
  const double inv_s = 1.0 / rec.scale;

  bool momentum_done = muon_per_micro;
  if (faults_.has(Fault::momentum_on_overflow) && !muon_per_micro) {  // CHECK_EXCL_BR_LINE: fault path
    // CHECK_EXCL_START: fault path (momentum-on-overflow)
    // #8432/#8435: momentum advanced from the fresh gradient before the overflow check.
    advance_momentum(grad_.data(), inv_s);
    momentum_done = true;
    // CHECK_EXCL_STOP
  }

  // Overflow flag, loss and the squared norm travel together; nothing has moved yet.
  const Range nr = norm_range_;
  const float* g_norm = grad_.data() + (nr.begin - owned_.begin);
  std::vector<float> scalars = {math_.all_finite(g_norm, nr.size()) ? 0.0f : 1.0f, static_cast<float>(loss_local_),
                                static_cast<float>(math_.sum_squares(g_norm, nr.size()))};
  context(Purpose::scalar, Phase::boundary, step);
  all_reduce_scalars(comm_, scalars, scalar_wire());
  loss_local_ = 0.0;
  const bool overflow = scalars[0] != 0.0f;
  rec.loss = scalars[1] / static_cast<double>(s_.engine.global_batch());
  rec.grad_norm = std::sqrt(static_cast<double>(scalars[2])) * inv_s;

  math_.scale_inplace(grad_.data(), static_cast<int64_t>(grad_.size()), inv_s);   // Muon/AdamW see G/S
  grad_record_ = grad_;
  if (faults_.has(Fault::muon_on_scaled_grads)) {  // CHECK_EXCL_BR_LINE: fault path
    // CHECK_EXCL_START: fault path (muon-on-scaled-grads)
    // fp16 ZeRO: the Muon path kept reading the loss-scaled buffer.
    for (int p : placement_.muon_params()) {
      const Range x = intersect(layout_.param(p), owned_);
      math_.scale_inplace(grad_.data() + at(x.begin), x.size(), rec.scale);
    }
    // CHECK_EXCL_STOP
  }

  if (overflow) {
    rec.skipped = true;
    scaler_.on_overflow();
  } else {
    bool clip_on_update = opt.clip.mode == ClipMode::update;
    if (faults_.has(Fault::clip_muon_update)) clip_on_update = true;  // CHECK_EXCL_BR_LINE: fault path
    if (opt.clip.max_norm > 0 && !clip_on_update && rec.grad_norm > opt.clip.max_norm)
      math_.scale_inplace(grad_.data(), static_cast<int64_t>(grad_.size()), opt.clip.max_norm / (rec.grad_norm + 1e-6));
    ++good_steps_;
    std::vector<float> update(grad_.size(), 0.0f);
    if (!muon_per_micro) update = muon_step(step, grad_.data(), !momentum_done, Phase::boundary);  // CHECK_EXCL_BR_LINE: fault path
    if (opt.clip.max_norm > 0 && clip_on_update) {
      // DeepSpeed's ZeRO clip: the norm over the Muon updates and the other gradients.
      double ss = 0.0;
      for (int p = 0; p < layout_.num_params(); ++p) {
        const Range x = intersect(layout_.param(p), nr);
        const auto& src = placement_.is_muon(p) ? update : grad_;
        ss += math_.sum_squares(src.data() + at(x.begin), x.size());
      }
      std::vector<float> total = {static_cast<float>(ss)};
      context(Purpose::scalar, Phase::boundary, step);
      all_reduce_scalars(comm_, total, scalar_wire());
      const double norm = std::sqrt(static_cast<double>(total[0]));
      if (norm > opt.clip.max_norm) {
        const double f = opt.clip.max_norm / (norm + 1e-6);
        math_.scale_inplace(update.data(), static_cast<int64_t>(update.size()), f);
        math_.scale_inplace(grad_.data(), static_cast<int64_t>(grad_.size()), f);
      }
    }
    if (!muon_per_micro) apply_muon(update, step);  // CHECK_EXCL_BR_LINE: fault path
    apply_adamw(step);
    scaler_.on_good_step();
    resync_model(step);
  }
  local_unreduced_.clear();
  rec.scaler_after = scaler_.state();
  rec.good_steps_after = good_steps_;
  result_.step_seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - step_start_).count());
  export_state(&rec);
}

void RankEngine::apply_muon(const std::vector<float>& update_owned, int step) {
  for (int p : placement_.muon_params()) {
    const Range x = intersect(layout_.param(p), owned_);
    if (x.empty()) continue;
    math_.muon_apply(master_.data() + at(x.begin), update_owned.data() + at(x.begin), x.size(), lr_muon(p, step),
               weight_decay(p));
  }
}

void RankEngine::apply_adamw(int step) {
  for (int p = 0; p < layout_.num_params(); ++p) {
    if (placement_.is_muon(p)) continue;
    const Range x = intersect(layout_.param(p), owned_);
    if (x.empty()) continue;
    const int64_t i = at(x.begin);
    math_.adamw_update(master_.data() + i, adam_m_.data() + i, adam_v_.data() + i, grad_.data() + i, x.size(),
                 s_.optimizer.adam, good_steps_, lr_adam(p, step), weight_decay(p));
  }
}

// "scalars-in-comm-dtype": the boundary scalars travel in comm_dtype instead of fp32.
DType RankEngine::scalar_wire() const {
  return faults_.has(Fault::scalars_in_comm_dtype) ? s_.engine.comm_dtype : DType::fp32;  // CHECK_EXCL_BR_LINE: fault path
}

void RankEngine::resync_model(int step) {
  const DType pd = s_.engine.param_dtype;
  if (stage_ == 0 || stage_ == 3) {                 // stage 0: everything local; 3: stays partitioned
    for (int64_t f = owned_.begin; f < owned_.end; ++f) model_[stage_ == 0 ? f : at(f)] = round_dtype(pd, master_[at(f)]);
    return;
  }
  for (int64_t f = owned_.begin; f < owned_.end; ++f) model_[f] = round_dtype(pd, master_[at(f)]);
  context(Purpose::weight_sync, Phase::boundary, step);
  // "weight-sync-fp32": the re-sync travels in fp32 instead of param_dtype.
  const DType wire = faults_.has(Fault::weight_sync_fp32) ? DType::fp32 : pd;  // CHECK_EXCL_BR_LINE: fault path
  for (const Range& b : param_buckets(layout_, s_.engine.allgather_bucket_size)) {
    std::vector<std::vector<Range>> send;
    for (int r = 0; r < dp_; ++r) send.push_back({intersect(b, layout_.owned(r))});
    all_gather_pieces(
        comm_, wire, send, [&](Range piece, float* dst) { std::copy_n(model_.begin() + piece.begin, piece.size(), dst); },
        [&](int from, Range piece, const float* v) {
          if (from != rank_) std::copy_n(v, piece.size(), model_.begin() + piece.begin);
        });
  }
}

}  // namespace muoncheck::impl
