#include "harness/external/plugin_space.hpp"

#include <algorithm>
#include <set>
#include <sstream>

#include "core/error.hpp"

namespace muoncheck::external {

namespace {

[[noreturn]] void bad(const std::string& impl, const std::string& field, const std::string& expected,
                      const nlohmann::json& got) {
  throw Error(ErrorKind::BadInput, "plugin " + impl + ": hello: " + field + ": expected " + expected + ", got " +
                                       clip_for_message(got.dump(), 120));
}

bool scalar(const nlohmann::json& v) { return v.is_null() || v.is_boolean() || v.is_number() || v.is_string(); }

}  // namespace

PluginSpace space_from_hello(const nlohmann::json& hello, const std::string& implementation) {
  PluginSpace s;
  s.implementation = implementation;
  if (!hello.is_object()) bad(implementation, "the hello line", "an object", hello);
  if (hello.contains("error"))
    throw Error(ErrorKind::BadInput, "plugin " + implementation + ": its worker could not load it: " +
                                         (hello["error"].is_string() ? hello["error"].get<std::string>() : hello["error"].dump()));
  if (!hello.contains("space")) bad(implementation, "space", "an object {\"knobs\": [...]}", nullptr);
  const auto& space = hello["space"];
  if (!space.is_object() || !space.contains("knobs") || !space["knobs"].is_array())
    bad(implementation, "space", "an object {\"knobs\": [...]}", space);
  std::set<std::string> names;
  const auto& knobs = space["knobs"];
  for (size_t i = 0; i < knobs.size(); ++i) {
    const auto& k = knobs[i];
    const std::string at = "space.knobs[" + std::to_string(i) + "]";
    if (!k.is_object()) bad(implementation, at, "an object {name, values, fields?}", k);
    if (!k.contains("name") || !k["name"].is_string() || k["name"].get<std::string>().empty())
      bad(implementation, at + ".name", "a non-empty string", k.value("name", nlohmann::json()));
    Knob knob;
    knob.name = k["name"].get<std::string>();
    if (!names.insert(knob.name).second) bad(implementation, at + ".name", "a name no other knob has", k["name"]);
    if (!k.contains("values") || !k["values"].is_array() || k["values"].empty())
      bad(implementation, at + ".values", "a non-empty array (the first value is the default)", k.value("values", nlohmann::json()));
    for (const auto& v : k["values"]) {
      if (!scalar(v)) bad(implementation, at + ".values", "JSON scalars", v);
      knob.values.push_back(v);
    }
    if (k.contains("fields")) {
      const auto& f = k["fields"];
      if (!f.is_array() || f.size() != knob.values.size())
        bad(implementation, at + ".fields", "an array of " + std::to_string(knob.values.size()) + " objects (one per value)", f);
      for (const auto& m : f) {
        if (!m.is_object()) bad(implementation, at + ".fields", "objects {scenario field path: value}", m);
        knob.fields.push_back(m);
      }
    }
    s.knobs.push_back(std::move(knob));
  }
  if (hello.contains("fixes")) {
    if (!hello["fixes"].is_array()) bad(implementation, "fixes", "an array of ids", hello["fixes"]);
    for (const auto& id : hello["fixes"]) s.fixes.push_back(id.is_string() ? id.get<std::string>() : id.dump());
  }
  return s;
}

nlohmann::json default_config(const PluginSpace& space) {
  nlohmann::json c = nlohmann::json::object();
  for (const auto& k : space.knobs) c[k.name] = k.values.front();
  return c;
}

PluginSpace restricted(PluginSpace space, const std::vector<std::string>& specs) {
  for (const auto& spec : specs) {
    const auto eq = spec.find('=');
    const std::string name = spec.substr(0, eq);
    auto knob = std::find_if(space.knobs.begin(), space.knobs.end(), [&](const Knob& k) { return k.name == name; });
    if (eq == std::string::npos || knob == space.knobs.end()) {
      std::string names;
      for (const auto& k : space.knobs) names += (names.empty() ? "" : ", ") + k.name;
      throw Error(ErrorKind::Usage, "--knob " + spec + ": expected NAME=V1,V2,... with NAME a knob of " +
                                        space.implementation + " (" + names + ")");
    }
    Knob kept{knob->name, {}, {}};
    std::stringstream list(spec.substr(eq + 1));
    for (std::string text; std::getline(list, text, ',');) {
      const nlohmann::json v = nlohmann::json::accept(text) ? nlohmann::json::parse(text) : nlohmann::json(text);
      const auto at = std::find(knob->values.begin(), knob->values.end(), v);
      if (at == knob->values.end())
        throw Error(ErrorKind::Usage, "--knob " + spec + ": " + knob->name + " has no value " + v.dump() + " (its values: " +
                                          nlohmann::json(knob->values).dump() + ")");
      kept.values.push_back(v);
      if (!knob->fields.empty()) kept.fields.push_back(knob->fields[static_cast<size_t>(at - knob->values.begin())]);
    }
    if (kept.values.empty()) throw Error(ErrorKind::Usage, "--knob " + spec + ": give at least one value");
    *knob = std::move(kept);
  }
  return space;
}

rc::Gen<nlohmann::json> config_gen(const PluginSpace& space) {
  rc::Gen<nlohmann::json> gen = rc::gen::just(nlohmann::json::object());
  for (const auto& k : space.knobs) {
    // the value's index, shrinking towards 0 (gen::elementOf does not shrink): a case moves
    // towards the knob's default
    gen = rc::gen::apply(
        [name = k.name, values = k.values](nlohmann::json c, int i) {
          c[name] = values[static_cast<size_t>(i)];
          return c;
        },
        gen, rc::gen::inRange<int>(0, static_cast<int>(k.values.size())));
  }
  return gen;
}

}  // namespace muoncheck::external
