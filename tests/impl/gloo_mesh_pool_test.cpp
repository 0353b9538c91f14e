// The Gloo mesh pool (gloo_mesh_pool.hpp): a successful run leaves its connected mesh for
// the next run of that dp, a failed run leaves nothing, and a reused mesh carries nothing
// from one run into the next — every run's sums and gathers come out exact
// whatever ran on that mesh before, a timed-out run included.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include <gloo/rendezvous/hash_store.h>

#include "impl/comm/gloo_mesh_pool.hpp"
#include "impl/comm/rank_group.hpp"

namespace muoncheck::impl {
namespace {

using std::chrono::milliseconds;
using ::testing::HasSubstr;

constexpr milliseconds kTimeout{10000};

// Every rank all-reduces rank + k; each rank's result must be the exact sum.
void expect_exact_sum(int dp, int k) {
  std::vector<float> got(static_cast<size_t>(dp), -1.0f);
  run_ranks(dp, kTimeout, [&](Communicator& comm) {
    float x = static_cast<float>(comm.rank() + k);
    comm.all_reduce(Buffer{&x, 1, DType::fp32});
    got[static_cast<size_t>(comm.rank())] = x;
  });
  const float want = static_cast<float>(dp * (dp - 1) / 2 + dp * k);
  for (float g : got) ASSERT_EQ(g, want) << "dp " << dp << ", run " << k;
}

std::vector<const GlooCommunicator*> members(const GlooMeshPool::Mesh& mesh) {
  std::vector<const GlooCommunicator*> out;
  for (const auto& c : mesh) out.push_back(c.get());
  return out;
}

TEST(GlooMeshPool, ASuccessfulRunLeavesItsMeshAndTheNextRunOfThatSizeUsesIt) {
  auto& pool = GlooMeshPool::process();
  pool.clear();
  expect_exact_sum(3, 0);
  ASSERT_EQ(pool.idle(3), 1u);
  EXPECT_EQ(pool.idle(2), 0u);
  auto first = pool.take(3);
  ASSERT_TRUE(first.has_value());
  const auto connected = members(*first);
  pool.give_back(std::move(*first));
  expect_exact_sum(3, 1);
  auto second = pool.take(3);
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(members(*second), connected) << "the second run connected a new mesh instead of reusing the idle one";
  pool.give_back(std::move(*second));
  EXPECT_EQ(pool.idle(3), 1u);
}

TEST(GlooMeshPool, AFailedRunLeavesNothingAndTheNextRunConnectsAfresh) {
  auto& pool = GlooMeshPool::process();
  pool.clear();
  expect_exact_sum(3, 0);
  ASSERT_EQ(pool.idle(3), 1u);
  EXPECT_THROW(run_ranks(3, kTimeout,
                         [](Communicator& comm) {
                           float x = 1.0f;
                           comm.all_reduce(Buffer{&x, 1, DType::fp32});
                           if (comm.rank() == 1) throw std::runtime_error("injected fault");
                           comm.all_reduce(Buffer{&x, 1, DType::fp32});
                         }),
               Error);
  EXPECT_EQ(pool.idle(3), 0u) << "a mesh whose run failed was kept";
  expect_exact_sum(3, 2);
  EXPECT_EQ(pool.idle(3), 1u);
}

TEST(GlooMeshPool, AMeshWithAClosedRankIsNeverKept) {
  auto& pool = GlooMeshPool::process();
  pool.clear();
  expect_exact_sum(2, 0);
  auto mesh = pool.take(2);
  ASSERT_TRUE(mesh.has_value());
  (*mesh)[1]->close();
  EXPECT_THROW((*mesh)[1]->start_run(kTimeout, nullptr), CommError);
  pool.give_back(std::move(*mesh));
  EXPECT_EQ(pool.idle(2), 0u);
  GlooMeshPool::Mesh missing_rank(2);
  pool.give_back(std::move(missing_rank));
  EXPECT_EQ(pool.idle(2), 0u);
}

TEST(GlooMeshPool, MeshesAboveTheSizeLimitAreClosedAfterTheirRun) {
  auto& pool = GlooMeshPool::process();
  pool.clear();
  const int dp = GlooMeshPool::kMaxKeptRanks + 1;
  expect_exact_sum(dp, 0);
  EXPECT_EQ(pool.idle(dp), 0u);
}

// Runs of different sizes and collectives, interleaved, with a timed-out run among them:
// each run's inputs depend on the run number, so a byte left over from an earlier run, or
// a send/recv notification answered in the wrong run, would change a result.
TEST(GlooMeshPool, ReusedMeshesCarryNothingFromOneRunIntoTheNext) {
  auto& pool = GlooMeshPool::process();
  pool.clear();
  for (int k = 0; k < 12; ++k) {
    const int dp = 2 + k % 3;
    if (k == 6) {   // rank 0 never joins its second collective: a timeout, the mesh is dropped
      EXPECT_THROW(run_ranks(dp, milliseconds(300),
                             [](Communicator& comm) {
                               float x = 1.0f;
                               comm.all_reduce(Buffer{&x, 1, DType::fp32});
                               if (comm.rank() != 0) comm.all_reduce(Buffer{&x, 1, DType::fp32});
                             }),
                   Error);
      EXPECT_EQ(pool.idle(dp), 0u);
      continue;
    }
    std::vector<std::vector<float>> gathered(static_cast<size_t>(dp)), scattered(static_cast<size_t>(dp)),
        blocks(static_cast<size_t>(dp));
    run_ranks(dp, kTimeout, [&](Communicator& comm) {
      const int r = comm.rank();
      std::vector<int64_t> counts;
      for (int q = 0; q < dp; ++q) counts.push_back(q + 1);
      std::vector<float> mine(static_cast<size_t>(r + 1), static_cast<float>(100 * k + r));
      std::vector<float> all(static_cast<size_t>(dp * (dp + 1) / 2));
      comm.all_gather_v(Buffer{mine.data(), r + 1}, Buffer{all.data(), static_cast<int64_t>(all.size())}, counts);
      std::vector<float> in(static_cast<size_t>(2 * dp)), out(2);
      for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(k + r + static_cast<int>(i));
      comm.reduce_scatter(Buffer{in.data(), 2 * dp}, Buffer{out.data(), 2});
      std::vector<float> b(3, static_cast<float>(k * 10 + r)), every(static_cast<size_t>(3 * dp), -1.0f);
      comm.all_gather(Buffer{b.data(), 3}, Buffer{every.data(), 3 * dp});
      gathered[static_cast<size_t>(r)] = all;
      scattered[static_cast<size_t>(r)] = out;
      blocks[static_cast<size_t>(r)] = every;
    });
    for (int r = 0; r < dp; ++r) {
      size_t at = 0;
      for (int q = 0; q < dp; ++q)
        for (int i = 0; i <= q; ++i, ++at) ASSERT_EQ(gathered[r][at], static_cast<float>(100 * k + q)) << "run " << k;
      for (int j = 0; j < 2; ++j) {
        float want = 0;
        for (int q = 0; q < dp; ++q) want += static_cast<float>(k + q + 2 * r + j);
        ASSERT_EQ(scattered[r][j], want) << "run " << k << " rank " << r;
      }
      for (int q = 0; q < dp; ++q)
        for (int i = 0; i < 3; ++i) ASSERT_EQ(blocks[r][3 * q + i], static_cast<float>(k * 10 + q)) << "run " << k;
    }
    EXPECT_EQ(pool.idle(dp), 1u) << "run " << k;
  }
}

TEST(GlooMeshPool, StartRunNamesWhyABrokenCommunicatorCannotRunAgain) {
  gloo::rendezvous::HashStore store;
  GlooCommunicator alone(0, 1, store, kTimeout);
  alone.start_run(kTimeout, nullptr);   // connected and never failed: fine
  alone.close();
  try {
    alone.start_run(kTimeout, nullptr);
    FAIL() << "a closed communicator started a run";
  } catch (const CommError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Internal);
    EXPECT_THAT(e.what(), HasSubstr("cannot start another run"));
  }
}

}  // namespace
}  // namespace muoncheck::impl
