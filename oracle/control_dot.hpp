// The control's product kernel and rounding: operands are already NS-dtype values, so
// each product is exact in double; the fp32 accumulation follows the member's order
// (rounding after every add), and the result is rounded to the NS dtype. With random
// rounding on, every rounding is a Monte Carlo draw that depends only on (seed, value),
// so results never depend on the thread that computes them.
#pragma once
#include <algorithm>
#include <bit>
#include <cstdint>

#include "core/dtype.hpp"
#include "oracle/rounding_variant.hpp"

namespace muoncheck::oracle {

// A uniform number in [0, 1) from (seed, x, dtype): splitmix64's finaliser.
inline double rounding_draw(uint64_t seed, double x, DType t) {
  uint64_t z = seed ^ std::bit_cast<uint64_t>(x) ^ (static_cast<uint64_t>(t) << 61);
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53;
}

// Round x into t as the member rounds: to nearest even, or randomly (seed ≠ 0).
inline double round_member(DType t, double x, uint64_t seed) {
  return seed == 0 ? round_to(t, x) : round_random(t, x, rounding_draw(seed, x, t));
}

struct ControlDot {
  DType out = DType::fp32;
  DotOrder order = DotOrder::sequential;
  int block = 32;
  uint64_t seed = 0;

  double operator()(const double* a, const double* b, int64_t k) const {
    double r;
    dots<1>(a, &b, k, &r);
    return r;
  }

  // Four dot products of `a` with b[0..3] at once, each formed exactly as operator()
  // forms it (the same code with one lane: bit-identical), interleaved so that four
  // independent rounding chains hide each other's latency — the control's hot loop.
  void dot4(const double* a, const double* const* b, int64_t k, double* result) const { dots<4>(a, b, k, result); }

 private:
  // result[l] = the member's dot product of a with b[l], for L lanes at once.
  template <int L>
  void dots(const double* a, const double* const* b, int64_t k, double* result) const {
    double acc[L] = {};
    if (k > 0) {
      if (seed == 0) lanes<L, false>(a, b, k, acc);
      else lanes<L, true>(a, b, k, acc);
    }
    for (int l = 0; l < L; ++l) result[l] = round_member(out, acc[l], seed);
  }
  template <bool Random>
  double f32(double x) const {
    return Random ? round_random(DType::fp32, x, rounding_draw(seed, x, DType::fp32)) : static_cast<double>(static_cast<float>(x));
  }
  // acc[l] += Σ a[i]·b[l][i] over [lo, hi) (downwards when lo > hi), an FMA chain per lane.
  template <int L, bool Random>
  void chain(const double* a, const double* const* b, int64_t lo, int64_t hi, double* acc) const {
    const int64_t dir = lo <= hi ? 1 : -1;
    for (int64_t i = lo; i != hi; i += dir)
      for (int l = 0; l < L; ++l) acc[l] = f32<Random>(acc[l] + a[i] * b[l][i]);
  }
  // Recursive halves; products rounded to fp32 first (no FMA).
  template <int L, bool Random>
  void pairwise(const double* a, const double* const* b, int64_t lo, int64_t hi, double* r) const {
    if (hi - lo == 1) {
      for (int l = 0; l < L; ++l) r[l] = f32<Random>(a[lo] * b[l][lo]);
      return;
    }
    const int64_t mid = lo + (hi - lo) / 2;
    double x[L], y[L];
    pairwise<L, Random>(a, b, lo, mid, x);
    pairwise<L, Random>(a, b, mid, hi, y);
    for (int l = 0; l < L; ++l) r[l] = f32<Random>(x[l] + y[l]);
  }
  template <int L, bool Random>
  void lanes(const double* a, const double* const* b, int64_t k, double* acc) const {
    switch (order) {
      case DotOrder::sequential: chain<L, Random>(a, b, 0, k, acc); return;
      case DotOrder::reversed: chain<L, Random>(a, b, k - 1, -1, acc); return;
      case DotOrder::pairwise: pairwise<L, Random>(a, b, 0, k, acc); return;
      case DotOrder::blocked:
        for (int64_t lo = 0; lo < k; lo += block) {
          double part[L] = {};
          chain<L, Random>(a, b, lo, std::min<int64_t>(lo + block, k), part);
          for (int l = 0; l < L; ++l) acc[l] = f32<Random>(acc[l] + part[l]);
        }
        return;
    }
  }
};

}  // namespace muoncheck::oracle
