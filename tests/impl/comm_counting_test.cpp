// The counting decorator: one record per collective with kind, dtype, elements, bytes
// (the whole logical tensor, see counting_communicator.hpp), purpose, phase and step, and
// the per-step summary. Checked over real Gloo ranks and over a fake inner communicator.
#include <gtest/gtest.h>

#include <chrono>
#include <vector>

#include "impl/comm/counting_communicator.hpp"
#include "impl/comm/rank_group.hpp"
#include "tests/impl/comm_test_buffers.hpp"

namespace muoncheck::impl {
namespace {

using test::HostBuffer;

// The script both tests run: two steps, micro-step and boundary traffic, all kinds.
void script(Communicator& comm) {
  const int dp = comm.size();
  for (int step = 0; step < 2; ++step) {
    comm.set_context({Purpose::grad_reduce, Phase::micro_step, step});
    HostBuffer grads(DType::bf16, 10);
    comm.all_reduce(grads.view());
    HostBuffer rs_in(DType::fp32, 4 * dp), rs_out(DType::fp32, 4);
    comm.reduce_scatter(rs_in.view(), rs_out.view());

    comm.set_context({Purpose::muon_gather, Phase::boundary, step});
    HostBuffer ag_in(DType::fp16, 3), ag_out(DType::fp16, 3 * dp);
    comm.all_gather(ag_in.view(), ag_out.view());
    std::vector<int64_t> counts(dp);
    for (int r = 0; r < dp; ++r) counts[r] = r;  // rank 0 contributes nothing
    int64_t total = dp * (dp - 1) / 2;
    HostBuffer v_in(DType::bf16, comm.rank()), v_out(DType::bf16, total);
    comm.all_gather_v(v_in.view(), v_out.view(), counts);

    comm.set_context({Purpose::scalar, Phase::boundary, step});
    HostBuffer flag(DType::fp32, 1);
    comm.all_reduce(flag.view());
  }
}

std::vector<CollectiveRecord> expected_log(int rank, int dp) {
  std::vector<CollectiveRecord> want;
  for (int step = 0; step < 2; ++step) {
    const int64_t v = dp * (dp - 1) / 2;
    want.push_back({rank, CollectiveKind::all_reduce, DType::bf16, 10, 20, Purpose::grad_reduce, Phase::micro_step, step});
    want.push_back({rank, CollectiveKind::reduce_scatter, DType::fp32, 4 * dp, 16 * dp, Purpose::grad_reduce, Phase::micro_step, step});
    want.push_back({rank, CollectiveKind::all_gather, DType::fp16, 3 * dp, 6 * dp, Purpose::muon_gather, Phase::boundary, step});
    want.push_back({rank, CollectiveKind::all_gather_v, DType::bf16, v, 2 * v, Purpose::muon_gather, Phase::boundary, step});
    want.push_back({rank, CollectiveKind::all_reduce, DType::fp32, 1, 4, Purpose::scalar, Phase::boundary, step});
  }
  return want;
}

TEST(CountingCommunicator, RecordsEveryCollectiveOverGloo) {
  for (int dp : {1, 2, 4}) {
    std::vector<std::vector<CollectiveRecord>> logs(dp);
    run_ranks(dp, std::chrono::milliseconds(20000), [&](Communicator& gloo) {
      CountingCommunicator counting(gloo);
      script(counting);
      logs[gloo.rank()] = counting.log();
    });
    for (int r = 0; r < dp; ++r) {
      const auto want = expected_log(r, dp);
      ASSERT_EQ(logs[r].size(), want.size()) << "dp " << dp << " rank " << r;
      for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ(logs[r][i], want[i]) << "dp " << dp << " record " << i << ": got " << to_string(logs[r][i])
                                       << ", want " << to_string(want[i]);
      }
    }
  }
}

TEST(CountingCommunicator, SummarizesBytesPerStepByKindPurposeAndPhase) {
  const int dp = 4;
  const auto summary = summarize_by_step(expected_log(0, dp));
  ASSERT_EQ(summary.size(), 2u);
  for (const auto& [step, s] : summary) {
    EXPECT_EQ(s.by_kind.at(CollectiveKind::reduce_scatter), (CommTotals{1, 64})) << "step " << step;
    EXPECT_EQ(s.by_kind.at(CollectiveKind::all_reduce), (CommTotals{2, 20 + 4}));
    EXPECT_EQ(s.by_purpose.at(Purpose::grad_reduce), (CommTotals{2, 20 + 64}));
    EXPECT_EQ(s.by_purpose.at(Purpose::muon_gather), (CommTotals{2, 24 + 12}));
    EXPECT_EQ(s.by_purpose.at(Purpose::scalar), (CommTotals{1, 4}));
    EXPECT_EQ(s.by_phase.at(Phase::micro_step), (CommTotals{2, 84}));
    EXPECT_EQ(s.by_phase.at(Phase::boundary), (CommTotals{3, 40}));
    EXPECT_EQ(s.by_purpose.count(Purpose::weight_sync), 0u);
  }
}

// Records what reaches it; lets the decorator be checked without any transport.
class FakeInner final : public Communicator {
 public:
  int rank() const override { return 3; }
  int size() const override { return 4; }
  void all_reduce(Buffer) override { throw Error(ErrorKind::Infrastructure, "down"); }
  void reduce_scatter(Buffer, Buffer) override { ++calls; }
  void all_gather(Buffer, Buffer) override { ++calls; }
  void all_gather_v(Buffer, Buffer, const std::vector<int64_t>&) override { ++calls; }
  void set_context(const CommContext& ctx) override { seen = ctx; }
  int calls = 0;
  CommContext seen;
};

TEST(CountingCommunicator, ForwardsContextAndLogsOnlyWhatRan) {
  FakeInner inner;
  CountingCommunicator counting(inner);
  EXPECT_EQ(counting.rank(), 3);
  EXPECT_EQ(counting.size(), 4);
  counting.set_context({Purpose::weight_sync, Phase::boundary, 9});
  EXPECT_EQ(inner.seen.purpose, Purpose::weight_sync);
  EXPECT_EQ(inner.seen.step, 9);
  float x[8] = {};
  counting.all_gather(Buffer{x, 2, DType::fp32}, Buffer{x, 8, DType::fp32});
  EXPECT_THROW(counting.all_reduce(Buffer{x, 1, DType::fp32}), Error);
  ASSERT_EQ(counting.log().size(), 1u);
  EXPECT_EQ(to_string(counting.log()[0]),
            "all_gather(dtype=fp32,elements=8,bytes=32,purpose=weight_sync,phase=boundary,step=9,rank=3)");
  counting.clear_log();
  EXPECT_TRUE(counting.log().empty());
}

}  // namespace
}  // namespace muoncheck::impl
