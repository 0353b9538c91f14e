// A scenario as the adapters read it (`muoncheck-resolved-scenario/1`): the canonical scenario with
// every default filled in, its hash, the llama preset expanded and each parameter's matrix view,
// SPEC tag and group lr_scale / weight_decay. `muoncheck resolve` prints it; the resident workers
// receive it with each request (adapters/common/scenario.py reads both).
#pragma once
#include <nlohmann/json.hpp>

#include "core/scenario.hpp"

namespace muoncheck {

inline constexpr const char* kResolvedScenarioFormat = "muoncheck-resolved-scenario/1";

nlohmann::json resolved_scenario_json(const Scenario& s);

}  // namespace muoncheck
