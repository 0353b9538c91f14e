// The engine against its own contract: NS once per Muon matrix per good step (never on
// a skipped one), stage- and dp-invariance of fp32 trajectories, bucket bounds read
// back from the counting log, tagging under zero.Init, replicated state agreeing.
#include <gtest/gtest.h>

#include <cmath>

#include "impl/run_impl.hpp"
#include "impl_scenarios.hpp"

namespace muoncheck::impl {
namespace {

using testing::all_fp32;
using testing::small_llama;
using testing::two_layer;

double rel_err(const std::vector<double>& a, const std::vector<double>& b) {
  double d = 0, n = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    d += (a[i] - b[i]) * (a[i] - b[i]);
    n += b[i] * b[i];
  }
  return std::sqrt(d / std::max(n, 1e-300));
}

// Largest relative weight error over all params and steps.
double max_weight_err(const Trajectory& a, const Trajectory& b) {
  double worst = 0;
  for (size_t t = 0; t < a.steps.size(); ++t)
    for (size_t p = 0; p < a.steps[t].params.size(); ++p)
      worst = std::max(worst, rel_err(a.steps[t].params[p].weight, b.steps[t].params[p].weight));
  return worst;
}

int muon_count(const Trajectory& t) {
  int n = 0;
  for (const auto& tag : t.tags) n += tag.use_muon;
  return n;
}

TEST(Engine, RunsNewtonSchulzOncePerMuonMatrixPerGoodStepAndNeverOnASkippedOne) {
  Scenario s = small_llama(3, 2, 3);
  s.engine.gas = 2;
  s.loss_scaler.type = ScalerType::dynamic;
  s.loss_scaler.hysteresis = 1;
  s.overflow.push_back({1, 1, 1, "model.layers.0.mlp.up_proj.weight", 5, OverflowValue::nan});
  const ImplResult r = run_impl(s);
  const int muon = muon_count(r.trajectory);
  ASSERT_EQ(muon, 14);
  ASSERT_EQ(r.trajectory.steps.size(), 3u);
  EXPECT_EQ(r.trajectory.steps[0].ns_calls.size(), 14u);
  EXPECT_TRUE(r.trajectory.steps[1].skipped);
  EXPECT_EQ(r.trajectory.steps[1].ns_calls.size(), 0u);
  EXPECT_EQ(r.trajectory.steps[1].scaler_after.scale, r.trajectory.steps[1].scale / 2);
  EXPECT_EQ(r.trajectory.steps[2].ns_calls.size(), 14u);
  for (const auto& c : r.trajectory.steps[0].ns_calls) {
    int ordinal = 0;                                   // round-robin: i-th Muon param on rank i mod dp
    for (int p = 0; p < c.param; ++p) ordinal += r.trajectory.tags[p].use_muon;
    EXPECT_EQ(c.rank, ordinal % 2);
  }
  // Skipped step: every state tensor bit-identical.
  for (size_t p = 0; p < r.trajectory.tags.size(); ++p) {
    EXPECT_EQ(r.trajectory.steps[1].params[p].weight, r.trajectory.steps[0].params[p].weight);
    EXPECT_EQ(r.trajectory.steps[1].params[p].momentum, r.trajectory.steps[0].params[p].momentum);
    EXPECT_EQ(r.trajectory.steps[1].params[p].adam_v, r.trajectory.steps[0].params[p].adam_v);
  }
  EXPECT_EQ(r.trajectory.steps[1].good_steps_after, 1);
}

TEST(Engine, StagesZeroToThreeAgreeOnAnFp32Scenario) {
  for (int gas : {1, 2}) {
    Scenario base = two_layer(0, 2, gas, 2, 3);
    const ImplResult ref = run_impl(all_fp32(base));
    for (int stage : {1, 2, 3}) {
      Scenario s = two_layer(stage, 2, gas, 2, 3);
      const ImplResult r = run_impl(all_fp32(s));
      EXPECT_LE(max_weight_err(r.trajectory, ref.trajectory), 1e-6) << "stage " << stage << " gas " << gas;
    }
  }
}

TEST(Engine, DataParallelSizesAgreeAtAFixedGlobalBatch) {
  Scenario one = two_layer(1, 1, 1, 4, 3);
  const ImplResult ref = run_impl(all_fp32(one));
  for (int dp : {2, 4}) {
    Scenario s = two_layer(1, dp, 1, 4 / dp, 3);
    const ImplResult r = run_impl(all_fp32(s));
    EXPECT_LE(max_weight_err(r.trajectory, ref.trajectory), 1e-6) << "dp " << dp;
  }
}

TEST(Engine, NoBucketOrChunkExceedsItsConfiguredSize) {
  for (int stage : {0, 1, 2, 3}) {
    Scenario s = small_llama(stage, 2);
    s.engine.reduce_bucket_size = 300;
    s.engine.allgather_bucket_size = 500;
    const ImplResult r = run_impl(s);
    int grad = 0, gather = 0;
    for (const auto& log : r.collectives_by_rank)
      for (const auto& c : log) {
        if (c.purpose == Purpose::grad_reduce || c.purpose == Purpose::muon_gather)
          EXPECT_LE(c.elements, 300) << to_string(c);
        if (c.purpose == Purpose::param_gather || c.purpose == Purpose::weight_sync)
          EXPECT_LE(c.elements, 500) << to_string(c);
        if (c.purpose == Purpose::muon_gather || c.purpose == Purpose::grad_reduce)
          EXPECT_EQ(c.dtype, s.engine.comm_dtype);
        grad += c.purpose == Purpose::grad_reduce;
        gather += c.purpose == Purpose::muon_gather;
      }
    EXPECT_GT(grad, 2) << "stage " << stage;
    if (stage > 0) EXPECT_GT(gather, 2) << "stage " << stage;
    // Same numbers as with one big bucket.
    Scenario big = small_llama(stage, 2);
    EXPECT_EQ(max_weight_err(r.trajectory, run_impl(big).trajectory), 0.0) << "stage " << stage;
  }
}

TEST(Engine, BucketsSmallerThanDpFallBackToBoundedAllReduce) {
  Scenario s = two_layer(2, 4, 1, 1, 1);
  s.model.params = {{"a.weight", {4, 6}, std::nullopt}, {"b.weight", {5}, std::nullopt}};
  s.engine.reduce_bucket_size = 3;
  const ImplResult r = run_impl(s);
  for (const auto& c : r.collectives_by_rank[0])
    if (c.purpose == Purpose::grad_reduce) EXPECT_LE(c.elements, 3) << to_string(c);
  Scenario big = s;
  big.engine.reduce_bucket_size = 1000;
  EXPECT_EQ(max_weight_err(r.trajectory, run_impl(big).trajectory), 0.0);
}

TEST(Engine, ZeroInitTagsLikeMaterializedParams) {
  Scenario a = small_llama(3, 2, 1);
  a.optimizer.per_head = true;
  Scenario b = a;
  b.engine.zero_init = true;
  const ImplResult ra = run_impl(a), rb = run_impl(b);
  ASSERT_EQ(ra.trajectory.tags.size(), rb.trajectory.tags.size());
  for (size_t p = 0; p < ra.trajectory.tags.size(); ++p) {
    EXPECT_EQ(ra.trajectory.tags[p].use_muon, rb.trajectory.tags[p].use_muon) << ra.trajectory.tags[p].name;
    EXPECT_EQ(ra.trajectory.tags[p].num_heads, rb.trajectory.tags[p].num_heads) << ra.trajectory.tags[p].name;
  }
  for (const auto& tags : rb.tags_by_rank) {
    ASSERT_EQ(tags.size(), rb.trajectory.tags.size());
    for (size_t p = 0; p < tags.size(); ++p) EXPECT_EQ(tags[p].use_muon, rb.trajectory.tags[p].use_muon);
  }
  EXPECT_EQ(rb.trajectory.tags[1].num_heads, 4);       // q_proj: heads
  EXPECT_EQ(rb.trajectory.tags[2].num_heads, 2);       // k_proj: kv_heads
  EXPECT_EQ(rb.trajectory.tags[4].num_heads, 0);       // o_proj
  EXPECT_FALSE(rb.trajectory.tags[0].use_muon);        // embed
  EXPECT_EQ(max_weight_err(ra.trajectory, rb.trajectory), 0.0);
}

TEST(Engine, ReplicatedStateAgreesAcrossRanksAndRunsAreDeterministic) {
  for (int stage : {0, 1, 2, 3}) {
    Scenario s = small_llama(stage, 4);
    s.engine.param_dtype = s.engine.grad_accum_dtype = s.engine.comm_dtype = DType::bf16;
    const ImplResult a = run_impl(s), b = run_impl(s);
    for (const auto& d : a.replicated_digest_by_rank) EXPECT_EQ(d, a.replicated_digest_by_rank[0]) << "stage " << stage;
    EXPECT_EQ(a.replicated_digest_by_rank, b.replicated_digest_by_rank);
    EXPECT_EQ(max_weight_err(a.trajectory, b.trajectory), 0.0);
  }
}

}  // namespace
}  // namespace muoncheck::impl
