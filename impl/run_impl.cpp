#include "impl/run_impl.hpp"

#include <algorithm>
#include <chrono>
#include <functional>

#include "core/error.hpp"
#include "impl/comm/process_group.hpp"
#include "impl/comm/rank_group.hpp"
#ifdef MUONCHECK_HAVE_CUDA
#include "impl/comm/nccl_communicator.hpp"
#include "impl/math/cuda/device_info.hpp"
#endif
#include "impl/faults/faults.hpp"
#include "impl/run_processes.hpp"
#include "impl/run_rank.hpp"

namespace muoncheck::impl {

std::string comm_backend_name(CommBackend c) { return c == CommBackend::nccl ? "nccl" : "gloo"; }  // CHECK_EXCL_BR_LINE: another build's backend

// The command line's --comm; `check` passes the default, so only one name is parsed there.
bool parse_comm_backend(const std::string& s, CommBackend& out) {
  if (s == "gloo") out = CommBackend::gloo;
  else if (s == "nccl") out = CommBackend::nccl;
  else return false;
  return true;
}


std::string backend_label(const ImplOptions& o) {
  std::string label = compute_backend_name(o.backend) + "+" + comm_backend_name(o.comm);
  if (o.ns_kernel != NsKernel::by_shape) label += " (ns-kernel " + ns_kernel_name(o.ns_kernel) + ")";
  return label;
}

std::string backend_description(const ImplOptions& o) {
  std::string d = backend_label(o);
#ifdef MUONCHECK_HAVE_CUDA
  if (o.backend == ComputeBackend::cuda || o.comm == CommBackend::nccl) {
    d += " on " + cuda::environment();
    if (o.comm == CommBackend::nccl) d += ", NCCL " + nccl_version();
  }
#endif
  return d;
}

namespace {

// Calls body(comm, device) on dp rank threads over the chosen collectives. Under Gloo a
// cuda rank uses GPU rank mod #GPUs (so dp > #GPUs shares them); under NCCL GPU rank.
void run_on_ranks(int dp, const ImplOptions& opts, const std::function<void(Communicator&, int)>& body) {
  if (opts.comm == CommBackend::nccl) {  // CHECK_EXCL_BR_LINE: another build's backend
    // CHECK_EXCL_START: another build's backend
#ifdef MUONCHECK_HAVE_CUDA
    run_ranks_nccl(dp, opts.timeout, body);
    return;
#else
    throw Error(ErrorKind::Unsupported, "comm nccl: this muoncheck was built without CUDA (-DMUONCHECK_CUDA=OFF)");
#endif
    // CHECK_EXCL_STOP
  }
  const int gpus = opts.backend == ComputeBackend::cuda ? std::max(1, cuda_device_count()) : 1;  // CHECK_EXCL_BR_LINE: another build's backend
  run_ranks(dp, opts.timeout, [&](Communicator& comm) { body(comm, comm.rank() % gpus); });
}

}  // namespace

void check_supported(const Scenario& s, const ImplOptions& opts) {
  (void)FaultSet::from_ids(opts.faults);
  if (opts.ns_kernel != NsKernel::by_shape && opts.backend != ComputeBackend::cuda)
    throw Error(ErrorKind::Usage, "--ns-kernel " + ns_kernel_name(opts.ns_kernel) + " chooses a path of the cuda backend: it needs --backend cuda");
#ifndef MUONCHECK_HAVE_CUDA
  if (opts.backend == ComputeBackend::cuda || opts.comm == CommBackend::nccl)  // CHECK_EXCL_BR_LINE: another build's backend
    throw Error(ErrorKind::Unsupported, backend_label(opts) + ": this muoncheck was built without CUDA (-DMUONCHECK_CUDA=OFF)");  // CHECK_EXCL_LINE: another build's backend
#endif
  if (s.model.params.empty()) throw Error(ErrorKind::Unsupported, s.name + ": the model has no parameters");
  if (s.optimizer.ns_steps < 1)
    throw Error(ErrorKind::Unsupported, s.name + ": ns_steps " + std::to_string(s.optimizer.ns_steps) + " < 1");
  for (const auto& inj : s.overflow) {
    const int p = param_index(s, inj.param);
    if (p < 0) throw Error(ErrorKind::Unsupported, s.name + ": overflow injection names unknown param " + inj.param);
    if (inj.index < 0 || inj.index >= element_count(s.model.params[static_cast<size_t>(p)].shape))
      throw Error(ErrorKind::Unsupported, s.name + ": overflow index " + std::to_string(inj.index) +
                                              " outside param " + inj.param);
  }
}

namespace {

// One leg on its engine's dp rank threads (run_rank.hpp), its checkpoint in memory.
ImplResult run_leg(const Leg& leg, const ImplOptions& opts, const FaultSet& faults, EngineCheckpoint& saved) {
  const int dp = leg.scenario.engine.dp;
  std::vector<RankObservation> ranks(static_cast<size_t>(dp));
  if (leg.saves) saved = EngineCheckpoint{dp, leg.scenario.engine.stage, leg.end, std::vector<RankShard>(static_cast<size_t>(dp))};
  const auto t0 = std::chrono::steady_clock::now();
  run_on_ranks(dp, opts, [&](Communicator& comm, int device) {
    const auto r = static_cast<size_t>(comm.rank());
    ranks[r] = observe_rank(leg, faults, opts, comm, device, leg.resumes ? &saved : nullptr,
                            leg.saves ? &saved.shards[r] : nullptr);
  });
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return assemble(leg, std::move(ranks), opts, wall);
}

}  // namespace

ImplResult run_impl(const Scenario& s, const ImplOptions& opts) {
  check_supported(s, opts);
  if (ProcessGroup* group = ProcessGroup::installed()) return run_on_processes(*group, s, opts);
  if (s.engine.ranks == RankMode::processes) {
    if (!opts.group)
      throw Error(ErrorKind::Unsupported, s.name + ": engine.ranks is processes, and this run was given no rank processes "
                                                   "(muoncheck starts them when it judges the scenario)");
    return run_on_processes(*opts.group, s, opts);
  }
  const FaultSet faults = FaultSet::from_ids(opts.faults);
  EngineCheckpoint saved;   // a checkpoint scenario's, between its legs
  return run_legs(s, [&](const Leg& leg) { return run_leg(leg, opts, faults, saved); });
}

}  // namespace muoncheck::impl
