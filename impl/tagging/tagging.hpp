// The implementation's own Muon tagging (docs/semantics.md §3), written apart from the oracle's:
// use_muon = layer-shape rank ≥ 2 and the name has neither "embed" nor "lm_head"; the
// per-head count comes from the leaf module name (preset models) or an explicit
// num_heads. Decided on ParamHandle::ds_shape, so placeholders tag like full params.
#pragma once
#include <string>
#include <vector>

#include "core/scenario.hpp"
#include "core/trajectory.hpp"
#include "impl/faults/faults.hpp"
#include "impl/zero/param_handle.hpp"

namespace muoncheck::impl {

// The leaf module of "model.layers.0.self_attn.q_proj.weight" is "q_proj".
std::string leaf_module(const std::string& param_name);

ParamTag tag_param(const Scenario& s, const ParamHandle& p, const FaultSet& faults);
std::vector<ParamTag> tag_params(const Scenario& s, const std::vector<ParamHandle>& params,
                                 const FaultSet& faults);

}  // namespace muoncheck::impl
