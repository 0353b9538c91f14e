#include "properties/variants.hpp"

#include <algorithm>

namespace muoncheck {

namespace {

Scenario renamed(Scenario s, const std::string& suffix) {
  s.name += "." + suffix;   // still a valid scenario name: `muoncheck variants` writes it as a file
  s.source = "<variant of " + s.source + ">";
  return s;
}

// Injections name a rank and micro-step, which a re-split moves: no faithful variant.
bool pinned_by_injections(const Scenario& s) { return !s.overflow.empty(); }

}  // namespace

Variant gas_variant(const Scenario& s) {
  if (pinned_by_injections(s)) return {std::nullopt, "overflow injections are tied to a rank and micro-step"};
  Scenario v = without_checkpoint(s);   // a variant is an uninterrupted run
  auto& e = v.engine;
  if (e.gas > 1) {
    e.micro_batch *= e.gas;
    e.gas = 1;
  } else if (e.micro_batch > 1) {
    e.gas = e.micro_batch;
    e.micro_batch = 1;
  } else {
    return {std::nullopt, "gas 1 × micro_batch 1: the batch cannot be re-split across micro-steps"};
  }
  return {renamed(v, "gas" + std::to_string(e.gas)), ""};
}

Variant gas1_resplit(const Scenario& s) {
  if (s.engine.gas == 1) return {std::nullopt, "already gas 1"};
  if (pinned_by_injections(s)) return {std::nullopt, "overflow injections are tied to a micro-step"};
  Scenario v = without_checkpoint(s);   // a variant is an uninterrupted run
  v.engine.micro_batch *= v.engine.gas;
  v.engine.gas = 1;
  return {renamed(v, "gas1"), ""};
}

Variant dp_variant(const Scenario& s) {
  if (pinned_by_injections(s)) return {std::nullopt, "overflow injections are tied to a rank"};
  Scenario v = without_checkpoint(s);   // a variant is an uninterrupted run
  auto& e = v.engine;
  if (e.dp > 1) {            // fold the ranks into the micro-batch
    e.micro_batch *= e.dp;
    e.dp = 1;
  } else if (e.micro_batch % 2 == 0) {
    e.micro_batch /= 2;
    e.dp = 2;
  } else if (e.gas % 2 == 0) {
    e.gas /= 2;
    e.dp = 2;
  } else if (e.micro_batch > 1) {
    e.dp = e.micro_batch;
    e.micro_batch = 1;
  } else if (e.gas > 1) {
    e.dp = e.gas;
    e.gas = 1;
  } else {
    return {std::nullopt, "a global batch of 1 cannot be spread over ranks"};
  }
  return {renamed(v, "dp" + std::to_string(e.dp)), ""};
}

std::vector<Scenario> stage_variants(const Scenario& s) {
  std::vector<Scenario> out;
  for (int stage = 0; stage <= 3; ++stage) {
    if (stage == s.engine.stage) continue;
    Scenario v = without_checkpoint(s);   // a variant is an uninterrupted run
    v.engine.stage = stage;
    v.engine.zero_init = false;   // placeholders exist only at stage 3
    out.push_back(renamed(v, "z" + std::to_string(stage)));
  }
  return out;
}

Variant bucket_variant(const Scenario& s) {
  int64_t largest = 1;
  for (const auto& p : s.model.params) largest = std::max(largest, element_count(p.shape));
  // Even: DeepSpeed takes only bucket sizes divisible by its alignment factor (2), and the same
  // variant must run on every implementation `muoncheck variants` writes it for.
  const int64_t small = std::max<int64_t>(2, (largest / 3 + 2) / 2 * 2);
  if (s.engine.reduce_bucket_size <= small && s.engine.allgather_bucket_size <= small)
    return {std::nullopt, "buckets are already smaller than a third of the largest param"};
  Scenario v = without_checkpoint(s);   // a variant is an uninterrupted run
  v.engine.reduce_bucket_size = std::min(s.engine.reduce_bucket_size, small);
  v.engine.allgather_bucket_size = std::min(s.engine.allgather_bucket_size, small);
  return {renamed(v, "bucket" + std::to_string(small)), ""};
}

Variant uninterrupted_variant(const Scenario& s) {
  if (!s.checkpoint) return {std::nullopt, "no checkpoint in the scenario"};
  return {renamed(without_checkpoint(s), "uninterrupted"), ""};
}

Variant dp_resplit(const Scenario& s, int dp) {
  if (dp == s.engine.dp) return {s, ""};
  if (pinned_by_injections(s)) return {std::nullopt, "overflow injections are tied to a rank and micro-step"};
  const int global = s.engine.global_batch();
  if (dp < 1 || global % dp != 0)
    return {std::nullopt, "global batch " + std::to_string(global) + " is not divisible by dp " + std::to_string(dp)};
  if (s.checkpoint && s.checkpoint->resume.dp)
    return {std::nullopt, "the checkpoint names its own resume dp " + std::to_string(*s.checkpoint->resume.dp)};
  Scenario v = s;   // the scenario itself, its checkpoint included (resumed at the new dp)
  auto& e = v.engine;
  const int per_rank = global / dp;
  e.dp = dp;
  if (per_rank % e.gas == 0) {
    e.micro_batch = per_rank / e.gas;
  } else if (per_rank % e.micro_batch == 0) {
    e.gas = per_rank / e.micro_batch;
  } else {
    e.gas = 1;
    e.micro_batch = per_rank;
  }
  v.source = s.source + " (re-split to dp " + std::to_string(dp) + ")";
  return {v, ""};
}

}  // namespace muoncheck
