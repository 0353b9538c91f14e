// The fault catalogue: the one registry of the historical Muon+ZeRO bugs this
// implementation can re-inject, one row per fault with every fact about it, as plain data.
// impl reads the ids (faults.hpp: FaultSet, parse_fault); the mutation run reads which shipped
// scenarios reach each fault and which invariants name its symptom (harness/mutants/); the
// generators read where a sweep finds it (properties/generators/focus.hpp); the tests read all
// of it, so no count or list of faults is written anywhere else.
//
// Rows name things of the layers above impl by string (invariant ids, scenario names, focus
// clauses); tests/properties/fault_catalogue_test.cpp checks that each string names something
// real, and tests/impl/impl_faults_test.cpp that `code_path` lists exactly the files whose
// branches consult the fault.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace muoncheck::impl {

// Dense from 0, in catalogue order (FaultSet keeps one bit per value).
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
  param_gather_fp32,
  weight_sync_fp32,
  exchange_in_comm_dtype,
  scalars_in_comm_dtype,
  group_schedule_overwritten,
  resume_momentum_lost,
  resume_wrong_partition,
  resume_adam_step_reset,
  ns_schedule_stale_last,
};

struct FaultInfo {
  Fault fault;
  std::string_view id;                  // the catalogue id, e.g. "zero3-muon-per-microbatch"
  std::string_view bug;                 // the upstream issue it reproduces
  std::string_view effect;              // one line: what it does in this implementation
  std::vector<std::string> code_path;   // the impl/ files whose branches ask `faults.has(Fault::x)`
  std::vector<std::string> scenarios;   // shipped scenarios (names in scenarios/) that reach the path
  std::string_view why;                 // one line: why those scenarios reach it
  std::vector<std::string> symptoms;    // invariant ids that name the bug's real symptom
  // Where a generated scenario reaches the path: space-separated clauses that narrow the general
  // generator (`stage>=N`, `stage<=N`, `dp>=N`, `gas>=N` and flags such as `per-head`); the
  // grammar is properties/generators/focus.hpp's.
  std::string_view focus;
  bool implemented;                     // false: requesting it is Unsupported
};

const std::vector<FaultInfo>& fault_catalogue();
// The row of `id`, or nullptr.
const FaultInfo* find_fault(std::string_view id);
// Every id, in catalogue order.
std::vector<std::string> fault_ids();

}  // namespace muoncheck::impl
