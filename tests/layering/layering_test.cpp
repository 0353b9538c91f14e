// The layering of the source tree (README, "What is where"): core → oracle / impl → properties →
// harness, and inside harness/ the command line (cli/) on top. An include may only point down:
// core/ includes none of the others; oracle/ and impl/ never include each other, properties/ or
// harness/; properties/ never includes harness/; nothing in harness/ outside cli/ includes cli/.
// Reads every source file's `#include "..."` lines (tests run from the source root); a relative
// include counts as the file it resolves to.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct Rule {
  std::string folder;                  // the files the rule reads, e.g. "impl/"
  std::vector<std::string> forbidden;  // the folders they may not include
  std::string except;                  // a subfolder of `folder` the rule does not read ("" none)
};

const std::vector<Rule>& rules() {
  static const std::vector<Rule> r = {
      {"core/", {"oracle/", "impl/", "properties/", "harness/"}, ""},
      {"oracle/", {"impl/", "properties/", "harness/"}, ""},
      {"impl/", {"oracle/", "properties/", "harness/"}, ""},
      {"properties/", {"harness/"}, ""},
      {"harness/", {"harness/cli/"}, "harness/cli/"},
      // Inside harness/: judging below what a run says about it, and both below a run's end.
      {"harness/judge/", {"harness/report/", "harness/run/"}, ""},
      {"harness/report/", {"harness/run/"}, ""},
  };
  return r;
}

bool is_source(const fs::path& p) {
  const auto ext = p.extension();
  return ext == ".cpp" || ext == ".hpp" || ext == ".h" || ext == ".cu" || ext == ".cuh";
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// The include as a path from the source root: as written when it names a top folder, else
// resolved against the including file's folder.
std::string resolved(const std::string& included, const fs::path& from) {
  for (const char* top : {"core/", "oracle/", "impl/", "properties/", "harness/"})
    if (starts_with(included, top)) return included;
  return (from.parent_path() / included).lexically_normal().generic_string();
}

std::string joined(const std::vector<std::string>& folders) {
  std::string s;
  for (const auto& f : folders) s += (s.empty() ? "" : ", ") + f;
  return s;
}

struct Violation {
  std::string where;   // "impl/zero/muon_step.cpp:12"
  std::string include;
};

std::vector<Violation> violations_of(const Rule& rule) {
  static const std::regex include_line(R"re(^\s*#\s*include\s*"([^"]+)")re");
  std::vector<Violation> out;
  for (const auto& e : fs::recursive_directory_iterator(rule.folder)) {
    const std::string file = e.path().generic_string();
    if (!e.is_regular_file() || !is_source(e.path())) continue;
    if (!rule.except.empty() && starts_with(file, rule.except)) continue;
    std::ifstream in(e.path());
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      std::smatch m;
      if (!std::regex_search(line, m, include_line)) continue;
      const std::string target = resolved(m[1].str(), e.path());
      for (const auto& f : rule.forbidden)
        if (starts_with(target, f)) out.push_back({file + ":" + std::to_string(n), m[1].str()});
    }
  }
  return out;
}

TEST(Layering, NoIncludeGoesBackUp) {
  int files = 0;
  for (const auto& rule : rules()) {
    ASSERT_TRUE(fs::is_directory(rule.folder)) << rule.folder << " not found from " << fs::current_path();
    for (const auto& e : fs::recursive_directory_iterator(rule.folder)) files += is_source(e.path());
    for (const auto& v : violations_of(rule))
      ADD_FAILURE() << v.where << " includes \"" << v.include << "\": " << rule.folder
                    << (rule.except.empty() ? "" : " outside " + rule.except) << " may not include "
                    << joined(rule.forbidden);
  }
  EXPECT_GT(files, 100) << "too few sources read: is the working directory the source root?";
}

}  // namespace
