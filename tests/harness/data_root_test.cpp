// The binary finds its data (scenarios/, golden/, adapters/) from wherever it runs, never from the
// current folder: from the checkout it was built in, from an installed layout beside it, or from
// $MUONCHECK_DATA; a wrong folder is bad input naming it, never a golden FAIL that advises
// `golden update`; `--version` says which data folder it found.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "run_muoncheck.hpp"

namespace muoncheck {
namespace {

namespace fs = std::filesystem;
using testing::RunResult;

// A fresh empty folder that is not a checkout, to run from.
fs::path fresh_folder(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("muoncheck-data-root-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// `bin args` run from `dir` with `env` ("NAME=VALUE ..." or ""), stdout and stderr together.
RunResult run_from(const fs::path& dir, const std::string& env, const std::string& args,
                   const std::string& bin = MUONCHECK_BIN) {
  const std::string cmd = "cd '" + dir.string() + "' && env -u MUONCHECK_DATA " + env + " '" + bin + "' " + args + " 2>&1";
  RunResult r{-1, ""};
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, p)) r.output += buf;
  const int status = ::pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

TEST(DataRoot, CheckFromAnotherFolderUsesTheCheckoutOfTheBinary) {
  const auto dir = fresh_folder("elsewhere");
  const auto r = run_from(dir, "", "check stage0-basic");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("golden:stage0-basic"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("golden update"), std::string::npos) << r.output;
  EXPECT_TRUE(fs::exists(dir / "out" / "latest.json")) << "the report goes where it was asked: the current folder";
  const auto v = run_from(dir, "", "--version");
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_NE(v.output.find("muoncheck " MUONCHECK_VERSION), std::string::npos) << v.output;
  EXPECT_NE(v.output.find(std::string("data: ") + MUONCHECK_SOURCE_DIR + " (checkout)"), std::string::npos) << v.output;
  fs::remove_all(dir);
}

TEST(DataRoot, AWrongFolderIsBadInputNamingItNotAGoldenFailure) {
  const auto dir = fresh_folder("wrong");
  const auto missing_env = run_from(dir, "MUONCHECK_DATA=/no/such/data", "check stage0-basic");
  EXPECT_EQ(missing_env.exit_code, 2) << missing_env.output;
  EXPECT_NE(missing_env.output.find("MUONCHECK_DATA=/no/such/data: no such folder"), std::string::npos) << missing_env.output;
  const auto missing_golden = run_from(dir, "", "check stage0-basic --golden no-such-golden");
  EXPECT_EQ(missing_golden.exit_code, 2) << missing_golden.output;
  EXPECT_NE(missing_golden.output.find("no-such-golden: no such golden folder"), std::string::npos) << missing_golden.output;
  EXPECT_EQ(missing_golden.output.find("golden update"), std::string::npos) << missing_golden.output;
  const auto golden_check = run_from(dir, "", "golden check stage0-basic --golden no-such-golden");
  EXPECT_EQ(golden_check.exit_code, 2) << golden_check.output;
  fs::remove_all(dir);
}

TEST(DataRoot, MuoncheckDataOverridesAndAMissingDigestSaysHowToWriteOne) {
  const auto data = fresh_folder("override");
  fs::create_directories(data / "scenarios");
  fs::create_directories(data / "golden");   // empty: no digest for the scenario yet
  fs::copy_file(fs::path(MUONCHECK_SOURCE_DIR) / "scenarios" / "stage0-basic.json", data / "scenarios" / "stage0-basic.json");
  const auto v = run_from(data, "MUONCHECK_DATA=" + data.string(), "--version");
  EXPECT_NE(v.output.find("data: " + data.string() + " (MUONCHECK_DATA)"), std::string::npos) << v.output;
  const auto r = run_from(fs::temp_directory_path(), "MUONCHECK_DATA=" + data.string(), "check stage0-basic --report " +
                                                                                         (data / "r.json").string());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("no digest for stage0-basic in " + data.string() + "/golden: a new scenario gets one with: muoncheck golden update"),
            std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("if the change is intended"), std::string::npos) << r.output;
  fs::remove_all(data);
}

TEST(DataRoot, AnInstalledLayoutIsFoundBesideTheBinary) {
  const auto prefix = fresh_folder("prefix");
  fs::create_directories(prefix / "bin");
  fs::create_directories(prefix / "share" / "muoncheck");
  fs::copy_file(MUONCHECK_BIN, prefix / "bin" / "muoncheck");
  for (const char* d : {"scenarios", "golden"})
    fs::create_directory_symlink(fs::path(MUONCHECK_SOURCE_DIR) / d, prefix / "share" / "muoncheck" / d);
  const std::string bin = (prefix / "bin" / "muoncheck").string();
  const auto v = run_from(fs::temp_directory_path(), "", "--version", bin);
  EXPECT_NE(v.output.find("data: " + (prefix / "share" / "muoncheck").string() + " (installed)"), std::string::npos) << v.output;
  const auto r = run_from(fs::temp_directory_path(), "", "golden check stage0-basic", bin);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  // Nothing beside or above it: no data folder, an infrastructure error naming MUONCHECK_DATA.
  fs::remove_all(prefix / "share");
  const auto none = run_from(fs::temp_directory_path(), "", "golden check stage0-basic", bin);
  EXPECT_EQ(none.exit_code, 3) << none.output;
  EXPECT_NE(none.output.find("set MUONCHECK_DATA"), std::string::npos) << none.output;
  fs::remove_all(prefix);
}

}  // namespace
}  // namespace muoncheck
