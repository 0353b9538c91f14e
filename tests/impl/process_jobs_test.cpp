// Ranks as processes fail the way ranks as threads do (comm_failure_test.cpp): each case
// forks a world of 4 processes that meet in a fresh FileStore; rank 0 runs one job in
// which every rank all-reduces but one misbehaves. The run ends on every rank within the
// timeout (plus the 3 s grace for a silent rank), rank 0 gets one typed error naming the
// rank and the collective, and no process is left running.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include "impl/comm/process_jobs.hpp"

namespace muoncheck::impl {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

constexpr int kWorld = 4;
constexpr milliseconds kTimeout(2000);

enum class Misstep { none, throws, dies, hangs, disagrees };

// Every rank: two all-reduces; rank `culprit` misbehaves after the first.
void body(Communicator& comm, int culprit, Misstep m) {
  float x = 1.0f;
  comm.all_reduce(Buffer{&x, 1, DType::fp32});
  comm.set_context({Purpose::scalar, Phase::boundary, 3});
  if (comm.rank() == culprit) {
    switch (m) {
      case Misstep::none: break;
      case Misstep::throws: throw std::runtime_error("injected fault");
      case Misstep::dies: _exit(9);
      case Misstep::hangs: std::this_thread::sleep_for(std::chrono::hours(1)); break;
      case Misstep::disagrees: {
        std::vector<float> y(kWorld);
        comm.all_gather(Buffer{&x, 1, DType::fp32}, Buffer{y.data(), kWorld, DType::fp32});
        return;
      }
    }
  }
  comm.all_reduce(Buffer{&x, 1, DType::fp32});
  if (x != static_cast<float>(kWorld * kWorld)) throw std::runtime_error("wrong sum " + std::to_string(x));
}

struct Outcome {
  bool threw = false;
  ErrorKind kind = ErrorKind::Internal;
  std::string message;
  double seconds = 0;      // rank 0's run_job
  bool all_exited = true;  // every process ended within the timeout + 15 s
  std::vector<int> replies_ok;
};

void rank_process(int rank, const std::string& dir, int culprit, Misstep m) {
  ProcessPlacement where{rank, kWorld, rank, dir + "/store", "127.0.0.1"};
  ProcessGroup& g = ProcessGroup::install(where, kTimeout);   // a fresh group in each forked process
  const JobShape shape{kWorld, kTimeout, false, "test job"};
  auto run = [culprit, m](Communicator& c) {
    body(c, culprit, m);
    return std::string("reply of rank ") + std::to_string(c.rank());
  };
  if (rank != 0) {
    serve_jobs(g, [&](const std::string&) { return JobPlan{shape, run}; });
    _exit(0);
  }
  std::ofstream out(dir + "/outcome");
  const auto t0 = Clock::now();
  try {
    const auto replies = run_job(g, "job", shape, run);
    out << "ok\n" << std::chrono::duration<double>(Clock::now() - t0).count() << "\n" << replies.back() << "\n";
  } catch (const Error& e) {
    out << static_cast<int>(e.kind()) << "\n" << std::chrono::duration<double>(Clock::now() - t0).count() << "\n" << e.what() << "\n";
  }
  out.close();
  g.end(0);
  _exit(0);
}

Outcome run_world(int culprit, Misstep m) {
  const std::string dir = std::filesystem::temp_directory_path() / ("process_jobs_test." + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::vector<pid_t> pids;
  for (int r = 0; r < kWorld; ++r) {
    const pid_t pid = fork();
    if (pid == 0) {
      try {
        rank_process(r, dir, culprit, m);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "rank %d: %s\n", r, e.what());
      }
      _exit(70);
    }
    pids.push_back(pid);
  }
  Outcome o;
  const auto deadline = Clock::now() + kTimeout + std::chrono::seconds(15);
  size_t left = pids.size();
  while (left > 0 && Clock::now() < deadline) {
    for (auto& pid : pids)
      if (pid > 0 && waitpid(pid, nullptr, WNOHANG) == pid) pid = -1, --left;
    std::this_thread::sleep_for(milliseconds(20));
  }
  for (auto pid : pids)
    if (pid > 0) {
      o.all_exited = false;
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  std::ifstream in(dir + "/outcome");
  std::string first, seconds;
  std::getline(in, first);
  std::getline(in, seconds);
  std::getline(in, o.message);
  o.seconds = seconds.empty() ? 1e9 : std::stod(seconds);
  o.threw = first != "ok";
  if (o.threw && !first.empty()) o.kind = static_cast<ErrorKind>(std::stoi(first));
  std::filesystem::remove_all(dir);
  return o;
}

TEST(ProcessJobs, ACorrectJobGivesEveryReply) {
  const Outcome o = run_world(-1, Misstep::none);
  EXPECT_FALSE(o.threw) << o.message;
  EXPECT_EQ(o.message, "reply of rank 3");
  EXPECT_TRUE(o.all_exited);
}

TEST(ProcessJobs, ARankThatThrowsIsNamedAsAcrossThreads) {
  const Outcome o = run_world(2, Misstep::throws);
  ASSERT_TRUE(o.threw);
  EXPECT_EQ(o.kind, ErrorKind::Internal);
  EXPECT_EQ(o.message, "rank 2 threw: injected fault");   // run_ranks' words
  EXPECT_LT(o.seconds, kTimeout.count() / 1000.0) << "peers are freed at once, not by the timeout";
  EXPECT_TRUE(o.all_exited);
}

TEST(ProcessJobs, ARankThatDisagreesOnACollectiveIsAnInfrastructureError) {
  const Outcome o = run_world(1, Misstep::disagrees);
  ASSERT_TRUE(o.threw);
  EXPECT_EQ(o.kind, ErrorKind::Infrastructure);
  EXPECT_THAT(o.message, AllOf(HasSubstr("(scalar, step 3) mismatched across ranks"),
                               HasSubstr("rank 1: all_gather of 1 -> 4 fp32 (collective #1)"),
                               HasSubstr("all_reduce of 1 fp32 (collective #1)")));
  EXPECT_LT(o.seconds, kTimeout.count() / 1000.0);
  EXPECT_TRUE(o.all_exited);
}

TEST(ProcessJobs, ARankWhoseProcessDiesIsNamedWithTheCollective) {
  const Outcome o = run_world(3, Misstep::dies);
  ASSERT_TRUE(o.threw);
  EXPECT_EQ(o.kind, ErrorKind::Infrastructure);
  EXPECT_THAT(o.message, StartsWith("rank 3: all_reduce failed: process lost or not answering")) << o.message;
  EXPECT_THAT(o.message, HasSubstr("all_reduce (scalar, step 3)")) << o.message;
  EXPECT_LT(o.seconds, kTimeout.count() / 1000.0 + 5);
  EXPECT_TRUE(o.all_exited);
}

TEST(ProcessJobs, AHangingRankIsATimeoutAndItsProcessEnds) {
  const Outcome o = run_world(3, Misstep::hangs);
  ASSERT_TRUE(o.threw);
  EXPECT_EQ(o.kind, ErrorKind::Infrastructure);
  EXPECT_THAT(o.message, HasSubstr(": all_reduce (scalar, step 3) failed: ")) << o.message;
  EXPECT_THAT(o.message, HasSubstr("Timed out")) << o.message;
  EXPECT_THAT(o.message, Not(StartsWith("rank 3"))) << "as across threads: the rank that timed out";
  EXPECT_LT(o.seconds, kTimeout.count() / 1000.0 + 5);
  EXPECT_TRUE(o.all_exited) << "the hanging process outlived the run";
}

}  // namespace
}  // namespace muoncheck::impl
