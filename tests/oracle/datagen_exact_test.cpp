// The data the oracle reads: deterministic, and every number a multiple of 1/16
// times a power of two, exact in bf16 and fp16 — so gradients of power-of-two
// sized fp32 scenarios are exact in every precision (the plumbing tier relies on it).
#include <gtest/gtest.h>

#include <cmath>

#include "core/datagen.hpp"
#include "core/dtype.hpp"
#include "oracle/oracle.hpp"
#include "scenarios.hpp"

namespace muoncheck::oracle {
namespace {

// v·2^-k with v ∈ {−16..16}/16: 16·2^k·x is an integer of magnitude ≤ 16.
bool dyadic_sixteenth(double x, int k) {
  const double n = std::ldexp(x, 4 + k);
  return n == std::nearbyint(n) && std::fabs(n) <= 16.0;
}

TEST(OracleData, initialStateIsDeterministic) {
  const Scenario s = testing::small_mixed();
  const TrainingState a = initial_state(s), b = initial_state(s);
  ASSERT_EQ(a.params.size(), 4u);
  for (size_t p = 0; p < a.params.size(); ++p) EXPECT_EQ(a.params[p].weight, b.params[p].weight) << p;
  Scenario other = s;
  other.seed = 43;
  EXPECT_NE(initial_state(other).params[1].weight, a.params[1].weight) << "the seed must change the weights";
}

TEST(OracleData, initialWeightsAreSixteenthsTimesPowersOfTwo) {
  const Scenario s = testing::small_mixed();
  const TrainingState st = initial_state(s);
  // cols 8 → k = 2, cols 16 → k = 2, cols 24 → k = 3 (4^3 = 64 ≥ 24 > 16).
  const int k[] = {2, 2, 3};
  for (int p = 0; p < 3; ++p)
    for (double w : st.params[p].weight) {
      EXPECT_TRUE(dyadic_sixteenth(w, k[p])) << "param " << p << " value " << w;
      EXPECT_EQ(round_to(DType::bf16, w), w);
      EXPECT_EQ(round_to(DType::fp16, w), w);
    }
  for (double w : st.params[3].weight) {  // vectors start at 1 + v/4
    EXPECT_TRUE(dyadic_sixteenth(w - 1.0, 2)) << w;
    EXPECT_EQ(round_to(DType::bf16, w), w);
    EXPECT_EQ(round_to(DType::fp16, w), w);
  }
}

TEST(OracleData, inputsAndTargetsAreExactSixteenths) {
  int distinct_nonzero = 0;
  for (int e = 0; e < 200; ++e) {
    const double x = data::input_value(7, 1, 2, 3, e), y = data::target_value(7, 1, 2, 3, e);
    EXPECT_EQ(x, data::input_value(7, 1, 2, 3, e));
    for (double v : {x, y}) {
      EXPECT_TRUE(dyadic_sixteenth(v, 0)) << v;
      EXPECT_EQ(round_to(DType::bf16, v), v);
      EXPECT_EQ(round_to(DType::fp16, v), v);
    }
    distinct_nonzero += x != 0.0 && x != y;
  }
  EXPECT_GT(distinct_nonzero, 150) << "inputs should not be degenerate";
}

// Power-of-two sizes and batch: every gradient is a dyadic rational with few
// bits, so double and float128 agree bit for bit on G (the exact plumbing tier).
TEST(OracleData, powerOfTwoGradientsAreExactInDouble) {
  Scenario s = testing::small_mixed();
  s.model.params = {testing::param("a.weight", {16, 32}), testing::param("b.weight", {32})};
  s.steps = 1;
  const Trajectory d = run_oracle(s, Precision::float64), q = run_oracle(s, Precision::float128);
  for (size_t p = 0; p < 2; ++p) {
    ASSERT_FALSE(d.steps[0].params[p].grad.empty());
    EXPECT_EQ(d.steps[0].params[p].grad, q.steps[0].params[p].grad) << p;
  }
}

}  // namespace
}  // namespace muoncheck::oracle
