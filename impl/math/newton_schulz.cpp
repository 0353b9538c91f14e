#include "impl/math/newton_schulz.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "core/error.hpp"
#include "impl/math/lowp.hpp"

namespace muoncheck::impl {

NsConfig NsConfig::from(const OptimizerConfig& o) {
  NsConfig c;
  c.method = o.ns_method;
  c.steps = o.ns_steps;
  c.coefficients.clear();
  for (const auto& k : o.ns_coefficients)
    c.coefficients.push_back({static_cast<float>(k.a), static_cast<float>(k.b), static_cast<float>(k.c)});
  c.dtype = o.ns_dtype;
  return c;
}

const NsTriple& NsConfig::at(int iteration) const {
  if (coefficients.size() == 1) return coefficients.front();
  if (coefficients.size() != static_cast<size_t>(steps) || iteration < 0 || iteration >= steps)
    throw Error(ErrorKind::Internal, "NsConfig: iteration " + std::to_string(iteration) + " of " + std::to_string(steps) +
                                         " with " + std::to_string(coefficients.size()) + " coefficient triples");
  return coefficients[static_cast<size_t>(iteration)];
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
    const NsTriple& k = cfg.at(i);
    const Mat a = gram(x, t);
    const Mat b = axpby(k.b, a, k.c, matmul(a, a, t), t);
    x = axpby(k.a, x, 1.0f, matmul(b, x, t), t);
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
    const NsTriple& k = cfg.at(i);
    if (i == 2) {                                     // restart: fold Q into X
      if (q) x = matmul(*q, x, t);
      r = gram(x, t);
      q.reset();
    }
    const Mat z = axpby(k.b, r, k.c, matmul(r, r, t), t);
    q = q ? axpby(k.a, *q, 1.0f, matmul(z, *q, t), t) : identity_plus(z, k.a, t);
    if (i < cfg.steps - 1 && i + 1 != 2) {
      const Mat tt = axpby(k.a, r, 1.0f, matmul(z, r, t), t);
      r = axpby(k.a, tt, 1.0f, matmul(z, tt, t), t);
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
    case ScaleRule::max_dim: return std::sqrt(std::max(r, c));
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
