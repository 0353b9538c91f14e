#include "impl/math/counting_compute.hpp"

#include <algorithm>
#include <string>

#include "core/error.hpp"

namespace muoncheck::impl {

void CountingCompute::set_ns_context(const NsContext& ctx) {
  ctx_ = ctx;
  inner_.set_ns_context(ctx);
}

Mat CountingCompute::orthogonalize_scaled(const Mat& u, int heads, const NsConfig& cfg, ScaleRule rule) {
  Mat o = inner_.orthogonalize_scaled(u, heads, cfg, rule);
  log_.push_back(NsCall{ctx_.step, ctx_.param, rank_, heads > 0 ? heads : 0});
  ctx_ = NsContext{};
  return o;
}

std::vector<std::vector<NsCall>> ns_calls_by_step(const std::vector<std::vector<NsCall>>& logs_by_rank, int steps) {
  std::vector<std::vector<NsCall>> out(static_cast<size_t>(std::max(steps, 0)));
  for (const auto& log : logs_by_rank)
    for (const NsCall& c : log) {
      if (c.step < 0 || c.step >= steps)
        throw Error(ErrorKind::Internal, "rank " + std::to_string(c.rank) + " ran an NS call (param " +
                                             std::to_string(c.param) + ") outside steps 0.." +
                                             std::to_string(steps - 1) + ": step " + std::to_string(c.step));
      out[static_cast<size_t>(c.step)].push_back(c);
    }
  for (auto& step : out)
    std::stable_sort(step.begin(), step.end(), [](const NsCall& a, const NsCall& b) { return a.param < b.param; });
  return out;
}

}  // namespace muoncheck::impl
