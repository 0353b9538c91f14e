// Every field of the scenario format, as the pairwise model sees it: the features it feeds,
// or why it feeds none. The fields are those of the scenario schema compiled into this build
// (scenarios/schema/scenario.schema.json; tests/core/schema_parity_test.cpp holds the loader to
// it) and of the loader's resolved scenario (scenario_to_json). A field that is neither a
// feature nor excluded with a reason is an error of the model (features() refuses to build,
// tests/harness/pairs_format_test.cpp fails), so no new field escapes the 2-way coverage.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace muoncheck::pairs {

struct FormatField {
  std::string path;                    // "engine.stage", "model.params[].shape", "overflow[].value"
  std::vector<std::string> features;   // the features it feeds (features.hpp); empty: excluded
  std::string excluded_why;            // why it feeds none (empty when it feeds one)
};

// The classification, in schema order.
const std::vector<FormatField>& format_fields();

// The schema compiled into this build, parsed.
const nlohmann::json& scenario_schema();

// The leaf fields of a scenario schema: every property that is not an object of further
// properties ($ref followed; an array of objects contributes its items' fields as "NAME[].x").
std::vector<std::string> schema_fields(const nlohmann::json& schema);

// The leaf fields of a resolved scenario (scenario_to_json), in the same spelling.
std::vector<std::string> json_fields(const nlohmann::json& scenario);

// The fields of `fields` that format_fields() does not classify, and the classified ones
// that name a feature `known` does not list.
std::vector<std::string> unclassified(const std::vector<std::string>& fields);
std::vector<std::string> unknown_features(const std::vector<std::string>& known);

// A field of the schema (by path) as the schema describes it: its enum, or booleans as
// {"no", "yes"}; empty for other types.
std::vector<std::string> schema_values(const nlohmann::json& schema, const std::string& path);

}  // namespace muoncheck::pairs
