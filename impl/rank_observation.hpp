// What one rank observed in a run: the pieces run_impl assembles an ImplResult from (its
// tags, per-step digests, collective log with the wall time of each record, the NS calls
// its CountingCompute ran; rank 0 also its trajectory and step times). With ranks as
// processes a worker sends rank 0 exactly this, as JSON (integers and 17-digit doubles:
// rank 0 assembles the same ImplResult as from threads). Rank 0's trajectory never travels.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/trajectory.hpp"
#include "impl/comm/counting_communicator.hpp"
#include "impl/zero/rank_engine.hpp"

namespace muoncheck::impl {

struct RankObservation {
  RankResult engine;                              // trajectory: rank 0's only
  std::vector<CollectiveRecord> collectives;
  std::vector<double> collective_seconds;
  std::vector<NsCall> ns_calls;
  int64_t flat_elements = 0;
  int64_t partition_elements = 0;
};

// Without the trajectory (rank 0 keeps its own).
nlohmann::json observation_to_json(const RankObservation& o);
// BadInput naming `source` and the field on a malformed message.
RankObservation observation_from_json(const nlohmann::json& j, const std::string& source);

}  // namespace muoncheck::impl
