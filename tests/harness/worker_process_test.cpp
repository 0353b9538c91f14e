// The resident worker's deadlines: a worker that answers is used request after request; one that
// hangs, crashes or never connects is killed with its whole process tree (a rank torchrun started
// in its own session included), the call fails with an Infrastructure error saying which, and the
// next request starts a fresh worker. A crashing or hanging implementation never hangs muoncheck.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "harness/external/resident_worker.hpp"
#include "harness/external/stack_dump.hpp"
#include "harness/external/worker_process.hpp"

namespace muoncheck::external {
namespace {

using namespace std::chrono_literals;

WorkerCommand fake_worker() {
  WorkerCommand c;
  c.argv = {"python3", FAKE_WORKER, "--socket", "{socket}"};
  c.env = {{"FAKE_WORKER_TAG", "tagged"}};
  c.log_path = (std::filesystem::path(::testing::TempDir()) / "fake-worker.log").string();
  c.start_timeout = 30s;
  return c;
}

std::string error_of(WorkerProcess& w, const std::string& line, std::chrono::milliseconds timeout) {
  try {
    w.request(line, timeout);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Infrastructure);
    return e.what();
  }
  return "";
}

TEST(WorkerProcess, answersRequestsInOrderFromOneWorker) {
  WorkerProcess w(fake_worker());
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(nlohmann::json::parse(w.request("{\"echo\": " + std::to_string(i) + "}", 10s))["echo"], i);
  EXPECT_EQ(w.starts(), 1);
  EXPECT_EQ(w.hello()["env"], "tagged");   // the command's environment reached the worker
}

TEST(WorkerProcess, aHangIsKilledAtTheDeadlineAndTheNextRequestRestarts) {
  WorkerProcess w(fake_worker());
  const auto start = std::chrono::steady_clock::now();
  const std::string e = error_of(w, "{\"hang\": true}", 500ms);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  EXPECT_NE(e.find("timed out"), std::string::npos) << e;
  EXPECT_FALSE(w.running());
  EXPECT_EQ(nlohmann::json::parse(w.request("{\"echo\": 7}", 10s))["echo"], 7);
  EXPECT_EQ(w.starts(), 2);
}

TEST(WorkerProcess, aHangSaysWhereItWasStuckFromTheStackDumpedToTheLog) {
  WorkerProcess w(fake_worker());
  EXPECT_EQ(error_of(w, "{\"hang\": true}", 400ms).find("stuck at"), std::string::npos) << "no dump, no place";
  const std::string e = error_of(w, "{\"hang\": true, \"dump_after_s\": 0.3}", 1500ms);
  EXPECT_NE(e.find("timed out waiting for the answer"), std::string::npos) << e;
  EXPECT_NE(e.find("; stuck at "), std::string::npos) << e;
  EXPECT_NE(e.find("fake_resident_worker.py:"), std::string::npos) << e;
  EXPECT_NE(e.find(" in hang_in_the_implementation ("), std::string::npos) << e;
}

TEST(WorkerProcess, aRankThatRaisedShortensTheWaitAndTheErrorNamesItsException) {
  WorkerCommand c = fake_worker();
  c.raised_grace = 1500ms;
  WorkerProcess w(c);
  const auto start = std::chrono::steady_clock::now();
  const std::string e = error_of(w, "{\"hang\": true, \"raised\": \"RuntimeError: boom\"}", 60s);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s) << "not the request's 60 s";
  EXPECT_NE(e.find("did not come 1500 ms after a rank raised"), std::string::npos) << e;
  EXPECT_NE(e.find("; rank 1 raised RuntimeError: boom"), std::string::npos) << e;
}

