#include "impl/comm/rank_group.hpp"

#include <latch>
#include <memory>
#include <thread>
#include <vector>

#include <gloo/rendezvous/hash_store.h>

#include "impl/comm/agreeing_communicator.hpp"
#include "impl/comm/gloo_communicator.hpp"
#include "impl/comm/gloo_mesh_pool.hpp"
#include "impl/comm/rank_failures.hpp"

namespace muoncheck::impl {

void run_ranks(int dp, std::chrono::milliseconds timeout, const std::function<void(Communicator&)>& body) {
  if (dp < 1 || timeout.count() <= 0) {
    throw Error(ErrorKind::Internal, "run_ranks: need dp >= 1 and timeout > 0, got dp " + std::to_string(dp) +
                                         ", timeout " + std::to_string(timeout.count()) + " ms");
  }
  gloo::rendezvous::HashStore store;  // in-process rendezvous, private to this run
  GlooMeshPool& pool = GlooMeshPool::process();
  // A mesh left connected by an earlier successful run of this dp, or one connected now.
  GlooMeshPool::Mesh mesh = pool.take(dp).value_or(GlooMeshPool::Mesh(static_cast<size_t>(dp)));
  const auto device = pool.device();
  RankFailures failures;
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(dp));
  std::latch all_done(dp);
  for (int r = 0; r < dp; ++r) {
    auto run_rank = [&, r] {
      std::unique_ptr<GlooCommunicator>& comm = mesh[static_cast<size_t>(r)];
      try {
        if (comm) comm->start_run(timeout, &failures.abort);
        else comm = std::make_unique<GlooCommunicator>(r, dp, store, timeout, &failures.abort, device);
        AgreeingCommunicator agreeing(*comm);   // a mismatch throws here, never in Gloo's event loop
        body(agreeing);
      } catch (...) {
        failures.record(r, std::current_exception());
        if (comm) comm->close();  // after recording: peers now fail fast, as secondaries
      }
      // Successful ranks close only once every rank is done, so a rank that finishes
      // early never breaks a peer's last collective. Each closes its own, in parallel:
      // Gloo's teardown waits on event-loop ticks (~10 ms per pair). When no rank failed,
      // the mesh stays connected for the next run of this dp (gloo_mesh_pool.hpp).
      all_done.arrive_and_wait();
      if (failures.abort.load()) comm.reset();
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
  if (!failures.abort.load()) pool.give_back(std::move(mesh));
  if (const auto* root = failures.root_cause()) rethrow_as_one_error(root->rank, root->error);
}

}  // namespace muoncheck::impl
