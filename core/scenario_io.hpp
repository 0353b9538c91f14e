// Loads, validates and writes scenario files. load_scenario() is the only way a
// file becomes a Scenario; scenario_to_json() writes every field explicitly, so
// parse(to_json(s)) == s (generated scenarios round-trip through the loader).
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/scenario.hpp"

namespace muoncheck {

// Throws Error{BadInput} naming the file, the JSON path and what was expected. The file
// is read bounded (core/bounded_json.hpp) and the model checked against the resource
// limits of core/input_limits.hpp before anything of its size is allocated.
Scenario load_scenario(const std::string& path);
// The same from text already in memory (the fuzz target, tests).
Scenario parse_scenario_text(std::string_view text, const std::string& source, const std::string& expect_stem = "");
// `source` names the input in errors; when `expect_stem` is set, `name` must equal it.
Scenario parse_scenario(const nlohmann::json& j, const std::string& source, const std::string& expect_stem = "");

nlohmann::json scenario_to_json(const Scenario& s);
// One NS triple as [a, b, c]; every iteration's triple, ns_steps of them (what `resolve` prints).
nlohmann::json ns_triple_json(const NsCoefficients& k);
nlohmann::json ns_iterations_json(const OptimizerConfig& o);
void save_scenario(const Scenario& s, const std::string& path);   // atomic write

// 16 hex digits identifying the scenario's semantics (its canonical JSON, name included).
std::string scenario_hash(const Scenario& s);

// Names of the enums as they appear in files.
std::string to_string(MomentumForm v);
std::string to_string(NsMethod v);
std::string to_string(ScaleRule v);
std::string to_string(ClipMode v);
std::string to_string(ScalerType v);
std::string to_string(OverflowValue v);
std::string to_string(LrShape v);
std::string to_string(OffloadDevice v);
std::string to_string(RankMode v);

}  // namespace muoncheck
