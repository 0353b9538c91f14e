// The engine saved after step k, torn down and resumed: at the same dp and stage the
// whole run is bit-identical to the uninterrupted one; at another dp or stage the state it
// resumes from is bit-identical to the state saved (re-partitioning never rounds); each
// resume fault of the catalogue breaks exactly that, and only where its path runs.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>

#include "impl/run_impl.hpp"
#include "impl_scenarios.hpp"

namespace muoncheck::impl {
namespace {

using testing::two_layer;

Scenario with_checkpoint(Scenario s, int k, std::optional<int> dp = {}, std::optional<int> stage = {}) {
  s.checkpoint = CheckpointConfig{k, {dp, stage}};
  return s;
}

bool bits_equal(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::bit_cast<uint64_t>(a[i]) != std::bit_cast<uint64_t>(b[i])) return false;
  return true;
}

// The resumed engine's state equals the state recorded after step k, bit for bit.
bool resumed_as_saved(const ImplResult& r, int k) {
  if (!r.resumed_state) return false;
  const StepRecord& saved = r.trajectory.steps[static_cast<size_t>(k)];
  const TrainingState& st = *r.resumed_state;
  if (st.good_steps != saved.good_steps_after || st.scaler.scale != saved.scaler_after.scale) return false;
  for (size_t p = 0; p < saved.params.size(); ++p) {
    const auto &a = saved.params[p], &b = st.params[p];
    if (!bits_equal(a.weight, b.weight) || !bits_equal(a.momentum, b.momentum) || !bits_equal(a.adam_m, b.adam_m) ||
        !bits_equal(a.adam_v, b.adam_v))
      return false;
  }
  return true;
}

bool same_weights(const Trajectory& a, const Trajectory& b) {
  if (a.steps.size() != b.steps.size()) return false;
  for (size_t t = 0; t < a.steps.size(); ++t)
    for (size_t p = 0; p < a.steps[t].params.size(); ++p)
      if (!bits_equal(a.steps[t].params[p].weight, b.steps[t].params[p].weight)) return false;
  return true;
}

TEST(Checkpoint, ResumedAtTheSameDpAndStageTheRunIsBitIdentical) {
  for (int stage : {0, 1, 2, 3}) {
    const Scenario s = two_layer(stage, 2, 2, 1, 3);
    const ImplResult whole = run_impl(s);
    const ImplResult resumed = run_impl(with_checkpoint(s, 1));
    EXPECT_FALSE(whole.resumed_state.has_value());
    EXPECT_TRUE(resumed_as_saved(resumed, 1)) << "stage " << stage;
    EXPECT_TRUE(same_weights(whole.trajectory, resumed.trajectory)) << "stage " << stage;
    EXPECT_EQ(whole.replicated_digest_by_rank, resumed.replicated_digest_by_rank) << "stage " << stage;
  }
}

TEST(Checkpoint, AtAnotherDpOrStageTheResumedStateIsTheSavedOne) {
  struct Case { int stage, dp, gas, resume_dp, resume_stage; };
  for (const Case c : {Case{2, 2, 1, 1, 2}, Case{1, 1, 2, 2, 1}, Case{3, 2, 2, 4, 1}, Case{0, 2, 1, 2, 3}}) {
    const Scenario s = two_layer(c.stage, c.dp, c.gas, 1, 3);
    const ImplResult r = run_impl(with_checkpoint(s, 0, c.resume_dp, c.resume_stage));
    EXPECT_TRUE(resumed_as_saved(r, 0)) << "stage " << c.stage << " dp " << c.dp << " -> dp " << c.resume_dp << " stage "
                                        << c.resume_stage;
    EXPECT_EQ(r.trajectory.steps.size(), 3u);
    ASSERT_EQ(r.replicated_digest_by_rank.size(), static_cast<size_t>(std::max(c.dp, c.resume_dp)));
    EXPECT_EQ(r.replicated_digest_by_rank[0].size(), 3u);   // rank 0 ran every step
  }
}

TEST(Checkpoint, EachResumeFaultBreaksTheRestoredStateWhereItsPathRuns) {
  const Scenario s = two_layer(2, 2, 1, 1, 3);
  for (const char* fault : {"resume-momentum-lost", "resume-adam-step-reset"}) {
    ImplOptions o;
    o.faults = {fault};
    EXPECT_FALSE(resumed_as_saved(run_impl(with_checkpoint(s, 1), o), 1)) << fault;
  }
  ImplOptions wrong;
  wrong.faults = {"resume-wrong-partition"};
  EXPECT_FALSE(resumed_as_saved(run_impl(with_checkpoint(s, 1, 1), wrong), 1));
  // At the same dp every rank's own shard is the right one: the fault's path changes nothing.
  EXPECT_TRUE(resumed_as_saved(run_impl(with_checkpoint(s, 1), wrong), 1));
  // Without a checkpoint no resume fault has a path to run.
  for (const char* fault : {"resume-momentum-lost", "resume-wrong-partition", "resume-adam-step-reset"}) {
    ImplOptions o;
    o.faults = {fault};
    EXPECT_TRUE(same_weights(run_impl(s, o).trajectory, run_impl(s).trajectory)) << fault;
  }
}

TEST(Checkpoint, OffloadAndCompileRunTheIdenticalMath) {
  Scenario s = two_layer(2, 2, 1, 1, 2);
  const ImplResult plain = run_impl(s);
  s.engine.offload_optimizer = OffloadDevice::cpu;
  s.engine.compile = true;
  EXPECT_TRUE(same_weights(plain.trajectory, run_impl(s).trajectory));
}

}  // namespace
}  // namespace muoncheck::impl
