#include "impl/faults/faults.hpp"

#include "core/error.hpp"

namespace muoncheck::impl {

const std::vector<FaultInfo>& fault_catalogue() {
  static const std::vector<FaultInfo> catalogue = {
      {Fault::zero3_muon_per_microbatch, "zero3-muon-per-microbatch", "DeepSpeed #8443",
       "stage 3 runs Muon (momentum, NS, update) on every micro-step's partial gradient", true},
      {Fault::tag_placeholder_shape, "tag-placeholder-shape", "#8438",
       "tagging reads the local (placeholder) tensor shape instead of the layer shape", true},
      {Fault::per_head_stale_binding, "per-head-stale-binding", "#8600 review",
       "a gather window's head count is read from its first param for every param", true},
      {Fault::gather_in_partition_dtype, "gather-in-partition-dtype", "#8600 review",
       "step-time gathers travel in the partition dtype (fp32) instead of comm_dtype", true},
      {Fault::momentum_on_overflow, "momentum-on-overflow", "#8432/#8435",
       "momentum advances before the overflow check, so a skipped step still moves it", true},
      {Fault::mixed_shape_window_gather, "mixed-shape-window-gather", "#8628",
       "a gather window unpacks every param with the first param's element count", true},
      {Fault::clip_muon_update, "clip-muon-update", "#8439",
       "raw_grad clipping takes its norm over the Muon updates instead of the gradients", true},
      {Fault::stage0_no_newton_schulz, "stage0-no-newton-schulz", "#8441",
       "stage 0 applies the raw (Nesterov) momentum without NS", true},
      {Fault::straddle_partial_reduce, "straddle-partial-reduce", "#7807",
       "NS of a straddling matrix reads the unreduced local gradient for foreign slices", true},
      {Fault::muon_on_scaled_grads, "muon-on-scaled-grads", "fp16 ZeRO",
       "Muon reads loss-scaled gradients and divides its update by the scale afterwards", true},
      {Fault::skip_muon_large_param, "skip-muon-large-param", "ZeRO-3 bucket",
       "a Muon param larger than reduce_bucket_size applies its momentum without NS", true},
      {Fault::drop_param_groups, "drop-param-groups", "#8440",
       "per-group lr_scale and weight_decay are ignored", true},
      {Fault::per_head_dropped_call_site, "per-head-dropped-call-site", "#8612",
       "the stage 1/2 step path orthogonalizes per-head params as whole matrices", true},
      {Fault::scaler_hysteresis_kept, "scaler-hysteresis-kept", "fp16 dynamic scaler",
       "a scale growth does not reset the hysteresis counter, so the next overflow halves the scale at once", true},
  };
  return catalogue;
}

std::optional<Fault> parse_fault(std::string_view id) {
  for (const auto& f : fault_catalogue())
    if (f.id == id) return f.fault;
  return std::nullopt;
}

std::string_view fault_id(Fault f) {
  for (const auto& i : fault_catalogue())
    if (i.fault == f) return i.id;
  return "?";
}

FaultSet FaultSet::from_ids(const std::vector<std::string>& ids) {
  FaultSet set;
  for (const auto& id : ids) {
    const auto f = parse_fault(id);
    if (!f) {
      std::string known;
      for (const auto& i : fault_catalogue()) known += (known.empty() ? "" : ", ") + std::string(i.id);
      throw Error(ErrorKind::Usage, "unknown fault id '" + id + "' (known: " + known + ")");
    }
    for (const auto& i : fault_catalogue())
      if (i.fault == *f && !i.implemented)
        throw Error(ErrorKind::Unsupported, "fault '" + id + "' is catalogued but not implemented in impl:cpu");
    set.add(*f);
  }
  return set;
}

}  // namespace muoncheck::impl
