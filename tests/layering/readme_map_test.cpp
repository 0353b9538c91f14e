// The README's "What is where" table is the map of the house: every row names a folder that
// exists, and every top-level folder and every folder of harness/ has a row (tests run from the
// source root; hidden folders, build folders and out/, the git-ignored generated output, are not
// required, but a row for one must exist).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <string>

namespace {

namespace fs = std::filesystem;

// The folders named in the first column of the "What is where" table: "| `harness/cli/` | ...".
std::set<std::string> readme_rows() {
  std::ifstream in("README.md");
  static const std::regex row(R"(^\| `([^`]+/)` \|)");
  std::set<std::string> rows;
  bool in_section = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("## ", 0) == 0) in_section = line == "## What is where";
    std::smatch m;
    if (in_section && std::regex_search(line, m, row)) rows.insert(m[1].str());
  }
  return rows;
}

// Folders that must have a row: every top-level one but hidden and build folders, and every
// subfolder of harness/.
std::set<std::string> folders_needing_a_row() {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(".")) {
    const std::string name = e.path().filename().string();
    if (e.is_directory() && name[0] != '.' && name.rfind("build", 0) != 0 && name != "out") out.insert(name + "/");
  }
  for (const auto& e : fs::directory_iterator("harness"))
    if (e.is_directory()) out.insert("harness/" + e.path().filename().string() + "/");
  return out;
}

TEST(ReadmeMap, EveryRowNamesAFolderAndEveryFolderHasARow) {
  const auto rows = readme_rows();
  ASSERT_FALSE(rows.empty()) << "no \"What is where\" table in README.md from " << fs::current_path();
  for (const auto& r : rows) EXPECT_TRUE(fs::is_directory(r)) << "README row `" << r << "` names no folder";
  for (const auto& f : folders_needing_a_row()) EXPECT_TRUE(rows.count(f)) << f << " has no row in README's \"What is where\"";
}

}  // namespace
