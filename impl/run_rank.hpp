// The parts of run_impl that do not depend on where ranks live: the legs a scenario runs as
// (a checkpoint scenario: saved after step k, torn down, resumed), one rank's run of a leg on
// its communicator (what it observed), the ImplResult assembled from every rank's
// observation, and the legs joined into one. Threads (run_impl) and processes
// (run_processes) share all of them, so a run gives the same ImplResult either way; they
// differ only in where a saved checkpoint lies (memory, or one file per rank).
#pragma once
#include <functional>
#include <vector>

#include "impl/comm/communicator.hpp"
#include "impl/faults/faults.hpp"
#include "impl/rank_observation.hpp"
#include "impl/run_impl.hpp"
#include "impl/zero/checkpoint.hpp"

namespace muoncheck::impl {

// One engine run: `scenario` over steps [first, end) on its engine's dp ranks. The saving leg
// of a checkpoint scenario keeps every rank's shard after its last step; the resumed leg
// starts from those shards.
struct Leg {
  Scenario scenario;
  int first = 0, end = 0;
  bool saves = false, resumes = false;
};

// The whole run, or a checkpoint scenario's saving leg (the run without its checkpoint,
// steps 0..k) and resumed leg (steps k+1.. on the resume engine).
std::vector<Leg> legs_of(const Scenario& s);

// Runs the legs of s in order through `run_leg` and joins them: the saving leg's trajectory,
// logs and digests followed by the resumed leg's, and the state the resumed engine started from.
ImplResult run_legs(const Scenario& s, const std::function<ImplResult(const Leg&)>& run_leg);

// One rank's run of a leg: from the scenario's initial state, or restored from `from`; when
// `save` is set, the rank's shard lands there after the last step.
RankObservation observe_rank(const Leg& leg, const FaultSet& faults, const ImplOptions& opts, Communicator& comm,
                             int device, const EngineCheckpoint* from, RankShard* save);

// `ranks[r]` is rank r's observation of `leg`; rank 0's carries the trajectory (and, for a
// resumed leg, the state it started from).
ImplResult assemble(const Leg& leg, std::vector<RankObservation> ranks, const ImplOptions& opts, double wall_seconds);

}  // namespace muoncheck::impl
