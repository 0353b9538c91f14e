// `muoncheck golden check|update [SCENARIO...]`: compares the oracle's float128
// trajectories with golden/, or rewrites golden/ (the only writer of that folder).
#include <cstdio>
#include <filesystem>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "harness/cli/commands.hpp"
#include "harness/cli/option_table.hpp"
#include "harness/golden/golden_check.hpp"
#include "harness/judge/scenario_selection.hpp"
#include "oracle/oracle.hpp"
#include "oracle/result_memo.hpp"

namespace muoncheck {

namespace {

Outcome run(const cli::Args& args) {
  auto pos = args.positionals();
  if (pos.empty() || (pos[0] != "check" && pos[0] != "update"))
    throw Error(ErrorKind::Usage, "muoncheck golden: the first argument must be check or update");
  const bool update = pos[0] == "update";
  pos.erase(pos.begin());
  const auto dir = option_text(args, "golden");
  const auto scenarios = select_scenarios(pos, option_text(args, "scenarios"), true);
  if (!update) require_golden_folder(dir);
  if (update)
    for (const auto& s : scenarios) check_writable(golden::golden_path(dir, s));   // before any oracle runs
  bool all_ok = true;
  oracle::ResultMemo memo;   // scenarios the oracle cannot tell apart (llama2-zero3 and -init) run it once
  for (const auto& s : scenarios) {
    if (update) {
      const auto digest = golden::digest(s, *memo.exact(s, oracle::Precision::float128), "float128");
      write_file_atomically(golden::golden_path(dir, s), digest.dump(1) + "\n");
      std::printf("updated %s\n", golden::golden_path(dir, s).c_str());
      continue;
    }
    const auto exact = std::filesystem::exists(golden::golden_path(dir, s)) ? memo.exact(s, oracle::Precision::float128)
                                                                             : nullptr;
    const auto c = check_against_golden(s, dir, exact.get());
    all_ok = all_ok && c.ok;
    std::printf("%-24s %s  worst relative difference %.2e (tolerance %.0e)%s%s\n", s.name.c_str(), c.ok ? "PASS" : "FAIL",
                c.worst_relative, golden::kRelativeTolerance, c.ok ? "" : "\n    ", c.message.c_str());
    if (!c.ok) std::printf("    %s\n", golden_failure_hint(c, s, dir).c_str());
  }
  return all_ok ? Outcome::success : Outcome::conformance_failure;
}

}  // namespace

Command golden_command() {
  return {{"golden", "muoncheck golden check|update [SCENARIO...] [--golden DIR]",
           "check: recompute each scenario's float128 oracle trajectory and compare its digest with golden/.\n"
           "update: rewrite golden/<scenario>.json from the oracle (the only command that writes golden/).\n"
           "No scenario means every scenario in scenarios/.",
           options({"golden", "scenarios"})},
          run};
}

}  // namespace muoncheck
