// Bandwidth of the collectives a run made, by nccl-tests' definitions (PERFORMANCE.md of
// nccl-tests): algbw = S / t with S the collective's logical size (the record's bytes), and
// busbw = algbw · f(kind, n), the share of the links a ring algorithm keeps busy:
//   all_reduce 2(n−1)/n; all_gather, all_gather_v, reduce_scatter (n−1)/n; broadcast 1.
// t is the wall time of the Communicator call (CountingCommunicator::seconds()): for our
// host-buffer collectives it includes staging to and from the device, so it is the bandwidth
// the engine gets, not the link's peak.
#pragma once
#include <cstdint>
#include <vector>

#include "impl/comm/counting_communicator.hpp"

namespace muoncheck::impl {

double bus_factor(CollectiveKind kind, int ranks);

struct Bandwidth {
  int64_t calls = 0;
  int64_t bytes = 0;
  double seconds = 0.0;
  double algbw_gbps = 0.0;   // GB/s (1e9 bytes)
  double busbw_gbps = 0.0;   // Σ(bytes·factor) / Σ seconds
};

// Over the records of one rank's log with this purpose (seconds[i] belongs to log[i]).
Bandwidth bandwidth_of(const std::vector<CollectiveRecord>& log, const std::vector<double>& seconds,
                       Purpose purpose, int ranks);

}  // namespace muoncheck::impl
