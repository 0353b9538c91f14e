#include "impl/zero/buckets.hpp"

#include <stdexcept>

namespace muoncheck::impl {

std::vector<Range> split_range(Range r, int64_t max_elems) {
  if (max_elems < 1) throw std::invalid_argument("split_range: bound must be >= 1");
  std::vector<Range> out;
  for (int64_t a = r.begin; a < r.end; a += max_elems) out.push_back({a, std::min(r.end, a + max_elems)});
  return out;
}

std::vector<Range> param_buckets(const FlatLayout& layout, int64_t max_elems) {
  std::vector<Range> out;
  Range cur{0, 0};
  for (int p = 0; p < layout.num_params(); ++p) {
    const Range pr = layout.param(p);
    if (pr.empty()) continue;
    if (cur.size() + pr.size() <= max_elems) {
      cur.end = pr.end;
      continue;
    }
    if (!cur.empty()) out.push_back(cur);
    if (pr.size() <= max_elems) {
      cur = pr;
      continue;
    }
    auto pieces = split_range(pr, max_elems);
    cur = pieces.back();                          // the tail may share with the next params
    pieces.pop_back();
    out.insert(out.end(), pieces.begin(), pieces.end());
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

std::vector<Range> aligned_chunks(const FlatLayout& layout, int64_t max_elems) {
  const int64_t c = max_elems / layout.dp();
  if (c < 1) return {};
  return split_range({0, layout.partition_size()}, c);
}

std::vector<std::vector<Segment>> gather_windows(const FlatLayout& layout, const std::vector<int>& params,
                                                 int64_t max_elems) {
  std::vector<std::vector<Segment>> windows;
  std::vector<Segment> cur;
  int64_t used = 0;
  auto close = [&] {
    if (!cur.empty()) windows.push_back(std::move(cur));
    cur.clear();
    used = 0;
  };
  for (int p : params) {
    const Range pr = layout.param(p);
    if (pr.empty()) continue;
    if (pr.size() <= max_elems) {
      if (used + pr.size() > max_elems) close();
      cur.push_back({p, pr});
      used += pr.size();
      continue;
    }
    close();
    for (const Range& piece : split_range(pr, max_elems)) windows.push_back({Segment{p, piece}});
  }
  close();
  return windows;
}

}  // namespace muoncheck::impl
