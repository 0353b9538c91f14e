// The pairwise model follows the scenario format (harness/pairs/format_fields.hpp): every field
// of the schema and of the loader's resolved scenario is a feature or excluded with a reason, a
// field planted in the schema is caught, enum features take their values from the schema, and
// the new features read what a scenario does.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "core/bounded_json.hpp"
#include "core/scenario_io.hpp"
#include "harness/pairs/features.hpp"
#include "harness/pairs/format_fields.hpp"
#include "oracle/oracle.hpp"

namespace muoncheck::pairs {
namespace {

using nlohmann::json;

json shipped_schema() { return read_json_file("scenarios/schema/scenario.schema.json", "schema"); }

std::string listed(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& x : v) out += "\n  " + x;
  return out;
}

std::vector<std::string> feature_names() {
  std::vector<std::string> out;
  for (const auto& f : features()) out.push_back(f.name);
  return out;
}

TEST(PairsFormat, EverySchemaFieldIsAFeatureOrExcludedWithAReason) {
  const auto fields = schema_fields(shipped_schema());
  ASSERT_GT(fields.size(), 60u);
  EXPECT_TRUE(unclassified(fields).empty()) << "neither a feature nor excluded:" << listed(unclassified(fields));
  EXPECT_TRUE(unknown_features(feature_names()).empty()) << listed(unknown_features(feature_names()));
  // The compiled-in schema is the shipped one (the build regenerates it when the file changes).
  EXPECT_EQ(schema_fields(scenario_schema()), fields);
  for (const auto& f : format_fields()) {
    EXPECT_TRUE(f.features.empty() != f.excluded_why.empty()) << f.path << ": a feature or a reason, not both";
    EXPECT_NE(std::find(fields.begin(), fields.end(), f.path), fields.end()) << f.path << ": not a field of the schema";
  }
  // And every feature is fed by a field of the format.
  for (const auto& name : feature_names())
    EXPECT_TRUE(std::any_of(format_fields().begin(), format_fields().end(),
                            [&](const FormatField& f) { return std::count(f.features.begin(), f.features.end(), name); }))
        << name << ": no field feeds it";
}

TEST(PairsFormat, APlantedSchemaFieldIsCaught) {
  json planted = shipped_schema();
  planted["properties"]["engine"]["properties"]["pipeline_stages"] = {{"type", "integer"}, {"minimum", 1}};
  planted["properties"]["overflow"]["items"]["properties"]["rank_group"] = {{"type", "integer"}};
  planted["$defs"]["ns_triple"]["description"] = "unchanged: a $ref target is read where it is used";
  planted["properties"]["optimizer"]["properties"]["lr_schedule"]["properties"]["restarts"] = {{"type", "integer"}};
  const auto missing = unclassified(schema_fields(planted));
  EXPECT_EQ(std::set<std::string>(missing.begin(), missing.end()),
            (std::set<std::string>{"engine.pipeline_stages", "overflow[].rank_group", "optimizer.lr_schedule.restarts",
                                   "optimizer.groups[].lr_schedule.restarts"}));
}

TEST(PairsFormat, EveryFieldTheLoaderWritesIsClassified) {
  const json rich = json::parse(R"({"name": "rich", "steps": 4,
    "model": {"params": [{"name": "q.weight", "shape": [8, 16], "num_heads": 2}, {"name": "norm.weight", "shape": [16]}]},
    "engine": {"stage": 1, "dp": 2, "gas": 2, "micro_batch": 4, "offload_optimizer": "cpu", "compile": true,
               "ranks": "processes", "contiguous_gradients": false},
    "optimizer": {"ns_coefficients": "polar_express", "lr_schedule": {"shape": "cosine", "total_steps": 4},
                  "groups": [{"match": "norm", "weight_decay": 0.1, "lr_schedule": {"shape": "linear_warmup", "warmup_steps": 2}}],
                  "clip": {"max_norm": 1.0, "mode": "update"}},
    "loss_scaler": {"type": "dynamic"},
    "overflow": [{"step": 0, "micro_step": 1, "rank": 1, "param": "q.weight", "index": 3, "value": "nan"}],
    "tolerance": {"alpha": 5, "why": "a test"},
    "checkpoint": {"save_after_step": 1, "resume": {"dp": 4, "stage": 2}},
    "implementation_config": {"overlap_comm": true, "bucket": 4}})");
  const json preset = json::parse(R"({"name": "preset", "model": {"preset": "llama", "layers": 1}})");
  for (const auto& j : {rich, preset}) {
    const auto fields = json_fields(scenario_to_json(parse_scenario(j, "<test>")));
    EXPECT_TRUE(unclassified(fields).empty()) << "the loader writes fields the model does not classify:" << listed(unclassified(fields));
  }
}

