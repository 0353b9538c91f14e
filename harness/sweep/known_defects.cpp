#include "harness/sweep/known_defects.hpp"

#include <algorithm>
#include <filesystem>
#include <regex>
#include <set>

#include "core/bounded_json.hpp"
#include "core/error.hpp"
#include "core/json_reader.hpp"
#include "impl/faults/fault_catalogue.hpp"
#include "properties/invariant_table.hpp"

namespace muoncheck {

namespace {

constexpr const char* kFormat = "muoncheck-known-defects/1";

std::vector<std::string> strings(JsonObjectReader& r, const std::string& key, const std::string& what) {
  std::vector<std::string> out;
  const nlohmann::json* v = r.raw(key);
  if (!v) r.fail(key, what + " (required)", "nothing");
  if (!v->is_array() || v->empty()) r.fail(key, "a non-empty list of " + what, describe_json(*v));
  for (const auto& x : *v) {
    if (!x.is_string() || x.get<std::string>().empty()) r.fail(key, "a non-empty list of " + what, "an element " + describe_json(x));
    out.push_back(x.get<std::string>());
  }
  return out;
}

KnownFix read_fix(JsonObjectReader& entry, const std::filesystem::path& dir) {
  KnownFix f;
  bool seen = false;
  entry.object("fix", [&](JsonObjectReader& r) {
    seen = true;
    f.kind = r.one_of("kind", "", {"replacement", "patch", "fault"});
    f.from = r.one_of("from", "", {"upstream", "ours"});
    f.pr = r.string("pr", "");
    f.target = r.string("target", "", true);
    if (f.target.empty()) r.fail("target", "a non-empty string", "\"\"");
    if (f.from == "upstream" && f.pr.empty()) r.fail("pr", "the upstream pull request the fix is taken from (from: upstream)", "nothing");
    if (f.from == "ours" && !f.pr.empty()) r.fail("pr", "no pull request for a fix of our own (from: ours)", "\"" + f.pr + "\"");
    f.replacement = r.string("replacement", "");
    f.expects = r.string("expects", "");
    f.patch = r.string("patch", "");
    if (r.raw("bound_as")) {
      if (f.kind != "replacement") r.fail("bound_as", "nothing for a fix of kind " + f.kind, "a value");
      f.bound_as = strings(r, "bound_as", "module:attribute names");
      for (const auto& b : f.bound_as)
        if (b.find(':') == std::string::npos) r.fail("bound_as", "module:attribute names", "\"" + b + "\"");
    }
    if (f.kind == "replacement") {
      if (f.target.find(':') == std::string::npos) r.fail("target", "module:attribute (the function the fix replaces)", "\"" + f.target + "\"");
      if (f.replacement.find(':') == std::string::npos)
        r.fail("replacement", "module:attribute (a function of the original returning its replacement)", "\"" + f.replacement + "\"");
    } else if (!f.replacement.empty() || !f.expects.empty()) {
      r.fail(f.replacement.empty() ? "expects" : "replacement", "nothing for a fix of kind " + f.kind, "a value");
    }
    if (f.kind == "patch") {
      if (f.patch.empty()) r.fail("patch", "the unified diff of the fix (kind patch)", "nothing");
      const std::string at = std::filesystem::path(f.patch).is_absolute() ? f.patch : (dir / f.patch).string();
      if (!std::filesystem::exists(at)) r.fail("patch", "an existing diff file", "\"" + f.patch + "\" (" + at + " does not exist)");
      f.patch = at;
    } else if (!f.patch.empty()) {
      r.fail("patch", "nothing for a fix of kind " + f.kind, "\"" + f.patch + "\"");
    }
    if (f.kind == "fault" && !impl::find_fault(f.target)) r.fail("target", "a fault of the catalogue (impl/faults)", "\"" + f.target + "\"");
    r.finish();
  });
  if (!seen) entry.fail("fix", "an object: the fix (required)", "nothing");
  return f;
}

}  // namespace

bool KnownDefect::lives_in(const std::string& version) const {
  return std::any_of(versions.begin(), versions.end(), [&](const auto& v) { return v == "*" || v == version; });
}

bool KnownDefect::shows_on(const std::string& device) const {
  return devices.empty() || std::find(devices.begin(), devices.end(), device) != devices.end();
}

const KnownDefect* KnownDefects::find(const std::string& id) const {
  for (const auto& d : defects)
    if (d.id == id) return &d;
  return nullptr;
}

std::vector<std::string> KnownDefects::applicable(const std::string& version) const {
  std::vector<std::string> out;
  for (const auto& d : defects)
    if (d.lives_in(version) && d.fix.kind != "patch") out.push_back(d.id);
  return out;
}

std::vector<std::string> KnownDefects::witness_fixes(const KnownDefect& d, const std::string& version, bool with_own_fix) const {
  std::vector<std::string> out;
  for (const auto& need : d.witness_needs)
    if (const KnownDefect* n = find(need); n && n->lives_in(version)) out.push_back(need);
  if (with_own_fix) out.push_back(d.id);
  return out;
}

KnownDefects known_defects_from_json(const nlohmann::json& j, const std::string& file) {
  KnownDefects k;
  k.path = file;
  JsonObjectReader top(j, file, "");
  const std::string format = top.string("format", "", true);
  if (format != kFormat) top.fail("format", std::string("\"") + kFormat + "\"", "\"" + format + "\"");
  k.implementation = top.string("implementation", "", true);
  if (k.implementation.empty()) top.fail("implementation", "the --impl name the registry is for", "\"\"");
  const std::filesystem::path dir = std::filesystem::path(file).parent_path();
  std::set<std::string> ids;
  const std::regex id_form("[a-z0-9][a-z0-9.-]*");
  top.array("defects", [&](const nlohmann::json& e, const std::string& path) {
    std::string id = e.is_object() && e.contains("id") && e["id"].is_string() ? e["id"].get<std::string>() : "";
    JsonObjectReader r(e, file, path + (id.empty() ? "" : " (id '" + id + "')"));
    KnownDefect d;
    d.id = r.string("id", "", true);
    if (!std::regex_match(d.id, id_form)) r.fail("id", "lower-case letters, digits, '.' and '-'", "\"" + d.id + "\"");
    if (!ids.insert(d.id).second) r.fail("id", "an id no other entry has", "a second \"" + d.id + "\"");
    d.title = r.string("title", "", true);
    d.report = r.string("report", "", true);
    if (d.title.empty() || d.report.empty()) r.fail(d.title.empty() ? "title" : "report", "a non-empty string", "\"\"");
    d.versions = strings(r, "versions", "version strings");
    if (e.is_object() && e.contains("devices")) {
      d.devices = strings(r, "devices", "device names");
      for (const auto& dev : d.devices)
        if (dev != "cpu" && dev != "cuda") r.fail("devices", "\"cpu\" or \"cuda\"", "\"" + dev + "\"");
    }
    d.fix = read_fix(r, dir);
    d.invariants = strings(r, "invariants", "invariant ids");
    for (const auto& inv : d.invariants)
      if (!find_invariant(inv)) r.fail("invariants", "ids of the invariant table", "\"" + inv + "\"");
    const std::string witness = r.string("witness", "", true);
    if (witness.empty()) r.fail("witness", "the scenario file that shows the defect", "\"\"");
    d.witness = std::filesystem::path(witness).is_absolute() ? witness : (dir / witness).string();
    if (!std::filesystem::exists(d.witness)) r.fail("witness", "an existing scenario file", "\"" + witness + "\" (" + d.witness + " does not exist)");
    if (e.is_object() && e.contains("witness_needs")) d.witness_needs = strings(r, "witness_needs", "ids of other entries");
    d.cause = r.string("cause", "");
    r.finish();
    k.defects.push_back(std::move(d));
  });
  top.finish();
  if (!j.contains("defects")) top.fail("defects", "a list of known defects (required)", "nothing");
  // an entry's witness_needs name other entries (read after them all)
  for (size_t i = 0; i < k.defects.size(); ++i) {
    const KnownDefect& d = k.defects[i];
    JsonObjectReader r(j["defects"][i], file, "/defects/" + std::to_string(i) + " (id '" + d.id + "')");
    for (const auto& need : d.witness_needs)
      if (!k.find(need) || need == d.id) r.fail("witness_needs", "ids of other entries of this registry", "\"" + need + "\"");
  }
  return k;
}

KnownDefects load_known_defects(const std::string& path) {
  return known_defects_from_json(read_json_file(path, "known-defect registry"), path);
}

}  // namespace muoncheck
