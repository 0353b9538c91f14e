// What a run of rank threads records when ranks fail, shared by the Gloo and NCCL rank
// runners: every failure in order, an abort flag raised on the first, and the rule that
// picks the root cause (the first failure that is not an echo of a peer going away).
#pragma once
#include <atomic>
#include <exception>
#include <mutex>
#include <string>
#include <vector>

#include "impl/comm/communicator.hpp"

namespace muoncheck::impl {

struct RankFailures {
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

// Rethrows a rank's failure as one muoncheck::Error (see run_ranks in rank_group.hpp).
[[noreturn]] inline void rethrow_as_one_error(int rank, const std::exception_ptr& error) {
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

}  // namespace muoncheck::impl
