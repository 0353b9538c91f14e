// The fault catalogue has teeth: `muoncheck mutants` kills every fault with an
// invariant that names its symptom, and the clean control passes everything.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include "impl/faults/fault_catalogue.hpp"

TEST(Mutants, EveryFaultIsKilledBySymptomAndTheControlIsClean) {
  // One file per process: two checkouts running this test at once must not share it.
  const auto json_path =
      (std::filesystem::temp_directory_path() / ("muoncheck_mutants_test." + std::to_string(::getpid()) + ".json")).string();
  const std::string cmd = std::string(MUONCHECK_BIN) + " mutants --json " + json_path + " 2>&1";
  std::string output;
  FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), buf.size(), p)) output += buf.data();
  const int status = ::pclose(p);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << output;

  std::ifstream in(json_path);
  const auto report = nlohmann::json::parse(in);
  const auto& m = report.at("mutants");
  EXPECT_TRUE(m.at("control_clean").get<bool>());
  const auto& catalogue = muoncheck::impl::fault_catalogue();
  EXPECT_EQ(m.at("total"), catalogue.size());
  EXPECT_EQ(m.at("killed"), catalogue.size());
  ASSERT_EQ(m.at("faults").size(), catalogue.size());
  for (size_t i = 0; i < catalogue.size(); ++i) EXPECT_EQ(m.at("faults")[i].at("fault"), catalogue[i].id);
  for (const auto& f : m.at("faults")) {
    EXPECT_EQ(f.at("status"), "KILLED") << f.dump();
    bool symptom = false;
    for (const auto& k : f.at("kills")) symptom = symptom || k.at("symptom").get<bool>();
    EXPECT_TRUE(symptom) << f.at("fault");
  }
  std::filesystem::remove(json_path);
}
