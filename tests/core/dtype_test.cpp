// Round-to-nearest-even into fp32/bf16/fp16 matches IEEE hardware behaviour.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/dtype.hpp"

using muoncheck::DType;
using muoncheck::round_to;

TEST(DType, Fp32RoundingMatchesTheHardwareCast) {
  uint64_t x = 0x12345;
  for (int i = 0; i < 100000; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    double d;
    uint64_t bits = (x & 0x800FFFFFFFFFFFFFull) | (static_cast<uint64_t>(0x3F0 + (x >> 56) % 32) << 52);
    std::memcpy(&d, &bits, 8);
    ASSERT_EQ(round_to(DType::fp32, d), static_cast<double>(static_cast<float>(d))) << d;
  }
}

TEST(DType, TiesGoToEven) {
  // bf16 has 8 significant bits: 1 + 2^-8 lies halfway between 1 and 1 + 2^-7.
  EXPECT_EQ(round_to(DType::bf16, 1.0 + std::ldexp(1.0, -8)), 1.0);
  EXPECT_EQ(round_to(DType::bf16, 1.0 + 3 * std::ldexp(1.0, -8)), 1.0 + std::ldexp(1.0, -6));
  EXPECT_EQ(round_to(DType::fp16, 1.0 + std::ldexp(1.0, -11)), 1.0);
}

TEST(DType, OverflowAndSubnormals) {
  EXPECT_EQ(round_to(DType::fp16, 65504.0), 65504.0);
  EXPECT_TRUE(std::isinf(round_to(DType::fp16, 65520.0)));   // halfway to 2^16 rounds to even: inf
  EXPECT_EQ(round_to(DType::fp16, 65519.0), 65504.0);
  EXPECT_EQ(round_to(DType::fp16, std::ldexp(1.0, -24)), std::ldexp(1.0, -24));  // smallest subnormal
  EXPECT_EQ(round_to(DType::fp16, std::ldexp(1.0, -26)), 0.0);
  EXPECT_DOUBLE_EQ(muoncheck::max_finite(DType::bf16), 3.3895313892515355e38);
}

TEST(DType, SixteenBitPatternsRoundTrip) {
  for (DType t : {DType::bf16, DType::fp16}) {
    for (unsigned b = 0; b < 65536; ++b) {
      const float f = muoncheck::from_bits16(t, static_cast<unsigned short>(b));
      if (std::isnan(f)) continue;
      ASSERT_EQ(muoncheck::to_bits16(t, f), b) << muoncheck::dtype_name(t) << " bits " << b;
    }
  }
}

TEST(DType, UnitRoundoff) {
  EXPECT_EQ(muoncheck::unit_roundoff(DType::fp32), std::ldexp(1.0, -24));
  EXPECT_EQ(muoncheck::unit_roundoff(DType::bf16), std::ldexp(1.0, -8));
  EXPECT_EQ(muoncheck::unit_roundoff(DType::fp16), std::ldexp(1.0, -11));
}

namespace {
// The textbook definition: scale to an integer grid, round half to even, scale back.
double reference_round(DType t, double x) {
  if (!std::isfinite(x) || x == 0.0) return x;
  const int p = muoncheck::mantissa_bits(t);
  const int min_exp = t == DType::fp16 ? -14 : -126;
  int e = 0;
  std::frexp(x, &e);
  const int quantum = std::max(e - p, min_exp - p + 1);
  const double r = std::ldexp(std::nearbyint(std::ldexp(x, -quantum)), quantum);
  return std::fabs(r) > muoncheck::max_finite(t) ? std::copysign(INFINITY, x) : r;
}

// Random doubles spread over every binade a 16-bit format has, subnormals and overflow included.
double random_double(uint64_t& x, int lowest_binade, int binades) {
  x = x * 6364136223846793005ull + 1442695040888963407ull;
  const uint64_t exponent = static_cast<uint64_t>(1023 + lowest_binade + static_cast<int>((x >> 40) % binades));
  const uint64_t bits = (x & 0x800FFFFFFFFFFFFFull) | (exponent << 52);
  double d;
  std::memcpy(&d, &bits, 8);
  return d;
}
}  // namespace

TEST(DType, SixteenBitRoundingMatchesTheTextbookDefinition) {
  uint64_t x = 0xC0FFEE;
  for (DType t : {DType::bf16, DType::fp16}) {
    const int lowest = t == DType::fp16 ? -27 : -136;
    const int binades = t == DType::fp16 ? 45 : 266;
    for (int i = 0; i < 200000; ++i) {
      const double d = random_double(x, lowest, binades);
      ASSERT_EQ(round_to(t, d), reference_round(t, d)) << muoncheck::dtype_name(t) << " " << d;
    }
    // Exact halfway points in the normal range: ties to even.
    for (int k = 0; k < 1000; ++k) {
      const double lo = reference_round(t, 1.0 + k * muoncheck::unit_roundoff(t) * 2);
      const double mid = lo + muoncheck::unit_roundoff(t);
      ASSERT_EQ(round_to(t, mid), reference_round(t, mid)) << mid;
    }
  }
}

TEST(DType, RandomRoundingPicksANeighbourWithTheRightOdds) {
  using muoncheck::round_random;
  for (DType t : {DType::fp32, DType::bf16, DType::fp16}) {
    const double ulp = 2 * muoncheck::unit_roundoff(t);     // at [1, 2)
    const double x = 1.0 + 0.25 * ulp;                      // a quarter of the way up
    int up = 0;
    const int n = 4000;
    for (int i = 0; i < n; ++i) {
      const double r = round_random(t, x, (i + 0.5) / n);
      ASSERT_TRUE(r == 1.0 || r == 1.0 + ulp) << r;
      up += r > 1.0;
    }
    EXPECT_EQ(up, n / 4) << muoncheck::dtype_name(t);
    EXPECT_EQ(round_random(t, 1.0 + ulp, 0.999), 1.0 + ulp);  // exact values stay
    // Subnormals take the same odds.
    const double tiny = t == DType::fp16 ? std::ldexp(1.0, -24) : std::ldexp(1.0, -149 + (t == DType::bf16 ? 16 : 0));
    EXPECT_EQ(round_random(t, 1.5 * tiny, 0.4), 2 * tiny);
    EXPECT_EQ(round_random(t, 1.5 * tiny, 0.6), tiny);
  }
  EXPECT_TRUE(std::isinf(round_random(DType::fp16, 70000.0, 0.0)));
  EXPECT_EQ(round_random(DType::fp16, 65510.0, 0.0), 65504.0);   // below the overflow threshold: never inf
}