TEST(StackDump, thePlaceIsTheImplementationsInnermostFrameOnTheCaseThreadCountedOverRanks) {
  const std::string rank_stuck = R"(Timeout (0:01:27)!
Thread 0x00007f9b3e63c6c0 (most recent call first):
  File "/usr/lib/python3.11/threading.py", line 320 in wait
  File "/usr/lib/python3.11/threading.py", line 1002 in _bootstrap

Thread 0x00007f9b3f482b80 (most recent call first):
  File "/usr/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", line 2501 in all_reduce
  File "/tmp/ds-0.19.8/deepspeed/comm/torch.py", line 148 in all_reduce
  File "/tmp/ds-0.19.8/deepspeed/runtime/zero/stage_1_and_2.py", line 1083 in average_tensor
  File "/work/main/adapters/engine_loop.py", line 77 in run
  File "/work/main/adapters/worker.py", line 120 in main
)";
  const std::string other_rank = R"(muoncheck: rank 0 raised ValueError: shape mismatch
Timeout (0:01:27)!
Thread 0x00007f00 (most recent call first):
  File "/usr/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", line 5315 in all_gather
  File "/work/main/adapters/common/ranks.py", line 31 in gather_to_rank0
  File "/work/main/adapters/common/ranks.py", line 40 in settle
  File "/work/main/adapters/engine_loop.py", line 80 in run
  File "<frozen runpy>", line 88 in _run_code
)";
  const std::string two_ranks_and_one = "unrelated log line\n" + rank_stuck + "more output\n" + rank_stuck + other_rank;
  EXPECT_EQ(stuck_at(two_ranks_and_one),
            "rank 0 raised ValueError: shape mismatch; "
            "2 ranks stuck at ds-0.19.8/deepspeed/comm/torch.py:148 in all_reduce"
            " < deepspeed/runtime/zero/stage_1_and_2.py:1083 in average_tensor"
            " (innermost: torch/distributed/distributed_c10d.py:2501 in all_reduce); "
            "stuck at adapters/common/ranks.py:31 in gather_to_rank0 < adapters/engine_loop.py:80 in run"
            " (innermost: torch/distributed/distributed_c10d.py:5315 in all_gather)")
      << "the exception first; a place in the implementation's code, one frame per file; else in the adapters'";
  EXPECT_EQ(stuck_at("no dump here\n  File \"x.py\", line 1 in f\n"), "");
  EXPECT_EQ(ranks_that_raised(two_ranks_and_one), std::set<int>{0});
  EXPECT_EQ(ranks_that_raised("muoncheck: rank 1 raised A: x\nmuoncheck: rank 0 raised A: x\nrank 2 raised\n"),
            (std::set<int>{0, 1}));
}

TEST(WorkerProcess, aCrashSaysHowTheWorkerEnded) {
  WorkerProcess w(fake_worker());
  const std::string e = error_of(w, "{\"crash\": 3}", 10s);
  EXPECT_NE(e.find("closed the connection"), std::string::npos) << e;
  EXPECT_NE(e.find("exited with status 3"), std::string::npos) << e;
  EXPECT_EQ(nlohmann::json::parse(w.request("{\"echo\": 1}", 10s))["echo"], 1);
}

TEST(WorkerProcess, aWorkerThatNeverConnectsFailsItsStart) {
  WorkerCommand c = fake_worker();
  c.argv = {"sleep", "30"};
  c.start_timeout = 300ms;
  WorkerProcess w(c);
  EXPECT_NE(error_of(w, "{}", 1s).find("did not connect"), std::string::npos);
  c.argv = {"false"};
  WorkerProcess gone(c);
  EXPECT_NE(error_of(gone, "{}", 1s).find("ended before connecting"), std::string::npos);
}

TEST(WorkerProcess, killsTheChildrenAWorkerStartedInTheirOwnSession) {
  WorkerProcess w(fake_worker());
  const int child = nlohmann::json::parse(w.request("{\"spawn\": true}", 10s))["child"];
  ASSERT_EQ(::kill(child, 0), 0);
  error_of(w, "{\"hang\": true}", 300ms);
  bool gone = false;   // killed; reaped by init a moment later
  for (int i = 0; i < 50 && !gone; ++i) {
    gone = ::kill(child, 0) != 0;
    std::string state;
    if (!gone) {
      std::ifstream stat("/proc/" + std::to_string(child) + "/stat");
      std::getline(stat, state);
      gone = state.find(") Z") != std::string::npos;
    }
    if (!gone) std::this_thread::sleep_for(100ms);
  }
  EXPECT_TRUE(gone) << "pid " << child << " survived its worker";
}

