// A checkpoint on disk: one file per saving rank, DIR/rank-R-of-DP.shard, as DeepSpeed keeps
// one optimizer-state file per rank. With ranks as processes each rank writes its own shard
// and a resume (at the same or another dp) reads every one of them.
//
// Format, version 1 (little-endian, as every host muoncheck builds for):
//   16 bytes  magic "muoncheck-shard" and a NUL
//   u32       version
//   i32 × 4   rank, dp, stage, next_step (the first step the resumed run takes)
//   i64 × 2   owned range [begin, end) of the flat vector
//   f64, i32 × 3  the loss scaler's scale, hysteresis, good streak; AdamW's good steps
//   f32 × n × 5   master, momentum, Adam m, Adam v, the param_dtype model (n = end − begin)
//   u64       FNV-1a digest of every byte before it
// A missing, truncated or corrupt file, or one that is not the shard expected (another rank,
// dp, stage or step), is an Error{Infrastructure} naming the file and the rank.
#pragma once
#include <string>

#include "impl/zero/checkpoint.hpp"

namespace muoncheck::impl {

// Where a checkpoint lies and what its shards must say.
struct CheckpointPlace {
  std::string dir;
  int dp = 0, stage = 0, next_step = 0;   // of the saving run
};

std::string shard_file_path(const CheckpointPlace& at, int rank);

// Writes rank's shard (through a temporary file renamed into place: a reader never sees half).
void write_shard_file(const CheckpointPlace& at, int rank, const RankShard& shard);

// Every saving rank's shard, checked.
EngineCheckpoint read_checkpoint_files(const CheckpointPlace& at);

}  // namespace muoncheck::impl
