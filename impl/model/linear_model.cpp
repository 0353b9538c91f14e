#include "impl/model/linear_model.hpp"

#include "core/datagen.hpp"

namespace muoncheck::impl {

double linear_loss_grad(int param, const std::vector<int64_t>& layer_shape, const float* w,
                        const SampleSet& batch, float* grad_acc) {
  const MatrixView mv = matrix_view(layer_shape);
  const bool vector = layer_shape.size() == 1;
  const int64_t m = mv.rows, n = mv.cols;
  std::vector<float> x(static_cast<size_t>(n)), y(static_cast<size_t>(vector ? n : m)), r(y.size());
  double loss = 0.0;
  for (int64_t j : batch.samples) {
    for (int64_t e = 0; e < n; ++e) x[e] = static_cast<float>(data::input_value(batch.seed, param, batch.step, j, e));
    for (size_t e = 0; e < y.size(); ++e)
      y[e] = static_cast<float>(data::target_value(batch.seed, param, batch.step, j, static_cast<int64_t>(e)));
    if (vector) {
      // 1/(2n)‖w⊙x − y‖²: ∂/∂w_e = (w_e x_e − y_e) x_e / n
      double sq = 0.0;
      for (int64_t e = 0; e < n; ++e) {
        r[e] = w[e] * x[e] - y[e];
        sq += static_cast<double>(r[e]) * r[e];
        grad_acc[e] += r[e] * x[e] / static_cast<float>(n);
      }
      loss += sq / (2.0 * n);
      continue;
    }
    // 1/(2m)‖Wx − y‖²: ∂/∂W = (Wx − y) xᵀ / m
    double sq = 0.0;
    for (int64_t i = 0; i < m; ++i) {
      const float* row = w + i * n;
      float acc = 0.0f;                                 // fp32 accumulation
      for (int64_t k = 0; k < n; ++k) acc += row[k] * x[k];
      r[i] = acc - y[i];
      sq += static_cast<double>(r[i]) * r[i];
    }
    loss += sq / (2.0 * m);
    const float inv_m = 1.0f / static_cast<float>(m);
    for (int64_t i = 0; i < m; ++i) {
      const float ri = r[i] * inv_m;
      float* g = grad_acc + i * n;
      for (int64_t k = 0; k < n; ++k) g[k] += ri * x[k];
    }
  }
  return loss;
}

}  // namespace muoncheck::impl
