// The data generator follows the published hash exactly (pinned values), and
// every value is exactly representable in every storage dtype.
#include <gtest/gtest.h>

#include <cmath>

#include "core/datagen.hpp"
#include "core/dtype.hpp"

namespace data = muoncheck::data;

TEST(DataGen, SplitmixMatchesTheReferenceSequence) {
  // splitmix64 with state 0: the first outputs of the reference generator.
  EXPECT_EQ(data::splitmix64(0), 0xE220A8397B1DCDAFull);
  EXPECT_EQ(data::splitmix64(0x9E3779B97F4A7C15ull), 0x6E789E6AA1B965F4ull);
}

TEST(DataGen, HashChainsSplitmixOverTheWords) {
  uint64_t x = 0;
  for (uint64_t w : {7ull, 1ull, 2ull, 3ull, 0ull, 0ull}) x = data::splitmix64(x ^ w);
  EXPECT_EQ(data::hash6(7, 1, 2, 3, 0, 0), x);
}

TEST(DataGen, ValuesAreSixteenthsInUnitInterval) {
  for (uint64_t i = 0; i < 20000; ++i) {
    const double v = data::unit_value(data::hash6(i, 2, 0, 0, i, 0));
    ASSERT_GE(v, -1.0);
    ASSERT_LE(v, 1.0);
    ASSERT_EQ(v * 16, std::round(v * 16));
  }
}

TEST(DataGen, InitialWeightsAreExactInEveryDtype) {
  for (int64_t cols : {1, 2, 3, 64, 100, 176, 4096}) {
    for (int64_t e = 0; e < 500; ++e) {
      const double w = data::initial_weight(42, 3, e, 2, cols);
      for (auto t : {muoncheck::DType::fp32, muoncheck::DType::bf16, muoncheck::DType::fp16})
        ASSERT_EQ(muoncheck::round_to(t, w), w) << cols << " " << e;
    }
  }
  EXPECT_EQ(data::initial_weight(0, 0, 0, 1, 1), 1.0 + data::unit_value(data::hash6(0, 1, 0, 0, 0, 0)) / 4);
}

TEST(DataGen, InitScaleIsCeilHalfLog2Cols) {
  // k = ceil(log2(cols)/2): cols 64 → 3, 100 → 4 (log2 100 ≈ 6.64), 2 → 1, 1 → 0.
  const double v = data::unit_value(data::hash6(5, 1, 0, 0, 0, 0));
  EXPECT_EQ(data::initial_weight(5, 0, 0, 2, 64), std::ldexp(v, -3));
  EXPECT_EQ(data::initial_weight(5, 0, 0, 2, 100), std::ldexp(v, -4));
  EXPECT_EQ(data::initial_weight(5, 0, 0, 2, 2), std::ldexp(v, -1));
  EXPECT_EQ(data::initial_weight(5, 0, 0, 2, 1), v);
}

TEST(DataGen, DeterministicAndKeyed) {
  EXPECT_EQ(data::input_value(1, 2, 3, 4, 5), data::input_value(1, 2, 3, 4, 5));
  int differ = 0;
  for (int e = 0; e < 64; ++e) differ += data::input_value(1, 2, 3, 4, e) != data::target_value(1, 2, 3, 4, e);
  EXPECT_GT(differ, 32);
}

TEST(DataGen, SamplePlacement) {
  // j = (k·dp + r)·micro_batch + i
  EXPECT_EQ(data::global_sample(0, 0, 0, 2, 4), 0);
  EXPECT_EQ(data::global_sample(0, 1, 2, 2, 4), 6);
  EXPECT_EQ(data::global_sample(3, 1, 0, 2, 1), 7);
}
