// The result memo (oracle/result_memo.hpp) hands out exactly what the call would compute:
// scenarios with one control_fingerprint have bit-identical oracle trajectories and control
// ensembles (its key: every field it leaves out — name, buckets, gradient layout, zero_init,
// the stage beyond what the arithmetic reads — changed one at a time, on generated
// scenarios), a stepwise step 0 from the initial state is the trajectory's own step 0, and
// the memo's answers equal fresh calls, a step from another state included.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>

#include <rapidcheck.h>

#include "oracle/control_ensemble.hpp"
#include "oracle/result_memo.hpp"
#include "properties/bitwise.hpp"
#include "properties/generators/scenario_gen.hpp"
#include "tests/oracle/scenarios.hpp"

namespace muoncheck::oracle {
namespace {

std::string step_difference(const StepRecord& a, const StepRecord& b) {
  Trajectory x, y;
  x.steps = {a};
  y.steps = {b};
  return first_bitwise_difference(x, y);
}

std::string ensemble_difference(const std::vector<Trajectory>& a, const std::vector<Trajectory>& b) {
  if (a.size() != b.size()) return "member count";
  for (size_t k = 0; k < a.size(); ++k)
    if (auto d = first_bitwise_difference(a[k], b[k]); !d.empty()) return "member " + std::to_string(k) + ": " + d;
  return "";
}

// The i-th generated scenario (the sweep's general generator).
Scenario generated(uint64_t seed, int index) {
  rc::Random random(seed);
  rc::Random r = random.split();
  for (int i = 0; i < index; ++i) r = random.split();
  return generators::scenario()(r, 100).value();
}

// Changes of fields the fingerprint leaves out; each must leave the fingerprint alone.
std::vector<std::pair<std::string, std::function<void(Scenario&)>>> unread_changes(const Scenario& s) {
  std::vector<std::pair<std::string, std::function<void(Scenario&)>>> out = {
      {"name", [](Scenario& x) { x.name += "-renamed"; x.description = "another"; }},
      {"buckets", [](Scenario& x) { x.engine.reduce_bucket_size = 7; x.engine.allgather_bucket_size = 5; }},
      {"contiguous_gradients", [](Scenario& x) { x.engine.contiguous_gradients = !x.engine.contiguous_gradients; }},
  };
  if (s.engine.stage == 3) out.push_back({"zero_init", [](Scenario& x) { x.engine.zero_init = !x.engine.zero_init; }});
  if (s.engine.stage >= 2) out.push_back({"stage 2/3", [](Scenario& x) { x.engine.stage = 5 - x.engine.stage; x.engine.zero_init = false; }});
  if (s.engine.stage == 1 && s.engine.comm_dtype == DType::fp32)
    out.push_back({"stage 1 -> 0", [](Scenario& x) { x.engine.stage = 0; }});
  return out;
}

TEST(ResultMemo, EqualFingerprintsGiveBitIdenticalOracleAndEnsembles) {
  int compared = 0;
  for (int i = 0; i < 24; ++i) {
    const Scenario s = generated(7, i);
    const auto exact = run_oracle(s, Precision::float64);
    const auto ensemble = run_control_ensemble(s, kDefaultControlMembers);
    for (const auto& [what, change] : unread_changes(s)) {
      Scenario v = s;
      change(v);
      ASSERT_EQ(control_fingerprint(v), control_fingerprint(s)) << "case " << i << ": " << what;
      EXPECT_EQ(first_bitwise_difference(run_oracle(v, Precision::float64), exact), "") << "case " << i << ": " << what;
      EXPECT_EQ(ensemble_difference(run_control_ensemble(v, kDefaultControlMembers), ensemble), "")
          << "case " << i << ": " << what;
      ++compared;
    }
  }
  EXPECT_GE(compared, 24 * 3);
}

TEST(ResultMemo, EqualFingerprintsGiveBitIdenticalFloat128Oracles) {
  Scenario s = testing::small_mixed();
  s.engine.stage = 3;
  Scenario v = s;
  v.name = "other";
  v.engine.stage = 2;
  v.engine.reduce_bucket_size = 11;
  ASSERT_EQ(control_fingerprint(v), control_fingerprint(s));
  EXPECT_EQ(first_bitwise_difference(run_oracle(v, Precision::float128), run_oracle(s, Precision::float128)), "");
}

TEST(ResultMemo, FieldsTheArithmeticReadsChangeTheFingerprint) {
  const Scenario s = testing::small_mixed();
  for (const auto& change : std::vector<std::function<void(Scenario&)>>{
           [](Scenario& x) { x.seed += 1; }, [](Scenario& x) { x.engine.gas = 1, x.engine.micro_batch = 2; },
           [](Scenario& x) { x.engine.stage = 2; }, [](Scenario& x) { x.steps += 1; },
           [](Scenario& x) { x.optimizer.lr *= 2; }, [](Scenario& x) { x.engine.comm_dtype = DType::bf16; }}) {
    Scenario v = s;
    change(v);
    EXPECT_NE(control_fingerprint(v), control_fingerprint(s));
  }
}

TEST(ResultMemo, StepZeroFromTheInitialStateIsTheTrajectorysStepZero) {
  for (int i = 0; i < 12; ++i) {
    const Scenario s = generated(11, i);
    const TrainingState start = initial_state(s);
    EXPECT_EQ(step_difference(step_from(s, 0, start, Precision::float64), run_oracle(s, Precision::float64).steps[0]), "")
        << "case " << i;
    const auto members = control_steps_from(s, 0, start, kDefaultControlMembers);
    const auto ensemble = run_control_ensemble(s, kDefaultControlMembers);
    for (size_t k = 0; k < members.size(); ++k)
      EXPECT_EQ(step_difference(members[k], ensemble[k].steps[0]), "") << "case " << i << " member " << k;
  }
  const Scenario s = testing::small_mixed();
  EXPECT_EQ(step_difference(step_from(s, 0, initial_state(s), Precision::float128), run_oracle(s, Precision::float128).steps[0]), "");
}

TEST(ResultMemo, AnswersAreWhatTheCallsCompute) {
  const Scenario s = testing::small_mixed();
  ResultMemo memo;
  const auto exact = run_oracle(s, Precision::float64);
  EXPECT_EQ(first_bitwise_difference(*memo.exact(s, Precision::float64), exact), "");
  EXPECT_EQ(first_bitwise_difference(*memo.exact(s, Precision::float64), exact), "");
  EXPECT_EQ(memo.counts().hits, 1);
  EXPECT_EQ(first_bitwise_difference(*memo.exact(s, Precision::float128), run_oracle(s, Precision::float128)), "")
      << "the precision is part of the key";
  EXPECT_EQ(ensemble_difference(*memo.ensemble(s, 3), run_control_ensemble(s, 3)), "");
  EXPECT_EQ(ensemble_difference(*memo.ensemble(s, 2), run_control_ensemble(s, 2)), "") << "the size is part of the key";

  // Steps from two different states at the same step: each the step its own state gives.
  TrainingState a = initial_state(s), b = a;
  a.params = exact.steps[0].params;
  b.params = exact.steps[0].params;
  b.params[1].weight[3] += 1e-3;
  for (int round = 0; round < 2; ++round)   // the second round reads the memo
    for (const TrainingState* st : {&a, &b}) {
      EXPECT_EQ(step_difference(*memo.exact_step(s, 1, *st, Precision::float64), step_from(s, 1, *st, Precision::float64)), "");
      const auto fresh = control_steps_from(s, 1, *st, 3);
      const auto got = memo.member_steps(s, 1, *st, 3);
      ASSERT_EQ(got->size(), fresh.size());
      for (size_t k = 0; k < fresh.size(); ++k) EXPECT_EQ(step_difference((*got)[k], fresh[k]), "") << "member " << k;
    }
  // Step 0 from the initial state comes from the trajectory and equals a fresh step.
  const TrainingState start = initial_state(s);
  EXPECT_EQ(step_difference(*memo.exact_step(s, 0, start, Precision::float64), step_from(s, 0, start, Precision::float64)), "");
  const auto first = memo.member_steps(s, 0, start, 3);
  const auto fresh = control_steps_from(s, 0, start, 3);
  for (size_t k = 0; k < fresh.size(); ++k) EXPECT_EQ(step_difference((*first)[k], fresh[k]), "");
}

TEST(ResultMemo, StaysWithinItsBudgetAndStillAnswersRight) {
  const Scenario s = testing::small_mixed();
  const size_t one = bytes_of(run_oracle(s, Precision::float64));
  ResultMemo memo(one + one / 2);   // room for one trajectory, not two
  Scenario t = s;
  t.seed += 1;
  for (int round = 0; round < 3; ++round)
    for (const Scenario* x : {&s, static_cast<const Scenario*>(&t)}) {
      EXPECT_EQ(first_bitwise_difference(*memo.exact(*x, Precision::float64), run_oracle(*x, Precision::float64)), "");
      EXPECT_LE(memo.counts().bytes, one + one / 2);
    }
}

}  // namespace
}  // namespace muoncheck::oracle
