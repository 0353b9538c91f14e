// The data every component reads, the way two trainers read one dataset: initial
// weights, inputs and targets are pure functions of (seed, param, step, sample,
// element). Every value is a multiple of 1/16 in [-1, 1] (times a power of two),
// exact in fp32, bf16 and fp16, so sums of them are exact in any order.
#pragma once
#include <cstdint>
#include <vector>

namespace muoncheck::data {

uint64_t mix(uint64_t z);
uint64_t splitmix64(uint64_t x);
// x = 0; x = splitmix64(x ^ w) for each of the six words.
uint64_t hash6(uint64_t w0, uint64_t w1, uint64_t w2, uint64_t w3, uint64_t w4, uint64_t w5);
// ((h >> 40) mod 33 − 16) / 16
double unit_value(uint64_t h);

enum class Stream : uint64_t { init = 1, input = 2, target = 3 };

// Element e (row-major in the layer shape) of param p's initial weight.
// Matrices (rank ≥ 2): v · 2^-ceil(log2(cols)/2); vectors: 1 + v/4.
double initial_weight(uint64_t seed, int param, int64_t element, int rank, int64_t cols);
double input_value(uint64_t seed, int param, int step, int64_t sample, int64_t element);
double target_value(uint64_t seed, int param, int step, int64_t sample, int64_t element);

// The global index of local sample i of micro-step k on rank r:
// j = (k·dp + r)·micro_batch + i.
int64_t global_sample(int micro_step, int rank, int local_sample, int dp, int micro_batch);

}  // namespace muoncheck::data
