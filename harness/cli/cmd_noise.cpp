// `muoncheck noise [SCENARIO...]`: the control ensemble measured against the exact
// oracle — the numbers docs/invariants.md uses to justify the band (no implementation runs).
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "harness/cli/commands.hpp"
#include "harness/cli/option_table.hpp"
#include "harness/cli/write_output.hpp"
#include "harness/judge/scenario_selection.hpp"
#include "oracle/control_ensemble.hpp"
#include "oracle/oracle.hpp"
#include "properties/noise_study.hpp"

namespace muoncheck {

namespace {

void run(const cli::Args& args) {
  const int members = control_members_from(args, 2);
  const oracle::Precision p = precision_from(args);
  const auto scenarios = select_scenarios(args.positionals(), option_text(args, "scenarios"), true);
  if (const auto json = args.value("json")) check_writable(*json);   // before the study, not after
  nlohmann::json out = nlohmann::json::array();
  std::printf("%-28s %12s %12s %8s %12s %10s %10s\n", "scenario", "single band", "ensemble", "ratio", "band/update",
              "LOO max", "LOO >1");
  double loo_max = 0;
  for (const auto& s : scenarios) {
    const auto n = study_noise(s, oracle::run_oracle(s, p), oracle::run_control_ensemble(s, members));
    loo_max = std::max(loo_max, n.loo_max);
    std::printf("%-28s %12.3g %12.3g %8.2f %12.3g %10.3f %9.1f%%\n", n.scenario.c_str(), n.single_band, n.ensemble_band,
                n.ensemble_band / n.single_band, n.sensitivity, n.loo_max, 100 * n.loo_share_above_1);
    out.push_back({{"scenario", n.scenario}, {"members", n.members}, {"single_band", n.single_band},
                   {"ensemble_band", n.ensemble_band}, {"sensitivity", n.sensitivity},
                   {"sensitivity_where", n.sensitivity_where}, {"loo_max", n.loo_max},
                   {"loo_max_where", n.loo_max_where}, {"loo_share_above_1", n.loo_share_above_1},
                   {"loo_pairs", n.loo_pairs}});
    std::fflush(stdout);
  }
  std::printf("largest leave-one-out ratio: %.3f (alpha must exceed it with margin)\n", loo_max);
  if (const auto json = args.value("json")) write_output(*json, out.dump(2) + "\n", "report");
}

}  // namespace

Command noise_command() {
  return informational_command(
      {"noise", "muoncheck noise [SCENARIO...] [--control-members K] [--json FILE]",
       "Measures the control ensemble against the exact oracle on each SCENARIO (default: all shipped):\n"
       "the old single-control weight band beside the ensemble band, the band as a fraction of a\n"
       "step's update, and leave-one-out ratios (a member's error over the largest of the others),\n"
       "the evidence behind the band's alpha. Runs no implementation; exit 0.",
       options({"control-members", "oracle-precision", "json", "scenarios"})},
      run);
}

}  // namespace muoncheck
