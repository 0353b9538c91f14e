#include "impl/comm/communicator.hpp"

namespace muoncheck::impl {

std::string collective_name(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::all_reduce: return "all_reduce";
    case CollectiveKind::reduce_scatter: return "reduce_scatter";
    case CollectiveKind::all_gather: return "all_gather";
    case CollectiveKind::all_gather_v: return "all_gather_v";
    case CollectiveKind::gather: return "gather";
    case CollectiveKind::scatter: return "scatter";
  }
  return "unknown";
}

std::string purpose_name(Purpose p) {
  switch (p) {
    case Purpose::grad_reduce: return "grad_reduce";
    case Purpose::param_gather: return "param_gather";
    case Purpose::muon_gather: return "muon_gather";
    case Purpose::muon_exchange: return "muon_exchange";
    case Purpose::ns_internal: return "ns_internal";
    case Purpose::weight_sync: return "weight_sync";
    case Purpose::scalar: return "scalar";
    case Purpose::state_export: return "state_export";
  }
  return "unknown";
}

std::string phase_name(Phase p) {
  return p == Phase::micro_step ? "micro_step" : "boundary";
}

CommError comm_error(ErrorKind kind, int rank, CollectiveKind op, const CommContext& ctx,
                     const std::string& verb, const std::string& what, bool peer_failure) {
  std::string msg = "rank " + std::to_string(rank) + ": " + collective_name(op) + " (" +
                    purpose_name(ctx.purpose) + ", step " + std::to_string(ctx.step) + ") " +
                    verb + ": " + what;
  for (char& c : msg) {
    if (c == '\n' || c == '\r') c = ' ';  // an error message is one line
  }
  return CommError(kind, rank, collective_name(op), msg, peer_failure);
}

void throw_if_unusable(bool& broken, const std::atomic<bool>* abort, int rank, CollectiveKind op,
                       const CommContext& ctx) {
  if (broken)
    throw comm_error(ErrorKind::Infrastructure, rank, op, ctx, "refused", "this communicator failed earlier or was closed", true);
  if (abort != nullptr && abort->load()) {
    broken = true;
    throw comm_error(ErrorKind::Infrastructure, rank, op, ctx, "aborted", "another rank failed", true);
  }
}

#ifndef MUONCHECK_HAVE_CUDA
std::string nccl_library_version() { return ""; }
#endif

}  // namespace muoncheck::impl
