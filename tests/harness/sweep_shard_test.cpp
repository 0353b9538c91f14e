// `sweep --shard I/N` and `muoncheck merge`: three shards of a seeded sweep are disjoint, cover
// it, and their merged record is the record of the sweep run on one machine (timing aside), with
// and without a counterexample (a fault switched on: the merge stops where one machine stops).
// Shards that are not of one sweep are bad input naming the file and the field.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "core/error.hpp"
#include "harness/sweep/sweep_merge.hpp"
#include "harness/sweep/sweep_report.hpp"
#include "impl/faults/fault_catalogue.hpp"

namespace muoncheck {
namespace {

SweepOptions sweep_options(int cases, std::vector<std::string> faults = {}) {
  SweepOptions o;
  o.cases = cases;
  o.seed = 3;
  o.faults = std::move(faults);
  if (!o.faults.empty()) o.focus = generators::focus_for_fault(o.faults.front());
  o.cases_dir = (std::filesystem::path(::testing::TempDir()) / "muoncheck-shard-cases").string();
  o.max_shrink_judgements = 10;
  o.max_shrink_seconds = 20;
  return o;
}

// The record without what depends on the clock.
nlohmann::json timeless(nlohmann::json j) {
  for (const char* k : {"seconds", "cases_per_minute", "merged_shards"}) j.erase(k);
  return j;
}

std::vector<std::pair<std::string, nlohmann::json>> shard_records(const SweepOptions& whole, int n) {
  std::vector<std::pair<std::string, nlohmann::json>> out;
  for (int i = 0; i < n; ++i) {
    SweepOptions o = whole;
    o.shard = i;
    o.shards = n;
    out.emplace_back("shard-" + std::to_string(i + 1) + ".json", sweep_json(o, run_sweep(o)));
  }
  return out;
}

nlohmann::json merged_json(const std::vector<std::pair<std::string, nlohmann::json>>& records) {
  const MergedSweep m = merge_sweep_records(records);
  return sweep_json(m.options, m.result);
}

TEST(SweepShards, AreDisjointCoverTheSweepAndMergeIntoItsRecord) {
  const SweepOptions whole = sweep_options(20);
  const nlohmann::json one_machine = sweep_json(whole, run_sweep(whole));
  const auto shards = shard_records(whole, 3);
  std::multiset<int> seen;
  for (const auto& [file, r] : shards) {
    EXPECT_EQ(r["shard"]["count"], 3);
    for (const auto& c : r["cases"]) seen.insert(c["case"].get<int>());
  }
  EXPECT_EQ(seen.size(), 20u);   // 7 + 7 + 6, each case once
  for (int n = 1; n <= 20; ++n) EXPECT_EQ(seen.count(n), 1u) << "case " << n;
  EXPECT_EQ(timeless(merged_json(shards)), timeless(one_machine));
  // The order the records are given in does not matter.
  EXPECT_EQ(timeless(merged_json({shards[2], shards[0], shards[1]})), timeless(one_machine));
}

TEST(SweepShards, MergeStopsAtTheFirstCounterexampleAsOneMachineDoes) {
  const std::string fault(impl::fault_catalogue().front().id);
  const SweepOptions whole = sweep_options(12, {fault});
  const SweepResult r = run_sweep(whole);
  ASSERT_TRUE(r.failure) << "fault " << fault << " survived " << r.cases_run << " cases";
  const auto shards = shard_records(whole, 3);
  const nlohmann::json merged = merged_json(shards);
  EXPECT_EQ(timeless(merged), timeless(sweep_json(whole, r)));
  EXPECT_EQ(merged["failure"]["found_after"], r.failure->found_after);
  EXPECT_EQ(merged["cases_run"], r.cases_run);
}

TEST(SweepShards, RecordsNotOfOneSweepAreBadInputNamingFileAndField) {
  const SweepOptions whole = sweep_options(3);
  auto shards = shard_records(whole, 3);
  auto expect_bad = [](const std::vector<std::pair<std::string, nlohmann::json>>& records, const std::string& part) {
    try {
      merge_sweep_records(records);
      ADD_FAILURE() << "merged, expected an error naming " << part;
    } catch (const Error& e) {
      EXPECT_TRUE(e.kind() == ErrorKind::BadInput || e.kind() == ErrorKind::Usage) << e.what();
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  expect_bad({shards[0], shards[1]}, "3 shards, 2 record(s)");
  expect_bad({shards[0], shards[1], shards[1]}, "shard-2.json: shard.index");
  auto other_seed = shards;
  other_seed[2].second["seed"] = 4;
  expect_bad(other_seed, "shard-3.json: seed");
  auto wrong_case = shards;
  wrong_case[1].second["cases"][0]["case"] = 1;
  expect_bad(wrong_case, "shard-2.json: cases: case 1 is not one of shard 2/3's");
  auto not_sweep = shards;
  not_sweep[0].second.erase("cases");
  expect_bad(not_sweep, "shard-1.json: cases: missing");
}

TEST(SweepShards, AShardBeyondTheCasesIsAUsageError) {
  SweepOptions o = sweep_options(2);
  o.shard = 2;
  o.shards = 3;
  EXPECT_THROW(run_sweep(o), Error);
}

}  // namespace
}  // namespace muoncheck
