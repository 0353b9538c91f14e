// Small RapidCheck helpers every generator here uses: a weighted choice that
// shrinks toward its FIRST option (so list the simplest option first), and an
// inclusive integer range that shrinks toward its lower end.
#pragma once
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include <rapidcheck.h>

namespace muoncheck::generators {

// Index i with probability weights[i] / Σ weights; shrinks toward 0.
rc::Gen<std::size_t> weighted_index(std::vector<int> weights);

// One of `options`, weighted; shrinks toward options[0].
template <class T>
rc::Gen<T> weighted(std::vector<std::pair<int, T>> options) {
  std::vector<int> w;
  std::vector<T> values;
  for (auto& [weight, value] : options) w.push_back(weight), values.push_back(std::move(value));
  return rc::gen::map(weighted_index(std::move(w)), [values](std::size_t i) { return values[i]; });
}

// A value from one of `gens`, weighted; shrinks toward gens[0], then within it.
template <class T>
rc::Gen<T> weighted_gen(std::vector<std::pair<int, rc::Gen<T>>> gens) {
  std::vector<int> w;
  std::vector<rc::Gen<T>> g;
  for (auto& [weight, gen] : gens) w.push_back(weight), g.push_back(std::move(gen));
  return rc::gen::mapcat(weighted_index(std::move(w)), [g](std::size_t i) { return g[i]; });
}

// Uniform in [lo, hi] (inclusive), shrinking toward lo. Ignores RapidCheck's size
// so a sweep's first cases already cover the whole range.
rc::Gen<int64_t> range(int64_t lo, int64_t hi);
rc::Gen<int> int_range(int lo, int hi);

// true with probability percent/100; shrinks toward false.
rc::Gen<bool> chance(int percent);

}  // namespace muoncheck::generators
