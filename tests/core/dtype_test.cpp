// Round-to-nearest-even into fp32/bf16/fp16 matches IEEE hardware behaviour.
#include <gtest/gtest.h>

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
