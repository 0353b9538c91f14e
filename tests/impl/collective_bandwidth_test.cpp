// nccl-tests' bandwidth definitions over a counting log, and the decorator's timing beside it.
#include "impl/comm/collective_bandwidth.hpp"

#include <gtest/gtest.h>

namespace muoncheck::impl {
namespace {

CollectiveRecord rec(CollectiveKind kind, int64_t bytes, Purpose purpose) {
  CollectiveRecord r;
  r.kind = kind;
  r.bytes = bytes;
  r.elements = bytes / 4;
  r.purpose = purpose;
  return r;
}

TEST(BusFactor, MatchesNcclTests) {
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveKind::all_gather, 2), 0.5);
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveKind::all_gather_v, 4), 0.75);
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveKind::reduce_scatter, 8), 0.875);
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveKind::all_reduce, 2), 1.0);
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveKind::all_reduce, 4), 1.5);
}

TEST(BandwidthOf, OnlyThePurposeAskedAndPerKindFactors) {
  const std::vector<CollectiveRecord> log = {rec(CollectiveKind::all_gather, 4'000'000'000, Purpose::muon_gather),
                                             rec(CollectiveKind::all_reduce, 1'000'000'000, Purpose::grad_reduce),
                                             rec(CollectiveKind::all_reduce, 2'000'000'000, Purpose::muon_gather)};
  const std::vector<double> seconds = {1.0, 100.0, 1.0};
  const auto bw = bandwidth_of(log, seconds, Purpose::muon_gather, 2);
  EXPECT_EQ(bw.calls, 2);
  EXPECT_EQ(bw.bytes, 6'000'000'000);
  EXPECT_DOUBLE_EQ(bw.seconds, 2.0);
  EXPECT_DOUBLE_EQ(bw.algbw_gbps, 3.0);              // 6 GB in 2 s
  EXPECT_DOUBLE_EQ(bw.busbw_gbps, (4.0 * 0.5 + 2.0 * 1.0) / 2.0);  // all_reduce at dp 2: factor 1
  const auto none = bandwidth_of(log, seconds, Purpose::weight_sync, 2);
  EXPECT_EQ(none.calls, 0);
  EXPECT_EQ(none.busbw_gbps, 0.0);
}

class NullComm final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void all_reduce(Buffer) override {}
  void reduce_scatter(Buffer, Buffer) override {}
  void all_gather(Buffer, Buffer) override {}
  void all_gather_v(Buffer, Buffer, const std::vector<int64_t>&) override {}
};

TEST(CountingCommunicator, TimesEveryRecordAndClearsBoth) {
  NullComm inner;
  CountingCommunicator counting(inner);
  float x[4] = {};
  counting.all_reduce({x, 4, DType::fp32});
  counting.all_gather({x, 1, DType::fp32}, {x, 1, DType::fp32});
  ASSERT_EQ(counting.seconds().size(), counting.log().size());
  for (double s : counting.seconds()) EXPECT_GE(s, 0.0);
  counting.clear_log();
  EXPECT_TRUE(counting.seconds().empty());
}

}  // namespace
}  // namespace muoncheck::impl
