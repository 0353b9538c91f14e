// Muon for one param (docs/semantics.md §4.6): momentum (ema or sum, Nesterov or not), the
// orthogonalized update O = NS(U)·scale (per head: NS per row block of m/H rows,
// scale(m/H, n)), and the decoupled-decay weight update. Momentum and weights pass
// through ar.fp32() after each update (identity in the oracle).
#pragma once
#include <algorithm>

#include "core/scenario.hpp"
#include "oracle/newton_schulz.hpp"

namespace muoncheck::oracle {

// deepspeed √max(1, r/c); moonlight 0.2·√max(r, c); spectral √(r/c).
template <class T>
T muon_scale(ScaleRule rule, int64_t r, int64_t c) {
  switch (rule) {
    case ScaleRule::deepspeed: return real_sqrt(std::max(T(1), T(r) / T(c)));
    case ScaleRule::moonlight: return T(0.2) * real_sqrt(T(std::max(r, c)));
    case ScaleRule::spectral: return real_sqrt(T(r) / T(c));
  }
  return T(1);
}

// Advances M with G and returns the update U that NS orthogonalizes.
//   ema: M ← βM + (1−β)G; U = (1−β)G + βM (Nesterov) or M.
//   sum: M ← βM + G;      U = G + βM (Nesterov) or M.
// `gathered`: G and the advanced M reach the NS rank through a step-time gather in
// comm_dtype (docs/semantics.md §8, stage ≥ 1), so U is formed from their comm_dtype values; the
// stored M stays fp32. At stage 0 both are local.
template <class Ar, class T = typename Ar::T>
Mat<T> advance_momentum(const Ar& ar, Mat<T>& M, const Mat<T>& G, const OptimizerConfig& o, bool gathered = false) {
  const T beta(o.momentum);
  const T g_weight = o.momentum_form == MomentumForm::ema ? T(1) - beta : T(1);
  for (size_t i = 0; i < M.a.size(); ++i) M.a[i] = ar.fp32(beta * M.a[i] + g_weight * G.a[i]);
  auto wire = [&](const T& x) { return gathered ? ar.comm(x) : x; };
  Mat<T> U(M.rows, M.cols);
  for (size_t i = 0; i < U.a.size(); ++i)
    U.a[i] = o.nesterov ? ar.fp32(g_weight * wire(G.a[i]) + beta * wire(M.a[i])) : wire(M.a[i]);
  return U;
}

// O = NS(U)·scale(m, n), or per head (heads > 0) O_h = NS(U_h)·scale(m/heads, n).
template <class Ar, class T = typename Ar::T>
Mat<T> orthogonalized_update(const Ar& ar, const Mat<T>& U, int heads, const OptimizerConfig& o) {
  const NsParams ns = NsParams::from(o);
  const int H = heads > 0 ? heads : 1;
  const int64_t hd = U.rows / H;
  const T scale = muon_scale<T>(o.scale_rule, hd, U.cols);
  Mat<T> O(U.rows, U.cols);
  for (int h = 0; h < H; ++h) {
    Mat<T> block = newton_schulz(ar, H == 1 ? U : row_block(U, h * hd, hd), ns);
    for (T& v : block.a) v = ar.fp32(v * scale);
    set_row_block(O, h * hd, block);
  }
  return O;
}

// W ← W·(1 − lr·wd) − lr·O.
template <class Ar, class T = typename Ar::T>
void apply_muon_update(const Ar& ar, Mat<T>& W, const Mat<T>& O, double lr, double wd) {
  const T tlr(lr), keep = T(1) - T(lr) * T(wd);
  for (size_t i = 0; i < W.a.size(); ++i) W.a[i] = ar.fp32(W.a[i] * keep - tlr * O.a[i]);
}

}  // namespace muoncheck::oracle
