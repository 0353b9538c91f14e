// The fault catalogue (SPEC §7): the historical Muon+ZeRO bugs, re-injectable by id.
// A FaultSet is read only by the code path the real bug lived in (a branch there asks
// `faults.has(Fault::x)`); it never edits outputs afterwards. Off by default.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace muoncheck::impl {

enum class Fault {
  zero3_muon_per_microbatch,
  tag_placeholder_shape,
  per_head_stale_binding,
  gather_in_partition_dtype,
  momentum_on_overflow,
  mixed_shape_window_gather,
  clip_muon_update,
  stage0_no_newton_schulz,
  straddle_partial_reduce,
  muon_on_scaled_grads,
  skip_muon_large_param,
  drop_param_groups,
  per_head_dropped_call_site,
  scaler_hysteresis_kept,
};

struct FaultInfo {
  Fault fault;
  std::string_view id;          // the catalogue id, e.g. "zero3-muon-per-microbatch"
  std::string_view bug;         // the upstream issue it reproduces
  std::string_view effect;      // what it does in this implementation
  bool implemented;             // false: requesting it is Unsupported
};

const std::vector<FaultInfo>& fault_catalogue();
std::optional<Fault> parse_fault(std::string_view id);
std::string_view fault_id(Fault f);

class FaultSet {
 public:
  FaultSet() = default;
  // Throws Error{Usage} for an unknown id, Error{Unsupported} for a known but
  // unimplemented one.
  static FaultSet from_ids(const std::vector<std::string>& ids);
  bool has(Fault f) const { return (bits_ >> static_cast<unsigned>(f)) & 1u; }
  bool empty() const { return bits_ == 0; }
  void add(Fault f) { bits_ |= 1u << static_cast<unsigned>(f); }

 private:
  unsigned bits_ = 0;
};

}  // namespace muoncheck::impl
