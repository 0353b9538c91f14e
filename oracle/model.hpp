// The model of docs/semantics.md §2: each param is an independent linear layer with its own
// generated inputs and targets. Matrix W (m×n): loss 1/(2m)‖Wx − y‖², gradient
// (1/m)(Wx − y)xᵀ; vector w (n): loss 1/(2n)‖w⊙x − y‖², gradient (1/n)(w⊙x − y)⊙x.
// Rank-3/4 params use the (shape[0], prod(rest)) view; a vector is a 1×n Mat.
#pragma once
#include <vector>

#include "core/datagen.hpp"
#include "core/scenario.hpp"
#include "oracle/matrix.hpp"
#include "oracle/parallel.hpp"

namespace muoncheck::oracle {

struct Layout {
  int64_t rows = 1, cols = 1;
  bool vector = false;  // rank-1 layer shape
};

inline Layout layout_of(const ParamSpec& p) {
  const MatrixView v = matrix_view(p.shape);
  return {v.rows, v.cols, p.shape.size() == 1};
}

// The generated initial weight (exact in every dtype), in the matrix view.
template <class T>
Mat<T> initial_weight(const Scenario& s, int p) {
  const ParamSpec& spec = s.model.params[p];
  const Layout L = layout_of(spec);
  Mat<T> W(L.rows, L.cols);
  for (int64_t e = 0; e < W.size(); ++e)
    W.a[e] = T(data::initial_weight(s.seed, p, e, static_cast<int>(spec.shape.size()), L.cols));
  return W;
}

// Adds sample j's loss to `loss` and its gradient to `grad` for param p at step t,
// with the forward/backward run at weights W. `bw` rounds every result of the forward
// and backward arithmetic (the identity for the oracle; fp32 for a control member whose
// backward runs in fp32, as the CPU implementation's does). The loss is never rounded.
template <class T, class Round>
void add_sample(const Scenario& s, int p, int t, int64_t j, const Layout& L, const Mat<T>& W, Mat<T>& grad,
                T& loss, const Round& bw) {
  std::vector<T> x(L.cols);
  for (int64_t e = 0; e < L.cols; ++e) x[e] = T(data::input_value(s.seed, p, t, j, e));
  if (L.vector) {
    const T inv_n = T(1) / T(L.cols);
    for (int64_t e = 0; e < L.cols; ++e) {
      const T r = bw(W.a[e] * x[e] - T(data::target_value(s.seed, p, t, j, e)));
      loss += r * r * inv_n / T(2);
      grad.a[e] = bw(grad.a[e] + bw(bw(r * x[e]) / T(L.cols)));
    }
    return;
  }
  const T inv_m = bw(T(1) / T(L.rows));
  for (int64_t i = 0; i < L.rows; ++i) {
    const T* w = W.row(i);
    T wx(0);
    for (int64_t e = 0; e < L.cols; ++e) wx = bw(wx + w[e] * x[e]);
    const T r = bw(wx - T(data::target_value(s.seed, p, t, j, i)));
    loss += r * r / T(2 * L.rows);
    const T ri = bw(inv_m * r);
    T* g = grad.row(i);
    for (int64_t e = 0; e < L.cols; ++e) g[e] = bw(g[e] + bw(ri * x[e]));
  }
}

// Σ over the micro-step's local samples of ∇loss_j (not yet divided by the global
// batch), for every param; adds the samples' losses to `loss`. Sample placement:
// j = (k·dp + r)·micro_batch + i. Params run as parallel tasks; their losses are
// summed in param order, so the result does not depend on the schedule.
template <class T, class Round>
std::vector<Mat<T>> micro_step_gradients(const Scenario& s, int t, int rank, int k, const std::vector<Mat<T>>& W,
                                         T& loss, const Round& bw) {
  const size_t n = W.size();
  std::vector<Mat<T>> g(n);
  std::vector<T> losses(n, T(0));
  std::vector<double> cost(n);
  for (size_t p = 0; p < n; ++p) cost[p] = static_cast<double>(W[p].size()) * s.engine.micro_batch;
  parallel_tasks(cost, [&](size_t p) {
    const Layout L = layout_of(s.model.params[p]);
    g[p] = Mat<T>(L.rows, L.cols);
    for (int i = 0; i < s.engine.micro_batch; ++i) {
      const int64_t j = data::global_sample(k, rank, i, s.engine.dp, s.engine.micro_batch);
      add_sample(s, static_cast<int>(p), t, j, L, W[p], g[p], losses[p], bw);
    }
  });
  for (const T& l : losses) loss += l;
  return g;
}

}  // namespace muoncheck::oracle
