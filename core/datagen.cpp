#include "core/datagen.hpp"

#include <cmath>

namespace muoncheck::data {

uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t splitmix64(uint64_t x) { return mix(x + 0x9E3779B97F4A7C15ull); }

uint64_t hash6(uint64_t w0, uint64_t w1, uint64_t w2, uint64_t w3, uint64_t w4, uint64_t w5) {
  uint64_t x = 0;
  for (uint64_t w : {w0, w1, w2, w3, w4, w5}) x = splitmix64(x ^ w);
  return x;
}

double unit_value(uint64_t h) {
  return static_cast<double>(static_cast<int64_t>((h >> 40) % 33) - 16) / 16.0;
}

// k = ceil(log2(cols) / 2) = the smallest k with 4^k ≥ cols, computed exactly on integers.
static int init_exponent(int64_t cols) {
  int k = 0;
  while ((int64_t{1} << (2 * k)) < cols) ++k;
  return k;
}

double initial_weight(uint64_t seed, int param, int64_t element, int rank, int64_t cols) {
  const double v = unit_value(hash6(seed, static_cast<uint64_t>(Stream::init),
                                    static_cast<uint64_t>(param), static_cast<uint64_t>(element), 0, 0));
  if (rank < 2) return 1.0 + v / 4.0;
  return std::ldexp(v, -init_exponent(cols));
}

double input_value(uint64_t seed, int param, int step, int64_t sample, int64_t element) {
  return unit_value(hash6(seed, static_cast<uint64_t>(Stream::input), static_cast<uint64_t>(param),
                          static_cast<uint64_t>(step), static_cast<uint64_t>(sample),
                          static_cast<uint64_t>(element)));
}

double target_value(uint64_t seed, int param, int step, int64_t sample, int64_t element) {
  return unit_value(hash6(seed, static_cast<uint64_t>(Stream::target), static_cast<uint64_t>(param),
                          static_cast<uint64_t>(step), static_cast<uint64_t>(sample),
                          static_cast<uint64_t>(element)));
}

int64_t global_sample(int micro_step, int rank, int local_sample, int dp, int micro_batch) {
  return (static_cast<int64_t>(micro_step) * dp + rank) * micro_batch + local_sample;
}

}  // namespace muoncheck::data
