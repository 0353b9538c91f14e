// Every invariant passes on a clean run and fails on a deliberately broken copy
// of it: a check that cannot fail is a defect. The runs are real (impl on Gloo,
// oracle in double, control); the breakage is applied to the recorded results.
#include <gtest/gtest.h>

#include <map>
#include <memory>

#include "core/scenario_io.hpp"
#include "impl/run_impl.hpp"
#include "oracle/control_ensemble.hpp"
#include "oracle/oracle.hpp"
#include "properties/event_invariants.hpp"
#include "properties/numeric_invariants.hpp"
#include "properties/relational_invariants.hpp"
#include "properties/scaler_invariant.hpp"

namespace muoncheck {
namespace {

// Two kinds of run: fp32 throughout (a tight band), and 16-bit everywhere with a
// rank-deficient gradient (global batch 4 < 16 columns), where 16-bit NS noise fills the
// null space and the band is wide: every invariant must still fail on a breakage larger
// than its band, and the sensitivity figure must say the band is wide.
enum class Kind { fp32, lowp_rank_deficient };

Scenario small_scenario(Kind kind, bool with_overflow) {
  auto j = nlohmann::json::parse(R"({
    "name": "small", "seed": 11, "steps": 3,
    "model": {"params": [{"name": "a.weight", "shape": [16, 16]}, {"name": "b.weight", "shape": [8, 16]},
                         {"name": "norm.weight", "shape": [16]}]},
    "engine": {"stage": 3, "dp": 2, "gas": 2, "micro_batch": 2},
    "optimizer": {"ns_dtype": "fp32"},
    "loss_scaler": {"type": "dynamic", "initial_scale_power": 4}})");
  if (kind == Kind::lowp_rank_deficient) {
    j["engine"]["micro_batch"] = 1;
    j["engine"]["param_dtype"] = "bf16";
    j["engine"]["comm_dtype"] = "fp16";
    j["optimizer"]["ns_dtype"] = "fp16";
  }
  if (with_overflow)
    j["overflow"] = nlohmann::json::array({{{"step", 1}, {"micro_step", 1}, {"rank", 0}, {"param", "a.weight"}, {"index", 3}}});
  return parse_scenario(j, "<small>");
}

struct Fixture {
  Scenario s;
  Observation impl;
  Trajectory exact;
  ControlEnsemble controls;
  double breakage;   // relative size of a numeric breakage, above this kind's band
  Fixture(Kind kind, bool overflow)
      : s(small_scenario(kind, overflow)),
        impl(observation_of(impl::run_impl(s, {}))),
        exact(oracle::run_oracle(s, oracle::Precision::float64)),
        controls(oracle::run_control_ensemble(s, oracle::kDefaultControlMembers)),
        breakage(kind == Kind::fp32 ? 1e-3 : 0.2) {}
  RunBundle bundle(const Observation& r) const { return {s, r, exact, controls, oracle::Precision::float64}; }
};

class BrokenRuns : public ::testing::TestWithParam<Kind> {
 protected:
  const Fixture& clean() const { return fixture(false); }
  const Fixture& with_overflow() const { return fixture(true); }

