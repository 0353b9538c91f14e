// libFuzzer target: the scenario loader on arbitrary bytes (scripts/fuzz.sh runs it).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "tests/fuzz/loader_checks.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto problem = muoncheck::fuzz::check_scenario_loader({reinterpret_cast<const char*>(data), size});
  if (!problem.empty()) {
    std::fprintf(stderr, "scenario loader: %s\n", problem.c_str());
    std::abort();
  }
  return 0;
}
