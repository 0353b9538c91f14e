#include "impl/math/optim.hpp"

#include <cmath>

namespace muoncheck::impl {

void momentum_update(float* m, const float* g, int64_t n, double beta, MomentumForm form) {
  const double gw = form == MomentumForm::ema ? 1.0 - beta : 1.0;
  for (int64_t i = 0; i < n; ++i) m[i] = static_cast<float>(beta * m[i] + gw * g[i]);
}

void muon_input(float* u, const float* g, const float* m, int64_t n, double beta, MomentumForm form,
                bool nesterov) {
  if (!nesterov) {
    for (int64_t i = 0; i < n; ++i) u[i] = m[i];
    return;
  }
  const double gw = form == MomentumForm::ema ? 1.0 - beta : 1.0;
  for (int64_t i = 0; i < n; ++i) u[i] = static_cast<float>(gw * g[i] + beta * m[i]);
}

void muon_apply(float* w, const float* o, int64_t n, double lr, double wd) {
  const double keep = 1.0 - lr * wd;
  for (int64_t i = 0; i < n; ++i) w[i] = static_cast<float>(w[i] * keep - lr * o[i]);
}

void adamw_update(float* w, float* m, float* v, const float* g, int64_t n, const AdamConfig& c,
                  int t, double lr, double wd) {
  const double bc1 = 1.0 - std::pow(c.beta1, t), bc2 = 1.0 - std::pow(c.beta2, t);
  const double keep = 1.0 - lr * wd;
  for (int64_t i = 0; i < n; ++i) {
    const double gi = g[i];
    m[i] = static_cast<float>(c.beta1 * m[i] + (1.0 - c.beta1) * gi);
    v[i] = static_cast<float>(c.beta2 * v[i] + (1.0 - c.beta2) * gi * gi);
    const double mhat = m[i] / bc1, vhat = v[i] / bc2;
    w[i] = static_cast<float>(w[i] * keep - lr * mhat / (std::sqrt(vhat) + c.eps));
  }
}

double sum_squares(const float* x, int64_t n) {
  double s = 0.0;
  for (int64_t i = 0; i < n; ++i) s += static_cast<double>(x[i]) * x[i];
  return s;
}

bool all_finite(const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    if (!std::isfinite(x[i])) return false;
  return true;
}

void scale_inplace(float* x, int64_t n, double factor) {
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(x[i] * factor);
}

}  // namespace muoncheck::impl
