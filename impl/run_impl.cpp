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
#include "impl/math/counting_compute.hpp"
#include "impl/run_processes.hpp"
#include "impl/run_rank.hpp"
#include "impl/zero/rank_engine.hpp"

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
  return compute_backend_name(o.backend) + "+" + comm_backend_name(o.comm);
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

RankObservation observe_rank(const Scenario& s, const FaultSet& faults, const ImplOptions& opts, Communicator& comm,
                             int device) {
  CountingCommunicator counting(comm);
  const auto backend = make_compute(opts.backend, device);
  CountingCompute math(*backend, comm.rank());
  RankEngine engine(s, faults, counting, math);
  RankObservation o;
  o.flat_elements = engine.layout().total();
  o.partition_elements = engine.layout().partition_size();
  engine.run();
  o.engine = engine.take_result();
  o.collectives = counting.log();
  o.collective_seconds = counting.seconds();
  o.ns_calls = math.log();
  return o;
}

ImplResult assemble(std::vector<RankObservation> ranks, const ImplOptions& opts, double wall_seconds) {
  ImplResult out;
  out.wall_seconds = wall_seconds;
  out.flat_elements = ranks[0].flat_elements;
  out.partition_elements = ranks[0].partition_elements;
  out.trajectory = std::move(ranks[0].engine.trajectory);
  out.step_seconds = std::move(ranks[0].engine.step_seconds);
  std::vector<std::vector<NsCall>> ns_logs;
  for (auto& r : ranks) {
    out.tags_by_rank.push_back(std::move(r.engine.tags));
    out.replicated_digest_by_rank.push_back(std::move(r.engine.digests));
    out.collectives_by_rank.push_back(std::move(r.collectives));
    out.collective_seconds_by_rank.push_back(std::move(r.collective_seconds));
    ns_logs.push_back(std::move(r.ns_calls));
  }
  // NS events come only from the decorators' logs: what ran, on every rank.
  auto calls = ns_calls_by_step(ns_logs, static_cast<int>(out.trajectory.steps.size()));
  for (size_t t = 0; t < calls.size(); ++t) out.trajectory.steps[t].ns_calls = std::move(calls[t]);
  out.faults = opts.faults;
  return out;
}

ImplResult run_impl(const Scenario& s, const ImplOptions& opts) {
  check_supported(s, opts);
  if (ProcessGroup* group = ProcessGroup::installed()) return run_on_processes(*group, s, opts);
  const FaultSet faults = FaultSet::from_ids(opts.faults);
  std::vector<RankObservation> ranks(static_cast<size_t>(s.engine.dp));
  const auto t0 = std::chrono::steady_clock::now();
  run_on_ranks(s.engine.dp, opts, [&](Communicator& comm, int device) {
    ranks[static_cast<size_t>(comm.rank())] = observe_rank(s, faults, opts, comm, device);
  });
  return assemble(std::move(ranks), opts, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}

}  // namespace muoncheck::impl
