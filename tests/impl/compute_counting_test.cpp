// The NS-counting decorator: one record per orthogonalize_scaled call that returned, with
// the step and param of its context, the rank and the head count the call was given;
// nothing for a call that threw or for the elementwise kernels; and the engine's NS events
// are exactly the decorator's records (run_impl keeps no other source).
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "core/error.hpp"
#include "impl/math/counting_compute.hpp"
#include "impl/run_impl.hpp"
#include "impl_scenarios.hpp"

namespace muoncheck::impl {
namespace {

// Counts what reaches it; NS returns the input (or throws when told to).
class FakeCompute final : public Compute {
 public:
  std::string name() const override { return "fake"; }
  Mat orthogonalize_scaled(const Mat& u, int heads, const NsConfig&, ScaleRule) override {
    if (fail_next) throw Error(ErrorKind::Infrastructure, "device lost");
    ++ns_runs;
    last_heads = heads;
    return u;
  }
  void momentum_update(float*, const float*, int64_t, double, MomentumForm) override { ++kernels; }
  void muon_input(float*, const float*, const float*, int64_t, double, MomentumForm, bool) override { ++kernels; }
  void muon_apply(float*, const float*, int64_t, double, double) override { ++kernels; }
  void adamw_update(float*, float*, float*, const float*, int64_t, const AdamConfig&, int, double, double) override {
    ++kernels;
  }
  double sum_squares(const float*, int64_t) override { return ++kernels; }
  bool all_finite(const float*, int64_t) override { return ++kernels > 0; }
  void scale_inplace(float*, int64_t, double) override { ++kernels; }
  void set_ns_context(const NsContext& ctx) override { seen = ctx; }