// A worker whose first start exits before connecting (a port, a cache it raced another start for)
// is started again: the sweep goes on, and the retry counts as a start.
TEST(WorkerProcess, aWorkerThatEndsBeforeConnectingIsStartedAgain) {
  WorkerCommand c = fake_worker();
  const auto counter = std::filesystem::path(::testing::TempDir()) / "fails-once.count";
  std::filesystem::remove(counter);
  c.env.emplace_back("FAKE_WORKER_FAIL_STARTS", counter.string() + ":1");
  WorkerProcess w(c);
  EXPECT_EQ(nlohmann::json::parse(w.request("{\"echo\": 5}", 10s))["echo"], 5);
  EXPECT_EQ(w.starts(), 2);
}

// Three starts at most; the error then carries the last lines of the worker's log (the last
// start's), since the log file is often gone from the machine that ran it.
TEST(WorkerProcess, aWorkerThatNeverStartsEndsWithItsLogsLastLines) {
  WorkerCommand c = fake_worker();
  const auto dir = std::filesystem::path(::testing::TempDir());
  std::filesystem::remove(dir / "fails-always.count");
  c.env.emplace_back("FAKE_WORKER_FAIL_STARTS", (dir / "fails-always.count").string() + ":99");
  c.log_path = (dir / "fails-always.log").string();
  std::filesystem::remove(c.log_path);
  WorkerProcess w(c);
  const std::string e = error_of(w, "{}", 1s);
  EXPECT_EQ(w.starts(), 3);
  EXPECT_NE(e.find("ended before connecting (exited with status 1"), std::string::npos) << e;
  EXPECT_NE(e.find("3 starts tried"), std::string::npos) << e;
  EXPECT_NE(e.find("| fake start failure 3 line 20"), std::string::npos) << e;
  EXPECT_NE(e.find("| fake start failure 3 line 6\n"), std::string::npos) << e;
  EXPECT_EQ(e.find("failure 3 line 5\n"), std::string::npos) << "more than 15 lines: " << e;
  EXPECT_EQ(e.find("failure 2 line"), std::string::npos) << e;
}

// Workers started side by side from threads (`--workers N`), each binding its rendezvous port
// as torch's store does at dp 1: every start succeeds and no two bound the same port.
TEST(WorkerProcess, workersStartedSideBySideBindPortsOfTheirOwn) {
  constexpr int kWorkers = 6;
  ResidentWorkerOptions o;
  o.implementation = "fake";
  std::vector<std::unique_ptr<WorkerProcess>> workers;
  for (int k = 0; k < kWorkers; ++k) {
    WorkerCommand c = fake_worker();
    c.env = worker_environment(o);
    c.env.emplace_back("FAKE_WORKER_BIND", "1");
    c.log_path = (std::filesystem::path(::testing::TempDir()) / ("side-by-side-" + std::to_string(k) + ".log")).string();
    workers.push_back(std::make_unique<WorkerProcess>(c));
  }
  std::vector<std::string> errors(kWorkers);
  std::vector<std::thread> starting;
  for (int k = 0; k < kWorkers; ++k)
    starting.emplace_back([&, k] {
      try {
        workers[k]->ensure_started();
      } catch (const Error& e) {
        errors[k] = e.what();
      }
    });
  for (auto& t : starting) t.join();
  std::set<int> ports;
  for (int k = 0; k < kWorkers; ++k) {
    ASSERT_EQ(errors[k], "");
    EXPECT_EQ(workers[k]->starts(), 1) << "worker " << k << " needed a second start";
    ports.insert(workers[k]->hello()["port"].get<int>());
  }
  EXPECT_EQ(ports.size(), static_cast<size_t>(kWorkers));
  EXPECT_EQ(ports.count(0), 0u);
}

}  // namespace
}  // namespace muoncheck::external
