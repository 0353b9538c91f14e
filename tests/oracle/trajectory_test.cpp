// The trajectory as a whole: determinism, one NS call per Muon param per good
// step, the batch-split invariance of §1 (dp × gas × micro_batch), stepwise
// step_from reproducing the free run, and certified digits between precisions.
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.hpp"
#include "oracle/certify.hpp"
#include "oracle/oracle.hpp"
#include "scenarios.hpp"

namespace muoncheck::oracle {
namespace {

TEST(OracleTrajectory, twoRunsAreBitIdentical) {
  const Scenario s = testing::small_mixed();
  const Trajectory a = run_oracle(s, Precision::float128), b = run_oracle(s, Precision::float128);
  ASSERT_EQ(a.steps.size(), 3u);
  for (size_t t = 0; t < a.steps.size(); ++t) {
    EXPECT_EQ(a.steps[t].loss, b.steps[t].loss);
    for (size_t p = 0; p < a.initial.size(); ++p) {
      EXPECT_EQ(a.steps[t].params[p].weight, b.steps[t].params[p].weight);
      EXPECT_EQ(a.steps[t].params[p].momentum, b.steps[t].params[p].momentum);
    }
  }
  EXPECT_EQ(a.producer, "oracle:float128");
}

TEST(OracleTrajectory, oneNsCallPerMuonParamPerGoodStep) {
  const Scenario s = testing::small_mixed();
  const Trajectory tr = run_oracle(s, Precision::float64);
  for (const StepRecord& r : tr.steps) {
    ASSERT_EQ(r.ns_calls.size(), 2u);
    EXPECT_EQ(r.ns_calls[0].param, 1);
    EXPECT_EQ(r.ns_calls[1].param, 2);
    EXPECT_EQ(r.ns_calls[0].heads, 0);
  }
}

TEST(OracleTrajectory, splittingTheGlobalBatchDoesNotChangeTheTrajectory) {
  Scenario a = testing::small_mixed();  // dp 2 · gas 2 · mb 1
  Scenario b = a;
  b.engine.dp = 1;
  b.engine.gas = 1;
  b.engine.micro_batch = 4;
  Scenario c = a;
  c.engine.dp = 4;
  c.engine.gas = 1;
  const Trajectory ta = run_oracle(a, Precision::float64);
  for (const Scenario* o : {&b, &c}) {
    const Trajectory to = run_oracle(*o, Precision::float64);
    for (int t = 0; t < a.steps; ++t) {
      EXPECT_NEAR(to.steps[t].loss, ta.steps[t].loss, 1e-13);
      for (size_t p = 0; p < ta.initial.size(); ++p)
        for (size_t i = 0; i < ta.initial[p].weight.size(); ++i)
          EXPECT_NEAR(to.steps[t].params[p].weight[i], ta.steps[t].params[p].weight[i], 1e-13);
    }
  }
}

TEST(OracleTrajectory, stepFromTheFreeRunsStateReproducesTheNextStep) {
  Scenario s = testing::small_mixed();
  s.loss_scaler.type = ScalerType::dynamic;
  s.loss_scaler.scale_window = 1;
  const Trajectory tr = run_oracle(s, Precision::float64);
  TrainingState st = initial_state(s);
  EXPECT_EQ(st.params[0].weight, tr.initial[0].weight);
  st.scaler = {std::ldexp(1.0, 16), 2, 0};
  for (int t = 0; t < s.steps; ++t) {
    const StepRecord r = step_from(s, t, st, Precision::float64);
    EXPECT_EQ(r.scale, tr.steps[t].scale);
    for (size_t p = 0; p < r.params.size(); ++p) {
      EXPECT_EQ(r.params[p].weight, tr.steps[t].params[p].weight) << "step " << t << " param " << p;
      EXPECT_EQ(r.params[p].adam_v, tr.steps[t].params[p].adam_v);
    }
    st.params = r.params;
    st.scaler = r.scaler_after;
    st.good_steps = r.good_steps_after;
  }
  TrainingState bad = st;
  bad.params[1].weight.pop_back();
  EXPECT_THROW(step_from(s, 0, bad, Precision::float64), Error);
}

TEST(OracleTrajectory, float128AndBin50AgreeToOver25Digits) {
  Scenario s = testing::small_mixed();
  s.optimizer.weight_decay = 0.1;
  const Certificate c = certify(s);
  ASSERT_EQ(c.steps.size(), 3u);
  for (const CertifiedStep& cs : c.steps) {
    EXPECT_GE(cs.weights, 25.0) << "step " << cs.step;
    EXPECT_GE(cs.momentum, 25.0) << "step " << cs.step;
    EXPECT_LT(cs.weights, kMaxDigits) << "float128 and bin50 must differ somewhere";
  }
  EXPECT_GE(c.min_digits, 25.0);
}

// The llama preset at reduced width (the full one takes ~30 s: see bench numbers).
TEST(OracleTrajectory, llamaPresetCertifiesOver25Digits) {
  Scenario s = testing::llama(1);
  s.model.preset->hidden = 32;
  s.model.preset->intermediate = 48;
  s.model.preset->vocab = 32;
  s.model.params = expand_llama(*s.model.preset);
  s.optimizer.per_head = true;
  const Certificate c = certify(s);
  EXPECT_EQ(c.scenario, "llama-test");
  EXPECT_GE(c.min_digits, 25.0);
  EXPECT_LT(c.min_digits, kMaxDigits);
}

TEST(OracleTrajectory, precisionNamesRoundTrip) {
  for (Precision p : {Precision::float64, Precision::float128, Precision::bin50}) {
    Precision q;
    ASSERT_TRUE(parse_precision(precision_name(p), q));
    EXPECT_EQ(p, q);
  }
  Precision q;
  EXPECT_FALSE(parse_precision("float80", q));
}

}  // namespace
}  // namespace muoncheck::oracle
