// Replays the fuzz corpus (tests/fuzz/corpus/{scenario,trace}: seeds, every input a fuzz
// run kept for new coverage, and the hostile inputs the loaders' limits were written against) through the same checks the
// libFuzzer targets make, on every CI run and with any compiler.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/fuzz/loader_checks.hpp"

namespace muoncheck::fuzz {
namespace {

std::vector<std::filesystem::path> corpus(const std::string& which) {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator("tests/fuzz/corpus/" + which))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::string contents(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void replay(const std::string& which, std::string (*check)(std::string_view)) {
  const auto files = corpus(which);
  ASSERT_GE(files.size(), 8u) << "the " << which << " corpus is missing";
  for (const auto& f : files)
    EXPECT_EQ(check(contents(f)), "") << "reproduce: scripts/fuzz.sh " << which << " " << f.string();
}

TEST(FuzzCorpus, ScenarioLoaderBehavesOnEveryInput) { replay("scenario", check_scenario_loader); }
TEST(FuzzCorpus, TraceLoaderBehavesOnEveryInput) { replay("trace", check_trace_loader); }

}  // namespace
}  // namespace muoncheck::fuzz
