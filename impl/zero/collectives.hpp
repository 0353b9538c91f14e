// ZeRO's traffic patterns on top of the Communicator: bucketed gradient reduction
// (all-reduce, or reduce-scatter onto each rank's partition), and variable all-gathers
// of flat pieces (params for the forward, Muon gradients/momenta to their NS rank, NS
// results back). Values travel rounded to the wire dtype; everything else stays fp32.
#pragma once
#include <functional>
#include <vector>

#include "core/dtype.hpp"
#include "impl/comm/communicator.hpp"
#include "impl/zero/flat_layout.hpp"

namespace muoncheck::impl {

// Fills dst with the values of a flat piece this rank sends.
using PieceSource = std::function<void(Range piece, float* dst)>;
// Receives one piece sent by `from_rank`.
using PieceSink = std::function<void(int from_rank, Range piece, const float* values)>;

// One all_gather_v: rank r contributes send[r] (flat pieces, concatenated in order).
// `recv`, when given, is how the receiver believes the pieces are laid out (a faulty
// unpack); pieces it describes beyond what a rank sent are cut off.
void all_gather_pieces(Communicator& comm, DType wire, const std::vector<std::vector<Range>>& send,
                       const PieceSource& source, const PieceSink& sink,
                       const std::vector<std::vector<Range>>* recv = nullptr);

// Stage 0: sums `full` (N elements) across ranks in buckets of at most max_bucket.
void all_reduce_flat(Communicator& comm, DType wire, const FlatLayout& layout, int64_t max_bucket,
                     float* full);

// Stage ≥1: sums the local full gradient across ranks; this rank receives its owned
// range into owned_dst. Reduce-scatter over aligned chunks (dp·c ≤ max_bucket); when
// max_bucket < dp, all-reduces flat buckets and keeps its own slice.
void reduce_scatter_flat(Communicator& comm, DType wire, const FlatLayout& layout, int64_t max_bucket,
                         const float* full_src, float* owned_dst);

// In-place sum of a few scalars, travelling in `wire` (fp32 unless a fault says otherwise).
void all_reduce_scalars(Communicator& comm, std::vector<float>& values, DType wire = DType::fp32);

}  // namespace muoncheck::impl
