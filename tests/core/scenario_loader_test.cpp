// The loader rejects each kind of bad input with one message that names the
// file, the JSON path and what was expected; good input round-trips.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.hpp"
#include "core/ns_schedules.hpp"
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
  EXPECT_THAT(error_of(j), AllOf(HasSubstr("/optimizer/scale_rule"), HasSubstr("deepspeed|moonlight|spectral|max_dim")));
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

namespace muoncheck {
namespace {

// The fields added after the format's first release — lr schedules (optimizer and per
// group), checkpoint-resume, optimizer offload, compile: their errors name the file, the
// path and what was expected; set fields round-trip; defaults write nothing, so the
// canonical JSON (and hash) of a scenario without them is what it was.
json two_params() {
  return json::parse(R"({"name": "t", "steps": 4, "model": {"params": [{"name": "w", "shape": [4, 8]}, {"name": "b", "shape": [8]}]}})");
}

TEST(ScenarioAdditions, DefaultsWriteNothingNew) {
  const auto j = scenario_to_json(parse_scenario(two_params(), "t.json"));
  EXPECT_FALSE(j.contains("checkpoint"));
  EXPECT_FALSE(j["optimizer"].contains("lr_schedule"));
  EXPECT_FALSE(j["engine"].contains("offload_optimizer"));
  EXPECT_FALSE(j["engine"].contains("compile"));
  // Saying the default out loud is the same scenario.
  auto k = two_params();
  k["optimizer"] = {{"lr_schedule", {{"shape", "constant"}}}};
  k["engine"] = {{"offload_optimizer", "none"}, {"compile", false}};
  EXPECT_EQ(scenario_hash(parse_scenario(k, "t.json")), scenario_hash(parse_scenario(two_params(), "t.json")));
}

TEST(ScenarioAdditions, SetFieldsRoundTripAndChangeTheHash) {
  auto j = two_params();
  j["engine"] = {{"dp", 2}, {"gas", 2}, {"stage", 2}, {"offload_optimizer", "cpu"}, {"compile", true}};
  j["optimizer"] = {{"lr_schedule", {{"shape", "cosine"}, {"warmup_steps", 1}, {"total_steps", 3}, {"min_ratio", 0.1}}},
                    {"groups", json::array({{{"match", "b"}, {"lr_schedule", {{"shape", "linear_warmup"}, {"warmup_steps", 2}}}}})}};
  j["checkpoint"] = {{"save_after_step", 1}, {"resume", {{"dp", 4}, {"stage", 1}}}};
  const auto a = parse_scenario(j, "t.json");
  const auto b = parse_scenario(scenario_to_json(a), "t.json");
  EXPECT_EQ(scenario_to_json(a), scenario_to_json(b));
  EXPECT_NE(scenario_hash(a), scenario_hash(parse_scenario(two_params(), "t.json")));
  EXPECT_EQ(b.engine.offload_optimizer, OffloadDevice::cpu);
  EXPECT_TRUE(b.engine.compile);
  ASSERT_TRUE(b.checkpoint.has_value());
  EXPECT_EQ(b.checkpoint->save_after_step, 1);
  EXPECT_EQ(b.checkpoint->resume.dp, 4);
  const EngineConfig e = resume_engine(b);
  EXPECT_EQ(e.dp, 4);
  EXPECT_EQ(e.gas, 1);        // dp × gas = 4 stays
  EXPECT_EQ(e.stage, 1);
  EXPECT_FALSE(without_checkpoint(b).checkpoint.has_value());
}

TEST(ScenarioAdditions, ScheduleFactorsFollowTheFormulas) {
  LrSchedule warm{LrShape::linear_warmup, 4, 0, 0.0, {}};
  EXPECT_DOUBLE_EQ(lr_factor(warm, 0), 0.25);
  EXPECT_DOUBLE_EQ(lr_factor(warm, 3), 1.0);
  EXPECT_DOUBLE_EQ(lr_factor(warm, 9), 1.0);
  LrSchedule cos{LrShape::cosine, 2, 6, 0.1, {}};
  EXPECT_DOUBLE_EQ(lr_factor(cos, 0), 0.5);
  EXPECT_DOUBLE_EQ(lr_factor(cos, 2), 1.0);                       // p = 0
  EXPECT_DOUBLE_EQ(lr_factor(cos, 4), 0.1 + 0.9 * 0.5);           // p = 1/2
  EXPECT_DOUBLE_EQ(lr_factor(cos, 6), 0.1);                       // p = 1
  EXPECT_DOUBLE_EQ(lr_factor(cos, 50), 0.1);                      // clipped
  EXPECT_DOUBLE_EQ(lr_factor(LrSchedule{}, 7), 1.0);
  LrSchedule table{LrShape::table, 0, 0, 0.0, {0.0, 0.1, 2.5}};
  EXPECT_DOUBLE_EQ(lr_factor(table, 0), 0.0);
  EXPECT_DOUBLE_EQ(lr_factor(table, 1), 0.1);
  EXPECT_DOUBLE_EQ(lr_factor(table, 2), 2.5);
  EXPECT_DOUBLE_EQ(lr_factor(table, 40), 2.5);                    // the last factor holds
}

TEST(ScenarioAdditions, ATableScheduleRoundTripsAndItsFactorsAreTheRates) {
  auto j = two_params();
  j["optimizer"] = {{"lr", 0.02}, {"adam", {{"lr", 0.02}}},
                    {"lr_schedule", {{"shape", "table"}, {"factors", {0.1, 0.1, 0.55, 1.0}}}}};
  const auto s = parse_scenario(j, "t.json");
  EXPECT_EQ(scenario_to_json(s)["optimizer"]["lr_schedule"], j["optimizer"]["lr_schedule"]);
  EXPECT_EQ(scenario_to_json(parse_scenario(scenario_to_json(s), "t.json")), scenario_to_json(s));
  EXPECT_DOUBLE_EQ(muon_lr_at(s, "w", 2), 0.02 * 0.55);
  EXPECT_DOUBLE_EQ(adam_lr_at(s, "b", 3), 0.02);
  auto shifted = j;
  shifted["optimizer"]["lr_schedule"]["factors"] = {0.1, 0.55, 1.0, 1.0};
  EXPECT_NE(scenario_hash(parse_scenario(shifted, "t.json")), scenario_hash(s));
}

TEST(ScenarioAdditions, AGroupScheduleReplacesTheOptimizersForItsParamsOnly) {
  auto j = two_params();
  j["optimizer"] = {{"lr", 0.02}, {"lr_schedule", {{"shape", "linear_warmup"}, {"warmup_steps", 2}}},
                    {"groups", json::array({{{"match", "b"}, {"lr_scale", 0.5}, {"lr_schedule", {{"shape", "constant"}}}}})}};
  const auto s = parse_scenario(j, "t.json");
  EXPECT_DOUBLE_EQ(muon_lr_at(s, "w", 0), 0.02 * 0.5);
  EXPECT_DOUBLE_EQ(adam_lr_at(s, "b", 0), 3e-4 * 0.5);            // the group's constant, its lr_scale
  EXPECT_DOUBLE_EQ(muon_lr_at(s, "w", 1), 0.02);
}

TEST(ScenarioAdditions, ScheduleErrorsNameTheFieldAndWhatWasExpected) {
  auto with = [](json sched) {
    auto j = two_params();
    j["optimizer"] = {{"lr_schedule", sched}};
    return j;
  };
  EXPECT_THAT(::error_of(with({{"shape", "step"}})), AllOf(HasSubstr("bad.json"), HasSubstr("/optimizer/lr_schedule/shape")));
  EXPECT_THAT(::error_of(with({{"shape", "linear_warmup"}})),
              AllOf(HasSubstr("/optimizer/lr_schedule/warmup_steps"), HasSubstr("required for linear_warmup")));
  EXPECT_THAT(::error_of(with({{"shape", "constant"}, {"warmup_steps", 3}})),
              AllOf(HasSubstr("/optimizer/lr_schedule/warmup_steps"), HasSubstr("no warmup_steps for shape constant")));
  EXPECT_THAT(::error_of(with({{"shape", "cosine"}, {"warmup_steps", 5}, {"total_steps", 5}})),
              AllOf(HasSubstr("/optimizer/lr_schedule/warmup_steps"), HasSubstr("fewer than total_steps (5)")));
  EXPECT_THAT(::error_of(with({{"shape", "cosine"}, {"total_steps", 5}, {"min_ratio", 1.5}})),
              HasSubstr("/optimizer/lr_schedule/min_ratio"));
  EXPECT_THAT(::error_of(with({{"shape", "table"}})),
              AllOf(HasSubstr("bad.json"), HasSubstr("/optimizer/lr_schedule/factors"), HasSubstr("required for table")));
  EXPECT_THAT(::error_of(with({{"shape", "table"}, {"factors", json::array()}})),
              AllOf(HasSubstr("/optimizer/lr_schedule/factors"), HasSubstr("a non-empty array")));
  EXPECT_THAT(::error_of(with({{"shape", "table"}, {"factors", {1.0, -0.5}}})),
              AllOf(HasSubstr("/optimizer/lr_schedule/factors/1"), HasSubstr("in [0, 1e6]"), HasSubstr("-0.5")));
  EXPECT_THAT(::error_of(with({{"shape", "table"}, {"factors", {1.0, "x"}}})),
              AllOf(HasSubstr("/optimizer/lr_schedule/factors/1"), HasSubstr("a finite number")));
  EXPECT_THAT(::error_of(with({{"shape", "table"}, {"factors", {1.0}}, {"warmup_steps", 2}})),
              AllOf(HasSubstr("/optimizer/lr_schedule/warmup_steps"), HasSubstr("no warmup_steps for shape table")));
  EXPECT_THAT(::error_of(with({{"shape", "cosine"}, {"total_steps", 5}, {"factors", {1.0}}})),
              AllOf(HasSubstr("/optimizer/lr_schedule/factors"), HasSubstr("no factors for shape cosine")));
  auto j = two_params();
  j["optimizer"] = {{"groups", json::array({{{"match", "w"}, {"lr_schedule", {{"shape", "cosine"}}}}})}};
  EXPECT_THAT(::error_of(j), AllOf(HasSubstr("/optimizer/groups/0/lr_schedule/total_steps"), HasSubstr("required for cosine")));
}

TEST(ScenarioAdditions, CheckpointErrorsNameTheFieldAndWhatWasExpected) {
  auto with = [](json ckpt, json engine = json::object()) {
    auto j = two_params();
    j["checkpoint"] = ckpt;
    j["engine"] = engine;
    return j;
  };
  EXPECT_THAT(::error_of(with(json::object())), AllOf(HasSubstr("/checkpoint/save_after_step"), HasSubstr("required")));
  EXPECT_THAT(::error_of(with({{"save_after_step", 3}})), AllOf(HasSubstr("/checkpoint/save_after_step"), HasSubstr("[0, 2]")));
  EXPECT_THAT(::error_of(with({{"save_after_step", 0}, {"resume", {{"dp", 3}}}}, {{"dp", 2}})),
              AllOf(HasSubstr("/checkpoint/resume/dp"), HasSubstr("a divisor of engine.dp × engine.gas (2)")));
  EXPECT_THAT(::error_of(with({{"save_after_step", 0}, {"resume", {{"stage", 4}}}})), HasSubstr("/checkpoint/resume/stage"));
  EXPECT_THAT(::error_of(with({{"save_after_step", 0}, {"resume", {{"dpp", 1}}}})),
              AllOf(HasSubstr("/checkpoint/resume/dpp"), HasSubstr("unknown key")));
  auto pinned = with({{"save_after_step", 0}, {"resume", {{"dp", 1}}}}, {{"dp", 2}});
  pinned["overflow"] = json::array({{{"step", 2}, {"rank", 1}, {"param", "w"}}});
  EXPECT_THAT(::error_of(pinned), AllOf(HasSubstr("/checkpoint/resume/dp"), HasSubstr("overflow injection after step 0")));
  auto one_step = with({{"save_after_step", 0}});
  one_step["steps"] = 1;
  EXPECT_THAT(::error_of(one_step), AllOf(HasSubstr("/checkpoint/save_after_step"), HasSubstr("at least 2 steps")));
}

TEST(ScenarioAdditions, EngineKnobsAreChecked) {
  auto j = two_params();
  j["engine"] = {{"offload_optimizer", "nvme"}};
  const auto nvme = parse_scenario(j, "t.json");
  EXPECT_EQ(nvme.engine.offload_optimizer, OffloadDevice::nvme);
  EXPECT_EQ(scenario_to_json(nvme)["engine"]["offload_optimizer"], "nvme");
  j["engine"] = {{"offload_optimizer", "disk"}};
  EXPECT_THAT(::error_of(j), AllOf(HasSubstr("/engine/offload_optimizer"), HasSubstr("nvme")));
  j["engine"] = {{"compile", "yes"}};
  EXPECT_THAT(::error_of(j), HasSubstr("/engine/compile"));
}


// NS coefficient schedules (docs/scenario-format.md): a triple, a list of ns_steps triples, or a
// schedule's name; errors name the file, the field (with the element's index) and what was expected.
json with_coefficients(const json& coefficients) {
  auto j = two_params();
  j["optimizer"] = {{"ns_coefficients", coefficients}};
  return j;
}

TEST(NsCoefficients, ATripleIsEveryIterationsAndWritesAsBefore) {
  const auto s = parse_scenario(with_coefficients({1.5, -0.5, 0.0}), "t.json");
  ASSERT_EQ(s.optimizer.ns_coefficients.size(), 1u);
  EXPECT_EQ(s.optimizer.ns_steps, 5);
  EXPECT_DOUBLE_EQ(ns_coefficients_at(s.optimizer, 4).a, 1.5);
  EXPECT_EQ(scenario_to_json(s)["optimizer"]["ns_coefficients"], json({1.5, -0.5, 0.0}));
  // The default triple said out loud is the same scenario.
  EXPECT_EQ(scenario_hash(parse_scenario(with_coefficients({3.4445, -4.775, 2.0315}), "t.json")),
            scenario_hash(parse_scenario(two_params(), "t.json")));
}

TEST(NsCoefficients, AListGivesEachIterationItsTripleAndTheCount) {
  const json list = {{1, 2, 3}, {4, 5, 6}, {7, 8, 9}};
  const auto s = parse_scenario(with_coefficients(list), "t.json");
  EXPECT_EQ(s.optimizer.ns_steps, 3);   // absent ns_steps: the list's length
  EXPECT_DOUBLE_EQ(ns_coefficients_at(s.optimizer, 1).b, 5.0);
  EXPECT_DOUBLE_EQ(ns_coefficients_at(s.optimizer, 2).c, 9.0);
  EXPECT_THROW(ns_coefficients_at(s.optimizer, 3), Error);
  const auto again = parse_scenario(scenario_to_json(s), "t.json");
  EXPECT_EQ(scenario_to_json(again), scenario_to_json(s));
  EXPECT_EQ(ns_iterations_json(s.optimizer), list);
  EXPECT_NE(scenario_hash(s), scenario_hash(parse_scenario(two_params(), "t.json")));
}

TEST(NsCoefficients, ANamedScheduleIsItsPublishedListAndStaysANameInTheCanonicalJson) {
  const auto s = parse_scenario(with_coefficients("polar_express"), "t.json");
  EXPECT_EQ(s.optimizer.ns_steps, 8);
  EXPECT_EQ(s.optimizer.ns_schedule, "polar_express");
  EXPECT_DOUBLE_EQ(ns_coefficients_at(s.optimizer, 0).a, 8.2051);
  EXPECT_DOUBLE_EQ(ns_coefficients_at(s.optimizer, 7).c, 0.375);
  EXPECT_EQ(scenario_to_json(s)["optimizer"]["ns_coefficients"], "polar_express");
  EXPECT_EQ(scenario_hash(parse_scenario(scenario_to_json(s), "t.json")), scenario_hash(s));
  for (const auto& sch : ns_schedules()) {   // every name loads, to its own list
    const auto t = parse_scenario(with_coefficients(sch.name), "t.json");
    EXPECT_EQ(t.optimizer.ns_coefficients, sch.coefficients) << sch.name;
    EXPECT_EQ(t.optimizer.ns_steps, static_cast<int>(sch.coefficients.size())) << sch.name;
  }
}

TEST(NsCoefficients, ErrorsNameTheFileTheFieldAndWhatWasExpected) {
  auto steps = with_coefficients("quintic");
  steps["optimizer"]["ns_steps"] = 6;
  EXPECT_THAT(::error_of(steps), AllOf(HasSubstr("bad.json: at /optimizer/ns_coefficients"),
                                       HasSubstr("one triple per iteration: 6 (ns_steps)"),
                                       HasSubstr("got 5 triples (schedule \"quintic\")")));
  auto list = with_coefficients({{1, 2, 3}, {4, 5, 6}});
  list["optimizer"]["ns_steps"] = 5;
  EXPECT_THAT(::error_of(list), AllOf(HasSubstr("/optimizer/ns_coefficients"), HasSubstr("got 2 triples")));
  EXPECT_THAT(::error_of(with_coefficients({{1, 2, 3}, {4, 5}})),
              AllOf(HasSubstr("/optimizer/ns_coefficients/1"), HasSubstr("a triple [a, b, c]")));
  EXPECT_THAT(::error_of(with_coefficients({{1, 2, 3}, {4, "5", 6}})),
              AllOf(HasSubstr("/optimizer/ns_coefficients/1/1"), HasSubstr("a finite number")));
  EXPECT_THAT(::error_of(with_coefficients({1.0, std::nan(""), 0.0})),
              AllOf(HasSubstr("/optimizer/ns_coefficients/1"), HasSubstr("a finite number")));
  EXPECT_THAT(::error_of(with_coefficients({{1, 2, 3}, {4, 5, INFINITY}})),
              AllOf(HasSubstr("/optimizer/ns_coefficients/1/2"), HasSubstr("a finite number")));
  EXPECT_THAT(::error_of(with_coefficients("polar-express")),
              AllOf(HasSubstr("/optimizer/ns_coefficients"), HasSubstr("\"quintic\", \"polar_express\""),
                    HasSubstr("string \"polar-express\"")));
  EXPECT_THAT(::error_of(with_coefficients({1, 2})), HasSubstr("/optimizer/ns_coefficients"));
  EXPECT_THAT(::error_of(with_coefficients(json::array())), HasSubstr("/optimizer/ns_coefficients"));
  EXPECT_THAT(::error_of(with_coefficients(json(std::vector<json>(33, json({1, 2, 3}))))), HasSubstr("at most 32 triples"));
}

}  // namespace
}  // namespace muoncheck
