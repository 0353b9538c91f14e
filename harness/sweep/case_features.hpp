// The features of a scenario a defect may need, named the way a bug report names them: the ZeRO
// stage, the param dtype, gas > 1, clipping, a loss scaler, non-default AdamW hyper-parameters,
// weight decay, per-head NS, ZeRO-3 placeholders, injected overflow, a weight of rank 3 or 4. A sweep counts them over the
// cases it drew and keeps them on each minimal case, so a counterexample says what it still needs.
#pragma once
#include <string>
#include <vector>

#include "core/scenario.hpp"

namespace muoncheck {

std::vector<std::string> case_features(const Scenario& s);   // e.g. {"stage 2", "fp16", "clip raw_grad", ...}

}  // namespace muoncheck
