// Distributed Muon, once per optimizer step (docs/semantics.md §4.6, §8): each rank advances the
// momentum of its own slices (fp32); each Muon param's gradient and momentum are
// gathered in windows of at most reduce_bucket_size elements, in comm_dtype, to the
// rank that runs its NS (round-robin); the NS results travel back (muon_exchange) and
// every rank keeps the slice it owns. At stage 0 everything is local and only the
// results travel.
#include <map>

#include "core/error.hpp"
#include "impl/zero/buckets.hpp"
#include "impl/zero/collectives.hpp"
#include "impl/zero/rank_engine.hpp"

namespace muoncheck::impl {

void RankEngine::advance_momentum(const float* grad_owned, double grad_factor) {
  const auto& opt = s_.optimizer;
  std::vector<float> g;
  for (int p : placement_.muon_params()) {
    const Range x = intersect(layout_.param(p), owned_);
    if (x.empty()) continue;
    g.assign(grad_owned + at(x.begin), grad_owned + at(x.end));
    if (grad_factor != 1.0) math_.scale_inplace(g.data(), x.size(), grad_factor);  // CHECK_EXCL_BR_LINE: fault path
    math_.momentum_update(momentum_.data() + at(x.begin), g.data(), x.size(), opt.momentum, opt.momentum_form);
  }
}

std::vector<float> RankEngine::muon_step(int step, const float* grad_owned, bool advance, Phase phase) {
  const auto& opt = s_.optimizer;
  const auto& e = s_.engine;
  if (advance) advance_momentum(grad_owned, 1.0);  // CHECK_EXCL_BR_LINE: fault path

  // Full G and M of the params whose NS runs here.
  std::map<int, std::vector<float>> g_full, m_full;
  for (int p : placement_.muon_params())
    if (placement_.owner(p) == rank_) {
      g_full[p].assign(static_cast<size_t>(layout_.param(p).size()), 0.0f);
      m_full[p].assign(static_cast<size_t>(layout_.param(p).size()), 0.0f);
    }
  const auto windows = gather_windows(layout_, placement_.muon_params(), e.reduce_bucket_size);
  auto param_of = [&](int64_t flat) {
    for (int p : placement_.muon_params())  // CHECK_EXCL_BR_LINE: every piece lies in a Muon param but under a faulty unpack
      if (flat >= layout_.param(p).begin && flat < layout_.param(p).end) return p;  // CHECK_EXCL_BR_LINE: as above
    return -1;  // CHECK_EXCL_LINE: only a faulty unpack (mixed-shape-window-gather) reaches a gap
  };
  // Writes a received piece (which may span params under a faulty unpack) into the owner's buffers.
  auto deposit = [&](std::map<int, std::vector<float>>& dst, Range piece, const float* v) {
    for (int64_t f = piece.begin; f < piece.end;) {
      const int p = param_of(f);
      if (p < 0) { ++f; continue; }  // CHECK_EXCL_BR_LINE: only a faulty unpack (mixed-shape-window-gather) reaches a gap
      const Range x = intersect(piece, layout_.param(p));
      if (placement_.owner(p) == rank_)
        std::copy_n(v + (x.begin - piece.begin), x.size(), dst[p].begin() + (x.begin - layout_.param(p).begin));
      f = x.end;
    }
  };

  if (stage_ == 0) {
    for (auto& [p, buf] : g_full) {
      const Range pr = layout_.param(p);
      std::copy_n(grad_owned + at(pr.begin), pr.size(), buf.begin());
      std::copy_n(momentum_.begin() + at(pr.begin), pr.size(), m_full[p].begin());
    }
  } else {
    // "gather-in-partition-dtype" (#8600 review): the gathers used the dtype of the
    // partitioned buffers instead of comm_dtype.
    const bool partition_dtype = faults_.has(Fault::gather_in_partition_dtype);
    const DType g_wire = partition_dtype ? e.grad_accum_dtype : e.comm_dtype;  // CHECK_EXCL_BR_LINE: fault path
    const DType m_wire = partition_dtype ? DType::fp32 : e.comm_dtype;         // CHECK_EXCL_BR_LINE: fault path
    context(Purpose::muon_gather, phase, step);
    for (const auto& w : windows) {
      std::vector<std::vector<Range>> send(static_cast<size_t>(dp_)), assumed(static_cast<size_t>(dp_));
      for (int r = 0; r < dp_; ++r)
        for (const Segment& sg : w) {
          send[r].push_back(intersect(sg.flat, layout_.owned(r)));
          // #8628: the window was unpacked as if every param had the first one's size.
          const Range as{sg.flat.begin, sg.flat.begin + w.front().flat.size()};
          assumed[r].push_back(intersect(as, layout_.owned(r)));
        }
      const auto* recv = faults_.has(Fault::mixed_shape_window_gather) ? &assumed : nullptr;  // CHECK_EXCL_BR_LINE: fault path
      const bool straddle_fault = faults_.has(Fault::straddle_partial_reduce) && !local_unreduced_.empty();  // CHECK_EXCL_BR_LINE: fault path
      all_gather_pieces(
          comm_, g_wire, send,
          [&](Range piece, float* dst) { std::copy_n(grad_owned + at(piece.begin), piece.size(), dst); },
          [&](int from, Range piece, const float* v) {
            const int p = param_of(piece.begin);
            if (straddle_fault && from != rank_ && p >= 0 && layout_.ranks_holding(layout_.param(p)).size() > 1) {  // CHECK_EXCL_BR_LINE: fault path
              // CHECK_EXCL_START: fault path (straddle-partial-reduce)
              // #7807: the straddling matrix's foreign slice was taken from this rank's
              // own, not yet reduced, gradient.
              std::vector<float> local(local_unreduced_.begin() + piece.begin, local_unreduced_.begin() + piece.end);
              math_.scale_inplace(local.data(), piece.size(), 1.0 / scaler_.scale());
              deposit(g_full, piece, local.data());
              return;
              // CHECK_EXCL_STOP
            }
            deposit(g_full, piece, v);
          },
          recv);
      all_gather_pieces(
          comm_, m_wire, send,
          [&](Range piece, float* dst) { std::copy_n(momentum_.begin() + at(piece.begin), piece.size(), dst); },
          [&](int, Range piece, const float* v) { deposit(m_full, piece, v); }, recv);
    }
  }

  // NS for the params placed on this rank.
  const double muon_scale = faults_.has(Fault::muon_on_scaled_grads) ? scaler_.scale() : 1.0;  // CHECK_EXCL_BR_LINE: fault path
  std::map<int, std::vector<float>> o_full;
  for (auto& [p, g] : g_full) {
    const auto& tag = tags_[static_cast<size_t>(p)];
    const MatrixView mv = matrix_view(params_[p].ds_shape);
    Mat u(mv.rows, mv.cols);
    math_.muon_input(u.v.data(), g.data(), m_full[p].data(), static_cast<int64_t>(g.size()), opt.momentum,
               opt.momentum_form, opt.nesterov);
    int heads = tag.num_heads;
    if (faults_.has(Fault::per_head_stale_binding)) {  // CHECK_EXCL_BR_LINE: fault path
      // CHECK_EXCL_START: fault path (per-head-stale-binding)
      // #8600 review: the head count was bound once per window, from its first param.
      for (const auto& w : windows)
        for (const Segment& sg : w)
          if (sg.param == p) heads = tags_[static_cast<size_t>(w.front().param)].num_heads;
      if (heads > 0 && mv.rows % heads != 0) heads = tag.num_heads;
      // CHECK_EXCL_STOP
    }
    if (faults_.has(Fault::per_head_dropped_call_site) && (stage_ == 1 || stage_ == 2)) heads = 0;  // #8612  CHECK_EXCL_BR_LINE: fault path
    const bool skip_ns = (stage_ == 0 && faults_.has(Fault::stage0_no_newton_schulz)) ||           // #8441  CHECK_EXCL_BR_LINE: fault path
                         (faults_.has(Fault::skip_muon_large_param) && params_[p].numel > e.reduce_bucket_size);  // CHECK_EXCL_BR_LINE: fault path
    std::vector<float>& o = o_full[p];
    if (skip_ns) {  // CHECK_EXCL_BR_LINE: fault path
      o = u.v;      // CHECK_EXCL_LINE: fault path (stage0-no-newton-schulz, skip-muon-large-param)
    } else {
      // The NS event is recorded by the counting decorator around math_, once the call ran.
      math_.set_ns_context({step, p});
      o = math_.orthogonalize_scaled(u, heads, ns_, opt.scale_rule).v;
    }
    if (muon_scale != 1.0) math_.scale_inplace(o.data(), static_cast<int64_t>(o.size()), 1.0 / muon_scale);  // CHECK_EXCL_BR_LINE: fault path
  }

  // Exchange: each NS rank sends its results; every rank keeps its owned slices.
  std::vector<float> update(static_cast<size_t>(owned_.size()), 0.0f);
  context(Purpose::muon_exchange, phase, step);
  // "exchange-in-comm-dtype": NS results rounded to comm_dtype on the way back.
  const DType o_wire = faults_.has(Fault::exchange_in_comm_dtype) ? e.comm_dtype : DType::fp32;  // CHECK_EXCL_BR_LINE: fault path
  for (const auto& w : windows) {
    std::vector<std::vector<Range>> send(static_cast<size_t>(dp_));
    for (const Segment& sg : w) send[placement_.owner(sg.param)].push_back(sg.flat);
    all_gather_pieces(
        comm_, o_wire, send,
        [&](Range piece, float* dst) {
          const int p = param_of(piece.begin);
          std::copy_n(o_full.at(p).begin() + (piece.begin - layout_.param(p).begin), piece.size(), dst);
        },
        [&](int, Range piece, const float* v) {
          const Range keep = intersect(piece, owned_);
          if (!keep.empty()) std::copy_n(v + (keep.begin - piece.begin), keep.size(), update.begin() + at(keep.begin));
        });
  }
  return update;
}

}  // namespace muoncheck::impl
