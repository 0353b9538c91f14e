#include "properties/generators/focus.hpp"

#include "core/error.hpp"

namespace muoncheck::generators {

Focus focus_for_fault(std::string_view id) {
  Focus f;
  f.label = std::string(id);
  if (id == "zero3-muon-per-microbatch") f.min_stage = 3, f.min_gas = 2;
  else if (id == "tag-placeholder-shape") f.min_stage = 3, f.zero_init = true;
  else if (id == "per-head-stale-binding") f.min_stage = 1, f.per_head = true, f.mixed_shapes = true;
  else if (id == "gather-in-partition-dtype") f.min_stage = 1, f.low_precision_comm = true;
  else if (id == "momentum-on-overflow") f.injection = true;
  else if (id == "mixed-shape-window-gather") f.min_stage = 1, f.min_dp = 2, f.mixed_shapes = true;
  else if (id == "clip-muon-update") f.clip = true;
  else if (id == "stage0-no-newton-schulz") f.max_stage = 0;
  else if (id == "straddle-partial-reduce") f.min_stage = 1, f.min_dp = 2;
  else if (id == "muon-on-scaled-grads") f.loss_scaler = true;
  else if (id == "skip-muon-large-param") f.small_buckets = true;
  else if (id == "drop-param-groups") f.groups = true;
  else if (id == "per-head-dropped-call-site") f.min_stage = 1, f.max_stage = 2, f.per_head = true;
  else if (id == "scaler-hysteresis-kept") f.injection = true, f.loss_scaler = true, f.scaler_growth = true;
  else throw Error(ErrorKind::Usage, "no generator focus for fault '" + std::string(id) + "'");
  return f;
}

}  // namespace muoncheck::generators
