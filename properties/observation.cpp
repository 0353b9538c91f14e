#include "properties/observation.hpp"

#include <algorithm>
#include <utility>

namespace muoncheck {

std::string part_name(ObservedPart p) {
  switch (p) {
    case ObservedPart::momentum: return "momentum";
    case ObservedPart::adam_moments: return "adam_moments";
    case ObservedPart::gradients: return "gradients";
    case ObservedPart::scaler_counters: return "scaler_counters";
    case ObservedPart::collectives: return "collectives";
    case ObservedPart::replicated_digests: return "replicated_digests";
    case ObservedPart::resumed_state: return "resumed_state";
  }
  return "?";
}

const std::vector<ObservedPart>& all_parts() {
  static const std::vector<ObservedPart> parts = {ObservedPart::momentum,        ObservedPart::adam_moments,
                                                  ObservedPart::gradients,       ObservedPart::scaler_counters,
                                                  ObservedPart::collectives,     ObservedPart::replicated_digests,
                                                  ObservedPart::resumed_state};
  return parts;
}

bool Observation::shows(ObservedPart p) const { return std::find(missing.begin(), missing.end(), p) == missing.end(); }

Observation observation_of(const impl::ImplResult& r) { return observation_of(impl::ImplResult(r)); }

Observation observation_of(impl::ImplResult&& r) {
  Observation o;
  o.trajectory = std::move(r.trajectory);
  o.tags_by_rank = std::move(r.tags_by_rank);
  o.collectives_by_rank = std::move(r.collectives_by_rank);
  o.replicated_digest_by_rank = std::move(r.replicated_digest_by_rank);
  o.resumed_state = std::move(r.resumed_state);
  return o;
}

}  // namespace muoncheck
