// `muoncheck merge SHARD.json...`: the records of `sweep --shard I/N --json` joined into the record
// of the whole sweep (harness/sweep/sweep_merge.hpp), printed and written as one sweep would;
// exit 1 as that sweep would (a counterexample, or executed counts that are not OK).
#include <cstdio>

#include "core/atomic_file.hpp"
#include "core/bounded_json.hpp"
#include "core/error.hpp"
#include "harness/cli/commands.hpp"
#include "harness/cli/option_table.hpp"
#include "harness/cli/options_from_args.hpp"
#include "harness/report/report_views.hpp"
#include "harness/sweep/sweep_merge.hpp"
#include "harness/sweep/sweep_report.hpp"

namespace muoncheck {

namespace {

Outcome run(const cli::Args& args) {
  if (args.positionals().empty()) throw Error(ErrorKind::Usage, "merge: no sweep record given (SHARD.json...)");
  if (const auto json = args.value("json")) check_writable(*json);
  const auto views = view_paths_from(args);
  std::vector<std::pair<std::string, nlohmann::json>> records;
  for (const auto& file : args.positionals()) records.emplace_back(file, read_json_file(file, "sweep record"));
  const MergedSweep m = merge_sweep_records(records);
  std::printf("merged %d shard records of sweep seed %llu\n", m.shards, static_cast<unsigned long long>(m.options.seed));
  print_sweep_summary(stdout, m.options, m.result);
  auto record = sweep_json(m.options, m.result);
  record["merged_shards"] = m.shards;
  if (const auto json = args.value("json")) {
    write_file_atomically(*json, record.dump(2) + "\n");
    std::printf("report: %s\n", json->c_str());
  }
  write_report_views(record, views);
  return m.result.failure || !sweep_executed_problems(m.options, m.result).empty() ? Outcome::conformance_failure
                                                                                   : Outcome::success;
}

}  // namespace

Command merge_command() {
  return {{"merge", "muoncheck merge SHARD.json... [--json FILE]",
           "Joins the records of one seeded sweep's shards (`muoncheck sweep --shard I/N --json SHARD.json`,\n"
           "every I of 1..N once) into the record of the whole sweep: the cases in case order, up to the first\n"
           "confirmed failure, as one machine would have judged them (docs/sweeps.md: Slurm arrays, CI matrices).\n"
           "Exit 1 when the merged sweep found a counterexample or its executed counts are not OK.",
           options({"json", "junit", "summary-md"})},
          run};
}

}  // namespace muoncheck
