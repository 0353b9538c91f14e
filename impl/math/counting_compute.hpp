// Decorator that forwards every kernel to an inner Compute and records each Newton–Schulz
// call (orthogonalize_scaled) as an NsCall: the step and param of the NsContext last set,
// the rank it was built for, and the head count the call was actually given. A record is
// appended only after the inner call returned, so the log is what ran: a skipped or
// failed NS leaves no trace, and no other code path writes NS events. Each context labels
// one call; a call made without one is recorded with step and param -1 (never dropped).
#pragma once
#include <vector>

#include "core/trajectory.hpp"
#include "impl/math/compute.hpp"

namespace muoncheck::impl {

class CountingCompute final : public Compute {
 public:
  CountingCompute(Compute& inner, int rank) : inner_(inner), rank_(rank) {}

  std::string name() const override { return inner_.name(); }
  Mat orthogonalize_scaled(const Mat& u, int heads, const NsConfig& cfg, ScaleRule rule) override;
  void momentum_update(float* m, const float* g, int64_t n, double beta, MomentumForm form) override {
    inner_.momentum_update(m, g, n, beta, form);
  }
  void muon_input(float* u, const float* g, const float* m, int64_t n, double beta, MomentumForm form,
                  bool nesterov) override {
    inner_.muon_input(u, g, m, n, beta, form, nesterov);
  }
  void muon_apply(float* w, const float* o, int64_t n, double lr, double wd) override { inner_.muon_apply(w, o, n, lr, wd); }
  void adamw_update(float* w, float* m, float* v, const float* g, int64_t n, const AdamConfig& c, int t, double lr,
                    double wd) override {
    inner_.adamw_update(w, m, v, g, n, c, t, lr, wd);
  }
  double sum_squares(const float* x, int64_t n) override { return inner_.sum_squares(x, n); }
  bool all_finite(const float* x, int64_t n) override { return inner_.all_finite(x, n); }
  void scale_inplace(float* x, int64_t n, double factor) override { inner_.scale_inplace(x, n, factor); }
  void set_ns_context(const NsContext& ctx) override;

  const std::vector<NsCall>& log() const { return log_; }

 private:
  Compute& inner_;
  int rank_;
  NsContext ctx_;
  std::vector<NsCall> log_;
};

// The ranks' logs sorted into steps: [step] → calls, rank by rank in log order, then
// stably by param. Throws Internal for a call outside [0, steps) (one that ran with no
// context): an NS call that cannot be placed is a harness bug, never silently lost.
std::vector<std::vector<NsCall>> ns_calls_by_step(const std::vector<std::vector<NsCall>>& logs_by_rank, int steps);

}  // namespace muoncheck::impl
