#include "impl/math/newton_schulz.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include "impl/math/lowp.hpp"

namespace muoncheck::impl {

NsConfig NsConfig::from(const OptimizerConfig& o) {
  NsConfig c;
  c.method = o.ns_method;
  c.steps = o.ns_steps;
  c.a = static_cast<float>(o.ns_a);
  c.b = static_cast<float>(o.ns_b);
  c.c = static_cast<float>(o.ns_c);
  c.dtype = o.ns_dtype;
  return c;
}

namespace {

// X ← X / (‖X‖_F + 1e-7), with X first cast to the NS dtype.
Mat normalized(const Mat& u, DType t) {
  Mat x = u;
  round_inplace(t, x.v.data(), static_cast<int64_t>(x.v.size()));
  float ss = 0.0f;                                   // fp32 accumulation
  for (float e : x.v) ss += e * e;
  const float denom = round_dtype(t, std::sqrt(ss)) + 1e-7f;
  for (float& e : x.v) e = round_dtype(t, e / denom);
  return x;
}

// X: m×n with m ≤ n. X ← aX + (bA + cA²)X with A = XXᵀ.
Mat standard_loop(Mat x, const NsConfig& cfg) {
  const DType t = cfg.dtype;
  for (int i = 0; i < cfg.steps; ++i) {
    const Mat a = gram(x, t);
    const Mat b = axpby(cfg.b, a, cfg.c, matmul(a, a, t), t);
    x = axpby(cfg.a, x, 1.0f, matmul(b, x, t), t);
  }
  return x;
}

Mat identity_plus(const Mat& z, float a, DType t) {
  Mat q = z;
  for (int64_t i = 0; i < q.rows; ++i) q.at(i, i) = round_dtype(t, q.at(i, i) + a);
  return q;
}

// X: m×n with m < n; iterates on the m×m Gram matrix R and applies Q once.
Mat gram_loop(Mat x, const NsConfig& cfg) {
  const DType t = cfg.dtype;
  Mat r = gram(x, t);
  std::optional<Mat> q;
  for (int i = 0; i < cfg.steps; ++i) {
    if (i == 2) {                                     // restart: fold Q into X
      if (q) x = matmul(*q, x, t);
      r = gram(x, t);
      q.reset();
    }
    const Mat z = axpby(cfg.b, r, cfg.c, matmul(r, r, t), t);
    q = q ? axpby(cfg.a, *q, 1.0f, matmul(z, *q, t), t) : identity_plus(z, cfg.a, t);
    if (i < cfg.steps - 1 && i + 1 != 2) {
      const Mat tt = axpby(cfg.a, r, 1.0f, matmul(z, r, t), t);
      r = axpby(cfg.a, tt, 1.0f, matmul(z, tt, t), t);
    }
  }
  return q ? matmul(*q, x, t) : x;
}

}  // namespace

Mat newton_schulz(const Mat& u, const NsConfig& cfg) {
  Mat x = normalized(u, cfg.dtype);
  const bool tall = x.rows > x.cols;
  if (tall) x = transpose(x);
  const bool use_gram = cfg.method == NsMethod::gram && x.rows != x.cols;
  x = use_gram ? gram_loop(std::move(x), cfg) : standard_loop(std::move(x), cfg);
  return tall ? transpose(x) : x;
}

double scale_factor(ScaleRule rule, int64_t rows, int64_t cols) {
  const double r = static_cast<double>(rows), c = static_cast<double>(cols);
  switch (rule) {
    case ScaleRule::deepspeed: return std::sqrt(std::max(1.0, r / c));
    case ScaleRule::moonlight: return 0.2 * std::sqrt(std::max(r, c));
    case ScaleRule::spectral: return std::sqrt(r / c);
  }
  return 1.0;
}

Mat orthogonalize_scaled(const Mat& u, int heads, const NsConfig& cfg, ScaleRule rule) {
  const int h = std::max(heads, 1);
  const int64_t hd = u.rows / h;
  Mat out(u.rows, u.cols);
  for (int k = 0; k < h; ++k) {                       // one batched call over the heads
    Mat block(hd, u.cols);
    std::copy_n(u.v.begin() + k * hd * u.cols, hd * u.cols, block.v.begin());
    const Mat o = newton_schulz(block, cfg);
    const float s = static_cast<float>(scale_factor(rule, hd, u.cols));
    for (int64_t e = 0; e < hd * u.cols; ++e) out.v[static_cast<size_t>(k * hd * u.cols + e)] = o.v[e] * s;
  }
  return out;
}

}  // namespace muoncheck::impl
