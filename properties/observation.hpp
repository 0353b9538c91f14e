// One observation of a run: everything an implementation showed about it, the one input of
// every invariant. Our engine shows all of it (observation_of); a trace reader shows what the
// trace carries (harness/traces/trace_observation.hpp) and names the rest in `missing`: an
// invariant that needs a missing part is UNSUPPORTED naming it, never judged on a blank.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/trajectory.hpp"
#include "impl/comm/counting_communicator.hpp"
#include "impl/run_impl.hpp"

namespace muoncheck {

// The parts of an observation an implementation may leave out. Weights, the skip decision,
// the loss scale, the tags and the NS calls are always shown.
enum class ObservedPart {
  momentum,            // Muon momentum after every step
  adam_moments,        // AdamW m and v after every step
  gradients,           // the step's reduced, unscaled gradient
  scaler_counters,     // hysteresis, good-step streak, optimizer step count
  collectives,         // every rank's collective log (kind, dtype, bytes, purpose, phase, step)
  replicated_digests,  // every rank's digest of its replicated state after every step
  resumed_state,       // a checkpoint run's whole state right after its load (checkpoint-resume-exact)
};
std::string part_name(ObservedPart p);   // "momentum", "scaler_counters", ...
const std::vector<ObservedPart>& all_parts();

struct Observation {
  Trajectory trajectory;   // tags, initial state, per step: state, NS calls (rank, heads), scaler
  std::vector<std::vector<ParamTag>> tags_by_rank;
  std::vector<std::vector<impl::CollectiveRecord>> collectives_by_rank;
  std::vector<std::vector<uint64_t>> replicated_digest_by_rank;   // [rank][step]
  std::optional<TrainingState> resumed_state;   // checkpoint scenarios: the state right after the load
  std::vector<ObservedPart> missing;   // what it did not show

  bool shows(ObservedPart p) const;
};

// Our engine's run: everything shown.
Observation observation_of(const impl::ImplResult& r);
Observation observation_of(impl::ImplResult&& r);

}  // namespace muoncheck
