// A checkpoint of the ZeRO engine: what each rank saves after a step — its partition of the
// fp32 master weights, momentum and Adam moments, the param_dtype model over the same range,
// and the replicated step count and loss-scaler state — as DeepSpeed saves one optimizer-state
// file per rank. A resume at the same dp takes each rank's own shard; at another dp the
// shards are re-partitioned by element ranges (a permutation: nothing is re-rounded).
#pragma once
#include <vector>

#include "core/trajectory.hpp"
#include "impl/zero/flat_layout.hpp"

namespace muoncheck::impl {

struct RankShard {
  Range owned;                                   // the flat range the arrays cover
  std::vector<float> master, momentum, adam_m, adam_v, model;
  ScalerState scaler;
  int good_steps = 0;
};

struct EngineCheckpoint {
  int dp = 0, stage = 0;
  int next_step = 0;                             // the first step the resumed run takes
  std::vector<RankShard> shards;                 // one per saving rank, in rank order
};

// The values of `member` over `want`, each element from a shard whose range holds it.
std::vector<float> values_over(const EngineCheckpoint& ck, std::vector<float> RankShard::*member, Range want);

}  // namespace muoncheck::impl
