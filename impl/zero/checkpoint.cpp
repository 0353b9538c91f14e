// Saving and restoring a rank's state (impl/zero/checkpoint.hpp). The faults of a resume
// (resume-momentum-lost, resume-wrong-partition, resume-adam-step-reset) live here.
#include "impl/zero/checkpoint.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "impl/zero/rank_engine.hpp"

namespace muoncheck::impl {

std::vector<float> values_over(const EngineCheckpoint& ck, std::vector<float> RankShard::*member, Range want) {
  std::vector<float> out(static_cast<size_t>(want.size()), 0.0f);
  int64_t covered = 0;
  for (const RankShard& sh : ck.shards) {
    const Range x = intersect(sh.owned, want);
    if (x.empty()) continue;
    std::copy_n((sh.*member).begin() + (x.begin - sh.owned.begin), x.size(), out.begin() + (x.begin - want.begin));
    covered += x.size();
  }
  if (covered < want.size())
    throw Error(ErrorKind::Internal, "checkpoint of dp " + std::to_string(ck.dp) + " does not hold elements [" +
                                         std::to_string(want.begin) + ", " + std::to_string(want.end) + ")");
  return out;
}

RankShard RankEngine::save_shard() const {
  RankShard sh{owned_, master_, momentum_, adam_m_, adam_v_, {}, scaler_.state(), good_steps_};
  // The param_dtype model over the owned range (stage 0–2 hold it whole, stage 3 its slice).
  const int64_t from = stage_ == 3 ? 0 : owned_.begin;
  sh.model.assign(model_.begin() + from, model_.begin() + from + owned_.size());
  return sh;
}

void RankEngine::restore(const EngineCheckpoint& ck) {
  if (ck.shards.empty() || ck.shards.front().owned.end > layout_.total())
    throw Error(ErrorKind::Internal, "checkpoint does not fit the model of " + s_.name);
  // The partitioned optimizer state. resume-wrong-partition: each rank loads the saved
  // partition of its own rank index into its range, as a loader that never re-partitions.
  auto optimizer_state = [&](std::vector<float> RankShard::*member) {
    if (!faults_.has(Fault::resume_wrong_partition)) return values_over(ck, member, owned_);  // CHECK_EXCL_BR_LINE: fault path
    // CHECK_EXCL_START: fault path (resume-wrong-partition)
    const RankShard& sh = ck.shards[static_cast<size_t>(rank_) % ck.shards.size()];
    std::vector<float> out(static_cast<size_t>(owned_.size()), 0.0f);
    std::copy_n((sh.*member).begin(), std::min(owned_.size(), sh.owned.size()), out.begin());
    return out;
    // CHECK_EXCL_STOP
  };
  master_ = optimizer_state(&RankShard::master);
  momentum_ = optimizer_state(&RankShard::momentum);
  if (faults_.has(Fault::resume_momentum_lost)) std::fill(momentum_.begin(), momentum_.end(), 0.0f);  // CHECK_EXCL_BR_LINE: fault path
  adam_m_ = optimizer_state(&RankShard::adam_m);
  adam_v_ = optimizer_state(&RankShard::adam_v);
  model_ = values_over(ck, &RankShard::model, stage_ == 3 ? owned_ : Range{0, layout_.total()});
  scaler_.restore(ck.shards.front().scaler);
  good_steps_ = faults_.has(Fault::resume_adam_step_reset) ? 0 : ck.shards.front().good_steps;  // CHECK_EXCL_BR_LINE: fault path
}

}  // namespace muoncheck::impl
