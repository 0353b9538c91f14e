// `muoncheck merge`: the records of a sweep's shards (`sweep --shard I/N --json FILE`, each a
// disjoint part of one seeded sweep) joined into the record of the whole sweep. The cases are
// added in case order through SweepResult::add, as one machine adds them, and stop at the first
// confirmed failure as one machine stops, so the merged record equals the record of the sweep
// run unsharded (its timing aside: `seconds` is the slowest shard's).
#pragma once
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/sweep/sweep_runner.hpp"

namespace muoncheck {

struct MergedSweep {
  SweepOptions options;   // of the whole sweep: shard 1/1
  SweepResult result;
  int shards = 0;
};

// `records`: (file, its JSON) for every shard 1/N .. N/N, once each. Bad input naming the file
// and the field: not a sweep record, another seed, case count, fault set, focus or backend than
// the first, a shard missing or given twice, a case outside its shard.
MergedSweep merge_sweep_records(const std::vector<std::pair<std::string, nlohmann::json>>& records);

}  // namespace muoncheck
