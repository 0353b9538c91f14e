// Every collective of the Gloo backend at dp 1, 2, 4 in fp32, bf16 and fp16, checked
// exactly: inputs are dyadic (see comm_test_buffers.hpp) so any summation order is exact
// and a wrong element is a plumbing bug, never rounding.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <tuple>
#include <vector>

#include "impl/comm/rank_group.hpp"
#include "tests/impl/comm_test_buffers.hpp"

namespace muoncheck::impl {
namespace {

using test::exact_value;
using test::HostBuffer;
constexpr auto kTimeout = std::chrono::milliseconds(20000);

class Collectives : public ::testing::TestWithParam<std::tuple<int, DType>> {
 protected:
  int dp() const { return std::get<0>(GetParam()); }
  DType dtype() const { return std::get<1>(GetParam()); }
};

TEST_P(Collectives, AllReduceSumsExactly) {
  for (int64_t n : {int64_t{1}, int64_t{1001}, int64_t{300001}}) {
    std::vector<std::vector<double>> got(dp());
    run_ranks(dp(), kTimeout, [&](Communicator& comm) {
      HostBuffer buf(dtype(), n);
      for (int64_t i = 0; i < n; ++i) buf.set(i, exact_value(comm.rank(), i));
      comm.all_reduce(buf.view());
      for (int64_t i = 0; i < n; ++i) got[comm.rank()].push_back(buf.get(i));
    });
    for (int r = 0; r < dp(); ++r) {
      for (int64_t i = 0; i < n; ++i) {
        double want = 0;
        for (int q = 0; q < dp(); ++q) want += exact_value(q, i);
        ASSERT_EQ(got[r][i], want) << "n=" << n << " rank " << r << " element " << i;
      }
    }
  }
}

TEST_P(Collectives, ReduceScatterGivesEachRankItsChunkSum) {
  // in_place: out is rank r's own chunk of in (out = in + r·chunk), as NCCL allows.
  for (bool in_place : {false, true}) {
    for (int64_t chunk : {int64_t{1}, int64_t{37}, int64_t{5000}}) {
      std::vector<std::vector<double>> got(dp());
      std::vector<char> input_intact(dp(), 0);  // not vector<bool>: ranks write concurrently
      run_ranks(dp(), kTimeout, [&](Communicator& comm) {
        const int64_t n = chunk * comm.size();
        HostBuffer in(dtype(), n), out(dtype(), chunk);
        for (int64_t i = 0; i < n; ++i) in.set(i, exact_value(comm.rank(), i));
        Buffer dst = in_place ? in.view(comm.rank() * chunk, chunk) : out.view();
        comm.reduce_scatter(in.view(), dst);
        bool intact = true;
        for (int64_t i = 0; i < n; ++i) {
          const bool own_chunk = i / chunk == comm.rank();
          if (!(in_place && own_chunk)) intact = intact && in.get(i) == exact_value(comm.rank(), i);
        }
        input_intact[comm.rank()] = intact;
        for (int64_t i = 0; i < chunk; ++i) got[comm.rank()].push_back(in_place ? in.get(comm.rank() * chunk + i) : out.get(i));
      });
      for (int r = 0; r < dp(); ++r) {
        EXPECT_TRUE(input_intact[r]) << "rank " << r << " input was modified outside its output";
        for (int64_t i = 0; i < chunk; ++i) {
          double want = 0;
          for (int q = 0; q < dp(); ++q) want += exact_value(q, r * chunk + i);
          ASSERT_EQ(got[r][i], want) << "in_place=" << in_place << " chunk=" << chunk << " rank " << r << " element " << i;
        }
      }
    }
  }
}

TEST_P(Collectives, AllGatherConcatenatesInRankOrder) {
  for (bool in_place : {false, true}) {
    const int64_t n = 37;
    std::vector<std::vector<double>> got(dp());
    run_ranks(dp(), kTimeout, [&](Communicator& comm) {
      HostBuffer in(dtype(), n), out(dtype(), n * comm.size());
      Buffer src = in_place ? out.view(comm.rank() * n, n) : in.view();
      HostBuffer& src_owner = in_place ? out : in;
      for (int64_t i = 0; i < n; ++i) src_owner.set((in_place ? comm.rank() * n : 0) + i, exact_value(comm.rank(), i));
      comm.all_gather(src, out.view());
      for (int64_t i = 0; i < out.size(); ++i) got[comm.rank()].push_back(out.get(i));
    });
    for (int r = 0; r < dp(); ++r) {
      for (int64_t i = 0; i < n * dp(); ++i) {
        ASSERT_EQ(got[r][i], exact_value(static_cast<int>(i / n), i % n))
            << "in_place=" << in_place << " rank " << r << " element " << i;
      }
    }
  }
}

TEST_P(Collectives, AllGatherVHandlesARankContributingNothing) {
  // Rank 1 (or rank 0 at dp 1) contributes 0 elements; the others 3 + 2r.
  std::vector<int64_t> counts(dp());
  for (int r = 0; r < dp(); ++r) counts[r] = (r == 1 || dp() == 1) ? 0 : 3 + 2 * r;
  if (dp() == 1) counts[0] = 5;
  for (bool one_empty : {true, false}) {
    std::vector<int64_t> c = counts;
    if (!one_empty && dp() > 1) c[1] = 4;
    int64_t total = 0;
    for (int64_t x : c) total += x;
    std::vector<std::vector<double>> got(dp());
    run_ranks(dp(), kTimeout, [&](Communicator& comm) {
      const int64_t mine = c[comm.rank()];
      HostBuffer in(dtype(), mine), out(dtype(), total);
      for (int64_t i = 0; i < mine; ++i) in.set(i, exact_value(comm.rank(), i));
      comm.all_gather_v(mine == 0 ? Buffer{nullptr, 0, dtype()} : in.view(), out.view(), c);
      for (int64_t i = 0; i < total; ++i) got[comm.rank()].push_back(out.get(i));
    });
    for (int r = 0; r < dp(); ++r) {
      int64_t at = 0;
      for (int q = 0; q < dp(); ++q) {
        for (int64_t i = 0; i < c[q]; ++i, ++at) {
          ASSERT_EQ(got[r][at], exact_value(q, i)) << "rank " << r << " piece of rank " << q << " element " << i;
        }
      }
    }
  }
}

TEST_P(Collectives, MixedSequenceInOneRun) {
  // One run, many collectives back to back in different dtypes: nothing crosses over.
  std::vector<double> sums(dp());
  run_ranks(dp(), kTimeout, [&](Communicator& comm) {
    for (int k = 0; k < 5; ++k) {
      HostBuffer a(dtype(), 3);
      HostBuffer b(k % 2 ? DType::fp32 : DType::bf16, 2);
      for (int i = 0; i < 3; ++i) a.set(i, 1.0 / 16);
      for (int i = 0; i < 2; ++i) b.set(i, 0.5);
      comm.all_reduce(a.view());
      comm.all_reduce(b.view());
      sums[comm.rank()] += a.get(2) + b.get(1);
    }
  });
  for (int r = 0; r < dp(); ++r) EXPECT_EQ(sums[r], 5 * dp() * (1.0 / 16 + 0.5));
}

std::string param_name(const ::testing::TestParamInfo<std::tuple<int, DType>>& info) {
  return "dp" + std::to_string(std::get<0>(info.param)) + "_" + std::string(dtype_name(std::get<1>(info.param)));
}

INSTANTIATE_TEST_SUITE_P(Gloo, Collectives,
                         ::testing::Combine(::testing::Values(1, 2, 4),
                                            ::testing::Values(DType::fp32, DType::bf16, DType::fp16)),
                         param_name);

// A 16-bit sum rounds to its dtype (ties to even), it is not carried in fp32.
TEST(Gloo16Bit, SumRoundsToTheDtypeOnEveryAdd) {
  struct Case { DType t; double a, b, want; };
  for (const Case& c : {Case{DType::bf16, 1.0, 1.0 / 256, 1.0},            // tie at 1 + ulp/2 → even
                        Case{DType::bf16, 1.0, 3.0 / 256, 1.0 + 2.0 / 128},  // tie at 1 + 1.5 ulp → even
                        Case{DType::fp16, 1.0, 1.0 / 2048, 1.0},
                        Case{DType::fp16, 2048.0, 1.0, 2048.0}}) {
    std::vector<double> got(2);
    run_ranks(2, kTimeout, [&](Communicator& comm) {
      HostBuffer buf(c.t, 1);
      buf.set(0, comm.rank() == 0 ? c.a : c.b);
      comm.all_reduce(buf.view());
      got[comm.rank()] = buf.get(0);
    });
    EXPECT_EQ(got[0], c.want) << dtype_name(c.t) << " " << c.a << " + " << c.b;
    EXPECT_EQ(got[1], c.want) << dtype_name(c.t) << " " << c.a << " + " << c.b;
  }
}

}  // namespace
}  // namespace muoncheck::impl
