// AdamW for the non-Muon params (docs/semantics.md §4.7), with bias correction by the number
// of good steps t (this step included) and decoupled weight decay. Moments and
// the weight pass through ar.fp32() after each update (identity in the oracle).
#pragma once
#include "core/scenario.hpp"
#include "oracle/arith.hpp"

namespace muoncheck::oracle {

// m ← β1 m + (1−β1) g; v ← β2 v + (1−β2) g²;
// W ← W·(1 − lr·wd) − lr·(m/(1−β1^t)) / (√(v/(1−β2^t)) + eps).
template <class Ar, class T = typename Ar::T>
void adamw_update(const Ar& ar, Mat<T>& W, Mat<T>& m, Mat<T>& v, const Mat<T>& g, const AdamConfig& c,
                  double lr, double wd, int t) {
  const T b1(c.beta1), b2(c.beta2), one(1), eps(c.eps), tlr(lr);
  T b1t(1), b2t(1);
  for (int i = 0; i < t; ++i) { b1t *= b1; b2t *= b2; }
  const T corr1 = one - b1t, corr2 = one - b2t;
  const T keep = one - tlr * T(wd);
  for (size_t i = 0; i < W.a.size(); ++i) {
    m.a[i] = ar.fp32(b1 * m.a[i] + (one - b1) * g.a[i]);
    v.a[i] = ar.fp32(b2 * v.a[i] + (one - b2) * g.a[i] * g.a[i]);
    const T step = (m.a[i] / corr1) / (real_sqrt(v.a[i] / corr2) + eps);
    W.a[i] = ar.fp32(W.a[i] * keep - tlr * step);
  }
}

}  // namespace muoncheck::oracle
