#include "impl/rank_observation.hpp"

#include "core/error.hpp"

namespace muoncheck::impl {
namespace {

template <class Enum>
Enum enum_from(const nlohmann::json& v, int last, const std::string& source, const char* field) {
  const int i = v.get<int>();
  if (i < 0 || i > last)
    throw Error(ErrorKind::BadInput, source + ": field " + field + ": expected 0.." + std::to_string(last) + ", got " + std::to_string(i));
  return static_cast<Enum>(i);
}

}  // namespace

nlohmann::json observation_to_json(const RankObservation& o) {
  nlohmann::json tags = nlohmann::json::array(), log = nlohmann::json::array(), ns = nlohmann::json::array();
  for (const auto& t : o.engine.tags) tags.push_back({t.name, t.use_muon, t.num_heads});
  for (const auto& c : o.collectives)
    log.push_back({c.rank, static_cast<int>(c.kind), static_cast<int>(c.dtype), c.elements, c.bytes,
                   static_cast<int>(c.purpose), static_cast<int>(c.phase), c.step});
  for (const auto& c : o.ns_calls) ns.push_back({c.step, c.param, c.rank, c.heads});
  return {{"rank", o.engine.rank},
          {"tags", tags},
          {"digests", o.engine.digests},
          {"step_seconds", o.engine.step_seconds},
          {"collectives", log},
          {"collective_seconds", o.collective_seconds},
          {"ns_calls", ns},
          {"flat_elements", o.flat_elements},
          {"partition_elements", o.partition_elements}};
}

RankObservation observation_from_json(const nlohmann::json& j, const std::string& source) {
  try {
    RankObservation o;
    o.engine.rank = j.at("rank").get<int>();
    for (const auto& t : j.at("tags")) o.engine.tags.push_back({t.at(0).get<std::string>(), t.at(1).get<bool>(), t.at(2).get<int>()});
    o.engine.digests = j.at("digests").get<std::vector<uint64_t>>();
    o.engine.step_seconds = j.at("step_seconds").get<std::vector<double>>();
    for (const auto& c : j.at("collectives")) {
      CollectiveRecord r;
      r.rank = c.at(0).get<int>();
      r.kind = enum_from<CollectiveKind>(c.at(1), static_cast<int>(CollectiveKind::scatter), source, "collectives.kind");
      r.dtype = enum_from<DType>(c.at(2), static_cast<int>(DType::fp16), source, "collectives.dtype");
      r.elements = c.at(3).get<int64_t>();
      r.bytes = c.at(4).get<int64_t>();
      r.purpose = enum_from<Purpose>(c.at(5), static_cast<int>(Purpose::state_export), source, "collectives.purpose");
      r.phase = enum_from<Phase>(c.at(6), static_cast<int>(Phase::boundary), source, "collectives.phase");
      r.step = c.at(7).get<int>();
      o.collectives.push_back(r);
    }
    o.collective_seconds = j.at("collective_seconds").get<std::vector<double>>();
    for (const auto& c : j.at("ns_calls")) o.ns_calls.push_back({c.at(0).get<int>(), c.at(1).get<int>(), c.at(2).get<int>(), c.at(3).get<int>()});
    o.flat_elements = j.at("flat_elements").get<int64_t>();
    o.partition_elements = j.at("partition_elements").get<int64_t>();
    return o;
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorKind::BadInput, source + ": not a rank observation: " + e.what());
  }
}

}  // namespace muoncheck::impl
