#include "harness/pairs/pair_coverage.hpp"

#include <algorithm>
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
    return "only the dynamic loss scaler changes the scale (SPEC 4.3)";
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

Coverage measure(const std::vector<Exercised>& suite) {
  Coverage c;
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

std::vector<std::map<std::string, std::string>> design_rows(const std::vector<Pair>& uncovered) {
  std::set<Pair> left(uncovered.begin(), uncovered.end());
  const auto& f = features();
  std::vector<std::map<std::string, std::string>> rows;
  while (!left.empty()) {
    const Pair seed = *left.begin();
    std::vector<std::optional<size_t>> row(f.size());
    row[seed.a.feature] = seed.a.value;
    row[seed.b.feature] = seed.b.value;
    for (size_t i = 0; i < f.size(); ++i) {
      if (row[i]) continue;
      int best_gain = -1;
      for (size_t v = 0; v < f[i].values.size(); ++v) {
        int gain = 0;
        bool fits = true;
        for (size_t j = 0; j < f.size() && fits; ++j) {
          if (!row[j]) continue;
          const Pair p = ordered({i, v}, {j, *row[j]});
          fits = !infeasible_why(p);
          gain += left.count(p) ? 1 : 0;
        }
        if (fits && gain > best_gain) {
          best_gain = gain;
          row[i] = v;
        }
      }
    }
    std::map<std::string, std::string> named;
    for (size_t i = 0; i < f.size(); ++i) {
      if (!row[i]) continue;
      named[f[i].name] = f[i].values[*row[i]];
      for (size_t j = i + 1; j < f.size(); ++j)
        if (row[j]) left.erase(Pair{{i, *row[i]}, {j, *row[j]}});
    }
    rows.push_back(std::move(named));
  }
  return rows;
}

nlohmann::json to_json(const Coverage& c, const std::vector<Exercised>& suite) {
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
          {"coverage", c.share()},
          {"uncovered", uncovered},
          {"infeasible", infeasible},
          {"features", feats},
          {"scenarios", scenarios}};
}

}  // namespace muoncheck::pairs
