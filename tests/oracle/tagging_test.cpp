// Tagging (§3): decided on layer shapes, identical with and without zero.Init
// placeholders; per-head counts from the preset's names or the scenario's tags.
#include <gtest/gtest.h>

#include "oracle/oracle.hpp"
#include "oracle/tagging.hpp"
#include "scenarios.hpp"

namespace muoncheck::oracle {
namespace {

int muon_count(const std::vector<ParamTag>& tags) {
  int n = 0;
  for (const auto& t : tags) n += t.use_muon;
  return n;
}

TEST(OracleTagging, llamaPresetTagsSevenMatricesPerLayerWithOrWithoutPlaceholders) {
  Scenario s = testing::llama(2);
  for (bool placeholders : {false, true}) {
    s.engine.zero_init = placeholders;
    const auto tags = tag_params(s, placeholders);
    ASSERT_EQ(tags.size(), s.model.params.size());
    EXPECT_EQ(muon_count(tags), 14) << "placeholders=" << placeholders;
    for (size_t i = 0; i < tags.size(); ++i) {
      EXPECT_EQ(tags[i].name, s.model.params[i].name);
      EXPECT_EQ(tags[i].num_heads, 0) << "per_head is off";
    }
    EXPECT_FALSE(tags.front().use_muon) << tags.front().name;  // embed_tokens
    EXPECT_FALSE(tags.back().use_muon) << tags.back().name;    // lm_head
  }
  EXPECT_EQ(tag_params(s, true).size(), tag_params(s, false).size());
}

TEST(OracleTagging, shapeAndNameRules) {
  EXPECT_TRUE(use_muon(testing::param("conv.weight", {8, 3, 3, 3})));
  EXPECT_TRUE(use_muon(testing::param("conv3.weight", {8, 4, 2})));
  EXPECT_FALSE(use_muon(testing::param("norm.weight", {64})));
  EXPECT_FALSE(use_muon(testing::param("model.Embed.weight", {8, 8})));
  EXPECT_FALSE(use_muon(testing::param("LM_HEAD.weight", {8, 8})));
  EXPECT_EQ(leaf_module("model.layers.0.self_attn.q_proj.weight"), "q_proj");
  EXPECT_EQ(leaf_module("attn.wq"), "wq");
  EXPECT_EQ(leaf_module("query"), "query");
}

TEST(OracleTagging, perHeadOnPresetSplitsQueryByHeadsAndKeyValueByKvHeads) {
  Scenario s = testing::llama(1);
  s.optimizer.per_head = true;
  for (const auto& t : tag_params(s, false)) {
    const std::string leaf = leaf_module(t.name);
    const int want = leaf == "q_proj" ? 4 : (leaf == "k_proj" || leaf == "v_proj") ? 2 : 0;
    EXPECT_EQ(t.num_heads, want) << t.name;
  }
}

TEST(OracleTagging, perHeadRejectsRowsThatAreNotHeadsTimesHeadDim) {
  Scenario s = testing::llama(1);
  s.optimizer.per_head = true;
  const int q = param_index(s, "model.layers.0.self_attn.q_proj.weight");
  s.model.params[q].shape = {48, 64};  // 48 ≠ 4 · 16
  EXPECT_EQ(tag_params(s, false)[q].num_heads, 0);
}

TEST(OracleTagging, withoutPresetOnlyExplicitHeadCountsSplit) {
  Scenario s = testing::small_mixed();
  s.optimizer.per_head = true;
  s.model.params = {testing::param("l.self_attn.q_proj.weight", {64, 64}),
                    testing::param("l.self_attn.k_proj.weight", {16, 64}),
                    testing::param("l.self_attn.v_proj.weight", {16, 64})};
  s.model.params[0].num_heads = 4;
  s.model.params[1].num_heads = 1;
  const auto tags = tag_params(s, true);
  EXPECT_EQ(tags[0].num_heads, 4);
  EXPECT_EQ(tags[1].num_heads, 1);
  EXPECT_EQ(tags[2].num_heads, 0) << "no preset and no explicit tag: the head count is unknown";
  s.optimizer.per_head = false;
  for (const auto& t : tag_params(s, false)) EXPECT_EQ(t.num_heads, 0) << t.name;
}

TEST(OracleTagging, trajectoryCarriesTagsAndNsCallsWithHeads) {
  Scenario s = testing::llama(1);
  s.optimizer.per_head = true;
  s.steps = 1;
  s.model.preset->hidden = 32;
  s.model.preset->intermediate = 48;
  s.model.preset->vocab = 16;
  s.model.params = expand_llama(*s.model.preset);
  const Trajectory tr = run_oracle(s, Precision::float64);
  EXPECT_EQ(tr.producer, "oracle:double");
  ASSERT_EQ(tr.steps[0].ns_calls.size(), 7u);
  for (const NsCall& c : tr.steps[0].ns_calls) {
    EXPECT_EQ(c.rank, 0);
    EXPECT_EQ(c.step, 0);
    EXPECT_EQ(c.heads, tr.tags[c.param].num_heads);
    EXPECT_TRUE(tr.tags[c.param].use_muon);
  }
}

}  // namespace
}  // namespace muoncheck::oracle
