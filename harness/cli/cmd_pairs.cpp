// `muoncheck pairs [SCENARIO...]`: the 2-way feature interactions covered of the
// scenarios (default: every scenario `check` runs), JSON on stdout; exit 1 while a feasible
// pair is uncovered. Dynamic features are read from each scenario's oracle run.
#include <iostream>
#include <vector>

#include "harness/cli/commands.hpp"
#include "harness/cli/option_table.hpp"
#include "harness/judge/scenario_selection.hpp"
#include "harness/pairs/covered_pairs.hpp"
#include "oracle/oracle.hpp"

namespace muoncheck {

namespace {

Outcome run(const cli::Args& args) {
  const oracle::Precision p = precision_from(args, "oracle-precision/pairs");
  std::vector<pairs::Exercised> suite;
  for (const auto& s : select_scenarios(args.positionals(), option_text(args, "scenarios"), true))
    suite.push_back(pairs::exercised(s, oracle::run_oracle(s, p)));
  const auto c = pairs::measure(suite);
  nlohmann::json out = pairs::to_json(c, suite);
  out["oracle_precision"] = oracle::precision_name(p);
  if (args.flag("design")) out["design"] = pairs::design_rows(c.uncovered);
  std::cout << out.dump(2) << "\n";
  return c.uncovered.empty() ? Outcome::success : Outcome::conformance_failure;
}

}  // namespace

Command pairs_command() {
  return {{"pairs", "muoncheck pairs [SCENARIO...] [--design] [--oracle-precision P]",
           "The 2-way feature interactions covered of SCENARIO (default: every shipped scenario, the\n"
           "suite `check` runs): of every feasible pair of values of two features (stage, dp, gas,\n"
           "dtypes, NS, clip and whether it binds, scaler and whether it overflows or grows, per-head,\n"
           "scale rule, param rank and block shape, momentum, weight decay, groups, zero_init, buckets),\n"
           "the share some scenario exercises; whether a clip binds, a step overflows or the scale\n"
           "grows is read from the oracle's run. JSON on stdout: uncovered pairs, infeasible pairs\n"
           "with why. Exit 1 while a feasible pair is uncovered.",
           options({"oracle-precision/pairs", "design", "scenarios"})},
          run};
}

}  // namespace muoncheck
