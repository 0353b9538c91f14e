#include "impl/comm/agreeing_communicator.hpp"

#include <cstring>

namespace muoncheck::impl {

namespace {

constexpr int64_t kNone = -1;

// FNV-1a over the counts of an all_gather_v, so every rank's list is compared whole.
int64_t counts_hash(const std::vector<int64_t>& counts) {
  uint64_t h = 1469598103934665603ull;
  for (int64_t c : counts) {
    uint64_t v = static_cast<uint64_t>(c);
    for (int i = 0; i < 8; ++i, v >>= 8) h = (h ^ (v & 0xff)) * 1099511628211ull;
  }
  return static_cast<int64_t>(h >> 1);
}

}  // namespace

std::string CollectiveSignature::describe() const {
  const auto kind = static_cast<CollectiveKind>(words[0]);
  std::string out = collective_name(kind);
  if (kind != CollectiveKind::barrier) out += " of " + std::to_string(words[2]);
  if (kind == CollectiveKind::reduce_scatter || kind == CollectiveKind::all_gather)
    out += " -> " + std::to_string(words[3]);
  if (kind != CollectiveKind::barrier) out += " " + std::string(dtype_name(static_cast<DType>(words[1])));
  if (kind == CollectiveKind::broadcast) out += " from rank " + std::to_string(words[4]);
  return out + " (collective #" + std::to_string(words[5]) + ")";
}

void AgreeingCommunicator::set_context(const CommContext& ctx) {
  ctx_ = ctx;
  inner_.set_context(ctx);
}

void AgreeingCommunicator::agree(CollectiveKind kind, int64_t dtype, int64_t a, int64_t b, int64_t c) {
  CollectiveSignature mine;
  mine.words = {static_cast<int64_t>(kind), dtype, a, b, c, sequence_++};
  const int n = size();
  if (n == 1) return;
  // Travels as raw fp32 words: an all-gather copies bits, it never does arithmetic on them.
  constexpr int64_t kFloats = sizeof(mine.words) / sizeof(float);
  std::vector<float> out(static_cast<size_t>(kFloats * n));
  std::array<float, kFloats> in{};
  std::memcpy(in.data(), mine.words.data(), sizeof(mine.words));
  inner_.all_gather(Buffer{in.data(), kFloats, DType::fp32}, Buffer{out.data(), kFloats * n, DType::fp32});
  std::vector<CollectiveSignature> all(static_cast<size_t>(n));
  bool same = true;
  for (int r = 0; r < n; ++r) {
    std::memcpy(all[static_cast<size_t>(r)].words.data(), out.data() + r * kFloats, sizeof(mine.words));
    same = same && all[static_cast<size_t>(r)] == mine;
  }
  if (same) return;
  std::string what;
  for (int r = 0; r < n; ++r)
    what += (r ? "; rank " : "rank ") + std::to_string(r) + ": " + all[static_cast<size_t>(r)].describe();
  throw comm_error(ErrorKind::Infrastructure, rank(), kind, ctx_, "mismatched across ranks", what);
}

void AgreeingCommunicator::all_reduce(Buffer buf) {
  agree(CollectiveKind::all_reduce, static_cast<int64_t>(buf.dtype), buf.count, kNone, kNone);
  inner_.all_reduce(buf);
}

void AgreeingCommunicator::reduce_scatter(Buffer in, Buffer out) {
  agree(CollectiveKind::reduce_scatter, static_cast<int64_t>(in.dtype), in.count, out.count, static_cast<int64_t>(out.dtype));
  inner_.reduce_scatter(in, out);
}

void AgreeingCommunicator::all_gather(Buffer in, Buffer out) {
  agree(CollectiveKind::all_gather, static_cast<int64_t>(in.dtype), in.count, out.count, static_cast<int64_t>(out.dtype));
  inner_.all_gather(in, out);
}

void AgreeingCommunicator::all_gather_v(Buffer in, Buffer out, const std::vector<int64_t>& counts) {
  agree(CollectiveKind::all_gather_v, static_cast<int64_t>(in.dtype), out.count, static_cast<int64_t>(counts.size()),
        counts_hash(counts));
  inner_.all_gather_v(in, out, counts);
}

void AgreeingCommunicator::broadcast(Buffer buf, int root) {
  agree(CollectiveKind::broadcast, static_cast<int64_t>(buf.dtype), buf.count, kNone, root);
  inner_.broadcast(buf, root);
}

void AgreeingCommunicator::barrier() {
  agree(CollectiveKind::barrier, kNone, kNone, kNone, kNone);
  inner_.barrier();
}

}  // namespace muoncheck::impl
