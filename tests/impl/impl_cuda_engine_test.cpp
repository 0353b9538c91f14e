// The engine on the cuda backend: the same plumbing as on the cpu (tags, NS call events,
// the collective log, byte for byte), weights within the NS rounding band of the cpu
// run, bit-identical across two runs, across ranks, and between Gloo and NCCL at dp 1.
// Label gpu: skipped without a device.
#include <gtest/gtest.h>

#include <cmath>

#include "gpu_skip.hpp"
#include "impl/run_impl.hpp"
#include "impl_scenarios.hpp"

namespace muoncheck::impl {
namespace {

using testing::small_llama;
using testing::two_layer;

ImplOptions on(ComputeBackend b, CommBackend c = CommBackend::gloo) {
  ImplOptions o;
  o.backend = b;
  o.comm = c;
  return o;
}

double max_weight_rel(const Trajectory& a, const Trajectory& b) {
  double worst = 0;
  for (size_t t = 0; t < a.steps.size(); ++t)
    for (size_t p = 0; p < a.steps[t].params.size(); ++p) {
      const auto &x = a.steps[t].params[p].weight, &y = b.steps[t].params[p].weight;
      double d = 0, n = 0;
      for (size_t i = 0; i < x.size(); ++i) d += (x[i] - y[i]) * (x[i] - y[i]), n += y[i] * y[i];
      worst = std::max(worst, std::sqrt(d / std::max(n, 1e-300)));
    }
  return worst;
}

bool same_weights(const Trajectory& a, const Trajectory& b) { return max_weight_rel(a, b) == 0.0; }

std::vector<std::tuple<int, int, int, int>> ns_events(const Trajectory& t) {
  std::vector<std::tuple<int, int, int, int>> e;
  for (const auto& st : t.steps)
    for (const auto& c : st.ns_calls) e.emplace_back(c.step, c.param, c.rank, c.heads);
  return e;
}

class CudaEngine : public ::testing::TestWithParam<int> {   // ZeRO stage
 protected:
  void SetUp() override { MUONCHECK_REQUIRE_GPU(); }
};

TEST_P(CudaEngine, MatchesTheCpuPlumbingExactlyAndItsWeightsWithinTheNsBand) {
  Scenario s = small_llama(GetParam(), 2, 3);
  s.optimizer.per_head = true;
  const ImplResult cpu = run_impl(s, on(ComputeBackend::cpu));
  const ImplResult gpu = run_impl(s, on(ComputeBackend::cuda));
  EXPECT_EQ(gpu.trajectory.producer, "impl:cuda");
  ASSERT_EQ(gpu.trajectory.steps.size(), cpu.trajectory.steps.size());
  EXPECT_EQ(ns_events(gpu.trajectory), ns_events(cpu.trajectory));
  ASSERT_EQ(gpu.collectives_by_rank.size(), cpu.collectives_by_rank.size());
  for (size_t r = 0; r < cpu.collectives_by_rank.size(); ++r) {
    ASSERT_EQ(gpu.collectives_by_rank[r].size(), cpu.collectives_by_rank[r].size()) << "rank " << r;
    for (size_t i = 0; i < cpu.collectives_by_rank[r].size(); ++i)
      EXPECT_EQ(gpu.collectives_by_rank[r][i].bytes, cpu.collectives_by_rank[r][i].bytes) << "rank " << r << " #" << i;
  }
  // fp16 gram NS over 3 steps: a few fp16 ulps of the update, far below the update itself.
  EXPECT_LT(max_weight_rel(gpu.trajectory, cpu.trajectory), 1e-2);
  EXPECT_GT(max_weight_rel(gpu.trajectory, cpu.trajectory), 0.0) << "cuda NS did not run (bit-identical to cpu)";
  for (size_t r = 1; r < gpu.replicated_digest_by_rank.size(); ++r)
    EXPECT_EQ(gpu.replicated_digest_by_rank[r], gpu.replicated_digest_by_rank[0]) << "rank " << r;
  EXPECT_TRUE(same_weights(gpu.trajectory, run_impl(s, on(ComputeBackend::cuda)).trajectory)) << "not deterministic";
}

INSTANTIATE_TEST_SUITE_P(Stages, CudaEngine, ::testing::Values(0, 1, 2, 3),
                         [](const auto& info) { return "stage" + std::to_string(info.param); });

TEST(CudaEngineComm, GlooAndNcclGiveBitIdenticalRunsAtDp1) {
  MUONCHECK_REQUIRE_GPU();
  for (int stage : {0, 3}) {
    const Scenario s = two_layer(stage, 1, 2, 2, 2);
    const ImplResult gloo = run_impl(s, on(ComputeBackend::cuda, CommBackend::gloo));
    const ImplResult nccl = run_impl(s, on(ComputeBackend::cuda, CommBackend::nccl));
    EXPECT_TRUE(same_weights(gloo.trajectory, nccl.trajectory)) << "stage " << stage;
    EXPECT_EQ(gloo.collectives_by_rank[0].size(), nccl.collectives_by_rank[0].size());
  }
}

TEST(CudaEngineComm, NcclRunsEveryRankOnItsOwnGpuWhenThereAreEnough) {
  MUONCHECK_REQUIRE_GPU();
  if (cuda_device_count() < 2) GTEST_SKIP() << "needs 2 GPUs for NCCL at dp 2 (multigpu run)";
  const Scenario s = small_llama(3, 2, 2);
  const ImplResult gloo = run_impl(s, on(ComputeBackend::cuda, CommBackend::gloo));
  const ImplResult nccl = run_impl(s, on(ComputeBackend::cuda, CommBackend::nccl));
  EXPECT_EQ(ns_events(gloo.trajectory), ns_events(nccl.trajectory));
  EXPECT_LT(max_weight_rel(gloo.trajectory, nccl.trajectory), 1e-2);
}

}  // namespace
}  // namespace muoncheck::impl
