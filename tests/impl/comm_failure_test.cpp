// run_ranks never hangs and blames the right rank: a rank that throws frees peers that
// are blocked in a collective at once (not after the timeout), a rank that never joins a
// collective turns into a timeout error, and the first failure — not its echoes — is reported.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "impl/comm/rank_group.hpp"

namespace muoncheck::impl {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;

struct Outcome {
  std::string message;
  ErrorKind kind = ErrorKind::Internal;
  bool threw = false;
  milliseconds elapsed{0};
};

Outcome run_and_catch(int dp, milliseconds timeout, const std::function<void(Communicator&)>& body) {
  Outcome o;
  const auto t0 = Clock::now();
  try {
    run_ranks(dp, timeout, body);
  } catch (const Error& e) {
    o.threw = true;
    o.message = e.what();
    o.kind = e.kind();
  }
  o.elapsed = std::chrono::duration_cast<milliseconds>(Clock::now() - t0);
  return o;
}

void sum_one(Communicator& comm) {
  float x = 1.0f;
  comm.all_reduce(Buffer{&x, 1, DType::fp32});
}

TEST(RunRanks, RankThrowingWhilePeersWaitInACollectiveEndsTheRunFast) {
  const milliseconds timeout(2000);
  for (int dp : {2, 4}) {
    const int culprit = dp - 1;
    Outcome o = run_and_catch(dp, timeout, [&](Communicator& comm) {
      sum_one(comm);  // everybody is connected and has done one collective
      comm.set_context({Purpose::muon_gather, Phase::boundary, 3});
      if (comm.rank() == culprit) {
        std::this_thread::sleep_for(milliseconds(150));  // the peers are inside all_reduce by now
        throw std::runtime_error("injected fault");
      }
      for (int k = 0; k < 3; ++k) sum_one(comm);
    });
    ASSERT_TRUE(o.threw) << "dp " << dp;
    EXPECT_EQ(o.message, "rank " + std::to_string(culprit) + " threw: injected fault") << "dp " << dp;
    EXPECT_EQ(o.kind, ErrorKind::Internal);
    // Peers fail on the closed connection, not on the 2 s timeout.
    EXPECT_LT(o.elapsed, timeout / 2) << "dp " << dp << " took " << o.elapsed.count() << " ms";
  }
}

TEST(RunRanks, ErrorKindThrownByABodyIsKept) {
  Outcome o = run_and_catch(2, milliseconds(2000), [](Communicator& comm) {
    if (comm.rank() == 0) throw Error(ErrorKind::Unsupported, "stage 4 does not exist");
    sum_one(comm);
  });
  ASSERT_TRUE(o.threw);
  EXPECT_EQ(o.kind, ErrorKind::Unsupported);
  EXPECT_EQ(o.message, "rank 0 threw: stage 4 does not exist");
}

TEST(RunRanks, BadArgumentsInsideACollectiveNameRankAndCollective) {
  const milliseconds timeout(2000);
  Outcome o = run_and_catch(4, timeout, [](Communicator& comm) {
    comm.set_context({Purpose::param_gather, Phase::micro_step, 5});
    std::vector<float> in(2), out(comm.rank() == 2 ? 7 : 8);
    comm.all_gather(Buffer{in.data(), 2, DType::fp32}, Buffer{out.data(), static_cast<int64_t>(out.size()), DType::fp32});
  });
  ASSERT_TRUE(o.threw);
  EXPECT_EQ(o.kind, ErrorKind::Internal);
  EXPECT_THAT(o.message, StartsWith("rank 2: all_gather (param_gather, step 5) bad arguments: ")) << o.message;
  EXPECT_LT(o.elapsed, timeout / 2) << o.elapsed.count() << " ms";
}

TEST(RunRanks, ARankThatNeverJoinsACollectiveIsATimeoutNotAHang) {
  const milliseconds timeout(500);
  // dp 2: rank 1 finishes without joining rank 0's all-reduce.
  Outcome o = run_and_catch(2, timeout, [](Communicator& comm) {
    comm.set_context({Purpose::scalar, Phase::boundary, 7});
    float x = 1.0f;
    if (comm.rank() == 0) comm.all_reduce(Buffer{&x, 1, DType::fp32});
  });
  ASSERT_TRUE(o.threw);
  EXPECT_EQ(o.kind, ErrorKind::Infrastructure);
  EXPECT_THAT(o.message, StartsWith("rank 0: all_reduce (scalar, step 7) failed: ")) << o.message;
  EXPECT_THAT(o.message, HasSubstr("Timed out")) << o.message;
  EXPECT_GE(o.elapsed, timeout);
  EXPECT_LT(o.elapsed, 2 * timeout) << o.elapsed.count() << " ms";

  // dp 4: rank 3 is alive but busy elsewhere while the others all-reduce; some rank of
  // the three times out first and the rest are freed by it.
  o = run_and_catch(4, timeout, [&](Communicator& comm) {
    if (comm.rank() == 3) {
      std::this_thread::sleep_for(timeout + milliseconds(300));
      return;
    }
    sum_one(comm);
  });
  ASSERT_TRUE(o.threw);
  EXPECT_EQ(o.kind, ErrorKind::Infrastructure);
  EXPECT_THAT(o.message, HasSubstr(": all_reduce (grad_reduce, step 0) failed: "));
  EXPECT_THAT(o.message, HasSubstr("Timed out")) << o.message;
  EXPECT_THAT(o.message, ::testing::Not(StartsWith("rank 3")));
  EXPECT_LT(o.elapsed, 2 * timeout + milliseconds(300)) << o.elapsed.count() << " ms";
}

TEST(RunRanks, ManyRunsInOneProcessDoNotCollide) {
  for (int k = 0; k < 20; ++k) {
    std::vector<float> got(3);
    run_ranks(3, milliseconds(5000), [&](Communicator& comm) {
      float x = static_cast<float>(comm.rank() + k);
      comm.all_reduce(Buffer{&x, 1, DType::fp32});
      got[comm.rank()] = x;
    });
    for (float g : got) ASSERT_EQ(g, static_cast<float>(3 * k + 3)) << "run " << k;
  }
}

TEST(RunRanks, RejectsNonsense) {
  EXPECT_THROW(run_ranks(0, milliseconds(100), [](Communicator&) {}), Error);
  EXPECT_THROW(run_ranks(2, milliseconds(0), [](Communicator&) {}), Error);
}

// Ranks that disagree on a collective used to reach Gloo's event loop, whose size
// check throws where nobody can catch it (std::terminate, exit 134). Now every rank sees
// the other's signature first and the run ends in one typed Infrastructure error.
TEST(RunRanks, MismatchedCollectivesAreAnInfrastructureErrorNotAnAbort) {
  const milliseconds timeout(5000);
  std::vector<float> v(1000, 1.0f), o(2000);
  // Same collective, different counts (Gloo: "op.preamble.length <= op.nbytes. 1000 vs 4").
  Outcome sizes = run_and_catch(2, timeout, [&](Communicator& comm) {
    std::vector<float> x(1000, 1.0f);
    comm.all_reduce(Buffer{x.data(), comm.rank() == 0 ? 4 : 1000, DType::fp32});
  });
  ASSERT_TRUE(sizes.threw);
  EXPECT_EQ(sizes.kind, ErrorKind::Infrastructure);
  EXPECT_THAT(sizes.message, HasSubstr("mismatched across ranks: rank 0: all_reduce of 4 fp32 (collective #0); "
                                       "rank 1: all_reduce of 1000 fp32 (collective #0)"));
  EXPECT_LT(sizes.elapsed, timeout);
  // Different collectives in the same place, after one that agreed.
  Outcome kinds = run_and_catch(2, timeout, [&](Communicator& comm) {
    sum_one(comm);
    comm.set_context({Purpose::weight_sync, Phase::boundary, 2});
    std::vector<float> x(10, 1.0f), y(20);
    if (comm.rank() == 1) comm.all_gather(Buffer{x.data(), 10, DType::fp32}, Buffer{y.data(), 20, DType::fp32});
    else comm.all_reduce(Buffer{x.data(), 10, DType::bf16});
  });
  ASSERT_TRUE(kinds.threw);
  EXPECT_EQ(kinds.kind, ErrorKind::Infrastructure);
  EXPECT_THAT(kinds.message, AllOf(HasSubstr("(weight_sync, step 2) mismatched across ranks"),
                                   HasSubstr("all_reduce of 10 bf16 (collective #1)"),
                                   HasSubstr("all_gather of 10 -> 20 fp32 (collective #1)")));
}

TEST(RunRanks, AgreeingCollectivesStillComputeTheSameSums) {
  std::vector<float> got(4);
  run_ranks(4, milliseconds(5000), [&](Communicator& comm) {
    float x = static_cast<float>(comm.rank() + 1);
    comm.all_reduce(Buffer{&x, 1, DType::fp32});
    got[static_cast<size_t>(comm.rank())] = x;
  });
  for (float x : got) EXPECT_EQ(x, 10.0f);
}

}  // namespace
}  // namespace muoncheck::impl
