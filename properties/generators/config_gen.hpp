// Generated engine and optimizer configurations: ZeRO stage 0–3, dp weighted toward
// 1–4 (each rank is a thread on loopback TCP; a dp-8 rendezvous is the slow part),
// gas 1–8, micro_batch, buckets from one element to beyond the model, zero_init at
// stage 3, fp32/bf16/fp16 for params/accumulation/comm, NS method and dtype, scale
// rules, momentum forms, Nesterov, clipping, weight decay and param groups.
#pragma once
#include <rapidcheck.h>

#include "core/scenario.hpp"
#include "properties/generators/focus.hpp"

namespace muoncheck::generators {

// `fp16_params`: the overflow pattern asked for fp16 params (natural overflow).
rc::Gen<EngineConfig> engine(const ModelSpec& m, const Focus& f, bool fp16_params);
rc::Gen<OptimizerConfig> optimizer(const ModelSpec& m, const Focus& f);

// An element count for a bucket: one element (on small models), below / around /
// above the largest param, beyond the whole model, or the 5e8 default; never so
// small that the model needs more than 48 collectives per pass at this dp.
rc::Gen<int64_t> bucket_size(const ModelSpec& m, int dp, bool below_largest_muon);

}  // namespace muoncheck::generators
