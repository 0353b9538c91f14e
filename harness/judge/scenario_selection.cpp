#include "harness/judge/scenario_selection.hpp"

#include <algorithm>
#include <filesystem>

#include "core/error.hpp"
#include "core/scenario_io.hpp"

namespace muoncheck {

std::vector<std::string> scenario_files_in(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw Error(ErrorKind::BadInput, dir + ": no such scenarios folder");
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string p = e.path().string();
    if (e.path().extension() == ".json" && !p.ends_with(".schema.json")) files.push_back(p);
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<Scenario> select_scenarios(const std::vector<std::string>& args, const std::string& dir,
                                       bool all_when_empty) {
  std::vector<std::string> files;
  if (args.empty()) {
    if (!all_when_empty) throw Error(ErrorKind::Usage, "no scenario given (a .json path or a name from " + dir + "/)");
    files = scenario_files_in(dir);
  }
  for (const auto& a : args) {
    if (a.ends_with(".json") || a.find('/') != std::string::npos) files.push_back(a);
    else files.push_back(dir + "/" + a + ".json");
  }
  std::vector<Scenario> out;
  for (const auto& f : files) out.push_back(load_scenario(f));
  return out;
}

}  // namespace muoncheck
