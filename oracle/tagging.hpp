// Tagging (docs/semantics.md §3): which params Muon updates and how many heads each splits
// into. Decided on the layer shape from the scenario, never on a local tensor, so
// the answer is the same with and without zero.Init placeholders.
#pragma once
#include <string>
#include <vector>

#include "core/scenario.hpp"
#include "core/trajectory.hpp"

namespace muoncheck::oracle {

// rank(layer shape) ≥ 2 and the name contains neither "embed" nor "lm_head" (any case).
bool use_muon(const ParamSpec& p);

// The module that owns the tensor: "a.b.q_proj.weight" → "q_proj"; a name
// without a trailing weight/bias component is its own leaf ("a.b.wq" → "wq").
std::string leaf_module(const std::string& param_name);

// Head count of a Muon param under per_head (0: not split). Rules, in order:
//  - per_head off, or not a Muon param: 0.
//  - an explicit `num_heads` in model.params: taken as given (the loader checked
//    that it divides the rows); this is the only source of heads without a preset,
//    because a plain param list does not say what the model's head count is.
//  - llama preset: q_proj/query/wq → heads, k_proj/key/wk/v_proj/value/wv →
//    kv_heads, accepted only if rows == count · (hidden / heads); otherwise 0.
int head_count(const Scenario& s, const ParamSpec& p);

}  // namespace muoncheck::oracle
