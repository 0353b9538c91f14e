// A free function is defined in the folder of the header that declares it: a reader who finds a
// declaration in harness/judge/ finds its body in harness/judge/, not in harness/report/. Reads
// the sources (tests run from the source root): every column-0 function declaration of a header
// names the function's folder when no other header declares the same name; every column-0
// definition outside an anonymous namespace (and not static) must lie in that folder.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

const std::vector<std::string>& top_folders() {
  static const std::vector<std::string> f = {"core", "oracle", "impl", "properties", "harness"};
  return f;
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// The function a column-0 line declares or defines, or "" (types, macros, comments, members).
std::string function_name(const std::string& line) {
  static const std::regex fn(R"re(^(?:template\s*<[^>]*>\s*)?(?:(?:inline|constexpr|\[\[nodiscard\]\]|\[\[noreturn\]\])\s+)*[A-Za-z_][\w:<>,\*& ]*[\s\*&]([a-z_][a-z0-9_]*)\()re");
  if (line.empty() || !(std::isalpha(static_cast<unsigned char>(line[0])) || line[0] == '[')) return "";
  for (const char* skip : {"struct ", "class ", "enum ", "using ", "namespace ", "return ", "typedef ", "static ",
                           "extern ", "friend ", "case ", "else", "if ", "for ", "while ", "switch "})
    if (starts_with(line, skip)) return "";
  std::smatch m;
  if (!std::regex_search(line, m, fn)) return "";
  const auto at = static_cast<size_t>(m.position(1));
  if (at >= 2 && line.compare(at - 2, 2, "::") == 0) return "";   // a member, Type::name(
  return m[1].str();
}

bool is_source(const fs::path& p) { return p.extension() == ".cpp" || p.extension() == ".cu"; }
bool is_header(const fs::path& p) { return p.extension() == ".hpp" || p.extension() == ".cuh"; }

struct Misplaced {
  std::string where;      // "harness/report/report.cpp:120"
  std::string function;
  std::string declared;   // "harness/judge/scenario_result.hpp"
};

// Every definition under `root`'s top folders that lies outside the folder of its declaration.
std::vector<Misplaced> misplaced_definitions(const fs::path& root) {
  std::map<std::string, std::set<std::string>> declared_in;   // name -> headers
  std::vector<fs::path> sources;
  for (const auto& top : top_folders()) {
    if (!fs::is_directory(root / top)) continue;
    for (const auto& e : fs::recursive_directory_iterator(root / top)) {
      if (!e.is_regular_file()) continue;
      if (is_source(e.path())) sources.push_back(e.path());
      if (!is_header(e.path())) continue;
      std::ifstream in(e.path());
      std::string line;
      while (std::getline(in, line)) {
        const auto name = function_name(line);
        // A declaration ends its line with ";" or goes on; an inline body ("{") is no declaration.
        if (!name.empty() && line.find('{') == std::string::npos)
          declared_in[name].insert(fs::relative(e.path(), root).generic_string());
      }
    }
  }
  std::vector<Misplaced> out;
  for (const auto& file : sources) {
    const std::string rel = fs::relative(file, root).generic_string();
    const std::string folder = fs::path(rel).parent_path().generic_string() + "/";
    std::ifstream in(file);
    std::string line;
    bool anonymous = false;
    for (int n = 1; std::getline(in, line); ++n) {
      if (starts_with(line, "namespace {")) anonymous = true;
      if (starts_with(line, "}  // namespace") && line.find("namespace ", 6) == std::string::npos &&
          line.size() == std::string("}  // namespace").size())
        anonymous = false;
      if (anonymous) continue;
      const auto name = function_name(line);
      if (name.empty() || line.find(';') != std::string::npos) continue;   // a definition, not a call or declaration
      const auto it = declared_in.find(name);
      if (it == declared_in.end() || it->second.size() != 1) continue;   // undeclared, or one name in several headers
      const std::string header = *it->second.begin();
      if (fs::path(header).parent_path().generic_string() + "/" != folder)
        out.push_back({rel + ":" + std::to_string(n), name, header});
    }
  }
  return out;
}

TEST(Layering, EveryFunctionIsDefinedInTheFolderOfItsDeclaration) {
  ASSERT_TRUE(fs::is_directory("harness")) << "not at the source root: " << fs::current_path();
  for (const auto& m : misplaced_definitions("."))
    ADD_FAILURE() << m.where << " defines " << m.function << ", declared in " << m.declared
                  << ": define it in that header's folder";
}

TEST(Layering, ADefinitionInAnotherFolderIsFound) {   // the check itself, on a planted tree
  const fs::path root = fs::temp_directory_path() / ("definitions-test-" + std::to_string(::getpid()));
  fs::create_directories(root / "harness/judge");
  fs::create_directories(root / "harness/report");
  std::ofstream(root / "harness/judge/result.hpp") << "#pragma once\nstd::string repro_line(const Result& r);\n"
                                                      "int counted(int x);\n";
  std::ofstream(root / "harness/judge/result.cpp") << "int counted(int x) {\n  return x;\n}\n";
  std::ofstream(root / "harness/report/report.cpp")
      << "namespace {\nstd::string counted_twice(int x) {\n  return \"\";\n}\n}  // namespace\n"
         "std::string repro_line(const Result& r) {\n  return \"\";\n}\n";
  const auto found = misplaced_definitions(root);
  fs::remove_all(root);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].function, "repro_line");
  EXPECT_EQ(found[0].where, "harness/report/report.cpp:6");
  EXPECT_EQ(found[0].declared, "harness/judge/result.hpp");
}

}  // namespace
