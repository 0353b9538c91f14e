// The region of scenarios DeepSpeed's Muon can express (adapters/deepspeed/README.md, "Declines"):
// EMA momentum with Nesterov, 5 NS steps with the fixed coefficients, DeepSpeed's scale rule, one
// param group, accumulation and communication in the param dtype, fp16 always loss-scaled and a
// scaler only with fp16, dp the worker's, bucket sizes even (DeepSpeed's alignment assertion). A generated scenario is moved into it by fixing exactly
// those fields; everything else (shapes, stage, gas, buckets, clipping, scaler settings, AdamW
// hyper-parameters, per-head, weight decay, injections) stays as drawn and shrinks as drawn.
#pragma once
#include <rapidcheck.h>

#include "core/scenario.hpp"
#include "properties/generators/focus.hpp"

namespace muoncheck::external {

Scenario into_deepspeed_region(Scenario s, int dp);

// The general generator (generators::scenario), mapped into the region.
rc::Gen<Scenario> deepspeed_scenario(const generators::Focus& f, int dp);

}  // namespace muoncheck::external
