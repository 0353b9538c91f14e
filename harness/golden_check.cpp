#include "harness/golden_check.hpp"

#include <filesystem>

#include "core/atomic_file.hpp"
#include "oracle/oracle.hpp"

namespace muoncheck {

golden::Comparison check_against_golden(const Scenario& s, const std::string& golden_dir,
                                        const Trajectory* float128_oracle) {
  const auto path = golden::golden_path(golden_dir, s);
  golden::Comparison c;
  if (!std::filesystem::exists(path)) {
    c.missing = true;
    c.message = path + " does not exist";
    return c;
  }
  nlohmann::json expected;
  try {
    expected = nlohmann::json::parse(read_file(path));
  } catch (const nlohmann::json::exception& e) {
    c.message = path + ": not valid JSON (" + std::string(e.what()) + ")";
    return c;
  }
  const auto actual = golden::digest(s, float128_oracle ? *float128_oracle : oracle::run_oracle(s, oracle::Precision::float128),
                                    "float128");
  try {
    return golden::compare(expected, actual);
  } catch (const nlohmann::json::exception& e) {
    c.message = path + ": not a golden digest (" + std::string(e.what()) + ")";
    return c;
  }
}

}  // namespace muoncheck
