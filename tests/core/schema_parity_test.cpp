// The JSON Schemas and the loaders state the same limits. For every numeric field of
// scenarios/schema/scenario.schema.json the loader is probed at the schema's bounds: at an
// inclusive bound it must not reject the field, just beyond it (or at an exclusive bound)
// it must reject it by that field's JSON path, and where the schema states no bound the
// loader must accept any double. The resource limits (x-muoncheck-* annotations, the
// trace schema's NS call caps) must equal core/input_limits.hpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/bounded_json.hpp"
#include "core/error.hpp"
#include "core/input_limits.hpp"
#include "core/scenario_io.hpp"

namespace muoncheck {
namespace {

using nlohmann::json;

json schema(const std::string& path) { return read_json_file(path, "schema"); }

struct Field {
  std::string pointer;   // "/optimizer/lr", "/model/params/0/shape/0"
  json spec;
};

void collect(const json& node, const std::string& pointer, std::vector<Field>& out) {
  if (!node.is_object()) return;
  const auto type = node.value("type", json());
  if (type == "integer" || type == "number") out.push_back({pointer, node});
  if (node.contains("properties"))
    for (const auto& [key, sub] : node["properties"].items()) collect(sub, pointer + "/" + key, out);
  if (node.contains("items")) collect(node["items"], pointer + "/0", out);
}

// A scenario in which every probed field is valid and its siblings do not get in the way.
json base_for(const std::string& pointer) {
  json j = {{"name", "t"},
            {"optimizer", {{"ns_coefficients", {3.4445, -4.775, 2.0315}}, {"groups", {{{"match", "w"}}}},
                           {"adam", {{"betas", {0.9, 0.95}}}}}},
            {"overflow", {{{"step", 0}, {"param", "w"}, {"index", 0}}}}};
  const bool preset = pointer.rfind("/model/", 0) == 0 && pointer.rfind("/model/params", 0) != 0;
  if (preset)   // heads and kv_heads divide hidden at every probed value of each
    j["model"] = {{"preset", "llama"}, {"layers", 1}, {"hidden", 1024}, {"heads", 1024}, {"kv_heads", 1024}};
  else
    j["model"] = {{"params", {{{"name", "w"}, {"shape", {65536, 1}}, {"num_heads", 1}}}}};
  if (pointer.find("/lr_schedule/factors") != std::string::npos)   // the shape that takes the factors
    j["optimizer"]["lr_schedule"] = {{"shape", "table"}, {"factors", {1.0}}};
  else if (pointer.find("/lr_schedule/") != std::string::npos)   // the shape that takes every other parameter
    j["optimizer"]["lr_schedule"] = {{"shape", "cosine"}, {"total_steps", 100000}};
  if (pointer.rfind("/checkpoint/", 0) == 0) {   // dp × gas = 64: every resume dp in range divides it
    j["engine"] = {{"gas", 64}};
    j["checkpoint"] = {{"save_after_step", 0}};
  }
  return j;
}

// "" when the loader accepted `value` at `pointer`, else the error text.
std::string load_with(const std::string& pointer, const json& value) {
  json j = base_for(pointer);
  j[json::json_pointer(pointer)] = value;
  try {
    parse_scenario(j, "probe.json");
    return "";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput) << e.what();
    return e.what();
  }
}

bool rejected_at(const std::string& error, const std::string& pointer) {
  return error.find(": at " + pointer + ":") != std::string::npos;
}

// Fields whose upper bound depends on other fields (a step below `steps`, an index inside
// the param, a warmup shorter than the schedule): the schema says so in words; only their
// lower bound is probed.
bool relational(const std::string& pointer) {
  return pointer.rfind("/overflow/", 0) == 0 || pointer == "/checkpoint/save_after_step" ||
         pointer == "/optimizer/lr_schedule/warmup_steps";
}

json just_beyond(const json& bound, bool integer, bool upward) {
  if (integer) {
    if (bound.is_number_unsigned() && upward && bound.get<uint64_t>() == std::numeric_limits<uint64_t>::max())
      return json(1.8446744073709552e19);   // not an unsigned 64-bit integer any more
    return json(bound.get<int64_t>() + (upward ? 1 : -1));
  }
  const double b = bound.get<double>();
  return json(std::nextafter(b, upward ? INFINITY : -INFINITY));
}

TEST(SchemaParity, EveryNumericBoundOfTheScenarioSchemaIsTheLoaders) {
  std::vector<Field> fields;
  collect(schema("scenarios/schema/scenario.schema.json"), "", fields);
  ASSERT_GT(fields.size(), 30u);
  for (const auto& f : fields) {
    SCOPED_TRACE(f.pointer);
    const bool integer = f.spec["type"] == "integer";
    for (const bool upper : {false, true}) {
      const char* inclusive = upper ? "maximum" : "minimum";
      const char* exclusive = upper ? "exclusiveMaximum" : "exclusiveMinimum";
      if (f.spec.contains(inclusive)) {
        const json& b = f.spec[inclusive];
        EXPECT_FALSE(rejected_at(load_with(f.pointer, b), f.pointer)) << "rejects the schema's " << inclusive << " " << b;
        const auto err = load_with(f.pointer, just_beyond(b, integer, upper));
        EXPECT_TRUE(rejected_at(err, f.pointer)) << "accepts beyond the schema's " << inclusive << " " << b << ": " << err;
      } else if (f.spec.contains(exclusive)) {
        const json& b = f.spec[exclusive];
        EXPECT_TRUE(rejected_at(load_with(f.pointer, b), f.pointer)) << "accepts the schema's " << exclusive << " " << b;
        EXPECT_FALSE(rejected_at(load_with(f.pointer, just_beyond(b, integer, !upper)), f.pointer))
            << "rejects just inside the schema's " << exclusive << " " << b;
      } else if (!(upper && relational(f.pointer))) {
        // No bound stated: the loader may not have one either.
        const json far = integer ? json(upper ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min())
                                 : json(upper ? 1e300 : -1e300);
        const auto err = load_with(f.pointer, far);
        EXPECT_FALSE(rejected_at(err, f.pointer)) << "the schema states no " << inclusive << " but the loader has one: " << err;
      }
    }
  }
}

TEST(SchemaParity, ResourceLimitsOfTheSchemasAreTheLoaders) {
  const auto s = schema("scenarios/schema/scenario.schema.json");
  const auto& model = s["properties"]["model"];
  EXPECT_EQ(model["x-muoncheck-max-elements"], limits::kMaxModelElements);
  const auto& shape = model["properties"]["params"]["items"]["properties"]["shape"];
  EXPECT_EQ(shape["x-muoncheck-max-elements"], limits::kMaxTensorElements);
  EXPECT_EQ(shape["items"]["maximum"], limits::kMaxDim);
  const auto t = schema("schemas/trace.schema.json");
  const auto& step = t["properties"]["steps"]["items"]["properties"];
  EXPECT_EQ(step["ns_calls"]["items"]["maximum"], limits::kMaxNsCallsPerEntry);
  EXPECT_EQ(step["ns_unattributed"]["maximum"], limits::kMaxNsCallsPerEntry);
  EXPECT_EQ(t["properties"]["steps"]["x-muoncheck-max-ns-calls"], limits::kMaxNsCallsPerTrace);
}

TEST(SchemaParity, TheModelLimitIsEnforcedAtTheSchemasNumber) {
  auto with = [](std::vector<std::vector<int64_t>> shapes) {
    json params = json::array();
    for (size_t i = 0; i < shapes.size(); ++i) params.push_back({{"name", "p" + std::to_string(i)}, {"shape", shapes[i]}});
    return json{{"name", "t"}, {"model", {{"params", params}}}};
  };
  EXPECT_NO_THROW(parse_scenario(with({{2048, 1024}, {2048, 1024}}), "ok.json"));   // exactly 2^22
  try {
    parse_scenario(with({{2048, 1024}, {2048, 1024}, {1}}), "big.json");
    ADD_FAILURE() << "a model of 2^22 + 1 elements loaded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("big.json: at /model/params: expected a model of at most 4194304 elements"),
              std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace muoncheck
