// A checkpoint's shard files (impl/zero/shard_file.hpp) hold each rank's shard bit for bit,
// non-finite values included; a missing, corrupt, truncated or foreign file is an
// Error{Infrastructure} naming the file and the rank.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "core/error.hpp"
#include "impl/zero/shard_file.hpp"

namespace muoncheck::impl {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

RankShard shard_over(Range owned, float base) {
  RankShard sh;
  sh.owned = owned;
  for (auto* v : {&sh.master, &sh.momentum, &sh.adam_m, &sh.adam_v, &sh.model})
    for (int64_t i = 0; i < owned.size(); ++i) v->push_back(base + 0.1f * static_cast<float>(i) + static_cast<float>(v - &sh.master));
  sh.master[0] = std::numeric_limits<float>::quiet_NaN();
  sh.momentum[1] = -std::numeric_limits<float>::infinity();
  sh.adam_v[2] = -0.0f;
  sh.scaler = {1024.5, 2, 7};
  sh.good_steps = 5;
  return sh;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

class ShardFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    at.dir = (fs::temp_directory_path() / ("shard_file_test." + std::to_string(getpid()))).string();
    fs::remove_all(at.dir);
    at.dp = 2;
    at.stage = 1;
    at.next_step = 3;
    shards = {shard_over({0, 5}, 1.0f), shard_over({5, 9}, -2.0f)};
    for (int r = 0; r < 2; ++r) write_shard_file(at, r, shards[static_cast<size_t>(r)]);
  }
  void TearDown() override { fs::remove_all(at.dir); }

  // The error reading the checkpoint throws (it must throw one).
  Error read_error(const CheckpointPlace& where) {
    try {
      read_checkpoint_files(where);
    } catch (const Error& e) {
      return e;
    }
    ADD_FAILURE() << "read_checkpoint_files did not throw";
    return Error(ErrorKind::Internal, "");
  }
  void rewrite(int rank, const std::function<void(std::vector<char>&)>& edit) {
    const std::string path = shard_file_path(at, rank);
    std::ifstream in(path, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    in.close();
    edit(bytes);
    std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }

  CheckpointPlace at;
  std::vector<RankShard> shards;
};

TEST_F(ShardFiles, HoldEveryRanksShardBitForBit) {
  const EngineCheckpoint ck = read_checkpoint_files(at);
  EXPECT_EQ(ck.dp, 2);
  EXPECT_EQ(ck.stage, 1);
  EXPECT_EQ(ck.next_step, 3);
  ASSERT_EQ(ck.shards.size(), 2u);
  for (size_t r = 0; r < 2; ++r) {
    const RankShard &a = shards[r], &b = ck.shards[r];
    EXPECT_EQ(a.owned, b.owned);
    for (auto m : {&RankShard::master, &RankShard::momentum, &RankShard::adam_m, &RankShard::adam_v, &RankShard::model})
      EXPECT_TRUE(same_bits(a.*m, b.*m)) << "rank " << r;
    EXPECT_EQ(a.scaler.scale, b.scaler.scale);
    EXPECT_EQ(a.scaler.hysteresis, b.scaler.hysteresis);
    EXPECT_EQ(a.scaler.good_streak, b.scaler.good_streak);
    EXPECT_EQ(a.good_steps, b.good_steps);
  }
  EXPECT_FALSE(fs::exists(shard_file_path(at, 0) + ".tmp"));
}

TEST_F(ShardFiles, AMissingShardNamesItsFileAndRank) {
  fs::remove(shard_file_path(at, 1));
  const Error e = read_error(at);
  EXPECT_EQ(e.kind(), ErrorKind::Infrastructure);
  EXPECT_THAT(e.what(), AllOf(HasSubstr("rank 1"), HasSubstr(shard_file_path(at, 1)), HasSubstr("cannot open")));
}

TEST_F(ShardFiles, ACorruptShardFailsItsDigest) {
  rewrite(0, [](std::vector<char>& b) { b[b.size() / 2] ^= 0x10; });
  const Error e = read_error(at);
  EXPECT_EQ(e.kind(), ErrorKind::Infrastructure);
  EXPECT_THAT(e.what(), AllOf(HasSubstr("rank 0"), HasSubstr(shard_file_path(at, 0)), HasSubstr("digest mismatch")));
}

TEST_F(ShardFiles, ATruncatedShardIsNoShard) {
  for (const size_t keep : {size_t{0}, size_t{10}, size_t{40}, size_t{120}}) {
    rewrite(1, [keep](std::vector<char>& b) { b.resize(std::min(keep, b.size())); });
    const Error e = read_error(at);
    EXPECT_EQ(e.kind(), ErrorKind::Infrastructure) << keep;
    EXPECT_THAT(e.what(), AllOf(HasSubstr("rank 1"), HasSubstr(shard_file_path(at, 1)))) << keep;
  }
}

TEST_F(ShardFiles, AnotherVersionIsNamed) {
  rewrite(0, [](std::vector<char>& b) { b[16] = 9; });
  EXPECT_THAT(read_error(at).what(), AllOf(HasSubstr("rank 0"), HasSubstr("field version: expected 1, got 9")));
}

TEST_F(ShardFiles, AShardOfAnotherCheckpointIsRefused) {
  fs::copy_file(shard_file_path(at, 0), shard_file_path(at, 1), fs::copy_options::overwrite_existing);
  EXPECT_THAT(read_error(at).what(), AllOf(HasSubstr(shard_file_path(at, 1)), HasSubstr("field rank: expected 1, got 0")));
  CheckpointPlace later = at;
  later.next_step = 4;
  EXPECT_THAT(read_error(later).what(), HasSubstr("field next_step: expected 4, got 3"));
}

TEST_F(ShardFiles, TextIsNoShard) {
  std::ofstream(shard_file_path(at, 0), std::ios::trunc) << "{\"not\": \"a shard at all\"}";
  EXPECT_THAT(read_error(at).what(), AllOf(HasSubstr("rank 0"), HasSubstr("not a muoncheck shard file")));
}

}  // namespace
}  // namespace muoncheck::impl
