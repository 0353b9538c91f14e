// JSON form of a Trajectory (what `muoncheck oracle --out` writes). Numbers are
// written with 17 significant digits, so a double survives the round trip.
#pragma once
#include <nlohmann/json.hpp>

#include "core/trajectory.hpp"

namespace muoncheck {

nlohmann::json trajectory_to_json(const Trajectory& t, bool with_tensors = true);
Trajectory trajectory_from_json(const nlohmann::json& j, const std::string& source);

}  // namespace muoncheck
