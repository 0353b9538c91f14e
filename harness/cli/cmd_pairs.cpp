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
           "suite `check` runs): of every feasible pair of values of two features, the share some\n"
           "scenario exercises. The features follow the scenario format: every field of the schema\n"
           "feeds one (stage, dp, gas, dtypes, NS method, steps, coefficients and dtype, clip, scaler,\n"
           "schedules, groups, buckets, engine paths, ranks as processes, checkpoints, injections, the\n"
           "param's rank, block shape and heads) or is excluded with its reason (JSON: fields).\n"
           "Whether a clip binds, a step overflows, the scale grows or drops is read from the oracle's\n"
           "run. JSON on stdout: uncovered pairs, infeasible pairs with why. Exit 1 while a feasible\n"
           "pair is uncovered.",
           options({"oracle-precision/pairs", "design", "scenarios"})},
          run};
}

}  // namespace muoncheck
