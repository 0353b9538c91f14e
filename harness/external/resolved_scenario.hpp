// A scenario as the adapters read it (`muoncheck-resolved-scenario/1`): the canonical scenario with
// every default filled in, its hash, the llama preset expanded and each parameter's matrix view,
// tag (docs/semantics.md §3), group lr_scale / weight_decay and lr_schedule; beside the scenario, the fields its
// canonical form leaves out at their defaults (engine_path, lr_schedule, checkpoint with the resume
// engine resolved), always written. `muoncheck resolve` prints it; the resident workers
// receive it with each request (adapters/common/scenario.py reads both).
#pragma once
#include <nlohmann/json.hpp>

#include "core/scenario.hpp"

namespace muoncheck {

inline constexpr const char* kResolvedScenarioFormat = "muoncheck-resolved-scenario/1";

nlohmann::json resolved_scenario_json(const Scenario& s);

}  // namespace muoncheck
