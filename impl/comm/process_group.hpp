// Ranks as processes: the one process-wide group of `world` processes (started by torchrun,
// Slurm or mpirun, one per rank) that the engine's runs are spread over. The processes meet
// through Gloo's FileStore in a directory every one of them sees (one node: any local
// directory; several nodes: a shared filesystem). Over the store they
//   - connect a control mesh once, whose only traffic is the final "end" message: each
//     worker (rank >= 1) keeps a receive from rank 0 posted and rank 0 one from every
//     worker, so a process that dies (its sockets close) is known to its peers at once, at
//     any time, also between runs;
//   - exchange jobs (rank 0 posts job n: a scenario and how to run it) and their results
//     (each rank of the job posts what it observed, or its error), under keys of job n;
//   - connect each job's own Gloo mesh of the job's dp ranks (ranks 0..dp-1 of the group)
//     under the job's key prefix, like run_ranks' fresh rendezvous per run.
// The group never hangs: every wait polls the store with a deadline and stops as soon as
// a peer is known to be lost, and a worker exits by itself 5 s after rank 0's end message
// (with its exit code) or the timeout plus 5 s after losing rank 0 (exit 3), whatever its
// main thread is doing.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

namespace gloo {
class Context;
namespace rendezvous {
class Store;
}
namespace transport {
class Device;
}
}  // namespace gloo

namespace muoncheck::impl {

// Where this process sits: what the launcher's environment says (harness/launch).
struct ProcessPlacement {
  int rank = 0;
  int world = 1;
  int local_rank = 0;            // the GPU this process uses under NCCL
  std::string store_dir;         // the FileStore's directory, seen by every process
  std::string host = "127.0.0.1";   // the address peers reach this process's Gloo pairs at
};

class ProcessGroup {
 public:
  // Connects the control mesh (every process of the world within `timeout`, else a
  // CommError op "connect"). A group lives as long as its process: its watchers wait on the
  // control mesh until the end, so it is made with `new` and never destroyed.
  ProcessGroup(ProcessPlacement where, std::chrono::milliseconds timeout);
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  // The group the engine's runs of this process go to; null: ranks are threads.
  static ProcessGroup* installed();
  // Connects this process's group and makes it the installed one (once, before any run).
  static ProcessGroup& install(ProcessPlacement where, std::chrono::milliseconds timeout);

  const ProcessPlacement& where() const { return where_; }
  int rank() const { return where_.rank; }
  int world() const { return where_.world; }
  gloo::rendezvous::Store& store() { return *store_; }
  std::shared_ptr<gloo::transport::Device> device() { return device_; }

  // The lowest rank known to be lost (its control connection broke), if any.
  std::optional<int> lost() const;
  // Raised when a peer is lost or the group ends: a job's collectives read it (abort).
  const std::atomic<bool>& stopping() const { return stopping_; }
  // Workers: rank 0's "end" message arrived; its value is the exit code rank 0 chose.
  std::optional<int> ended() const;

  void set(const std::string& key, const std::string& value);
  // The value at `key` once it exists; nothing when `deadline` passes, or (unless
  // `despite_loss`) once a peer is lost or the group ended.
  std::optional<std::string> get(const std::string& key, std::chrono::steady_clock::time_point deadline,
                                 bool despite_loss = false);
  bool has(const std::string& key);

  // Rank 0: the number of the next job (each group counts its own from 0, as its workers do).
  int64_t next_job() { return next_job_++; }
  // The loss that broke this group: every later job rethrows it (guarded by the job lock).
  std::exception_ptr& broken() { return broken_; }

  // Rank 0: tells every worker the run is over with `exit_code`, then closes the control
  // mesh (idempotent). Workers exit on it.
  void end(int exit_code);

 private:
  ~ProcessGroup() = default;
  void watch(int peer);   // a thread per watched peer: a loss or rank 0's end message

  ProcessPlacement where_;
  std::chrono::milliseconds timeout_;
  std::unique_ptr<gloo::rendezvous::Store> store_;
  std::shared_ptr<gloo::transport::Device> device_;
  std::shared_ptr<gloo::Context> control_;
  mutable std::mutex mutex_;
  std::set<int> lost_;
  std::optional<int> ended_;
  std::atomic<bool> stopping_{false};
  int64_t next_job_ = 0;
  std::exception_ptr broken_;
};

}  // namespace muoncheck::impl
