#include "impl/run_impl.hpp"

#include <algorithm>
#include <chrono>
#include <functional>

#include "core/error.hpp"
#include "impl/comm/rank_group.hpp"
#ifdef MUONCHECK_HAVE_CUDA
#include "impl/comm/nccl_communicator.hpp"
#include "impl/math/cuda/device_info.hpp"
#endif
#include "impl/faults/faults.hpp"
#include "impl/math/counting_compute.hpp"
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

namespace {

// One run of the engine on s.engine.dp ranks over steps [first, end): from the scenario's
// initial state, or from `from`; when `save` is set, each rank's shard lands there after
// the last step.
ImplResult run_leg(const Scenario& s, const ImplOptions& opts, const FaultSet& faults, int first, int end,
                   const EngineCheckpoint* from, EngineCheckpoint* save) {
  const int dp = s.engine.dp;
  std::vector<RankResult> ranks(static_cast<size_t>(dp));
  std::vector<std::vector<CollectiveRecord>> logs(static_cast<size_t>(dp));
  std::vector<std::vector<double>> log_seconds(static_cast<size_t>(dp));
  std::vector<std::vector<NsCall>> ns_logs(static_cast<size_t>(dp));
  if (save) *save = EngineCheckpoint{dp, s.engine.stage, end, std::vector<RankShard>(static_cast<size_t>(dp))};
  ImplResult out;

  const auto t0 = std::chrono::steady_clock::now();
  run_on_ranks(dp, opts, [&](Communicator& comm, int device) {
    CountingCommunicator counting(comm);
    const auto backend = make_compute(opts.backend, device);
    CountingCompute math(*backend, comm.rank());
    RankEngine engine(s, faults, counting, math);
    if (comm.rank() == 0) {
      out.flat_elements = engine.layout().total();
      out.partition_elements = engine.layout().partition_size();
    }
    if (from) engine.restore(*from);
    engine.run(first, end);
    const auto r = static_cast<size_t>(comm.rank());
    if (save) save->shards[r] = engine.save_shard();
    ranks[r] = engine.take_result();
    logs[r] = counting.log();
    log_seconds[r] = counting.seconds();
    ns_logs[r] = math.log();
  });
  out.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  out.trajectory = std::move(ranks[0].trajectory);
  out.step_seconds = std::move(ranks[0].step_seconds);
  if (from)
    out.resumed_state = TrainingState{out.trajectory.initial, ranks[0].scaler_at_start, ranks[0].good_steps_at_start};
  for (auto& r : ranks) {
    out.tags_by_rank.push_back(std::move(r.tags));
    out.replicated_digest_by_rank.push_back(std::move(r.digests));
  }
  // NS events come only from the decorators' logs: what ran, on every rank.
  const auto calls = ns_calls_by_step(ns_logs, end);
  for (auto& step : out.trajectory.steps) step.ns_calls = calls[static_cast<size_t>(step.step)];
  out.collectives_by_rank = std::move(logs);
  out.collective_seconds_by_rank = std::move(log_seconds);
  out.faults = opts.faults;
  return out;
}

// The run saved after its step k (`a`) continued by the resumed one (`b`): one trajectory,
// per-rank logs and digests of both (a rank index present in one of them only has that
// one's), and the state the resumed engine started from.
ImplResult joined(ImplResult a, ImplResult b) {
  for (auto& step : b.trajectory.steps) a.trajectory.steps.push_back(std::move(step));
  a.step_seconds.insert(a.step_seconds.end(), b.step_seconds.begin(), b.step_seconds.end());
  auto append = [](auto& into, auto& from) {
    if (into.size() < from.size()) into.resize(from.size());
    for (size_t r = 0; r < from.size(); ++r) into[r].insert(into[r].end(), from[r].begin(), from[r].end());
  };
  append(a.collectives_by_rank, b.collectives_by_rank);
  append(a.collective_seconds_by_rank, b.collective_seconds_by_rank);
  append(a.replicated_digest_by_rank, b.replicated_digest_by_rank);
  for (size_t r = a.tags_by_rank.size(); r < b.tags_by_rank.size(); ++r) a.tags_by_rank.push_back(b.tags_by_rank[r]);
  a.resumed_state = std::move(b.resumed_state);
  a.wall_seconds += b.wall_seconds;
  return a;
}

}  // namespace

ImplResult run_impl(const Scenario& s, const ImplOptions& opts) {
  check_supported(s, opts);
  const FaultSet faults = FaultSet::from_ids(opts.faults);
  if (!s.checkpoint) return run_leg(s, opts, faults, 0, s.steps, nullptr, nullptr);
  // Save after step k, tear the ranks down, resume (at the resume dp/stage) on fresh ones.
  const int k = s.checkpoint->save_after_step;
  EngineCheckpoint saved;
  ImplResult before = run_leg(without_checkpoint(s), opts, faults, 0, k + 1, nullptr, &saved);
  Scenario resumed = without_checkpoint(s);
  resumed.engine = resume_engine(s);
  return joined(std::move(before), run_leg(resumed, opts, faults, k + 1, s.steps, &saved, nullptr));
}

}  // namespace muoncheck::impl
