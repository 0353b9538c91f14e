// Exact checks of the ZeRO plumbing: partition ranges (padding, straddling, empty
// partitions), bucket and window bounds, and the fast low-precision rounding.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "core/dtype.hpp"
#include "impl/math/lowp.hpp"
#include "impl/zero/buckets.hpp"
#include "impl/zero/flat_layout.hpp"

namespace muoncheck::impl {
namespace {

TEST(FlatLayout, PadsToAMultipleOfDpAndPartitionsByElementRanges) {
  const FlatLayout l({10, 3, 8}, 4);                 // N = 21 → padded 24, P = 6
  EXPECT_EQ(l.total(), 21);
  EXPECT_EQ(l.padded(), 24);
  EXPECT_EQ(l.partition_size(), 6);
  EXPECT_EQ(l.partition(3), (Range{18, 24}));
  EXPECT_EQ(l.owned(3), (Range{18, 21}));           // the padding is nobody's data
  int64_t covered = 0;
  for (int r = 0; r < 4; ++r) covered += l.owned(r).size();
  EXPECT_EQ(covered, 21);
}

TEST(FlatLayout, AMatrixMayStraddleAndASmallParamMayOwnNothing) {
  const FlatLayout l({10, 3, 8}, 4);
  EXPECT_EQ(l.ranks_holding(l.param(0)), (std::vector<int>{0, 1}));   // [0,10) straddles 0|1
  EXPECT_EQ(l.ranks_holding(l.param(1)), (std::vector<int>{1, 2}));   // [10,13)
  EXPECT_TRUE(intersect(l.param(1), l.owned(0)).empty());
  EXPECT_TRUE(intersect(l.param(1), l.owned(3)).empty());
}

TEST(FlatLayout, MoreRanksThanElementsLeavesEmptyPartitions) {
  const FlatLayout l({3}, 8);
  EXPECT_EQ(l.padded(), 8);
  EXPECT_EQ(l.owned(2).size(), 1);
  EXPECT_TRUE(l.owned(5).empty());
}

TEST(Buckets, ParamBucketsCoverInOrderAndRespectTheBound) {
  const FlatLayout l({10, 3, 8, 25, 1}, 2);
  for (int64_t bound : {1, 4, 11, 13, 30, 1000}) {
    const auto b = param_buckets(l, bound);
    int64_t next = 0;
    for (const Range& r : b) {
      EXPECT_EQ(r.begin, next);
      EXPECT_LE(r.size(), bound);
      EXPECT_GT(r.size(), 0);
      next = r.end;
    }
    EXPECT_EQ(next, l.total()) << "bound " << bound;
  }
}

TEST(Buckets, AlignedChunksKeepTheReduceScatterInputWithinTheBound) {
  const FlatLayout l({10, 3, 8}, 4);
  for (int64_t bound : {4, 7, 8, 13, 24, 100}) {
    const auto c = aligned_chunks(l, bound);
    int64_t next = 0;
    for (const Range& r : c) {
      EXPECT_LE(4 * r.size(), bound);
      EXPECT_EQ(r.begin, next);
      next = r.end;
    }
    EXPECT_EQ(next, l.partition_size());
  }
  EXPECT_TRUE(aligned_chunks(l, 3).empty());        // below dp: the caller all-reduces
}

TEST(Buckets, GatherWindowsSplitOnlyParamsLargerThanTheBound) {
  const FlatLayout l({64, 16, 16, 100}, 2);
  const auto w = gather_windows(l, {0, 1, 2, 3}, 80);
  for (const auto& win : w) {
    int64_t n = 0;
    for (const auto& sg : win) n += sg.flat.size();
    EXPECT_LE(n, 80);
  }
  ASSERT_EQ(w.size(), 4u);                          // {64,16}, {16}, {80 of 100}, {20 of 100}
  EXPECT_EQ(w[0].size(), 2u);
  EXPECT_EQ(w[2][0].flat.size(), 80);
  EXPECT_EQ(w[3][0].flat.size(), 20);
}

TEST(LowPrecision, FastRoundingMatchesCoreRoundTo) {
  uint32_t x = 0x12345678u;
  for (int i = 0; i < 200000; ++i) {
    x = x * 1664525u + 1013904223u;
    float f;
    std::memcpy(&f, &x, 4);
    if (std::isnan(f)) continue;
    for (DType t : {DType::bf16, DType::fp16}) {
      const float want = round_to(t, f);
      const float got = round_dtype(t, f);
      ASSERT_EQ(std::memcmp(&want, &got, 4), 0) << dtype_name(t) << " " << f;
    }
  }
  EXPECT_TRUE(std::isnan(round_dtype(DType::bf16, std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(std::isinf(round_dtype(DType::fp16, 70000.0f)));
}

TEST(LowPrecision, WireBuffersRoundTripRoundedValues) {
  for (DType t : {DType::fp32, DType::bf16, DType::fp16}) {
    const float v[4] = {1.0f, -0.3f, 1e-3f, std::numeric_limits<float>::infinity()};
    WireBuffer w(t, 4);
    w.store(0, v, 4);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(w.get(i), round_dtype(t, v[i])) << dtype_name(t);
  }
}

}  // namespace
}  // namespace muoncheck::impl
