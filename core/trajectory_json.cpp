#include "core/trajectory_json.hpp"

#include <cmath>

#include "core/error.hpp"

namespace muoncheck {

namespace {

nlohmann::json state_to_json(const ParamState& p) {
  nlohmann::json j = {{"weight", p.weight}};
  if (!p.grad.empty()) j["grad"] = p.grad;
  if (!p.momentum.empty()) j["momentum"] = p.momentum;
  if (!p.adam_m.empty()) j["adam_m"] = p.adam_m, j["adam_v"] = p.adam_v;
  return j;
}

ParamState state_from_json(const nlohmann::json& j) {
  ParamState p;
  p.weight = j.at("weight").get<std::vector<double>>();
  if (j.contains("grad")) p.grad = j.at("grad").get<std::vector<double>>();
  if (j.contains("momentum")) p.momentum = j.at("momentum").get<std::vector<double>>();
  if (j.contains("adam_m")) {
    p.adam_m = j.at("adam_m").get<std::vector<double>>();
    p.adam_v = j.at("adam_v").get<std::vector<double>>();
  }
  return p;
}

}  // namespace

nlohmann::json trajectory_to_json(const Trajectory& t, bool with_tensors) {
  using nlohmann::json;
  json tags = json::array();
  for (const auto& tag : t.tags) tags.push_back({{"name", tag.name}, {"use_muon", tag.use_muon}, {"num_heads", tag.num_heads}});
  json steps = json::array();
  for (const auto& s : t.steps) {
    json calls = json::array();
    for (const auto& c : s.ns_calls) calls.push_back({{"param", c.param}, {"rank", c.rank}, {"heads", c.heads}});
    json sj = {{"step", s.step}, {"loss", s.loss}, {"skipped", s.skipped}, {"scale", s.scale},
               {"scale_after", s.scaler_after.scale}, {"hysteresis_after", s.scaler_after.hysteresis},
               {"good_streak_after", s.scaler_after.good_streak}, {"good_steps_after", s.good_steps_after}, {"grad_norm", s.grad_norm}, {"ns_calls", calls}};
    if (with_tensors) {
      json ps = json::array();
      for (const auto& p : s.params) ps.push_back(state_to_json(p));
      sj["params"] = ps;
    }
    steps.push_back(sj);
  }
  json j = {{"producer", t.producer}, {"tags", tags}, {"steps", steps}};
  if (with_tensors) {
    json init = json::array();
    for (const auto& p : t.initial) init.push_back(state_to_json(p));
    j["initial"] = init;
  }
  return j;
}

Trajectory trajectory_from_json(const nlohmann::json& j, const std::string& source) {
  try {
    Trajectory t;
    t.producer = j.at("producer").get<std::string>();
    for (const auto& tag : j.at("tags"))
      t.tags.push_back({tag.at("name").get<std::string>(), tag.at("use_muon").get<bool>(), tag.at("num_heads").get<int>()});
    if (j.contains("initial"))
      for (const auto& p : j.at("initial")) t.initial.push_back(state_from_json(p));
    for (const auto& sj : j.at("steps")) {
      StepRecord s;
      s.step = sj.at("step").get<int>();
      s.loss = sj.at("loss").get<double>();
      s.skipped = sj.at("skipped").get<bool>();
      s.scale = sj.at("scale").get<double>();
      s.scaler_after.scale = sj.at("scale_after").get<double>();
      s.scaler_after.hysteresis = sj.at("hysteresis_after").get<int>();
      s.scaler_after.good_streak = sj.at("good_streak_after").get<int>();
      s.good_steps_after = sj.at("good_steps_after").get<int>();
      s.grad_norm = sj.at("grad_norm").is_number() ? sj.at("grad_norm").get<double>() : std::nan("");
      for (const auto& c : sj.at("ns_calls"))
        s.ns_calls.push_back({s.step, c.at("param").get<int>(), c.at("rank").get<int>(), c.at("heads").get<int>()});
      if (sj.contains("params"))
        for (const auto& p : sj.at("params")) s.params.push_back(state_from_json(p));
      t.steps.push_back(std::move(s));
    }
    return t;
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorKind::BadInput, source + ": not a trajectory (" + std::string(e.what()) + ")");
  }
}

}  // namespace muoncheck
