// The region of scenarios torch.optim.Muon + AdamW under DDP / FSDP2 can express
// (adapters/torch/README.md, "Declines"): EMA momentum (Nesterov on or off), the standard NS in
// bf16 (any step count and coefficient triple), no per-head NS, gradient clipping only, no loss
// scaler (bf16 or fp32 params, fp16 drawn becomes bf16), no overflow injections, no checkpoint,
// offload or compile; the stage drawn as DDP (0) or FSDP2 (2: reshard_after_forward false, 3:
// true; a drawn stage 1 becomes 2), without zero_init; under DDP accumulation and communication in
// the param dtype, under FSDP2 communication in fp32 or the param dtype and accumulation in it (its
// reduce_dtype); dp the worker's. Everything else (shapes, gas, micro-batch, buckets,
// lr, momentum, scale rule, weight decay, groups, schedules, AdamW hyper-parameters, clip norm)
// stays as drawn and shrinks as drawn; what torch still cannot run (a Muon param that is not 2-D,
// scale rule spectral on a torch without it) is declined by the adapter and counted by feature.
#pragma once
#include <rapidcheck.h>

#include "core/scenario.hpp"
#include "properties/generators/focus.hpp"

namespace muoncheck::external {

Scenario into_torch_region(Scenario s, int dp);

// The general generator (generators::scenario), mapped into the region.
rc::Gen<Scenario> torch_scenario(const generators::Focus& f, int dp);

}  // namespace muoncheck::external
