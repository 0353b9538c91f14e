#include "properties/generators/shape_gen.hpp"

#include "properties/generators/choice.hpp"

namespace muoncheck::generators {

namespace {

rc::Gen<Shape> pair_of(rc::Gen<int64_t> rows, rc::Gen<int64_t> cols) {
  return rc::gen::map(rc::gen::pair(std::move(rows), std::move(cols)),
                      [](const std::pair<int64_t, int64_t>& rc) { return Shape{rc.first, rc.second}; });
}

rc::Gen<int64_t> fixed(int64_t v) { return rc::gen::just(v); }

}  // namespace

rc::Gen<Shape> matrix_shape() {
  return weighted_gen<Shape>({
      {30, pair_of(range(1, 24), range(1, 24))},             // ordinary (shrinks to 1×1)
      {8, pair_of(fixed(1), range(2, 48))},                  // 1×N
      {8, pair_of(range(2, 48), fixed(1))},                  // N×1
      {10, pair_of(range(12, 48), range(2, 8))},             // tall
      {10, pair_of(range(2, 8), range(12, 48))},             // wide
      {4, pair_of(fixed(1), fixed(1))},                      // 1×1
      {4, pair_of(fixed(2), fixed(2))},                      // 2×2
      // rows no dp in 2..8 divides evenly, so partitions cut through rows
      {12, pair_of(weighted<int64_t>({{1, 3}, {1, 5}, {1, 7}, {1, 9}, {1, 18}, {1, 19}, {1, 23}}), range(2, 12))},
      // powers of two: the exact plumbing tier applies (fp32)
      {8, pair_of(weighted<int64_t>({{1, 4}, {1, 8}, {1, 16}}), weighted<int64_t>({{1, 4}, {1, 8}, {1, 16}}))},
  });
}

rc::Gen<Shape> vector_shape() {
  return weighted_gen<Shape>({
      {70, rc::gen::map(range(1, 48), [](int64_t n) { return Shape{n}; })},
      {30, rc::gen::map(weighted<int64_t>({{1, 1}, {1, 8}, {1, 18}, {1, 32}}), [](int64_t n) { return Shape{n}; })},
  });
}

rc::Gen<Shape> conv_shape() {
  return rc::gen::mapcat(chance(70), [](bool rank4) {
    return rc::gen::map(rc::gen::tuple(range(1, 8), range(1, 4), range(1, 3)), [rank4](const auto& t) {
      const auto [out, in, k] = t;
      return rank4 ? Shape{out, in, k, k} : Shape{out, in, k};
    });
  });
}

rc::Gen<Shape> any_shape() {
  return weighted_gen<Shape>({{70, matrix_shape()}, {18, vector_shape()}, {12, conv_shape()}});
}

}  // namespace muoncheck::generators