  bool fail_next = false;
  int ns_runs = 0, last_heads = -1, kernels = 0;
  NsContext seen;
};

bool same_call(const NsCall& a, const NsCall& b) {
  return a.step == b.step && a.param == b.param && a.rank == b.rank && a.heads == b.heads;
}

TEST(CountingCompute, RecordsEveryCallThatRanWithStepParamRankAndHeads) {
  FakeCompute inner;
  CountingCompute counting(inner, 3);
  const Mat u(8, 4);
  counting.set_ns_context({2, 5});
  EXPECT_EQ(inner.seen.step, 2);   // the context is forwarded too
  counting.orthogonalize_scaled(u, 4, NsConfig{}, ScaleRule::deepspeed);
  EXPECT_EQ(inner.last_heads, 4);
  counting.set_ns_context({2, 7});
  counting.orthogonalize_scaled(u, 0, NsConfig{}, ScaleRule::deepspeed);
  ASSERT_EQ(counting.log().size(), 2u);
  EXPECT_EQ(inner.ns_runs, 2);
  EXPECT_TRUE(same_call(counting.log()[0], {2, 5, 3, 4}));
  EXPECT_TRUE(same_call(counting.log()[1], {2, 7, 3, 0}));
}

TEST(CountingCompute, ACallThatThrowsLeavesNoRecord) {
  FakeCompute inner;
  CountingCompute counting(inner, 0);
  counting.set_ns_context({0, 1});
  inner.fail_next = true;
  EXPECT_THROW(counting.orthogonalize_scaled(Mat(4, 4), 0, NsConfig{}, ScaleRule::deepspeed), Error);
  EXPECT_TRUE(counting.log().empty());
}

TEST(CountingCompute, AContextLabelsOneCallAndAnUnlabelledCallIsStillRecorded) {
  FakeCompute inner;
  CountingCompute counting(inner, 1);
  counting.set_ns_context({0, 2});
  counting.orthogonalize_scaled(Mat(4, 4), 0, NsConfig{}, ScaleRule::deepspeed);
  counting.orthogonalize_scaled(Mat(4, 4), 2, NsConfig{}, ScaleRule::deepspeed);   // no context: not param 2 again
  ASSERT_EQ(counting.log().size(), 2u);
  EXPECT_TRUE(same_call(counting.log()[1], {-1, -1, 1, 2}));
}

TEST(CountingCompute, ElementwiseKernelsAreForwardedAndNotCounted) {
  FakeCompute inner;
  CountingCompute counting(inner, 0);
  float x[4] = {1, 2, 3, 4}, y[4] = {};
  counting.momentum_update(x, y, 4, 0.9, MomentumForm::ema);
  counting.muon_input(x, y, y, 4, 0.9, MomentumForm::ema, true);
  counting.muon_apply(x, y, 4, 0.1, 0.0);
  counting.adamw_update(x, y, y, y, 4, AdamConfig{}, 1, 0.1, 0.0);
  counting.sum_squares(x, 4);
  counting.all_finite(x, 4);
  counting.scale_inplace(x, 4, 2.0);
  EXPECT_EQ(inner.kernels, 7);
  EXPECT_EQ(counting.name(), "fake");
  EXPECT_TRUE(counting.log().empty());
}

TEST(CountingCompute, ForwardsTheRealCpuResultUnchanged) {
  const auto cpu = make_cpu_compute();
  CountingCompute counting(*cpu, 0);
  Mat u(8, 4);
  for (size_t i = 0; i < u.v.size(); ++i) u.v[i] = static_cast<float>((i * 7) % 5) - 2.0f;
  NsConfig cfg;
  cfg.dtype = DType::fp32;
  counting.set_ns_context({0, 0});
  EXPECT_EQ(counting.orthogonalize_scaled(u, 2, cfg, ScaleRule::deepspeed).v, cpu->orthogonalize_scaled(u, 2, cfg, ScaleRule::deepspeed).v);
  ASSERT_EQ(counting.log().size(), 1u);
  EXPECT_EQ(counting.log()[0].heads, 2);
}

TEST(CountingCompute, LogsAreSortedIntoStepsAndAnUnplaceableCallIsAnInternalError) {
  const std::vector<std::vector<NsCall>> logs = {{{0, 2, 0, 0}, {1, 0, 0, 0}}, {{0, 1, 1, 4}}};
  const auto by_step = ns_calls_by_step(logs, 2);
  ASSERT_EQ(by_step.size(), 2u);
  ASSERT_EQ(by_step[0].size(), 2u);
  EXPECT_TRUE(same_call(by_step[0][0], {0, 1, 1, 4}));
  EXPECT_TRUE(same_call(by_step[0][1], {0, 2, 0, 0}));
  ASSERT_EQ(by_step[1].size(), 1u);
  for (int bad_step : {-1, 2}) {
    try {
      ns_calls_by_step({{{bad_step, 0, 1, 0}}}, 2);
      ADD_FAILURE() << "placed a call at step " << bad_step;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Internal) << e.what();
    }
  }
}

// End to end: per-head tags reach the NS calls the engine made, one per Muon param per
// step summed over ranks, each on the rank the placement chose.
TEST(CountingCompute, EngineNsEventsAreTheCallsThatRanWithTheirHeads) {
  Scenario s = testing::small_llama(2, 2, 2);
  s.optimizer.per_head = true;
  const ImplResult r = run_impl(s);
  int muon = 0, per_head = 0;
  for (const auto& t : r.trajectory.tags) muon += t.use_muon, per_head += t.num_heads > 0;
  ASSERT_GT(per_head, 0);
  for (const auto& st : r.trajectory.steps) {
    ASSERT_EQ(static_cast<int>(st.ns_calls.size()), muon) << "step " << st.step;
    for (const auto& c : st.ns_calls) {
      EXPECT_EQ(c.step, st.step);
      EXPECT_EQ(c.heads, r.trajectory.tags[static_cast<size_t>(c.param)].num_heads) << r.trajectory.tags[c.param].name;
    }
  }
  // A fault that skips NS for large params leaves no record of the skipped calls.
  Scenario big = testing::two_layer(3, 2);
  big.engine.reduce_bucket_size = 1000;
  EXPECT_EQ(run_impl(big).trajectory.steps[0].ns_calls.size(), 2u);
  EXPECT_EQ(run_impl(big, {{"skip-muon-large-param"}}).trajectory.steps[0].ns_calls.size(), 0u);
}

}  // namespace
}  // namespace muoncheck::impl
