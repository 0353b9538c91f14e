#include "impl/comm/rank_group.hpp"

#include <atomic>
#include <exception>
#include <latch>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <gloo/rendezvous/hash_store.h>

#include "impl/comm/gloo_communicator.hpp"

namespace muoncheck::impl {
namespace {

// Every failure of a run, in the order recorded. The root cause is the first one that is
// not an echo of a peer going away; the abort flag is raised on the first of any kind.
struct Failures {
  struct Entry {
    int rank;
    std::exception_ptr error;
    bool echo;
  };
  std::mutex mutex;
  std::vector<Entry> entries;
  std::atomic<bool> abort{false};

  void record(int rank, std::exception_ptr e) {
    bool echo = false;
    try {
      std::rethrow_exception(e);
    } catch (const CommError& c) {
      echo = c.peer_failure();
    } catch (...) {
    }
    {
      std::lock_guard<std::mutex> lock(mutex);
      entries.push_back({rank, std::move(e), echo});
    }
    abort.store(true);  // only after recording: every abort a peer sees comes later
  }

  const Entry* root_cause() const {
    for (const auto& e : entries) {
      if (!e.echo) return &e;
    }
    return entries.empty() ? nullptr : &entries.front();
  }
};

[[noreturn]] void rethrow_as_one_error(int rank, const std::exception_ptr& error) {
  const std::string who = "rank " + std::to_string(rank) + " threw: ";
  try {
    std::rethrow_exception(error);
  } catch (const CommError&) {
    throw;  // already names its rank and collective
  } catch (const Error& e) {
    throw Error(e.kind(), who + e.what());
  } catch (const std::exception& e) {
    throw Error(ErrorKind::Internal, who + e.what());
  } catch (...) {
    throw Error(ErrorKind::Internal, who + "an exception that is not a std::exception");
  }
}

}  // namespace

void run_ranks(int dp, std::chrono::milliseconds timeout, const std::function<void(Communicator&)>& body) {
  if (dp < 1 || timeout.count() <= 0) {
    throw Error(ErrorKind::Internal, "run_ranks: need dp >= 1 and timeout > 0, got dp " + std::to_string(dp) +
                                         ", timeout " + std::to_string(timeout.count()) + " ms");
  }
  gloo::rendezvous::HashStore store;  // in-process rendezvous, private to this run
  Failures failures;
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(dp));
  std::latch all_done(dp);
  for (int r = 0; r < dp; ++r) {
    auto run_rank = [&, r] {
      std::unique_ptr<GlooCommunicator> comm;
      try {
        comm = std::make_unique<GlooCommunicator>(r, dp, store, timeout, &failures.abort);
        body(*comm);
      } catch (...) {
        failures.record(r, std::current_exception());
        if (comm) comm->close();  // after recording: peers now fail fast, as secondaries
      }
      // Successful ranks close only once every rank is done, so a rank that finishes
      // early never breaks a peer's last collective. Each closes its own, in parallel:
      // Gloo's teardown waits on event-loop ticks (~10 ms per device and per pair).
      all_done.arrive_and_wait();
      comm.reset();
    };
    try {
      threads.emplace_back(run_rank);
    } catch (...) {  // no thread for ranks r..dp-1: the started ones time out at rendezvous
      failures.record(r, std::current_exception());
      all_done.count_down(dp - r);
      break;
    }
  }
  for (auto& t : threads) t.join();
  if (const auto* root = failures.root_cause()) rethrow_as_one_error(root->rank, root->error);
}

}  // namespace muoncheck::impl