 private:
  const Fixture& fixture(bool overflow) const {
    static std::map<std::pair<Kind, bool>, std::unique_ptr<Fixture>> cache;
    auto& f = cache[{GetParam(), overflow}];
    if (!f) f = std::make_unique<Fixture>(GetParam(), overflow);
    return *f;
  }
};

void expect_pass(const Verdict& v) { EXPECT_EQ(v.status, Status::pass) << v.invariant << ": " << v.message; }
void expect_fail(const Verdict& v) { EXPECT_EQ(v.status, Status::fail) << v.invariant << ": " << v.message; }

TEST_P(BrokenRuns, CleanRunPassesEverySingleScenarioInvariant) {
  const auto& f = clean();
  const auto b = f.bundle(f.impl);
  expect_pass(trajectory_conforms(b));
  expect_pass(step_conforms(b));
  if (GetParam() == Kind::fp32) expect_pass(grad_plumbing_exact(b));
  else EXPECT_EQ(grad_plumbing_exact(b).status, Status::skipped);   // needs fp32 throughout
  expect_pass(ns_once_per_matrix_per_step(b));
  expect_pass(tagging_matches(b));
  expect_pass(comm_dtype_respected(b));
  expect_pass(gathers_once_per_step(b, nullptr));
  expect_pass(ranks_agree(b));
  expect_pass(deterministic(b, f.impl));
  expect_pass(scaler_state_exact(b));
}

TEST_P(BrokenRuns, PerturbedWeightFailsTrajectoryAndStepConformance) {
  const auto& f = clean();
  auto broken = f.impl;
  for (auto& w : broken.trajectory.steps[1].params[0].weight) w *= 1.0 + f.breakage;
  const auto b = f.bundle(broken);
  expect_fail(trajectory_conforms(b));
  const auto v = step_conforms(b);
  expect_fail(v);
  EXPECT_NE(v.message.find("step 1"), std::string::npos) << v.message;   // located where it first appears
}

TEST_P(BrokenRuns, OneUlpInTheStepZeroGradientFailsPlumbing) {
  const auto& f = clean();
  if (GetParam() != Kind::fp32) GTEST_SKIP() << "the exact plumbing tier needs fp32 throughout (SKIPPED above)";
  auto broken = f.impl;
  auto& g = broken.trajectory.steps[0].params[1].grad[5];
  g = std::nextafter(static_cast<float>(g), 1.0f);
  expect_fail(grad_plumbing_exact(f.bundle(broken)));
}

TEST_P(BrokenRuns, ExtraNewtonSchulzCallOnTheSameRankFails) {
  const auto& f = clean();
  auto broken = f.impl;
  ASSERT_FALSE(broken.trajectory.steps[2].ns_calls.empty());
  broken.trajectory.steps[2].ns_calls.push_back(broken.trajectory.steps[2].ns_calls.front());   // that rank, twice
  expect_fail(ns_once_per_matrix_per_step(f.bundle(broken)));
}

// A matrix whose update two ranks both compute (DeepSpeed's copy ranks of a straddling param) is
// replicated work, not a second step of Muon: one call per rank is not a miscount.
TEST_P(BrokenRuns, TheSameCallReplicatedOnAnotherRankPasses) {
  const auto& f = clean();
  auto replicated = f.impl;
  ASSERT_FALSE(replicated.trajectory.steps[2].ns_calls.empty());
  NsCall again = replicated.trajectory.steps[2].ns_calls.front();
  again.rank += 1;
  replicated.trajectory.steps[2].ns_calls.push_back(again);
  expect_pass(ns_once_per_matrix_per_step(f.bundle(replicated)));
}

TEST_P(BrokenRuns, WrongTagOnOneRankFails) {
  const auto& f = clean();
  auto broken = f.impl;
  broken.tags_by_rank.back()[1].use_muon = false;
  expect_fail(tagging_matches(f.bundle(broken)));
}

TEST_P(BrokenRuns, GradientCollectiveInTheWrongDtypeFails) {
  const auto& f = clean();
  auto broken = f.impl;
  for (auto& c : broken.collectives_by_rank[0])
    if (c.purpose == impl::Purpose::muon_gather) {
      c.dtype = DType::bf16;
      break;
    }
  expect_fail(comm_dtype_respected(f.bundle(broken)));
}

// Every training collective is held to its own dtype: one record of each purpose moved to a
// dtype other than the one the semantics give it fails the invariant.
TEST_P(BrokenRuns, EveryTrainingCollectiveInTheWrongDtypeFails) {
  const auto& f = clean();
  for (const auto purpose : {impl::Purpose::grad_reduce, impl::Purpose::param_gather, impl::Purpose::muon_gather,
                             impl::Purpose::muon_exchange, impl::Purpose::scalar}) {
    const DType want = *required_wire_dtype(f.s, purpose);
    auto broken = f.impl;
    bool moved = false;
    for (auto& c : broken.collectives_by_rank[1])
      if (c.purpose == purpose && !moved) {
        c.dtype = want == DType::fp32 ? DType::bf16 : DType::fp32;
        moved = true;
      }
    ASSERT_TRUE(moved) << "no " << impl::purpose_name(purpose) << " collective at stage 3";
    const auto v = comm_dtype_respected(f.bundle(broken));
    expect_fail(v);
    EXPECT_NE(v.message.find(impl::purpose_name(purpose)), std::string::npos) << v.message;
  }
  EXPECT_FALSE(required_wire_dtype(f.s, impl::Purpose::state_export)) << "the state export serves only the checks";
}

TEST_P(BrokenRuns, MuonGatherInsideAMicroStepFails) {
  const auto& f = clean();
  auto broken = f.impl;
  for (auto& c : broken.collectives_by_rank[1])
    if (c.purpose == impl::Purpose::muon_gather) {
      c.phase = impl::Phase::micro_step;
      break;
    }
  expect_fail(gathers_once_per_step(f.bundle(broken), nullptr));
}

TEST_P(BrokenRuns, MoreGathersThanTheGasOneResplitFails) {
  const auto& f = clean();
  auto more = f.impl;
  auto extra = more.collectives_by_rank[0];
  for (auto& c : extra)
    if (c.purpose == impl::Purpose::muon_gather) more.collectives_by_rank[0].push_back(c);
  expect_fail(gathers_once_per_step(f.bundle(more), &f.impl));
}

TEST_P(BrokenRuns, DivergentReplicaFailsRanksAgree) {
  const auto& f = clean();
  auto broken = f.impl;
  broken.replicated_digest_by_rank[1][1] ^= 1;
  expect_fail(ranks_agree(f.bundle(broken)));
}

TEST_P(BrokenRuns, ARankThatRecordedNoDigestsFailsRanksAgree) {
  const auto& f = clean();
  ASSERT_EQ(f.impl.replicated_digest_by_rank.size(), 2u);
  auto rank0_silent = f.impl;
  rank0_silent.replicated_digest_by_rank[0].clear();   // rank 0 recorded nothing: no reference to differ from
  const auto v = ranks_agree(f.bundle(rank0_silent));
  expect_fail(v);
  EXPECT_NE(v.message.find("rank 0 recorded 0 digests for 3 steps"), std::string::npos) << v.message;

  auto all_silent = f.impl;
  for (auto& d : all_silent.replicated_digest_by_rank) d.clear();
  expect_fail(ranks_agree(f.bundle(all_silent)));

  auto short_rank1 = f.impl;
  short_rank1.replicated_digest_by_rank[1].pop_back();   // a step that ran without a digest
  expect_fail(ranks_agree(f.bundle(short_rank1)));

  auto rank_missing = f.impl;
  rank_missing.replicated_digest_by_rank.pop_back();     // dp 2, one rank's record
  expect_fail(ranks_agree(f.bundle(rank_missing)));
}

TEST_P(BrokenRuns, DifferentSecondRunFailsDeterminism) {
  const auto& f = clean();
  auto second = f.impl;
  second.trajectory.steps[2].params[2].weight[0] += 1e-7;
  expect_fail(deterministic(f.bundle(f.impl), second));
}

TEST_P(BrokenRuns, RelationalComparisonFailsOnADifferentTrajectory) {
  const auto& f = clean();
  auto other = f.impl.trajectory;
  for (auto& w : other.steps[2].params[1].weight) w *= 1.0 + f.breakage;
  expect_pass(compare_runs("gas-invariant", f.s, f.exact, {"a", &f.impl.trajectory, &f.controls}, {"b", &f.impl.trajectory, &f.controls}));
  expect_fail(compare_runs("gas-invariant", f.s, f.exact, {"a", &f.impl.trajectory, &f.controls}, {"b", &other, &f.controls}));
}

TEST_P(BrokenRuns, SkippedStepThatMovesStateFailsOverflowSkipClean) {
  const auto& f = with_overflow();
  ASSERT_TRUE(f.exact.steps[1].skipped);
  expect_pass(overflow_skip_clean(f.bundle(f.impl)));
  expect_pass(ns_once_per_matrix_per_step(f.bundle(f.impl)));

  auto momentum_moved = f.impl;
  momentum_moved.trajectory.steps[1].params[0].momentum[0] += 1e-3;
  expect_fail(overflow_skip_clean(f.bundle(momentum_moved)));

  auto not_skipped = f.impl;
  not_skipped.trajectory.steps[1].skipped = false;
  expect_fail(overflow_skip_clean(f.bundle(not_skipped)));

  auto wrong_scale = f.impl;
  wrong_scale.trajectory.steps[1].scaler_after.scale *= 2;
  expect_fail(overflow_skip_clean(f.bundle(wrong_scale)));
}

// An update computed before the overflow was known and then discarded (DeepSpeed stages the
// momentum and throws it away) leaves the state untouched: wasted work, not a failure; the same
// computation that reaches the momentum, or run twice on one rank, fails.
TEST_P(BrokenRuns, NsDiscardedOnASkippedStepPassesUnlessItTouchesTheState) {
  const auto& f = with_overflow();
  ASSERT_TRUE(f.exact.steps[1].skipped);
  int muon = -1;
  for (size_t p = 0; p < f.exact.tags.size() && muon < 0; ++p)
    if (f.exact.tags[p].use_muon) muon = static_cast<int>(p);
  ASSERT_GE(muon, 0);
  auto discarded = f.impl;
  discarded.trajectory.steps[1].ns_calls.push_back({1, muon, 0, 0});
  expect_pass(overflow_skip_clean(f.bundle(discarded)));
  expect_pass(ns_once_per_matrix_per_step(f.bundle(discarded)));

  auto applied = discarded;
  applied.trajectory.steps[1].params[static_cast<size_t>(muon)].momentum[0] += 1e-3;
  expect_fail(overflow_skip_clean(f.bundle(applied)));

  auto twice = discarded;
  twice.trajectory.steps[1].ns_calls.push_back({1, muon, 0, 0});
  expect_fail(ns_once_per_matrix_per_step(f.bundle(twice)));
}

// The scaler's counters are compared on good steps too, where overflow-skip-clean looks at
// nothing: each field of the state, broken alone on a step that was not skipped, fails.
TEST_P(BrokenRuns, ScalerStateThatDriftsOnAGoodStepFailsScalerStateExact) {
  const auto& f = with_overflow();
  ASSERT_FALSE(f.impl.trajectory.steps[2].skipped);
  expect_pass(scaler_state_exact(f.bundle(f.impl)));
  auto broken = [&](auto edit) {
    auto r = f.impl;
    edit(r.trajectory.steps[2]);
    return scaler_state_exact(f.bundle(r));
  };
  const Verdict hysteresis = broken([](StepRecord& st) { st.scaler_after.hysteresis += 1; });
  expect_fail(hysteresis);
  EXPECT_NE(hysteresis.message.find("step 2: hysteresis counter"), std::string::npos) << hysteresis.message;
  expect_pass(overflow_skip_clean(f.bundle([&] {   // the old comparison cannot see it
    auto r = f.impl;
    r.trajectory.steps[2].scaler_after.hysteresis += 1;
    return r;
  }())));
  expect_fail(broken([](StepRecord& st) { st.scaler_after.good_streak += 1; }));
  expect_fail(broken([](StepRecord& st) { st.scaler_after.scale *= 2; }));
  expect_fail(broken([](StepRecord& st) { st.scale *= 2; }));
  expect_fail(broken([](StepRecord& st) { st.good_steps_after += 1; }));
  expect_fail(broken([](StepRecord& st) { st.skipped = true; }));
  auto short_run = f.impl;
  short_run.trajectory.steps.pop_back();
  expect_fail(scaler_state_exact(f.bundle(short_run)));
}

TEST_P(BrokenRuns, OverflowSkipCleanIsSkippedWithoutOverflow) {
  const auto& f = clean();
  EXPECT_EQ(overflow_skip_clean(f.bundle(f.impl)).status, Status::skipped);
}

// The sensitivity figure tells the two kinds apart: a tight band on fp32, a band that is a
// large share of an update where 16-bit NS sees a rank-deficient gradient.
TEST_P(BrokenRuns, SensitivityReportsHowWideTheBandIs) {
  const auto& f = clean();
  const auto v = step_conforms(f.bundle(f.impl));
  ASSERT_GE(v.sensitivity, 0.0);
  if (GetParam() == Kind::fp32) EXPECT_LT(v.sensitivity, 0.01) << v.sensitivity_where;
  else EXPECT_GT(v.sensitivity, 0.10) << v.sensitivity_where;
}

// A tensor the implementation did not export fails by name; it is never silently dropped.
TEST_P(BrokenRuns, AMissingTensorFailsByName) {
  const auto& f = clean();
  auto broken = f.impl;
  broken.trajectory.steps[1].params[0].momentum.clear();
  for (const auto& v : {trajectory_conforms(f.bundle(broken)), step_conforms(f.bundle(broken))}) {
    expect_fail(v);
    EXPECT_NE(v.message.find("a.weight momentum (not exported"), std::string::npos) << v.message;
  }
}

INSTANTIATE_TEST_SUITE_P(Kinds, BrokenRuns, ::testing::Values(Kind::fp32, Kind::lowp_rank_deficient),
                         [](const auto& i) { return i.param == Kind::fp32 ? std::string("fp32") : std::string("lowp_rank_deficient"); });

TEST(Verdicts, NanMetricFails) {
  EXPECT_EQ(Verdict::judge("x", std::nan(""), 1.0, "").status, Status::fail);
  EXPECT_EQ(Verdict::judge("x", 1.0, 1.0, "").status, Status::pass);
  EXPECT_EQ(Verdict::judge("x", 1.0000001, 1.0, "").status, Status::fail);
}

}  // namespace
}  // namespace muoncheck
