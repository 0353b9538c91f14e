// Expands the `llama` preset into HF-style parameter names and shapes, in the
// order the data generator indexes them (embed, per layer q,k,v,o,gate,up,down,
// the two norms, final norm, lm_head unless tied).
#pragma once
#include <vector>

#include "core/scenario.hpp"

namespace muoncheck {

std::vector<ParamSpec> expand_llama(const LlamaPreset& p);

}  // namespace muoncheck
