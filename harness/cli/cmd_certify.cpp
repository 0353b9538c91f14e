// `muoncheck certify SCENARIO`: runs the oracle in float128 and in 50-digit
// binary floating point and reports the digits the two agree on, per step.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "harness/cli/commands.hpp"
#include "harness/cli/option_table.hpp"
#include "harness/judge/scenario_selection.hpp"
#include "oracle/certify.hpp"

namespace muoncheck {

namespace {

Outcome run(const cli::Args& args) {
  if (args.positionals().size() != 1) throw Error(ErrorKind::Usage, "muoncheck certify: give exactly one scenario");
  const auto s = select_scenarios(args.positionals(), option_text(args, "scenarios"), false).front();
  const double required = number_from(args, "min-digits");
  const auto start = std::chrono::steady_clock::now();
  const auto c = oracle::certify(s);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const bool ok = c.min_digits >= required;
  if (args.flag("print-json")) {
    nlohmann::json steps = nlohmann::json::array();
    for (const auto& st : c.steps)
      steps.push_back({{"step", st.step}, {"skipped", st.skipped}, {"weights", st.weights}, {"momentum", st.momentum}, {"adam", st.adam}});
    std::cout << nlohmann::json{{"scenario", s.name}, {"precisions", {"float128", "bin50"}}, {"steps", steps},
                                {"min_digits", c.min_digits}, {"required", required}, {"ok", ok}, {"seconds", seconds}}
                     .dump(2)
              << "\n";
  } else {
    std::printf("%s: certified digits (float128 vs cpp_bin_float_50)\n", s.name.c_str());
    std::printf("%5s  %-8s %8s %9s %8s\n", "step", "skipped", "weights", "momentum", "adam");
    for (const auto& st : c.steps)
      std::printf("%5d  %-8s %8.1f %9.1f %8.1f\n", st.step, st.skipped ? "yes" : "no", st.weights, st.momentum, st.adam);
    std::printf("minimum %.1f digits (required %.0f) => %s   [%.1f s]\n", c.min_digits, required, ok ? "PASS" : "FAIL", seconds);
  }
  return ok ? Outcome::success : Outcome::conformance_failure;
}

}  // namespace

Command certify_command() {
  return {{"certify", "muoncheck certify SCENARIO [--print-json] [--min-digits D]",
           "Runs the oracle in float128 and in cpp_bin_float_50 and reports, per step, how many decimal\n"
           "digits of the weights, momentum and Adam moments the two agree on. Exit 1 below --min-digits (25).",
           options({"print-json", "min-digits", "scenarios"})},
          run};
}

}  // namespace muoncheck
