// An implementation's configuration space as its worker's hello line states it
// (docs/resident-protocol.md): knobs, each a list of JSON scalar values (the first the default) and,
// for a field knob, the scenario fields each value sets. Read and checked here, so a plugin that
// declares a malformed space is an error naming the plugin and the field; and drawn here with
// RapidCheck, each knob shrinking towards its default.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <rapidcheck.h>

namespace muoncheck::external {

struct Knob {
  std::string name;
  std::vector<nlohmann::json> values;   // JSON scalars; values[0] is the default
  std::vector<nlohmann::json> fields;   // one object per value (field knob), empty (engine knob)
};

struct PluginSpace {
  std::string implementation;           // the plugin's name, in messages
  std::vector<Knob> knobs;
  std::vector<std::string> fixes;       // the ids of its known defects' fixes
};

// The space of a hello line. Throws Error{BadInput} naming the plugin and the field when the hello
// has an `error` (the plugin could not be loaded) or a malformed space.
PluginSpace space_from_hello(const nlohmann::json& hello, const std::string& implementation);

// Every knob at its default.
nlohmann::json default_config(const PluginSpace& space);

// The space with knobs held to some of their values: each spec "NAME=V1,V2,..." (a value as JSON,
// else as a string) keeps those values of knob NAME, in the order given (the first becomes the
// one a case shrinks towards). Throws Error{Usage} naming the spec for an unknown knob or value.
PluginSpace restricted(PluginSpace space, const std::vector<std::string>& specs);

// A configuration drawn knob by knob (each a RapidCheck element of its values, shrinking towards
// the first); an empty space gives {}.
rc::Gen<nlohmann::json> config_gen(const PluginSpace& space);

}  // namespace muoncheck::external
