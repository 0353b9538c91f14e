#include "impl/faults/fault_catalogue.hpp"

namespace muoncheck::impl {

const std::vector<FaultInfo>& fault_catalogue() {
  static const std::vector<FaultInfo> catalogue = {
      {Fault::zero3_muon_per_microbatch, "zero3-muon-per-microbatch", "DeepSpeed #8443",
       "stage 3 runs Muon (momentum, NS, update) on every micro-step's partial gradient",
       {"impl/zero/engine_micro.cpp", "impl/zero/engine_boundary.cpp"},
       {"two-layer-gas4-z3"}, "stage 3 at gas 4: Muon would run on four partial gradients per step",
       {"ns-once-per-matrix-per-step", "gas-invariant", "gathers-once-per-step"},
       "stage>=3 gas>=2", true},
      {Fault::tag_placeholder_shape, "tag-placeholder-shape", "#8438",
       "tagging reads the local (placeholder) tensor shape instead of the layer shape",
       {"impl/tagging/tagging.cpp"},
       {"llama2-zero3-init"}, "zero_init builds every param as a flat placeholder",
       {"tagging-matches"},
       "stage>=3 zero-init", true},
      {Fault::per_head_stale_binding, "per-head-stale-binding", "#8600 review",
       "a gather window's head count is read from its first param for every param",
       {"impl/zero/muon_step.cpp"},
       {"per-head-mixed"}, "q (4 heads), k/v (1 head) and o (none) share one gather window",
       {"tagging-matches"},
       "stage>=1 per-head mixed-shapes", true},
      {Fault::gather_in_partition_dtype, "gather-in-partition-dtype", "#8600 review",
       "step-time gathers travel in the partition dtype (fp32) instead of comm_dtype",
       {"impl/zero/muon_step.cpp"},
       {"fp16-overflow"}, "stage 2 with fp16 communication gathers Muon gradients and momentum",
       {"comm-dtype-respected"},
       "stage>=1 low-precision-comm", true},
      {Fault::momentum_on_overflow, "momentum-on-overflow", "#8432/#8435",
       "momentum advances before the overflow check, so a skipped step still moves it",
       {"impl/zero/engine_boundary.cpp"},
       {"fp16-overflow"}, "step 1 overflows and must leave momentum untouched",
       {"overflow-skip-clean"},
       "injection", true},
      {Fault::mixed_shape_window_gather, "mixed-shape-window-gather", "#8628",
       "a gather window unpacks every param with the first param's element count",
       {"impl/zero/muon_step.cpp"},
       {"per-head-mixed", "straddle-z1"}, "windows holding params of different shapes",
       {"trajectory-conforms", "step-conforms", "bucket-invariant", "stage-invariant"},
       "stage>=1 dp>=2 mixed-shapes", true},
      {Fault::clip_muon_update, "clip-muon-update", "#8439",
       "raw_grad clipping takes its norm over the Muon updates instead of the gradients",
       {"impl/zero/engine_boundary.cpp"},
       {"four-square-clip"}, "raw_grad clipping to 1.0 is active in the only step",
       {"trajectory-conforms", "step-conforms"},
       "clip", true},
      {Fault::stage0_no_newton_schulz, "stage0-no-newton-schulz", "#8441",
       "stage 0 applies the raw (Nesterov) momentum without NS",
       {"impl/zero/muon_step.cpp"},
       {"stage0-basic", "per-head-window-z0"}, "stage 0 Muon params",
       {"ns-once-per-matrix-per-step", "stage-invariant", "trajectory-conforms"},
       "stage<=0", true},
      {Fault::straddle_partial_reduce, "straddle-partial-reduce", "#7807",
       "NS of a straddling matrix reads the unreduced local gradient for foreign slices",
       {"impl/zero/engine_micro.cpp", "impl/zero/muon_step.cpp"},
       {"straddle-z1"}, "the middle matrix straddles the two partitions",
       {"trajectory-conforms", "step-conforms", "dp-invariant"},
       "stage>=1 dp>=2", true},
      {Fault::muon_on_scaled_grads, "muon-on-scaled-grads", "fp16 ZeRO",
       "Muon reads loss-scaled gradients and divides its update by the scale afterwards",
       {"impl/zero/engine_boundary.cpp", "impl/zero/muon_step.cpp"},
       {"fp16-overflow"}, "a dynamic loss scale of 256 multiplies every gradient",
       {"trajectory-conforms", "step-conforms"},
       "loss-scaler", true},
      {Fault::skip_muon_large_param, "skip-muon-large-param", "ZeRO-3 bucket",
       "a Muon param larger than reduce_bucket_size applies its momentum without NS",
       {"impl/zero/muon_step.cpp"},
       {"large-param-small-bucket-z3"}, "a 4096-element Muon param beside a 1000-element reduce bucket",
       {"ns-once-per-matrix-per-step"},
       "small-buckets", true},
      {Fault::drop_param_groups, "drop-param-groups", "#8440",
       "per-group lr_scale and weight_decay are ignored",
       {"impl/zero/engine_setup.cpp"},
       {"param-groups-z2"}, "two groups with their own lr scale and weight decay",
       {"trajectory-conforms", "step-conforms"},
       "groups", true},
      {Fault::per_head_dropped_call_site, "per-head-dropped-call-site", "#8612",
       "the stage 1/2 step path orthogonalizes per-head params as whole matrices",
       {"impl/zero/muon_step.cpp"},
       {"per-head-window-z1", "per-head-window-z2"}, "per-head params on the stage 1 and 2 step path",
       {"tagging-matches", "stage-invariant"},
       "stage>=1 stage<=2 per-head", true},
      {Fault::scaler_hysteresis_kept, "scaler-hysteresis-kept", "fp16 dynamic scaler",
       "a scale growth does not reset the hysteresis counter, so the next overflow halves the scale at once",
       {"impl/zero/loss_scaler.cpp"},
       {"scaler-growth-hysteresis-z1"}, "an overflow spends one unit of hysteresis 2 and the growth at step 4 must restore it",
       {"scaler-state-exact"},
       "injection loss-scaler scaler-growth", true},
  };
  return catalogue;
}

const FaultInfo* find_fault(std::string_view id) {
  for (const auto& f : fault_catalogue())
    if (f.id == id) return &f;
  return nullptr;
}

std::vector<std::string> fault_ids() {
  std::vector<std::string> ids;
  for (const auto& f : fault_catalogue()) ids.emplace_back(f.id);
  return ids;
}

}  // namespace muoncheck::impl
