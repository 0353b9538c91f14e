#include "impl/zero/flat_layout.hpp"

#include <stdexcept>

namespace muoncheck::impl {

FlatLayout::FlatLayout(const std::vector<int64_t>& numels, int dp) : dp_(dp), numels_(numels) {
  if (dp < 1) throw std::invalid_argument("FlatLayout: dp must be >= 1");
  for (int64_t n : numels) {
    offsets_.push_back(total_);
    total_ += n;
  }
  padded_ = (total_ + dp - 1) / dp * dp;
}

Range FlatLayout::partition(int rank) const {
  const int64_t p = partition_size();
  return {rank * p, (rank + 1) * p};
}

Range FlatLayout::owned(int rank) const { return intersect(partition(rank), {0, total_}); }

Range FlatLayout::param(int p) const {
  return {offsets_[static_cast<size_t>(p)], offsets_[static_cast<size_t>(p)] + numels_[static_cast<size_t>(p)]};
}

std::vector<int64_t> FlatLayout::owned_counts() const {
  std::vector<int64_t> c;
  for (int r = 0; r < dp_; ++r) c.push_back(owned(r).size());
  return c;
}

// CHECK_EXCL_START: used only by the straddle-partial-reduce fault path
std::vector<int> FlatLayout::ranks_holding(Range r) const {
  std::vector<int> out;
  for (int q = 0; q < dp_; ++q)
    if (!intersect(owned(q), r).empty()) out.push_back(q);
  return out;
}
// CHECK_EXCL_STOP

}  // namespace muoncheck::impl
