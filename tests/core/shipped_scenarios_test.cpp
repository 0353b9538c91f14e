// Every scenario shipped in scenarios/ loads, and the named ones the harness and
// later checks refer to describe what their names promise.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/scenario_io.hpp"

namespace {

muoncheck::Scenario shipped(const std::string& name) { return muoncheck::load_scenario("scenarios/" + name + ".json"); }

TEST(ShippedScenarios, AllLoad) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator("scenarios")) {
    const auto path = e.path().string();
    if (e.path().extension() != ".json" || path.ends_with(".schema.json")) continue;
    EXPECT_NO_THROW(muoncheck::load_scenario(path)) << path;
    ++n;
  }
  EXPECT_GE(n, 11);
}

TEST(ShippedScenarios, TwoLayerFamilySplitsOneGlobalBatchOfEight) {
  for (const char* name : {"two-layer-gas1-z2", "two-layer-gas4-z2", "two-layer-gas1-z3", "two-layer-gas4-z3"}) {
    const auto s = shipped(name);
    EXPECT_EQ(s.engine.global_batch(), 8) << name;
    EXPECT_EQ(s.engine.dp, 2) << name;
    ASSERT_EQ(s.model.params.size(), 2u) << name;
    EXPECT_EQ(s.model.params[0].shape, (std::vector<int64_t>{64, 64})) << name;
    EXPECT_EQ(s.steps, 3) << name;
  }
}

TEST(ShippedScenarios, LlamaPresetExpandsToHfNames) {
  const auto s = shipped("llama2-zero3-init");
  EXPECT_TRUE(s.engine.zero_init);
  EXPECT_EQ(s.engine.stage, 3);
  ASSERT_EQ(s.model.params.size(), 1u + 2 * 9 + 1 + 1);
  EXPECT_EQ(s.model.params.front().name, "model.embed_tokens.weight");
  EXPECT_EQ(s.model.params[1].name, "model.layers.0.self_attn.q_proj.weight");
  EXPECT_EQ(s.model.params[2].shape, (std::vector<int64_t>{32, 64}));  // k: kv_heads·hd × hidden
  EXPECT_EQ(s.model.params[5].shape, (std::vector<int64_t>{176, 64}));  // gate
  EXPECT_EQ(s.model.params.back().name, "lm_head.weight");
}

TEST(ShippedScenarios, StraddleMatrixCrossesThePartitionBoundary) {
  const auto s = shipped("straddle-z1");
  const int64_t total = muoncheck::total_elements(s.model);
  const int64_t boundary = total / s.engine.dp;
  const int64_t begin = muoncheck::element_count(s.model.params[0].shape);
  const int64_t end = begin + muoncheck::element_count(s.model.params[1].shape);
  EXPECT_LT(begin, boundary);
  EXPECT_GT(end, boundary);
}

}  // namespace
