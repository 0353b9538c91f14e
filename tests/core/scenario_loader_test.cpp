// The loader rejects each kind of bad input with one message that names the
// file, the JSON path and what was expected; good input round-trips.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/scenario_io.hpp"

using muoncheck::Error;
using muoncheck::ErrorKind;
using muoncheck::parse_scenario;
using nlohmann::json;
using ::testing::AllOf;
using ::testing::HasSubstr;

namespace {

json minimal() {
  return json::parse(R"({"name": "t", "model": {"params": [{"name": "w", "shape": [4, 8]}]}})");
}

// Runs the loader on `j` and returns the error message (fails the test if it loads).
std::string error_of(const json& j) {
  try {
    parse_scenario(j, "bad.json");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    return e.what();
  }
  ADD_FAILURE() << "expected a BadInput error for " << j.dump();
  return "";
}

TEST(ScenarioLoader, MinimalScenarioGetsEveryDefault) {
  const auto s = parse_scenario(minimal(), "t.json");
  EXPECT_EQ(s.steps, 3);
  EXPECT_EQ(s.engine.stage, 0);
  EXPECT_EQ(s.engine.reduce_bucket_size, 500000000);
  EXPECT_EQ(s.optimizer.ns_method, muoncheck::NsMethod::gram);
  EXPECT_EQ(s.optimizer.ns_dtype, muoncheck::DType::fp16);
  EXPECT_DOUBLE_EQ(s.optimizer.adam.beta2, 0.95);
  EXPECT_DOUBLE_EQ(s.tolerance.alpha, 4.0);
}

TEST(ScenarioLoader, StandardNsDefaultsToBf16AndDtypesFollowParamDtype) {
  auto j = minimal();
  j["optimizer"] = {{"ns_method", "standard"}};
  j["engine"] = {{"param_dtype", "fp16"}};
  const auto s = parse_scenario(j, "t.json");
  EXPECT_EQ(s.optimizer.ns_dtype, muoncheck::DType::bf16);
  EXPECT_EQ(s.engine.grad_accum_dtype, muoncheck::DType::fp16);
  EXPECT_EQ(s.engine.comm_dtype, muoncheck::DType::fp16);
}

TEST(ScenarioLoader, UnknownKeyNamesItsPath) {
  auto j = minimal();
  j["engine"] = {{"stgae", 2}};
  EXPECT_THAT(error_of(j), AllOf(HasSubstr("bad.json"), HasSubstr("/engine/stgae"), HasSubstr("unknown key")));
}

TEST(ScenarioLoader, UnknownTopLevelKey) {
  auto j = minimal();
  j["optimiser"] = json::object();
  EXPECT_THAT(error_of(j), HasSubstr("/optimiser"));
}

TEST(ScenarioLoader, WrongTypeSaysWhatWasExpected) {
  auto j = minimal();
  j["engine"] = {{"dp", "two"}};
  EXPECT_THAT(error_of(j), AllOf(HasSubstr("/engine/dp"), HasSubstr("expected an integer in [1, 64]"), HasSubstr("string \"two\"")));
}

TEST(ScenarioLoader, OutOfRangeValue) {
  auto j = minimal();
  j["engine"] = {{"stage", 4}};
  EXPECT_THAT(error_of(j), AllOf(HasSubstr("/engine/stage"), HasSubstr("[0, 3]")));
  j["engine"] = {{"stage", 1}};
  j["optimizer"] = {{"momentum", 1.0}};
  EXPECT_THAT(error_of(j), HasSubstr("/optimizer/momentum"));
}

TEST(ScenarioLoader, ImpossibleShapes) {
  auto j = minimal();
  j["model"]["params"][0]["shape"] = json::array({4, 0});
  EXPECT_THAT(error_of(j), HasSubstr("/model/params/0/shape/1"));
  j["model"]["params"][0]["shape"] = json::array({1, 2, 3, 4, 5});
  EXPECT_THAT(error_of(j), AllOf(HasSubstr("/model/params/0/shape"), HasSubstr("1 to 4")));
  j["model"]["params"][0]["shape"] = json::array({6, 8});
  j["model"]["params"][0]["num_heads"] = 4;
  EXPECT_THAT(error_of(j), AllOf(HasSubstr("/model/params/0/num_heads"), HasSubstr("divisor of the row count 6")));
}

TEST(ScenarioLoader, PresetAndParamsAreExclusive) {
  auto j = minimal();
  j["model"]["preset"] = "llama";
  EXPECT_THAT(error_of(j), HasSubstr("exactly one of model.preset or model.params"));
  j = minimal();
  j["model"] = {{"preset", "llama"}, {"hidden", 60}, {"heads", 8}};
  EXPECT_THAT(error_of(j), AllOf(HasSubstr("/model/heads"), HasSubstr("divisor of hidden")));
}

TEST(ScenarioLoader, DuplicateParamNames) {
  auto j = minimal();
  j["model"]["params"].push_back({{"name", "w"}, {"shape", {2}}});
  EXPECT_THAT(error_of(j), AllOf(HasSubstr("/model/params/1/name"), HasSubstr("duplicate")));
}

TEST(ScenarioLoader, OverflowInjectionMustPointInsideTheRun) {
  auto j = minimal();
  j["engine"] = {{"dp", 2}, {"gas", 2}};
  j["overflow"] = json::array({{{"step", 0}, {"rank", 2}, {"param", "w"}}});
  EXPECT_THAT(error_of(j), HasSubstr("/overflow/0/rank"));
  j["overflow"] = json::array({{{"step", 3}, {"param", "w"}}});
  EXPECT_THAT(error_of(j), HasSubstr("/overflow/0/step"));
  j["overflow"] = json::array({{{"param", "nope"}}});
  EXPECT_THAT(error_of(j), AllOf(HasSubstr("/overflow/0/param"), HasSubstr("\"nope\"")));
  j["overflow"] = json::array({{{"param", "w"}, {"index", 32}}});
  EXPECT_THAT(error_of(j), AllOf(HasSubstr("/overflow/0/index"), HasSubstr("[0, 31]")));
}

TEST(ScenarioLoader, ZeroInitOnlyAtStage3) {
  auto j = minimal();
  j["engine"] = {{"stage", 2}, {"zero_init", true}};
  EXPECT_THAT(error_of(j), AllOf(HasSubstr("/engine/zero_init"), HasSubstr("stage is 3")));
}

TEST(ScenarioLoader, EnumValuesAreListed) {
  auto j = minimal();
  j["optimizer"] = {{"scale_rule", "muon"}};
  EXPECT_THAT(error_of(j), AllOf(HasSubstr("/optimizer/scale_rule"), HasSubstr("deepspeed|moonlight|spectral")));
}

TEST(ScenarioLoader, MissingModelAndName) {
  EXPECT_THAT(error_of(json::parse(R"({"name": "t"})")), HasSubstr("/model"));
  EXPECT_THAT(error_of(json::parse(R"({"model": {"params": [{"name": "w", "shape": [2]}]}})")), HasSubstr("/name"));
}

TEST(ScenarioLoader, NameMustMatchFileStem) {
  try {
    parse_scenario(minimal(), "scenarios/other.json", "other");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), AllOf(HasSubstr("/name"), HasSubstr("\"other\"")));
  }
}

