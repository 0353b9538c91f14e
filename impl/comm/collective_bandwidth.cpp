#include "impl/comm/collective_bandwidth.hpp"

namespace muoncheck::impl {

double bus_factor(CollectiveKind kind, int ranks) {
  const double n = ranks;
  switch (kind) {
    case CollectiveKind::all_reduce: return 2.0 * (n - 1.0) / n;
    case CollectiveKind::all_gather:
    case CollectiveKind::all_gather_v:
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::gather:     // the root receives (n-1)/n of the logical size (its output)
    case CollectiveKind::scatter: return (n - 1.0) / n;
  }
  return 0.0;
}

Bandwidth bandwidth_of(const std::vector<CollectiveRecord>& log, const std::vector<double>& seconds,
                       Purpose purpose, int ranks) {
  Bandwidth b;
  double bus_bytes = 0.0;
  for (size_t i = 0; i < log.size() && i < seconds.size(); ++i) {
    if (log[i].purpose != purpose) continue;
    b.calls += 1;
    b.bytes += log[i].bytes;
    b.seconds += seconds[i];
    bus_bytes += static_cast<double>(log[i].bytes) * bus_factor(log[i].kind, ranks);
  }
  if (b.seconds > 0.0) {
    b.algbw_gbps = static_cast<double>(b.bytes) / b.seconds / 1e9;
    b.busbw_gbps = bus_bytes / b.seconds / 1e9;
  }
  return b;
}

}  // namespace muoncheck::impl
