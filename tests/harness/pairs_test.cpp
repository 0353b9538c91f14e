// 2-way feature interactions (harness/pairs/): what counts as exercised, which pairs are infeasible, the
// dynamic features read from the oracle run, the greedy builder, and the shipped suite at 100 %.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "core/scenario_io.hpp"
#include "harness/judge/scenario_selection.hpp"
#include "harness/pairs/covered_pairs.hpp"
#include "oracle/oracle.hpp"

namespace muoncheck::pairs {
namespace {

Scenario small(const std::string& extra_optimizer, const std::string& loss_scaler = R"({"type": "none"})",
               const std::string& overflow = "[]") {
  return parse_scenario(nlohmann::json::parse(R"({"name": "small", "seed": 5, "steps": 3,
    "model": {"params": [{"name": "a.weight", "shape": [8, 16]}, {"name": "norm.weight", "shape": [16]}]},
    "engine": {"stage": 1, "dp": 2, "micro_batch": 8, "param_dtype": "fp16"},
    "optimizer": )" + extra_optimizer + R"(, "loss_scaler": )" + loss_scaler + R"(, "overflow": )" + overflow + "}"),
                        "<small>");
}

Exercised of(const Scenario& s) { return exercised(s, oracle::run_oracle(s, oracle::Precision::float64)); }

std::set<std::string> pair_texts(const Exercised& x) {
  std::set<std::string> out;
  for (const auto& p : pairs_of(x)) out.insert(to_string(p));
  return out;
}

TEST(Pairs, ClipBindsIsReadFromTheRunInBothModes) {
  for (const std::string mode : {"raw_grad", "update"}) {
    EXPECT_TRUE(clip_binds(small(R"({"clip": {"mode": ")" + mode + R"(", "max_norm": 1e-3}})"),
                           oracle::run_oracle(small(R"({"clip": {"mode": ")" + mode + R"(", "max_norm": 1e-3}})"),
                                              oracle::Precision::float64)))
        << mode;
    const auto loose = small(R"({"clip": {"mode": ")" + mode + R"(", "max_norm": 1e4}})");
    EXPECT_FALSE(clip_binds(loose, oracle::run_oracle(loose, oracle::Precision::float64))) << mode;
  }
  // Update mode: the norm over the Muon update (NS output, about sqrt(8) here) binds at 1, where
  // the raw gradient's norm stays far below it.
  const auto raw = small(R"({"clip": {"mode": "raw_grad", "max_norm": 1.0}})");
  const auto upd = small(R"({"clip": {"mode": "update", "max_norm": 1.0}})");
  EXPECT_FALSE(clip_binds(raw, oracle::run_oracle(raw, oracle::Precision::float64)));
  EXPECT_TRUE(clip_binds(upd, oracle::run_oracle(upd, oracle::Precision::float64)));
}

TEST(Pairs, OverflowAndScaleGrowthAreReadFromTheRun) {
  const std::string dynamic = R"({"type": "dynamic", "initial_scale_power": 4, "scale_window": 1, "hysteresis": 1})";
  const std::string inject = R"([{"step": 1, "micro_step": 0, "rank": 0, "param": "a.weight", "index": 2}])";
  const auto quiet = of(small("{}", R"({"type": "dynamic", "initial_scale_power": 4})"));
  EXPECT_EQ(quiet.values.at("overflows"), "no");
  EXPECT_EQ(quiet.values.at("scale_grows"), "no");
  const auto both = of(small("{}", dynamic, inject));
  EXPECT_EQ(both.values.at("overflows"), "yes");
  EXPECT_EQ(both.values.at("scale_grows"), "yes");
}

TEST(Pairs, ParamFeaturesPairOnlyWithinOneParam) {
  Exercised x;
  x.scenario = "x";
  x.values = {{"stage", "2"}};
  x.params = {{{"param_rank", "2"}, {"block_shape", "wide"}, {"per_head", "yes"}},
              {{"param_rank", "3"}, {"block_shape", "tall"}, {"per_head", "no"}}};
  const auto got = pair_texts(x);
  EXPECT_TRUE(got.count("param_rank=3 & block_shape=tall"));
  EXPECT_TRUE(got.count("stage=2 & per_head=yes"));
  EXPECT_FALSE(got.count("param_rank=2 & block_shape=tall"));
  EXPECT_FALSE(got.count("block_shape=tall & per_head=yes"));
  EXPECT_EQ(got.size(), 3u * 2 + 3 * 2);   // stage with each param value, and three pairs per param
}

TEST(Pairs, InfeasiblePairsSayWhy) {
  const auto c = measure({});
  std::set<std::string> infeasible;
  for (const auto& [p, why] : c.infeasible) {
    EXPECT_FALSE(why.empty());
    infeasible.insert(to_string(p));
  }
  EXPECT_TRUE(infeasible.count("stage=1 & zero_init=yes"));
  EXPECT_FALSE(infeasible.count("stage=3 & zero_init=yes"));
  EXPECT_TRUE(infeasible.count("stage=0 & allgather_bucket=whole"));
  EXPECT_TRUE(infeasible.count("clip_mode=off & clip_binds=yes"));
  EXPECT_TRUE(infeasible.count("scaler=static & scale_grows=yes"));
  EXPECT_FALSE(infeasible.count("scaler=dynamic & scale_grows=yes"));
  EXPECT_EQ(c.covered, 0);
  EXPECT_EQ(c.uncovered.size(), static_cast<size_t>(c.feasible));
}

TEST(Pairs, DesignedRowsCoverEveryFeasiblePairAndOnlyFeasibleOnes) {
  const auto c = measure({});
  const auto rows = design_rows(c.uncovered);
  std::vector<Exercised> suite;
  for (size_t i = 0; i < rows.size(); ++i) {
    Exercised x;
    x.scenario = "row" + std::to_string(i);
    std::map<std::string, std::string> param;
    for (const auto& [f, v] : rows[i]) {
      const bool is_param = std::any_of(features().begin(), features().end(),
                                        [&](const Feature& g) { return g.name == f && g.level == Level::param; });
      (is_param ? param : x.values)[f] = v;
    }
    x.params = {param};
    for (const auto& p : pairs_of(x)) EXPECT_FALSE(infeasible_why(p)) << x.scenario << ": " << to_string(p);
    EXPECT_FALSE(rows[i].at("ns_method") == "gram" && rows[i].at("ns_dtype") == "bf16" && rows[i].at("ns_steps") == ">5")
        << x.scenario << ": Gram NS in bf16 beyond 5 steps";
    suite.push_back(x);
  }
  const auto after = measure(suite);
  EXPECT_EQ(after.covered, after.feasible);
  EXPECT_LT(rows.size(), 40u) << "a covering array of " << rows.size() << " rows";
}

TEST(Pairs, TheShippedSuiteCoversEveryFeasiblePair) {
  std::vector<Exercised> suite;
  for (const auto& s : select_scenarios({}, "scenarios", true)) suite.push_back(of(s));
  const auto c = measure(suite);
  std::string missing;
  for (const auto& p : c.uncovered) missing += "\n  " + to_string(p);
  EXPECT_EQ(c.covered, c.feasible) << "uncovered:" << missing;
}

}  // namespace
}  // namespace muoncheck::pairs
