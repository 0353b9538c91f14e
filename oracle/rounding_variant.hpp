// One valid rounding sequence of a correct implementation: the freedoms an
// implementation has that change its rounding but not its mathematics. The control
// ensemble (control_ensemble.hpp) draws its members from these; the noise band of
// every numeric invariant is the spread of the members' errors, so no single
// implementation's order defines what "honest rounding noise" is.
#pragma once
#include <cstdint>
#include <string>

namespace muoncheck::oracle {

// The order of the fp32 accumulation inside every product's dot product.
enum class DotOrder {
  sequential,  // k = 0, 1, …: an FMA chain (the CPU implementation's order)
  reversed,    // k = K−1, …, 0
  pairwise,    // recursive halves; products rounded to fp32 first (no FMA)
  blocked,     // fp32 FMA chains of `block` terms (GEMM K-tiles), partials summed in order
};

// The order in which the ranks' terms of one element are added in a reduction.
enum class ReduceOrder {
  rank_order,     // 0, 1, …, dp−1 for every element
  ring,           // each element starts at its own rank ((i + offset) mod dp) and walks the ring
  ring_reversed,  // the same, walking the ring backwards
};

// What sets the rank a ring walk starts an element at.
enum class ReduceStart {
  element,             // the element's index in its tensor
  all_reduce_segment,  // its contiguous segment of the model's flat gradient as a ring
                       // all-reduce cuts it (2·dp chunks of ⌈total/(2·dp)⌉, rank r's two
                       // walked as one: Gloo's, the CPU implementation's at stage 0)
  partition,           // its rank partition of the flat gradient (⌈total/dp⌉ elements), as a
                       // ring reduce-scatter sums partition c from rank c+1 on (the CPU
                       // implementation's at stages 1 and 2)
};

struct RoundingVariant {
  DotOrder dot = DotOrder::sequential;
  int block = 32;                   // terms per partial sum (blocked only)
  bool fused_axpby = true;          // αP + βQ rounds once; else each term rounds to the NS dtype first
  bool norm_in_ns_dtype = true;     // NS normaliser is an NS-dtype value; else it stays fp32
  bool fp32_backward = true;        // forward/backward arithmetic rounds to fp32 after every
                                    // operation (the CPU implementation); else it is exact and
                                    // only the micro-step gradient rounds (a GEMM with a wide
                                    // accumulator). Where a gradient element cancels to ~0, the
                                    // two disagree on its sign, and AdamW's first step is ±lr.
  // The defaults are the CPU implementation's order (control member 0).
  ReduceOrder reduce = ReduceOrder::ring_reversed;
  int reduce_offset = -1;           // ring: element i starts at rank (i + offset) mod dp (may be < 0)
  ReduceStart reduce_start = ReduceStart::all_reduce_segment;   // ring: position p (an index, a
                                    // segment or a partition) starts at rank (p + offset) mod dp
  uint64_t random_rounding = 0;     // 0: round to nearest even; else the seed of Monte Carlo
                                    // random rounding (each inexact result rounds up or down
                                    // with probability given by its distance, Verificarlo's RR)

  std::string label() const;        // "seq/fused/norm-ns/rank", "pairwise/.../rr3", …
};

}  // namespace muoncheck::oracle