TEST(ScenarioLoader, MalformedJsonAndMissingFileNameTheFile) {
  EXPECT_THROW(muoncheck::load_scenario("tests/core/no-such-file.json"), Error);
  try {
    muoncheck::load_scenario("tests/core/no-such-file.json");
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("no-such-file.json"));
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
  }
}

TEST(ScenarioLoader, RoundTripsThroughJson) {
  auto j = minimal();
  j["engine"] = {{"stage", 3}, {"dp", 2}, {"gas", 2}, {"zero_init", true}, {"param_dtype", "bf16"}, {"comm_dtype", "fp32"}};
  j["optimizer"] = {{"groups", json::array({{{"match", "w"}, {"lr_scale", 0.5}}})}, {"clip", {{"max_norm", 1.0}, {"mode", "update"}}}};
  j["loss_scaler"] = {{"type", "dynamic"}, {"hysteresis", 3}};
  j["overflow"] = json::array({{{"step", 1}, {"micro_step", 1}, {"rank", 1}, {"param", "w"}, {"index", 3}, {"value", "nan"}}});
  const auto a = parse_scenario(j, "t.json");
  const auto b = parse_scenario(muoncheck::scenario_to_json(a), "t.json");
  EXPECT_EQ(muoncheck::scenario_to_json(a), muoncheck::scenario_to_json(b));
  EXPECT_EQ(muoncheck::scenario_hash(a), muoncheck::scenario_hash(b));
  EXPECT_FALSE(b.optimizer.groups[0].weight_decay.has_value());
  EXPECT_EQ(b.overflow[0].value, muoncheck::OverflowValue::nan);
}

TEST(ScenarioLoader, HashChangesWithSemantics) {
  auto j = minimal();
  const auto a = parse_scenario(j, "t.json");
  j["optimizer"] = {{"lr", 0.03}};
  EXPECT_NE(muoncheck::scenario_hash(a), muoncheck::scenario_hash(parse_scenario(j, "t.json")));
}

}  // namespace
