// Generated models: named parameter lists whose names trigger the tagging rules
// (embed/lm_head → AdamW, q/k/v → per-head, rank 1 → AdamW), mixed shapes side by
// side in one bucket or round-robin window, explicit num_heads that differ between
// neighbours, and small llama presets. Names are unique; num_heads divides rows.
#pragma once
#include <rapidcheck.h>

#include "core/scenario.hpp"
#include "properties/generators/focus.hpp"

namespace muoncheck::generators {

rc::Gen<ModelSpec> custom_model(const Focus& f);   // 1–5 params ("l<i>.<role>")
rc::Gen<ModelSpec> llama_model(const Focus& f);    // the llama preset at toy sizes
rc::Gen<ModelSpec> model(const Focus& f);          // mostly custom, some llama

// Whether a param is a Muon param by the rule of docs/semantics.md §3 (layer shape and name).
bool is_muon_param(const ParamSpec& p);

}  // namespace muoncheck::generators
