// A Focus narrows the one general scenario generator toward a region of the space
// (a stage range, a minimum dp or gas, "has a param group", ...). It only removes
// choices; it never adds a value the general generator could not produce.
#pragma once
#include <string>
#include <string_view>

namespace muoncheck::generators {

struct Focus {
  std::string label = "general";
  int min_stage = 0, max_stage = 3;
  int min_dp = 1;
  int min_gas = 1;
  bool zero_init = false;           // stage 3 params built as placeholders (needs min_stage 3)
  bool per_head = false;            // per_head on, head counts ≥ 2 beside other counts
  bool mixed_shapes = false;        // two Muon params of different sizes side by side
  bool groups = false;              // a param group with lr_scale ≠ 1
  bool low_precision_comm = false;  // comm_dtype bf16 or fp16
  bool injection = false;           // an injected inf/nan somewhere
  bool loss_scaler = false;         // a static or dynamic scaler with scale > 1
  bool clip = false;                // raw_grad clipping at a small max_norm (it binds)
  bool small_buckets = false;       // reduce_bucket_size below the largest Muon param
  bool scaler_growth = false;       // dynamic scaler, hysteresis ≥ 2, scale_window ≤ 2, ≥ 3 steps:
                                    // an overflow can spend the counter before a growth
  bool schedule = false;            // a group lr_schedule that differs from the optimizer's at step 0
  bool checkpoint = false;          // a checkpoint-resume, mostly at another dp or stage
  bool ns_schedule = false;         // per-iteration NS coefficients (a named schedule)
};

// A focus from space-separated clauses, each narrowing the general generator: a bound
// `stage>=N`, `stage<=N`, `dp>=N`, `gas>=N`, or a flag named like the field it sets
// (`zero-init`, `per-head`, `mixed-shapes`, `groups`, `low-precision-comm`, `injection`,
// `loss-scaler`, `clip`, `small-buckets`, `scaler-growth`, `schedule`, `checkpoint`, `ns-schedule`). Throws Error{Internal} on any
// other clause: clauses come from the fault catalogue, not from the user.
Focus focus_from_clauses(std::string_view label, std::string_view clauses);

// The focus under which a bounded sweep finds a catalogued fault quickly: the region where
// the fault's code path runs, as its catalogue row (impl/faults/fault_catalogue.hpp) says.
// Throws Error{Usage} for an unknown id.
Focus focus_for_fault(std::string_view fault_id);

}  // namespace muoncheck::generators
