// The fields added after the format's first release — lr schedules (optimizer and per
// group), checkpoint-resume, optimizer offload, compile: their errors name the file, the
// path and what was expected; set fields round-trip; defaults write nothing, so the
// canonical JSON (and hash) of a scenario without them is what it was.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.hpp"
#include "core/scenario_io.hpp"

namespace muoncheck {
namespace {

using nlohmann::json;
using ::testing::AllOf;
using ::testing::HasSubstr;

json minimal() {
  return json::parse(R"({"name": "t", "steps": 4, "model": {"params": [{"name": "w", "shape": [4, 8]}, {"name": "b", "shape": [8]}]}})");
}

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

TEST(ScenarioAdditions, DefaultsWriteNothingNew) {
  const auto j = scenario_to_json(parse_scenario(minimal(), "t.json"));
  EXPECT_FALSE(j.contains("checkpoint"));
  EXPECT_FALSE(j["optimizer"].contains("lr_schedule"));
  EXPECT_FALSE(j["engine"].contains("offload_optimizer"));
  EXPECT_FALSE(j["engine"].contains("compile"));
  // Saying the default out loud is the same scenario.
  auto k = minimal();
  k["optimizer"] = {{"lr_schedule", {{"shape", "constant"}}}};
  k["engine"] = {{"offload_optimizer", "none"}, {"compile", false}};
  EXPECT_EQ(scenario_hash(parse_scenario(k, "t.json")), scenario_hash(parse_scenario(minimal(), "t.json")));
}

TEST(ScenarioAdditions, SetFieldsRoundTripAndChangeTheHash) {
  auto j = minimal();
  j["engine"] = {{"dp", 2}, {"gas", 2}, {"stage", 2}, {"offload_optimizer", "cpu"}, {"compile", true}};
  j["optimizer"] = {{"lr_schedule", {{"shape", "cosine"}, {"warmup_steps", 1}, {"total_steps", 3}, {"min_ratio", 0.1}}},
                    {"groups", json::array({{{"match", "b"}, {"lr_schedule", {{"shape", "linear_warmup"}, {"warmup_steps", 2}}}}})}};
  j["checkpoint"] = {{"save_after_step", 1}, {"resume", {{"dp", 4}, {"stage", 1}}}};
  const auto a = parse_scenario(j, "t.json");
  const auto b = parse_scenario(scenario_to_json(a), "t.json");
  EXPECT_EQ(scenario_to_json(a), scenario_to_json(b));
  EXPECT_NE(scenario_hash(a), scenario_hash(parse_scenario(minimal(), "t.json")));
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
  LrSchedule warm{LrShape::linear_warmup, 4, 0, 0.0};
  EXPECT_DOUBLE_EQ(lr_factor(warm, 0), 0.25);
  EXPECT_DOUBLE_EQ(lr_factor(warm, 3), 1.0);
  EXPECT_DOUBLE_EQ(lr_factor(warm, 9), 1.0);
  LrSchedule cos{LrShape::cosine, 2, 6, 0.1};
  EXPECT_DOUBLE_EQ(lr_factor(cos, 0), 0.5);
  EXPECT_DOUBLE_EQ(lr_factor(cos, 2), 1.0);                       // p = 0
  EXPECT_DOUBLE_EQ(lr_factor(cos, 4), 0.1 + 0.9 * 0.5);           // p = 1/2
  EXPECT_DOUBLE_EQ(lr_factor(cos, 6), 0.1);                       // p = 1
  EXPECT_DOUBLE_EQ(lr_factor(cos, 50), 0.1);                      // clipped
  EXPECT_DOUBLE_EQ(lr_factor(LrSchedule{}, 7), 1.0);
}

TEST(ScenarioAdditions, AGroupScheduleReplacesTheOptimizersForItsParamsOnly) {
  auto j = minimal();
  j["optimizer"] = {{"lr", 0.02}, {"lr_schedule", {{"shape", "linear_warmup"}, {"warmup_steps", 2}}},
                    {"groups", json::array({{{"match", "b"}, {"lr_scale", 0.5}, {"lr_schedule", {{"shape", "constant"}}}}})}};
  const auto s = parse_scenario(j, "t.json");
  EXPECT_DOUBLE_EQ(muon_lr_at(s, "w", 0), 0.02 * 0.5);
  EXPECT_DOUBLE_EQ(adam_lr_at(s, "b", 0), 3e-4 * 0.5);            // the group's constant, its lr_scale
  EXPECT_DOUBLE_EQ(muon_lr_at(s, "w", 1), 0.02);
}

TEST(ScenarioAdditions, ScheduleErrorsNameTheFieldAndWhatWasExpected) {
  auto with = [](json sched) {
    auto j = minimal();
    j["optimizer"] = {{"lr_schedule", sched}};
    return j;
  };
  EXPECT_THAT(error_of(with({{"shape", "step"}})), AllOf(HasSubstr("bad.json"), HasSubstr("/optimizer/lr_schedule/shape")));
  EXPECT_THAT(error_of(with({{"shape", "linear_warmup"}})),
              AllOf(HasSubstr("/optimizer/lr_schedule/warmup_steps"), HasSubstr("required for linear_warmup")));
  EXPECT_THAT(error_of(with({{"shape", "constant"}, {"warmup_steps", 3}})),
              AllOf(HasSubstr("/optimizer/lr_schedule/warmup_steps"), HasSubstr("no warmup_steps for shape constant")));
  EXPECT_THAT(error_of(with({{"shape", "cosine"}, {"warmup_steps", 5}, {"total_steps", 5}})),
              AllOf(HasSubstr("/optimizer/lr_schedule/warmup_steps"), HasSubstr("fewer than total_steps (5)")));
  EXPECT_THAT(error_of(with({{"shape", "cosine"}, {"total_steps", 5}, {"min_ratio", 1.5}})),
              HasSubstr("/optimizer/lr_schedule/min_ratio"));
  auto j = minimal();
  j["optimizer"] = {{"groups", json::array({{{"match", "w"}, {"lr_schedule", {{"shape", "cosine"}}}}})}};
  EXPECT_THAT(error_of(j), AllOf(HasSubstr("/optimizer/groups/0/lr_schedule/total_steps"), HasSubstr("required for cosine")));
}

TEST(ScenarioAdditions, CheckpointErrorsNameTheFieldAndWhatWasExpected) {
  auto with = [](json ckpt, json engine = json::object()) {
    auto j = minimal();
    j["checkpoint"] = ckpt;
    j["engine"] = engine;
    return j;
  };
  EXPECT_THAT(error_of(with(json::object())), AllOf(HasSubstr("/checkpoint/save_after_step"), HasSubstr("required")));
  EXPECT_THAT(error_of(with({{"save_after_step", 3}})), AllOf(HasSubstr("/checkpoint/save_after_step"), HasSubstr("[0, 2]")));
  EXPECT_THAT(error_of(with({{"save_after_step", 0}, {"resume", {{"dp", 3}}}}, {{"dp", 2}})),
              AllOf(HasSubstr("/checkpoint/resume/dp"), HasSubstr("a divisor of engine.dp × engine.gas (2)")));
  EXPECT_THAT(error_of(with({{"save_after_step", 0}, {"resume", {{"stage", 4}}}})), HasSubstr("/checkpoint/resume/stage"));
  EXPECT_THAT(error_of(with({{"save_after_step", 0}, {"resume", {{"dpp", 1}}}})),
              AllOf(HasSubstr("/checkpoint/resume/dpp"), HasSubstr("unknown key")));
  auto pinned = with({{"save_after_step", 0}, {"resume", {{"dp", 1}}}}, {{"dp", 2}});
  pinned["overflow"] = json::array({{{"step", 2}, {"rank", 1}, {"param", "w"}}});
  EXPECT_THAT(error_of(pinned), AllOf(HasSubstr("/checkpoint/resume/dp"), HasSubstr("overflow injection after step 0")));
  auto one_step = with({{"save_after_step", 0}});
  one_step["steps"] = 1;
  EXPECT_THAT(error_of(one_step), AllOf(HasSubstr("/checkpoint/save_after_step"), HasSubstr("at least 2 steps")));
}

TEST(ScenarioAdditions, EngineKnobsAreChecked) {
  auto j = minimal();
  j["engine"] = {{"offload_optimizer", "nvme"}};
  EXPECT_THAT(error_of(j), AllOf(HasSubstr("/engine/offload_optimizer"), HasSubstr("cpu")));
  j["engine"] = {{"compile", "yes"}};
  EXPECT_THAT(error_of(j), HasSubstr("/engine/compile"));
}

}  // namespace
}  // namespace muoncheck
