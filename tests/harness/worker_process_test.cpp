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
#include <thread>

#include "core/error.hpp"
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

}  // namespace
}  // namespace muoncheck::external
