#include "impl/zero/collectives.hpp"

#include <algorithm>

#include "impl/math/lowp.hpp"
#include "impl/zero/buckets.hpp"

namespace muoncheck::impl {
namespace {

Buffer view(WireBuffer& w) { return Buffer{w.data(), w.count(), w.dtype()}; }

int64_t total_size(const std::vector<Range>& pieces) {
  int64_t n = 0;
  for (const Range& p : pieces) n += p.size();
  return n;
}

}  // namespace

void all_gather_pieces(Communicator& comm, DType wire, const std::vector<std::vector<Range>>& send,
                       const PieceSource& source, const PieceSink& sink,
                       const std::vector<std::vector<Range>>* recv) {
  const int me = comm.rank();
  std::vector<int64_t> counts;
  for (const auto& pieces : send) counts.push_back(total_size(pieces));
  int64_t total = 0;
  for (int64_t c : counts) total += c;

  WireBuffer in(wire, counts[static_cast<size_t>(me)]);
  std::vector<float> tmp;
  int64_t at = 0;
  for (const Range& p : send[static_cast<size_t>(me)]) {
    tmp.resize(static_cast<size_t>(p.size()));
    source(p, tmp.data());
    in.store(at, tmp.data(), p.size());
    at += p.size();
  }
  WireBuffer out(wire, total);
  comm.all_gather_v(view(in), view(out), counts);

  const auto& layout = recv ? *recv : send;  // CHECK_EXCL_BR_LINE: only the mixed-shape-window-gather fault passes recv
  int64_t block = 0;
  for (size_t r = 0; r < send.size(); ++r) {
    int64_t off = 0;
    for (const Range& p : layout[r]) {
      if (p.empty()) continue;
      const int64_t n = std::min(p.size(), counts[r] - off);
      if (n <= 0) break;  // CHECK_EXCL_BR_LINE: only the fault's assumed layout overruns a block
      tmp.resize(static_cast<size_t>(n));
      out.load(block + off, tmp.data(), n);
      sink(static_cast<int>(r), Range{p.begin, p.begin + n}, tmp.data());
      off += p.size();
    }
    block += counts[r];
  }
}

void all_reduce_flat(Communicator& comm, DType wire, const FlatLayout& layout, int64_t max_bucket,
                     float* full) {
  for (const Range& b : param_buckets(layout, max_bucket)) {
    WireBuffer buf(wire, b.size());
    buf.store(0, full + b.begin, b.size());
    comm.all_reduce(view(buf));
    buf.load(0, full + b.begin, b.size());
  }
}

void reduce_scatter_flat(Communicator& comm, DType wire, const FlatLayout& layout, int64_t max_bucket,
                         const float* full_src, float* owned_dst) {
  const int me = comm.rank(), dp = layout.dp();
  const Range mine = layout.owned(me);
  const auto chunks = aligned_chunks(layout, max_bucket);
  if (chunks.empty()) {                               // bound below dp: all-reduce, keep our slice
    for (const Range& b : param_buckets(layout, max_bucket)) {
      WireBuffer buf(wire, b.size());
      buf.store(0, full_src + b.begin, b.size());
      comm.all_reduce(view(buf));
      const Range keep = intersect(b, mine);
      if (!keep.empty()) buf.load(keep.begin - b.begin, owned_dst + (keep.begin - mine.begin), keep.size());
    }
    return;
  }
  const int64_t part = layout.partition_size(), n = layout.total();
  std::vector<float> zeros;
  for (const Range& q : chunks) {
    const int64_t c = q.size();
    WireBuffer in(wire, dp * c);
    for (int r = 0; r < dp; ++r) {
      const Range flat{r * part + q.begin, r * part + q.end};
      const Range real = intersect(flat, {0, n});       // the rest is padding: zeros
      if (!real.empty()) in.store(r * c + (real.begin - flat.begin), full_src + real.begin, real.size());
    }
    WireBuffer out(wire, c);
    comm.reduce_scatter(view(in), view(out));
    const Range keep = intersect(Range{mine.begin + q.begin, mine.begin + q.end}, mine);
    if (!keep.empty()) out.load(0, owned_dst + (keep.begin - mine.begin), keep.size());
  }
}

void all_reduce_scalars(Communicator& comm, std::vector<float>& values, DType wire) {
  comm.all_reduce(Buffer{values.data(), static_cast<int64_t>(values.size()), wire});
}

}  // namespace muoncheck::impl
