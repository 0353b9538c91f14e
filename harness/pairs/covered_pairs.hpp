// 2-way feature interactions covered: of every pair of values of two different features
// (features.hpp) that a valid scenario can exercise together, the share some scenario does.
// Pairs no scenario can exercise are listed with the reason; the greedy builder proposes rows
// (one value per feature) that cover what is left, AETG-style: each row starts from the first
// uncovered pair and takes, feature by feature, the feasible value covering most new pairs.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/pairs/features.hpp"

namespace muoncheck::pairs {

struct FeatureValue {
  size_t feature = 0;   // index in features()
  size_t value = 0;     // index in its domain
  auto operator<=>(const FeatureValue&) const = default;
};

struct Pair {
  FeatureValue a, b;    // a.feature < b.feature
  auto operator<=>(const Pair&) const = default;
};
std::string to_string(const Pair& p);   // "stage=0 & allgather_bucket=whole"

// Why no valid scenario exercises the pair; nullopt when one can.
std::optional<std::string> infeasible_why(const Pair& p);

// Every pair `x` exercises (param-level pairs within one Muon param).
std::vector<Pair> pairs_of(const Exercised& x);

struct CoveredPairs {
  int feasible = 0, covered = 0;
  std::vector<Pair> uncovered;
  std::vector<std::pair<Pair, std::string>> infeasible;
  std::map<std::string, int> first_covered_by;   // scenario -> pairs it covered first (in the given order)
  double share() const { return feasible ? static_cast<double>(covered) / feasible : 1.0; }
};

CoveredPairs measure(const std::vector<Exercised>& suite);

// Rows that cover every pair of `uncovered`: feature name -> value. A cell the row needs for
// none of its pairs (a don't-care) takes the first value of its domain that fits (domains list
// the plain value first: fp32 NS, 5 steps, no clip, ...); a feature no value of which fits the
// row (allgather buckets at stage 0) is left out.
std::vector<std::map<std::string, std::string>> design_rows(const std::vector<Pair>& uncovered);

nlohmann::json to_json(const CoveredPairs& c, const std::vector<Exercised>& suite);

}  // namespace muoncheck::pairs
