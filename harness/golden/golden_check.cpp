#include "harness/golden/golden_check.hpp"

#include <filesystem>

#include "core/bounded_json.hpp"
#include "core/error.hpp"
#include "oracle/oracle.hpp"

namespace muoncheck {

void require_golden_folder(const std::string& golden_dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(golden_dir, ec))
    throw Error(ErrorKind::BadInput, golden_dir + ": no such golden folder (--golden DIR; by default the data folder's "
                                                  "golden/, see MUONCHECK_DATA)");
}

std::string golden_failure_hint(const golden::Comparison& c, const Scenario& s, const std::string& golden_dir) {
  if (c.missing)
    return "no digest for " + s.name + " in " + golden_dir + ": a new scenario gets one with: muoncheck golden update " +
           s.source + "; a scenario of another data set needs its --golden DIR";
  return golden::regenerate_hint(s);
}

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
    expected = read_json_file(path, "golden digest");
  } catch (const Error& e) {   // bad input in one golden file fails that golden check only
    c.message = e.what();
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
