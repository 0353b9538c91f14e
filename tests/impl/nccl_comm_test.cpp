// The NCCL Communicator on every visible GPU (one rank per GPU, one process): each
// collective in fp32, bf16 and fp16 with inputs whose sums are exact in any order
// (small dyadic integers), so a wrong element is plumbing, not rounding; the
// multi-process bootstrap through a hex ncclUniqueId at dp 1; dp > #GPUs is Unsupported.
// Label gpu: skipped without a device.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "comm_test_buffers.hpp"
#include "core/error.hpp"
#include "gpu_skip.hpp"
#include "impl/comm/nccl_communicator.hpp"

namespace muoncheck::impl {
namespace {

using std::chrono::milliseconds;
constexpr milliseconds kTimeout{20000};

int world() { return std::min(cuda_device_count(), 8); }

test::HostBuffer filled(DType t, const std::vector<float>& v) {
  test::HostBuffer b(t, static_cast<int64_t>(v.size()));
  for (size_t i = 0; i < v.size(); ++i) b.set(static_cast<int64_t>(i), v[i]);
  return b;
}

std::vector<float> read(const test::HostBuffer& b) {
  std::vector<float> v(static_cast<size_t>(b.size()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(b.get(static_cast<int64_t>(i)));
  return v;
}

class NcclComm : public ::testing::TestWithParam<DType> {
 protected:
  void SetUp() override { MUONCHECK_REQUIRE_GPU(); }
};

TEST_P(NcclComm, AllReduceReduceScatterAllGatherAndBroadcastAreExact) {
  const DType t = GetParam();
  const int dp = world();
  run_ranks_nccl(dp, kTimeout, [&](Communicator& c, int device) {
    EXPECT_EQ(device, c.rank());
    const int r = c.rank();
    const int64_t chunk = 1000;
    // all_reduce: element i of rank r holds (i mod 7) + r; the sum is exact.
    std::vector<float> v(static_cast<size_t>(chunk * dp));
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 7 + r);
    auto buf = filled(t, v);
    c.all_reduce(buf.view());
    const auto sum = read(buf);
    for (size_t i = 0; i < v.size(); ++i)
      ASSERT_EQ(sum[i], static_cast<float>(dp * (i % 7) + dp * (dp - 1) / 2)) << "all_reduce element " << i;
    // reduce_scatter: rank r gets the summed chunk r.
    auto in = filled(t, v), out = filled(t, std::vector<float>(static_cast<size_t>(chunk), -1.0f));
    c.reduce_scatter(in.view(), out.view());
    const auto mine = read(out);
    for (int64_t i = 0; i < chunk; ++i) ASSERT_EQ(mine[i], sum[static_cast<size_t>(r * chunk + i)]);
    // all_gather: rank q's chunk lands at q·chunk.
    auto gathered = filled(t, std::vector<float>(static_cast<size_t>(chunk * dp), -1.0f));
    c.all_gather(out.view(), gathered.view());
    EXPECT_EQ(read(gathered), sum);
    // all_gather_v with a rank that sends nothing.
    std::vector<int64_t> counts(static_cast<size_t>(dp));
    for (int q = 0; q < dp; ++q) counts[q] = q == 0 && dp > 1 ? 0 : 3 + q;
    auto piece = filled(t, std::vector<float>(static_cast<size_t>(counts[r]), static_cast<float>(r + 1)));
    const int64_t total = std::accumulate(counts.begin(), counts.end(), int64_t{0});
    auto all = filled(t, std::vector<float>(static_cast<size_t>(total), -1.0f));
    c.all_gather_v(piece.view(), all.view(), counts);
    const auto got = read(all);
    int64_t off = 0;
    for (int q = 0; q < dp; ++q)
      for (int64_t i = 0; i < counts[q]; ++i) ASSERT_EQ(got[static_cast<size_t>(off++)], static_cast<float>(q + 1));
  });
}

INSTANTIATE_TEST_SUITE_P(Dtypes, NcclComm, ::testing::Values(DType::fp32, DType::bf16, DType::fp16),
                         [](const auto& info) { return std::string(dtype_name(info.param)); });

TEST(NcclBootstrap, ConnectsOneProcessPerRankThroughAHexUniqueId) {
  MUONCHECK_REQUIRE_GPU();
  const std::string id = nccl_unique_id_hex();
  EXPECT_EQ(id.size(), 256u);
  auto comm = nccl_connect(id, 0, 1, 0, kTimeout);
  std::vector<float> v = {1.5f, -2.0f, 3.25f};
  comm->all_reduce(Buffer{v.data(), 3, DType::fp32});
  EXPECT_EQ(v, (std::vector<float>{1.5f, -2.0f, 3.25f}));
  EXPECT_THROW(nccl_connect("zz", 0, 1, 0, kTimeout), Error);
}

TEST(NcclRanks, MoreRanksThanGpusIsUnsupportedNotARun) {
  MUONCHECK_REQUIRE_GPU();
  try {
    run_ranks_nccl(cuda_device_count() + 1, kTimeout, [](Communicator&, int) {});
    FAIL() << "expected Unsupported";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    EXPECT_NE(std::string(e.what()).find("one rank per GPU"), std::string::npos);
  }
}

TEST(NcclRanks, ABodyThatThrowsEndsTheRunWithItsOwnError) {
  MUONCHECK_REQUIRE_GPU();
  const int dp = world();
  try {
    run_ranks_nccl(dp, kTimeout, [&](Communicator& c, int) {
      if (c.rank() == dp - 1) throw Error(ErrorKind::Unsupported, "planted");
      std::vector<float> v(4, 1.0f);
      c.all_reduce(Buffer{v.data(), 4, DType::fp32});      // peers of the failed rank abort, not hang
    });
    FAIL() << "expected the planted error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Unsupported);
    EXPECT_NE(std::string(e.what()).find("planted"), std::string::npos);
  }
}

}  // namespace
}  // namespace muoncheck::impl
