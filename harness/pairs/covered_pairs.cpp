#include "harness/pairs/covered_pairs.hpp"

#include <algorithm>
#include <random>
#include <set>

namespace muoncheck::pairs {

namespace {

size_t feature_index(const std::string& name) {
  const auto& f = features();
  for (size_t i = 0; i < f.size(); ++i)
    if (f[i].name == name) return i;
  return f.size();
}

std::optional<FeatureValue> value_of(const std::string& feature, const std::string& value) {
  const size_t i = feature_index(feature);
  if (i == features().size()) return std::nullopt;
  const auto& d = features()[i].values;
  const auto it = std::find(d.begin(), d.end(), value);
  if (it == d.end()) return std::nullopt;
  return FeatureValue{i, static_cast<size_t>(it - d.begin())};
}

const std::string& name(const FeatureValue& v) { return features()[v.feature].name; }
const std::string& text(const FeatureValue& v) { return features()[v.feature].values[v.value]; }

Pair ordered(FeatureValue x, FeatureValue y) { return x.feature < y.feature ? Pair{x, y} : Pair{y, x}; }

// The value of `feature` in the pair, or "" when the pair is not about it.
std::string in_pair(const Pair& p, const std::string& feature) {
  if (name(p.a) == feature) return text(p.a);
  if (name(p.b) == feature) return text(p.b);
  return "";
}

std::vector<Pair> all_pairs() {
  std::vector<Pair> out;
  const auto& f = features();
  for (size_t i = 0; i < f.size(); ++i)
    for (size_t j = i + 1; j < f.size(); ++j)
      for (size_t a = 0; a < f[i].values.size(); ++a)
        for (size_t b = 0; b < f[j].values.size(); ++b) out.push_back({{i, a}, {j, b}});
  return out;
}

}  // namespace

std::string to_string(const Pair& p) { return name(p.a) + "=" + text(p.a) + " & " + name(p.b) + "=" + text(p.b); }

std::optional<std::string> infeasible_why(const Pair& p) {
  const std::string stage = in_pair(p, "stage");
  if (stage != "" && stage != "3" && in_pair(p, "zero_init") == "yes")
    return "zero_init is valid only at stage 3 (the loader rejects it below)";
  if (stage == "0" && !in_pair(p, "allgather_bucket").empty())
    return "stage 0 gathers no parameters: allgather_bucket_size is unused";
  if (in_pair(p, "clip_mode") == "off" && in_pair(p, "clip_binds") == "yes") return "with clipping off nothing can bind";
  const std::string scaler = in_pair(p, "scaler");
  if ((scaler == "none" || scaler == "static") && in_pair(p, "scale_grows") == "yes")
    return "only the dynamic loss scaler changes the scale (docs/semantics.md §4.3)";
  return std::nullopt;
}

std::vector<Pair> pairs_of(const Exercised& x) {
  std::vector<FeatureValue> scen;
  for (const auto& [f, v] : x.values)
    if (const auto fv = value_of(f, v)) scen.push_back(*fv);
  std::set<Pair> out;
  for (size_t i = 0; i < scen.size(); ++i)
    for (size_t j = i + 1; j < scen.size(); ++j) out.insert(ordered(scen[i], scen[j]));
  for (const auto& row : x.params) {
    std::vector<FeatureValue> mine;
    for (const auto& [f, v] : row)
      if (const auto fv = value_of(f, v)) mine.push_back(*fv);
    for (size_t i = 0; i < mine.size(); ++i) {
      for (const auto& s : scen) out.insert(ordered(s, mine[i]));
      for (size_t j = i + 1; j < mine.size(); ++j) out.insert(ordered(mine[i], mine[j]));
    }
  }
  return {out.begin(), out.end()};
}

CoveredPairs measure(const std::vector<Exercised>& suite) {
  CoveredPairs c;
  std::set<Pair> seen;
  for (const auto& x : suite) {
    int fresh = 0;
    for (const auto& p : pairs_of(x)) fresh += seen.insert(p).second;
    c.first_covered_by[x.scenario] = fresh;
  }
  for (const auto& p : all_pairs()) {
    if (const auto why = infeasible_why(p)) {
      c.infeasible.emplace_back(p, *why);
      continue;
    }
    ++c.feasible;
    if (seen.count(p)) ++c.covered;
    else c.uncovered.push_back(p);
  }
  return c;
}

namespace {

using Row = std::vector<std::optional<size_t>>;

bool has(const Row& row, const std::string& feature, const std::string& value) {
  const auto fv = value_of(feature, value);
  return fv && row[fv->feature] == fv->value;
}

// Can cell i of `row` take value v? Every pair it makes must be feasible, and the row must not
// become Gram NS in bf16 beyond 5 steps: chaotic, its numeric verdicts inconclusive (each of
// those pairs is feasible and reachable through the other values).
bool fits(Row row, size_t i, size_t v) {
  for (size_t j = 0; j < row.size(); ++j)
    if (j != i && row[j] && infeasible_why(ordered({i, v}, {j, *row[j]}))) return false;
  row[i] = v;
  return !(has(row, "ns_method", "gram") && has(row, "ns_dtype", "bf16") && has(row, "ns_steps", ">5"));
}

// One candidate row around `seed`: features in `order`, each given the feasible value (tried in a
// shuffled order) that covers most uncovered pairs with the values already chosen.
Row candidate_row(const Pair& seed, const std::set<Pair>& left, std::mt19937& rng) {
  const auto& f = features();
  Row row(f.size());
  row[seed.a.feature] = seed.a.value;
  row[seed.b.feature] = seed.b.value;
  std::vector<size_t> order(f.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  for (const size_t i : order) {
    if (row[i]) continue;
    std::vector<size_t> values(f[i].values.size());
    for (size_t v = 0; v < values.size(); ++v) values[v] = v;
    std::shuffle(values.begin(), values.end(), rng);
    int best_gain = -1;
    for (const size_t v : values) {
      if (!fits(row, i, v)) continue;
      int gain = 0;
      for (size_t j = 0; j < f.size(); ++j)
        if (row[j] && j != i) gain += left.count(ordered({i, v}, {j, *row[j]})) ? 1 : 0;
      if (gain > best_gain) {
        best_gain = gain;
        row[i] = v;
      }
    }
  }
  return row;
}

std::vector<Pair> pairs_in(const Row& row) {
  std::vector<Pair> out;
  for (size_t i = 0; i < row.size(); ++i)
    for (size_t j = i + 1; j < row.size(); ++j)
      if (row[i] && row[j]) out.push_back({{i, *row[i]}, {j, *row[j]}});
  return out;
}

}  // namespace

std::vector<std::map<std::string, std::string>> design_rows(const std::vector<Pair>& uncovered) {
  constexpr int kCandidates = 64;   // rows tried per row kept (AETG's M); the best one stays
  std::set<Pair> left(uncovered.begin(), uncovered.end());
  std::mt19937 rng(26);             // fixed: the same suite always gets the same proposal
  const auto& f = features();
  std::vector<Row> kept;
  while (!left.empty()) {
    Row best;
    int best_gain = -1;
    for (int c = 0; c < kCandidates; ++c) {
      const Row row = candidate_row(*left.begin(), left, rng);
      int gain = 0;
      for (const auto& p : pairs_in(row)) gain += left.count(p) ? 1 : 0;
      if (gain > best_gain) {
        best_gain = gain;
        best = row;
      }
    }
    for (const auto& p : pairs_in(best)) left.erase(p);
    kept.push_back(std::move(best));
  }
  // A cell no uncovered pair needs from this row (every pair it takes part in is covered by an
  // earlier or later row too, or was never uncovered) is a don't-care: left out of the row.
  std::map<Pair, int> rows_covering;
  for (const auto& row : kept)
    for (const auto& p : pairs_in(row)) ++rows_covering[p];
  const std::set<Pair> wanted(uncovered.begin(), uncovered.end());
  std::vector<std::map<std::string, std::string>> rows;
  for (auto& row : kept) {
    std::map<std::string, std::string> named;
    for (size_t i = 0; i < f.size(); ++i) {
      if (!row[i]) continue;
      bool needed = false;
      for (size_t j = 0; j < f.size() && !needed; ++j) {
        if (j == i || !row[j]) continue;
        const Pair p = ordered({i, *row[i]}, {j, *row[j]});
        needed = wanted.count(p) && rows_covering[p] == 1;
      }
      if (needed) continue;
      for (size_t j = 0; j < f.size(); ++j)
        if (j != i && row[j]) --rows_covering[ordered({i, *row[i]}, {j, *row[j]})];
      row[i].reset();
    }
    // Don't-cares take the first value of their domain (the plain one) that fits the row.
    for (size_t i = 0; i < f.size(); ++i) {
      if (row[i]) continue;
      for (size_t v = 0; v < f[i].values.size() && !row[i]; ++v)
        if (fits(row, i, v)) row[i] = v;
    }
    for (size_t i = 0; i < f.size(); ++i)
      if (row[i]) named[f[i].name] = f[i].values[*row[i]];
    rows.push_back(std::move(named));
  }
  return rows;
}

nlohmann::json to_json(const CoveredPairs& c, const std::vector<Exercised>& suite) {
  nlohmann::json feats = nlohmann::json::array();
  for (const auto& f : features())
    feats.push_back({{"name", f.name},
                     {"level", f.level == Level::scenario ? "scenario" : "muon-param"},
                     {"read_from", f.source == Source::config ? "scenario" : "oracle run"},
                     {"values", f.values}});
  nlohmann::json uncovered = nlohmann::json::array(), infeasible = nlohmann::json::array(),
                 scenarios = nlohmann::json::array();
  for (const auto& p : c.uncovered) uncovered.push_back(to_string(p));
  for (const auto& [p, why] : c.infeasible) infeasible.push_back({{"pair", to_string(p)}, {"why", why}});
  for (const auto& x : suite)
    scenarios.push_back({{"name", x.scenario},
                         {"values", x.values},
                         {"muon_params", x.params},
                         {"pairs_first_covered", c.first_covered_by.at(x.scenario)}});
  return {{"feasible_pairs", c.feasible},
          {"covered_pairs", c.covered},
          {"covered_share", c.share()},
          {"uncovered", uncovered},
          {"infeasible", infeasible},
          {"features", feats},
          {"scenarios", scenarios}};
}

}  // namespace muoncheck::pairs
