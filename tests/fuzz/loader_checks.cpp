#include "tests/fuzz/loader_checks.hpp"

#include <exception>
#include <functional>

#include "core/error.hpp"
#include "core/input_limits.hpp"
#include "core/scenario_io.hpp"
#include "harness/traces/trace_io.hpp"

namespace muoncheck::fuzz {

namespace {

// Runs `load`; "" for success or BadInput, a description of anything else.
std::string behaved(const std::function<void()>& load) {
  try {
    load();
    return "";
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::BadInput) return "";
    return "threw " + std::string(kind_name(e.kind())) + ": " + e.what();
  } catch (const std::exception& e) {
    return std::string("threw a std::exception: ") + e.what();
  } catch (...) {
    return "threw something that is not a std::exception";
  }
}

}  // namespace

std::string check_scenario_loader(std::string_view input) {
  std::string problem;
  const auto loader = behaved([&] {
    const Scenario s = parse_scenario_text(input, "fuzz.json");
    if (total_elements(s.model) > limits::kMaxModelElements || total_elements(s.model) < 1)
      problem = "loaded a model of " + std::to_string(total_elements(s.model)) + " elements";
    try {
      parse_scenario(scenario_to_json(s), "fuzz-roundtrip.json");
    } catch (const Error& e) {
      if (problem.empty()) problem = std::string("a loaded scenario does not load again: ") + e.what();
    }
  });
  return loader.empty() ? problem : loader;
}

std::string check_trace_loader(std::string_view input) {
  return behaved([&] { (void)trace_from_text(input, "fuzz.trace.json"); });
}

}  // namespace muoncheck::fuzz