TEST(PairsFormat, EnumAndBooleanFeaturesTakeTheirValuesFromTheSchema) {
  const auto& f = features();
  auto values = [&](const std::string& name) {
    return std::find_if(f.begin(), f.end(), [&](const Feature& x) { return x.name == name; })->values;
  };
  EXPECT_EQ(values("offload_optimizer"), schema_values(shipped_schema(), "engine.offload_optimizer"));
  EXPECT_EQ(values("ranks"), (std::vector<std::string>{"threads", "processes"}));
  EXPECT_EQ(values("lr_schedule"), (std::vector<std::string>{"constant", "linear_warmup", "cosine", "table"}));
  EXPECT_EQ(values("overflow_value"), (std::vector<std::string>{"inf", "nan"}));
  EXPECT_EQ(values("compile"), (std::vector<std::string>{"no", "yes"}));
  json planted = shipped_schema();
  planted["properties"]["engine"]["properties"]["offload_optimizer"]["enum"].push_back("disk");
  EXPECT_EQ(schema_values(planted, "engine.offload_optimizer"), (std::vector<std::string>{"none", "cpu", "nvme", "disk"}));
}

Scenario base(const std::string& extra) {
  json j = json::parse(R"({"name": "t", "seed": 3, "steps": 4,
    "model": {"params": [{"name": "a.weight", "shape": [8, 16]}, {"name": "norm.weight", "shape": [16]}]},
    "engine": {"stage": 1, "dp": 2, "gas": 2, "micro_batch": 8}})");
  j.merge_patch(json::parse(extra));
  return parse_scenario(j, "<test>");
}

std::map<std::string, std::string> values_of(const Scenario& s) {
  return exercised(s, oracle::run_oracle(s, oracle::Precision::float64)).values;
}

TEST(PairsFormat, NewFeaturesReadTheScenarioAndItsRun) {
  const auto plain = values_of(base("{}"));
  EXPECT_EQ(plain.at("checkpoint"), "none");
  EXPECT_EQ(plain.at("ns_coefficients"), "one-triple");
  EXPECT_EQ(plain.at("lr_schedule"), "constant");
  EXPECT_EQ(plain.at("group_lr_schedule"), "no");
  EXPECT_EQ(plain.at("ranks"), "threads");
  EXPECT_EQ(plain.count("overflow_value"), 0u);
  EXPECT_EQ(plain.at("scale_drops"), "no");
  EXPECT_EQ(values_of(base(R"({"checkpoint": {"save_after_step": 1}})")).at("checkpoint"), "same");
  EXPECT_EQ(values_of(base(R"({"checkpoint": {"save_after_step": 1, "resume": {"dp": 4, "stage": 1}}})")).at("checkpoint"), "other-dp");
  EXPECT_EQ(values_of(base(R"({"checkpoint": {"save_after_step": 1, "resume": {"stage": 3}}})")).at("checkpoint"), "other-stage");
  EXPECT_EQ(values_of(base(R"({"optimizer": {"ns_coefficients": "polar_express"}})")).at("ns_coefficients"), "named");
  EXPECT_EQ(values_of(base(R"({"optimizer": {"ns_coefficients": [[3, -3, 1], [2, -1.5, 0.5]]}})")).at("ns_coefficients"), "per-iteration");
  const auto grouped = values_of(base(R"({"optimizer": {"groups": [{"match": "norm", "lr_schedule": {"shape": "linear_warmup", "warmup_steps": 2}}]}})"));
  EXPECT_EQ(grouped.at("group_lr_schedule"), "yes");
  EXPECT_EQ(grouped.at("lr_schedule"), "constant");
  // scale_drops is read from the run: hysteresis 2 holds the scale at one overflow, two spend
  // it; a drop onto min_scale is the floor.
  const std::string inject = R"([{"step": 0, "param": "a.weight", "index": 1}, {"step": 1, "param": "a.weight", "index": 1, "value": "nan"}])";
  const auto held = values_of(base(R"({"loss_scaler": {"type": "dynamic", "hysteresis": 3}, "overflow": )" + inject + "}"));
  EXPECT_EQ(held.at("overflows"), "yes");
  EXPECT_EQ(held.at("scale_drops"), "no");
  EXPECT_EQ(held.at("overflow_value"), "inf");
  EXPECT_EQ(values_of(base(R"({"loss_scaler": {"type": "dynamic", "hysteresis": 1}, "overflow": )" + inject + "}")).at("scale_drops"), "yes");
  EXPECT_EQ(values_of(base(R"({"loss_scaler": {"type": "dynamic", "hysteresis": 1, "initial_scale_power": 1, "min_scale": 1}, "overflow": )" +
                           inject + "}")).at("scale_drops"), "to-floor");
}

}  // namespace
}  // namespace muoncheck::pairs
