// Variants of a scenario that must follow the same exact trajectory (docs/semantics.md §2):
// the same global batch re-split (gas, dp), the other ZeRO stages, and smaller
// buckets. Each returns nothing (with the reason) when no such variant exists.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/scenario.hpp"

namespace muoncheck {

struct Variant {
  std::optional<Scenario> scenario;
  std::string why_none;
};

Variant gas_variant(const Scenario& s);      // gas > 1 → gas 1; gas 1 → gas = micro_batch (or 2·)
Variant gas1_resplit(const Scenario& s);     // the same batch at gas 1 (for gathers-once-per-step)
Variant dp_variant(const Scenario& s);       // another dp at the same global batch
std::vector<Scenario> stage_variants(const Scenario& s);   // every other stage 0–3
Variant bucket_variant(const Scenario& s);
// A checkpoint scenario's run without its checkpoint, named NAME.uninterrupted (its trace must not
// take the file or the name of the scenario's own: checkpoint-resume-exact compares the two).
Variant uninterrupted_variant(const Scenario& s);
// The scenario itself with its global batch spread over `dp` ranks (name kept, since it
// is the same trajectory): gas kept when it divides, else micro_batch kept, else gas 1.
// None when dp does not divide the global batch or injections pin a rank.
Variant dp_resplit(const Scenario& s, int dp);   // reduce/allgather buckets a few times smaller than the largest param

}  // namespace muoncheck
