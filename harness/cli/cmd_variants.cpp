// `muoncheck variants SCENARIO... --out-dir DIR`: writes the variant scenarios the relational
// invariants compare each scenario against (the invariant table's gas/dp/stage/bucket
// re-splits and the gas-1 re-split) as scenario files, and DIR/variants.json, which lists
// every run an external implementation must trace for `verify` to judge every invariant: the
// scenario itself, each variant file, and a repeat run of the scenario ("repeat": 1).
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/scenario_io.hpp"
#include "harness/cli/commands.hpp"
#include "harness/cli/option_table.hpp"
#include "harness/cli/options_from_args.hpp"
#include "harness/judge/scenario_selection.hpp"
#include "properties/invariant_table.hpp"

namespace muoncheck {

namespace {

Outcome run(const cli::Args& args) {
  if (args.positionals().empty()) throw Error(ErrorKind::Usage, "muoncheck variants: give at least one scenario");
  const auto out = args.value("out-dir");
  if (!out) throw Error(ErrorKind::Usage, "muoncheck variants: give --out-dir DIR");
  std::set<std::string> only;
  for (const auto& id : args.values("invariant")) {
    if (!is_invariant_id(id)) throw Error(ErrorKind::Usage, "--invariant: \"" + id + "\" is not an invariant");
    only.insert(id);
  }
  std::filesystem::create_directories(*out);
  nlohmann::json manifest = nlohmann::json::array();
  for (const auto& s : select_scenarios(args.positionals(), option_text(args, "scenarios"), false)) {
    // Each variant once, with the invariants that read it.
    std::map<std::string, std::pair<Scenario, std::set<std::string>>> files;
    std::map<std::string, std::string> kind_of;
    std::set<std::string> repeat_for;
    for (const auto& row : invariant_table()) {
      if (!only.empty() && only.count(row.id) == 0) continue;
      for (const auto k : row.variants) {
        if (k == VariantKind::repeat) {
          repeat_for.insert(row.id);
          continue;
        }
        for (const auto& v : variant_scenarios(s, k).scenarios) {
          auto& f = files.try_emplace(v.name, v, std::set<std::string>{}).first->second;
          f.second.insert(row.id);
          kind_of.try_emplace(v.name, variant_kind_name(k));
        }
      }
    }
    nlohmann::json runs = nlohmann::json::array();
    runs.push_back({{"file", s.source}, {"repeat", 0}, {"kind", "scenario"}});
    for (const auto& [name, f] : files) {
      const std::string path = *out + "/" + name + ".json";
      write_file_atomically(path, scenario_to_json(f.first).dump(2) + "\n");
      runs.push_back({{"file", path}, {"repeat", 0}, {"kind", kind_of.at(name)}, {"invariants", f.second}});
      std::printf("%s %s\n", kind_of.at(name).c_str(), path.c_str());
    }
    if (!repeat_for.empty()) {
      runs.push_back({{"file", s.source}, {"repeat", 1}, {"kind", "repeat"}, {"invariants", repeat_for}});
      std::printf("repeat %s\n", s.source.c_str());
    }
    manifest.push_back({{"scenario", s.name}, {"runs", runs}});
  }
  write_file_atomically(*out + "/variants.json", manifest.dump(2) + "\n");
  std::printf("manifest: %s/variants.json\n", out->c_str());
  return Outcome::success;
}

}  // namespace

Command variants_command() {
  return {{"variants", "muoncheck variants SCENARIO... --out-dir DIR [--invariant ID]...",
           "Writes the variant scenarios the relational invariants compare each SCENARIO against (gas, dp,\n"
           "stage and bucket re-splits, the gas-1 re-split) to DIR/<variant>.json, one line each on stdout\n"
           "(KIND FILE, and `repeat FILE` for the second run `deterministic` reads), and DIR/variants.json\n"
           "listing every run to trace. Traces of those runs given to `verify` beside the scenario's own\n"
           "let it judge the relational invariants of an external implementation.",
           options({"out-dir", "invariant", "scenarios"})},
          run};
}

}  // namespace muoncheck
