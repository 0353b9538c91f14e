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
  out += " of " + std::to_string(words[2]);
  if (kind == CollectiveKind::reduce_scatter || kind == CollectiveKind::all_gather)
    out += " -> " + std::to_string(words[3]);
  out += " " + std::string(dtype_name(static_cast<DType>(words[1])));
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
  try {
    inner_.all_gather(Buffer{in.data(), kFloats, DType::fp32}, Buffer{out.data(), kFloats * n, DType::fp32});
  } catch (const CommError& e) {
    // A timeout or a peer gone shows up in the exchange: name the collective the caller
    // asked for ("rank 0: all_reduce (scalar, step 7) failed: ..."), keeping kind and echo flag.
    std::string msg = e.what();
    const std::string exchange = "rank " + std::to_string(rank()) + ": " + collective_name(CollectiveKind::all_gather) + " (";
    if (msg.rfind(exchange, 0) == 0)
      msg = "rank " + std::to_string(rank()) + ": " + collective_name(kind) + " (" + msg.substr(exchange.size());
    throw CommError(e.kind(), e.rank(), collective_name(kind), msg, e.peer_failure());
  }
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

void AgreeingCommunicator::bad_args(CollectiveKind kind, const std::string& what) const {
  throw comm_error(ErrorKind::Internal, rank(), kind, ctx_, "bad arguments", what);
}

void AgreeingCommunicator::all_reduce(Buffer buf) {
  if (buf.count < 0) bad_args(CollectiveKind::all_reduce, "count " + std::to_string(buf.count));
  agree(CollectiveKind::all_reduce, static_cast<int64_t>(buf.dtype), buf.count, kNone, kNone);
  inner_.all_reduce(buf);
}

void AgreeingCommunicator::reduce_scatter(Buffer in, Buffer out) {
  if (in.dtype != out.dtype || out.count < 0 || in.count != out.count * size())
    bad_args(CollectiveKind::reduce_scatter, "need in.count == dp * out.count and one dtype, got in.count " +
                                                 std::to_string(in.count) + ", out.count " + std::to_string(out.count) +
                                                 ", dp " + std::to_string(size()));
  agree(CollectiveKind::reduce_scatter, static_cast<int64_t>(in.dtype), in.count, out.count, static_cast<int64_t>(out.dtype));
  inner_.reduce_scatter(in, out);
}

void AgreeingCommunicator::all_gather(Buffer in, Buffer out) {
  if (in.dtype != out.dtype || in.count < 0 || out.count != in.count * size())
    bad_args(CollectiveKind::all_gather, "need out.count == dp * in.count and one dtype, got in.count " +
                                             std::to_string(in.count) + ", out.count " + std::to_string(out.count) +
                                             ", dp " + std::to_string(size()));
  agree(CollectiveKind::all_gather, static_cast<int64_t>(in.dtype), in.count, out.count, static_cast<int64_t>(out.dtype));
  inner_.all_gather(in, out);
}

void AgreeingCommunicator::all_gather_v(Buffer in, Buffer out, const std::vector<int64_t>& counts) {
  int64_t total = 0;
  bool ok = in.dtype == out.dtype && static_cast<int>(counts.size()) == size();
  for (int64_t c : counts) ok = ok && c >= 0, total += c;
  if (!ok || in.count != counts[static_cast<size_t>(rank())] || out.count != total)
    bad_args(CollectiveKind::all_gather_v, "need one count per rank, in.count == counts[rank], out.count == sum(counts) "
                                           "and one dtype, got in.count " + std::to_string(in.count) + ", out.count " +
                                               std::to_string(out.count) + ", " + std::to_string(counts.size()) + " counts");
  agree(CollectiveKind::all_gather_v, static_cast<int64_t>(in.dtype), out.count, static_cast<int64_t>(counts.size()),
        counts_hash(counts));
  inner_.all_gather_v(in, out, counts);
}

}  // namespace muoncheck::impl
