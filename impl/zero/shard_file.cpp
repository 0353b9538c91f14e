#include "impl/zero/shard_file.hpp"

#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "core/error.hpp"
#include "impl/zero/digest.hpp"

namespace muoncheck::impl {
namespace {

static_assert(std::endian::native == std::endian::little, "shard files are little-endian");

constexpr char kMagic[16] = "muoncheck-shard";
constexpr uint32_t kVersion = 1;

class Bytes {
 public:
  template <class T>
  void put(const T& v) {
    const auto* p = reinterpret_cast<const char*>(&v);
    data_.insert(data_.end(), p, p + sizeof(T));
  }
  void put(const std::vector<float>& v) {
    const auto* p = reinterpret_cast<const char*>(v.data());
    data_.insert(data_.end(), p, p + v.size() * sizeof(float));
  }
  const std::vector<char>& data() const { return data_; }

 private:
  std::vector<char> data_;
};

// Reads fields in order from a file's bytes; a read past the end names the field.
class Reader {
 public:
  Reader(const std::vector<char>& bytes, size_t at, size_t end, const std::string& who)
      : bytes_(bytes), end_(end), at_(at), who_(who) {}
  template <class T>
  T get(const char* field) {
    T v;
    take(&v, sizeof(T), field);
    return v;
  }
  std::vector<float> floats(int64_t n, const char* field) {
    std::vector<float> v(static_cast<size_t>(n));
    take(v.data(), v.size() * sizeof(float), field);
    return v;
  }
  size_t at() const { return at_; }

 private:
  void take(void* into, size_t n, const char* field) {
    if (end_ - at_ < n)
      throw Error(ErrorKind::Infrastructure, who_ + ": truncated at field " + field + " (byte " + std::to_string(at_) + ")");
    std::memcpy(into, bytes_.data() + at_, n);
    at_ += n;
  }
  const std::vector<char>& bytes_;
  size_t end_, at_;
  const std::string& who_;
};

uint64_t digest_of(const char* p, size_t n) {
  Digest d;
  d.add_bytes(p, n);
  return d.value();
}

void expect_field(const std::string& who, const char* field, int64_t want, int64_t got) {
  if (want != got)
    throw Error(ErrorKind::Infrastructure, who + ": field " + field + ": expected " + std::to_string(want) + ", got " +
                                               std::to_string(got) + " (not the shard of this checkpoint)");
}

RankShard read_shard(const CheckpointPlace& at, int rank) {
  const std::string path = shard_file_path(at, rank);
  const std::string who = "checkpoint shard of rank " + std::to_string(rank) + ": " + path;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::Infrastructure, who + ": cannot open (" + std::strerror(errno) + ")");
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw Error(ErrorKind::Infrastructure, who + ": read failed");
  if (bytes.size() < sizeof(kMagic) + sizeof(uint64_t) || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0)
    throw Error(ErrorKind::Infrastructure, who + ": not a muoncheck shard file (no magic \"" + kMagic + "\")");
  const size_t body = bytes.size() - sizeof(uint64_t);
  uint64_t stored;
  std::memcpy(&stored, bytes.data() + body, sizeof(stored));
  Reader r(bytes, sizeof(kMagic), body, who);
  const auto version = r.get<uint32_t>("version");
  if (version != kVersion)
    throw Error(ErrorKind::Infrastructure, who + ": field version: expected " + std::to_string(kVersion) + ", got " +
                                               std::to_string(version));
  if (digest_of(bytes.data(), body) != stored)
    throw Error(ErrorKind::Infrastructure, who + ": digest mismatch (the file is corrupt or cut short)");
  expect_field(who, "rank", rank, r.get<int32_t>("rank"));
  expect_field(who, "dp", at.dp, r.get<int32_t>("dp"));
  expect_field(who, "stage", at.stage, r.get<int32_t>("stage"));
  expect_field(who, "next_step", at.next_step, r.get<int32_t>("next_step"));
  RankShard sh;
  sh.owned.begin = r.get<int64_t>("owned.begin");
  sh.owned.end = r.get<int64_t>("owned.end");
  if (sh.owned.begin < 0 || sh.owned.end < sh.owned.begin)
    throw Error(ErrorKind::Infrastructure, who + ": field owned: [" + std::to_string(sh.owned.begin) + ", " +
                                               std::to_string(sh.owned.end) + ") is no range");
  sh.scaler.scale = r.get<double>("scaler.scale");
  sh.scaler.hysteresis = r.get<int32_t>("scaler.hysteresis");
  sh.scaler.good_streak = r.get<int32_t>("scaler.good_streak");
  sh.good_steps = r.get<int32_t>("good_steps");
  const int64_t n = sh.owned.size();
  if (static_cast<uint64_t>(n) > (body - r.at()) / sizeof(float))
    throw Error(ErrorKind::Infrastructure, who + ": truncated at field master (" + std::to_string(n) + " elements)");
  sh.master = r.floats(n, "master");
  sh.momentum = r.floats(n, "momentum");
  sh.adam_m = r.floats(n, "adam_m");
  sh.adam_v = r.floats(n, "adam_v");
  sh.model = r.floats(n, "model");
  if (r.at() != body)
    throw Error(ErrorKind::Infrastructure, who + ": " + std::to_string(body - r.at()) + " bytes after the last field");
  return sh;
}

}  // namespace

std::string shard_file_path(const CheckpointPlace& at, int rank) {
  return (std::filesystem::path(at.dir) / ("rank-" + std::to_string(rank) + "-of-" + std::to_string(at.dp) + ".shard"))
      .string();
}

void write_shard_file(const CheckpointPlace& at, int rank, const RankShard& sh) {
  const std::string path = shard_file_path(at, rank);
  for (const auto* v : {&sh.master, &sh.momentum, &sh.adam_m, &sh.adam_v, &sh.model})
    if (static_cast<int64_t>(v->size()) != sh.owned.size())
      throw Error(ErrorKind::Internal, path + ": rank " + std::to_string(rank) + "'s shard arrays do not cover its range");
  Bytes b;
  b.put(kMagic);
  b.put(kVersion);
  for (const int32_t v : {rank, at.dp, at.stage, at.next_step}) b.put(v);
  b.put(sh.owned.begin);
  b.put(sh.owned.end);
  b.put(sh.scaler.scale);
  for (const int32_t v : {sh.scaler.hysteresis, sh.scaler.good_streak, sh.good_steps}) b.put(v);
  for (const auto* v : {&sh.master, &sh.momentum, &sh.adam_m, &sh.adam_v, &sh.model}) b.put(*v);
  b.put(digest_of(b.data().data(), b.data().size()));

  std::error_code ec;
  std::filesystem::create_directories(at.dir, ec);
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(b.data().data(), static_cast<std::streamsize>(b.data().size()));
    out.close();
    if (!out)
      throw Error(ErrorKind::Infrastructure, "checkpoint shard of rank " + std::to_string(rank) + ": " + tmp +
                                                 ": write failed (" + std::strerror(errno) + ")");
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec)
    throw Error(ErrorKind::Infrastructure, "checkpoint shard of rank " + std::to_string(rank) + ": " + path +
                                               ": rename failed (" + ec.message() + ")");
}

EngineCheckpoint read_checkpoint_files(const CheckpointPlace& at) {
  EngineCheckpoint ck{at.dp, at.stage, at.next_step, {}};
  for (int r = 0; r < at.dp; ++r) ck.shards.push_back(read_shard(at, r));
  return ck;
}

}  // namespace muoncheck::impl
