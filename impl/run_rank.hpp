// The two halves of run_impl that do not depend on where ranks live: one rank's whole run
// on its communicator (what it observed), and the ImplResult assembled from every rank's
// observation. Threads (run_impl) and processes (run_processes) share both, so a run gives
// the same ImplResult either way.
#pragma once
#include <vector>

#include "impl/comm/communicator.hpp"
#include "impl/faults/faults.hpp"
#include "impl/rank_observation.hpp"
#include "impl/run_impl.hpp"

namespace muoncheck::impl {

RankObservation observe_rank(const Scenario& s, const FaultSet& faults, const ImplOptions& opts, Communicator& comm,
                             int device);

// `ranks[r]` is rank r's observation; rank 0's carries the trajectory.
ImplResult assemble(std::vector<RankObservation> ranks, const ImplOptions& opts, double wall_seconds);

}  // namespace muoncheck::impl
