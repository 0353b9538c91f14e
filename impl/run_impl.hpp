// The production implementation's public face: run a scenario on dp rank threads, each
// with a Communicator (Gloo, or NCCL with one GPU per rank) and a Compute (cpu, or cuda:
// ranks share the visible GPUs round-robin under Gloo), each wrapped in its counting
// decorator, and return the trajectory (producer "impl:cpu" / "impl:cuda"), per-rank tags,
// the collective log, NS events (from the CountingCompute logs: the calls that ran) and
// the per-step digests of replicated state. A scenario with a checkpoint runs twice: saved
// after its step k, torn down, resumed from the checkpoint (impl/zero/checkpoint.hpp; with
// ranks as processes one file per rank, impl/zero/shard_file.hpp). Faults (impl/faults) are
// selected by id.
// Errors are muoncheck::Error: Unsupported for a valid scenario this engine cannot run,
// Usage for an unknown fault id, Infrastructure for collective failures and timeouts.
// Where a ProcessGroup is installed (ranks as processes), the run is a job of that group
// instead, with the same result (run_processes.hpp).
#pragma once
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/scenario.hpp"
#include "core/trajectory.hpp"
#include "impl/comm/counting_communicator.hpp"
#include "impl/math/compute.hpp"

namespace muoncheck::impl {

enum class CommBackend { gloo, nccl };
std::string comm_backend_name(CommBackend c);
bool parse_comm_backend(const std::string& s, CommBackend& out);

struct ImplOptions {
  std::vector<std::string> faults;                 // fault ids of the fault catalogue; empty: the correct engine
  std::chrono::milliseconds timeout = kDefaultCollectiveTimeout;   // per collective (and rendezvous)
  ComputeBackend backend = ComputeBackend::cpu;    // where NS and the optimizer kernels run
  CommBackend comm = CommBackend::gloo;            // nccl: one GPU per rank, needs dp GPUs
  NsKernel ns_kernel = NsKernel::by_shape;         // a cuda backend's NS path (compute.hpp)
};

// "cpu+gloo", "cuda+nccl", "cuda+gloo (ns-kernel resident)", ...: what a report records as the
// backend.
std::string backend_label(const ImplOptions& o);
// The label plus the GPU, driver, CUDA, cuBLAS and NCCL versions when CUDA is in use.
std::string backend_description(const ImplOptions& o);

struct ImplResult {
  Trajectory trajectory;                           // rank 0's gathered state; NS calls of all ranks
  std::vector<std::vector<ParamTag>> tags_by_rank;
  std::vector<std::vector<CollectiveRecord>> collectives_by_rank;
  std::vector<std::vector<double>> collective_seconds_by_rank;   // wall time of each record above
  std::vector<double> step_seconds;                 // rank 0: each step's training work
  std::vector<std::vector<uint64_t>> replicated_digest_by_rank;   // [rank][step]
  std::vector<std::string> faults;                 // the faults this run had switched on
  int64_t flat_elements = 0;                       // N
  int64_t partition_elements = 0;                  // padded N / dp
  double wall_seconds = 0.0;
  // A checkpoint-resume run (scenario.checkpoint): the state the resumed engine held right
  // after loading the checkpoint, read back through its own state export; the trajectory,
  // logs and digests are the saving run's (steps 0..k) followed by the resumed run's.
  std::optional<TrainingState> resumed_state;
};

// Throws before any thread starts when the scenario or a fault cannot run here.
void check_supported(const Scenario& s, const ImplOptions& opts);

ImplResult run_impl(const Scenario& s, const ImplOptions& opts = {});

}  // namespace muoncheck::impl
