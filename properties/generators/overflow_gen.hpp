// Loss scalers and overflow patterns: none; one rank in one micro-step; every
// micro-step of one step; consecutive steps (dynamic scaler hysteresis); natural
// fp16 overflow from a large initial scale. Injections always name a step, micro-step,
// rank, param and index that exist in the scenario they are made for.
#pragma once
#include <string>
#include <vector>

#include <rapidcheck.h>

#include "core/scenario.hpp"
#include "properties/generators/focus.hpp"

namespace muoncheck::generators {

enum class OverflowPattern { none, one_rank_one_micro_step, every_micro_step_of_a_step, consecutive_steps, natural_fp16 };
std::string to_string(OverflowPattern p);

rc::Gen<OverflowPattern> overflow_pattern(const Focus& f);
int min_steps(OverflowPattern p, const Focus& f);  // consecutive steps need two; a growth focus three
rc::Gen<LossScalerConfig> loss_scaler(OverflowPattern p, const Focus& f);
// Injections for pattern `p` in scenario `s` (its model, steps and engine are set).
rc::Gen<std::vector<OverflowInjection>> injections(OverflowPattern p, const Scenario& s);

}  // namespace muoncheck::generators
