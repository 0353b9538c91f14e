// Layer shapes for generated params, realistic sizes weighted against the edge
// cases ZeRO gets wrong: 1×N, N×1, tall, wide, 1×1, 2×2, row counts no dp divides,
// rank-1 and conv-like rank-3/4. Every dimension is in [1, 48] so a case stays fast.
#pragma once
#include <cstdint>
#include <vector>

#include <rapidcheck.h>

namespace muoncheck::generators {

using Shape = std::vector<int64_t>;

rc::Gen<Shape> matrix_shape();   // rank 2
rc::Gen<Shape> vector_shape();   // rank 1 (norms, biases)
rc::Gen<Shape> conv_shape();     // rank 3 or 4, viewed as (shape[0], prod(rest)) ≤ 48 columns
rc::Gen<Shape> any_shape();      // mostly matrices, some vectors and conv shapes

}  // namespace muoncheck::generators
