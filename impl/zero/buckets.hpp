// How ZeRO cuts its traffic into bounded pieces. Param buckets pack whole params in
// model order and split a param only when it alone exceeds the bound (DeepSpeed's IPG
// buckets); aligned chunks cut every rank's partition at the same relative offsets so a
// reduce-scatter's input (dp·c elements) stays within the bound. No piece is ever larger
// than the size it was cut for.
#pragma once
#include <cstdint>
#include <vector>

#include "impl/zero/flat_layout.hpp"

namespace muoncheck::impl {

// Flat ranges covering [0, N) in order, each at most `max_elems`, cut at param
// boundaries unless a param is larger than the bound.
std::vector<Range> param_buckets(const FlatLayout& layout, int64_t max_elems);

// Relative ranges [q, q+c) of a partition with dp·c ≤ max_elems; empty when
// max_elems < dp (the caller falls back to all-reduce of flat ranges).
std::vector<Range> aligned_chunks(const FlatLayout& layout, int64_t max_elems);

// [begin, end) cut into consecutive pieces of at most `max_elems`.
std::vector<Range> split_range(Range r, int64_t max_elems);

// One param's slice inside a gather window.
struct Segment {
  int param = 0;
  Range flat;                        // a sub-range of the param's flat range
};

// Windows over the given params (model order) for step-time gathers: each window holds
// at most `max_elems` elements; a param that fits is never split, a larger one is cut
// into pieces of `max_elems`.
std::vector<std::vector<Segment>> gather_windows(const FlatLayout& layout, const std::vector<int>& params,
                                                 int64_t max_elems);

}  // namespace muoncheck::impl
