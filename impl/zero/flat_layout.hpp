// The flat buffer behind ZeRO (docs/semantics.md §8): every param in model order, back to back;
// N elements padded to a multiple of dp; rank r's partition is [r·P, (r+1)·P) with
// P = padded/dp. A matrix may straddle partitions and a small param may own nothing
// on a rank. owned(r) is the partition clipped to the N real elements.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

namespace muoncheck::impl {

struct Range {
  int64_t begin = 0, end = 0;      // [begin, end)
  int64_t size() const { return end > begin ? end - begin : 0; }
  bool empty() const { return size() == 0; }
  bool operator==(const Range&) const = default;
};

inline Range intersect(Range a, Range b) {
  Range r{std::max(a.begin, b.begin), std::min(a.end, b.end)};
  if (r.end < r.begin) r.end = r.begin;
  return r;
}

class FlatLayout {
 public:
  FlatLayout(const std::vector<int64_t>& numels, int dp);

  int dp() const { return dp_; }
  int num_params() const { return static_cast<int>(offsets_.size()); }
  int64_t total() const { return total_; }                 // N
  int64_t padded() const { return padded_; }               // N rounded up to a multiple of dp
  int64_t partition_size() const { return padded_ / dp_; }
  Range partition(int rank) const;                         // may run into the padding
  Range owned(int rank) const;                             // partition ∩ [0, N)
  Range param(int p) const;
  std::vector<int64_t> owned_counts() const;               // owned(r).size() for every r
  // Ranks whose partitions hold part of `r` (a straddling matrix has more than one).
  std::vector<int> ranks_holding(Range r) const;

 private:
  int dp_;
  std::vector<int64_t> offsets_, numels_;
  int64_t total_ = 0, padded_ = 0;
};

}  // namespace muoncheck::impl
