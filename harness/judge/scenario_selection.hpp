// Turns the scenario arguments of a command into loaded Scenarios: a path to a
// .json file, or a bare name looked up as scenarios/<name>.json; no arguments
// means every scenario in the scenarios folder (sorted by name).
#pragma once
#include <string>
#include <vector>

#include "core/scenario.hpp"

namespace muoncheck {

std::vector<std::string> scenario_files_in(const std::string& dir);
std::vector<Scenario> select_scenarios(const std::vector<std::string>& args, const std::string& dir,
                                       bool all_when_empty);

}  // namespace muoncheck
