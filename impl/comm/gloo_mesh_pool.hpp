// Connected Gloo meshes kept between the runs of one process, one world size each, so a
// command that runs many scenarios (check, sweep, mutants) connects a given dp once
// instead of once per run: the rendezvous, the dp·(dp−1)/2 loopback connections and their
// teardown (Gloo waits an event-loop tick, up to 10 ms, for every pair it closes) are paid
// once. Every mesh connects through the pool's one TCP device, so the process has one Gloo
// event-loop thread instead of one per rank.
//
// That loop thread runs under SCHED_BATCH (inherited from the thread that creates the
// device; no privilege needed, and if the call fails it is only slower): the scheduler does
// not let it preempt the running thread when it wakes up. Gloo's loop polls level-triggered
// and skips a pair whose lock a rank thread holds (try_lock), so when the woken loop thread
// preempted a rank thread in the middle of a send, it spun on epoll_wait until that rank ran
// again — 18 M epoll_wait calls for 50 k messages in 4 sweep cases on 2 busy cores, 3 M
// without it. Scheduling never changes what a collective computes.
//
// Only a mesh whose run succeeded on every rank comes back (run_ranks decides): every
// collective of that run completed on every rank, so each pair has read all it was sent
// and answered every send/recv notification, and the next run starts from connected, idle
// pairs. A mesh of a failed run is closed, exactly as without the pool.
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "impl/comm/gloo_communicator.hpp"

namespace muoncheck::impl {

class GlooMeshPool {
 public:
  using Mesh = std::vector<std::unique_ptr<GlooCommunicator>>;   // rank r's communicator at [r]
  static constexpr size_t kKeptPerSize = 2;   // two runs of one dp may overlap
  // Larger meshes are closed after their run: dp·(dp−1) sockets each, kept open they would
  // eat into the process's file descriptors (64 ranks: 4032).
  static constexpr int kMaxKeptRanks = 16;

  // The process's pool. Never destroyed: at exit the sockets simply close, instead of
  // a loop tick per pair.
  static GlooMeshPool& process();

  // The device every mesh of this pool connects through.
  std::shared_ptr<gloo::transport::Device> device();
  // A connected mesh of `dp` ranks left by an earlier run, or nothing.
  std::optional<Mesh> take(int dp);
  // Keeps a mesh whose run succeeded on every rank (at most kKeptPerSize per size; a
  // surplus one is closed). A mesh with a broken or missing rank, or with more than
  // kMaxKeptRanks ranks, is closed, never kept.
  void give_back(Mesh mesh);
  size_t idle(int dp) const;   // meshes of `dp` ranks waiting for a run
  void clear();                // closes every idle mesh

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<gloo::transport::Device> device_;
  std::map<int, std::vector<Mesh>> idle_;
};

}  // namespace muoncheck::impl
