#include "harness/mutation_plan.hpp"

namespace muoncheck {

const std::vector<FaultPlan>& mutation_plan() {
  static const std::vector<FaultPlan> plan = {
      {"zero3-muon-per-microbatch", {"two-layer-gas4-z3"},
       {"ns-once-per-matrix-per-step", "gas-invariant", "gathers-once-per-step"},
       "stage 3 at gas 4: Muon would run on four partial gradients per step"},
      {"tag-placeholder-shape", {"llama2-zero3-init"}, {"tagging-matches"},
       "zero_init builds every param as a flat placeholder"},
      {"per-head-stale-binding", {"per-head-mixed"}, {"tagging-matches"},
       "q (4 heads), k/v (1 head) and o (none) share one gather window"},
      {"gather-in-partition-dtype", {"fp16-overflow"}, {"comm-dtype-respected"},
       "stage 2 with fp16 communication gathers Muon gradients and momentum"},
      {"momentum-on-overflow", {"fp16-overflow"}, {"overflow-skip-clean"},
       "step 1 overflows and must leave momentum untouched"},
      {"mixed-shape-window-gather", {"per-head-mixed", "straddle-z1"},
       {"trajectory-conforms", "step-conforms", "bucket-invariant", "stage-invariant"},
       "windows holding params of different shapes"},
      {"clip-muon-update", {"four-square-clip"}, {"trajectory-conforms", "step-conforms"},
       "raw_grad clipping to 1.0 is active in the only step"},
      {"stage0-no-newton-schulz", {"stage0-basic", "per-head-window-z0"},
       {"ns-once-per-matrix-per-step", "stage-invariant", "trajectory-conforms"}, "stage 0 Muon params"},
      {"straddle-partial-reduce", {"straddle-z1"}, {"trajectory-conforms", "step-conforms", "dp-invariant"},
       "the middle matrix straddles the two partitions"},
      {"muon-on-scaled-grads", {"fp16-overflow"}, {"trajectory-conforms", "step-conforms"},
       "a dynamic loss scale of 256 multiplies every gradient"},
      {"skip-muon-large-param", {"large-param-small-bucket-z3"}, {"ns-once-per-matrix-per-step"},
       "a 4096-element Muon param beside a 1000-element reduce bucket"},
      {"drop-param-groups", {"param-groups-z2"}, {"trajectory-conforms", "step-conforms"},
       "two groups with their own lr scale and weight decay"},
      {"per-head-dropped-call-site", {"per-head-window-z1", "per-head-window-z2"}, {"tagging-matches", "stage-invariant"},
       "per-head params on the stage 1 and 2 step path"},
      {"scaler-hysteresis-kept", {"scaler-growth-hysteresis-z1"}, {"scaler-state-exact"},
       "an overflow spends one unit of hysteresis 2 and the growth at step 4 must restore it"},
  };
  return plan;
}

const FaultPlan* plan_for(const std::string& fault) {
  for (const auto& p : mutation_plan())
    if (p.fault == fault) return &p;
  return nullptr;
}

}  // namespace muoncheck
