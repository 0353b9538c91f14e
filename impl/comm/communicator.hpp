// The one interface every collective in impl/ goes through (docs/semantics.md §8): all-reduce
// (sum), reduce-scatter (sum, equal chunks) and all-gather (equal and variable
// sizes), over fp32, bf16 and fp16 buffers: the collectives the engine and the agreement
// check call, and no others. 16-bit buffers
// hold raw bit patterns (uint16_t words); a 16-bit sum rounds to that dtype.
// Errors are thrown as CommError (a muoncheck::Error) naming rank and collective.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/dtype.hpp"
#include "core/error.hpp"

namespace muoncheck::impl {

// How long a rank waits for one collective (and a rendezvous) before the run fails: the one
// default of every command (--timeout-ms), the sweep's and the processes' included.
inline constexpr std::chrono::milliseconds kDefaultCollectiveTimeout{60000};

// A typed view of memory: fp32 → float*, bf16/fp16 → uint16_t*.
struct Buffer {
  void* data = nullptr;
  int64_t count = 0;
  DType dtype = DType::fp32;
  int64_t bytes() const { return count * dtype_bytes(dtype); }
};

// gather / scatter: to or from one root rank (an implementation that collects a tensor on its
// owner rank, or hands shards out from it); our engine issues neither, traces may.
enum class CollectiveKind { all_reduce, reduce_scatter, all_gather, all_gather_v, gather, scatter };
std::string collective_name(CollectiveKind k);

// Why a collective runs; invariants filter the log by purpose.
enum class Purpose {
  grad_reduce,      // gradient reduction buckets
  param_gather,     // stage 3: parameters gathered for forward/backward
  muon_gather,      // step time: a Muon param's gradient/momentum gathered for NS
  muon_exchange,    // step time: NS results shared so each rank writes its slice
  ns_internal,      // step time: inside a sharded NS (another implementation's partial products and
                    // redistributions of the NS iterate, e.g. torch's DTensor), in ns_dtype
  weight_sync,      // stage 1/2: updated model params all-gathered
  scalar,           // overflow flag, norms
  state_export,     // gathering state for checks only (not part of training)
};
std::string purpose_name(Purpose p);

enum class Phase { micro_step, boundary };
std::string phase_name(Phase p);

// What the counting decorator needs to label the next collectives.
struct CommContext {
  Purpose purpose = Purpose::grad_reduce;
  Phase phase = Phase::boundary;
  int step = 0;
};

// A failure that already names its rank and operation ("rank 2: all_gather (muon_gather,
// step 3) failed: ..."). Kind: Infrastructure for transport failures and timeouts,
// Internal for inconsistent arguments (a bug in the caller). run_ranks passes it through.
// peer_failure: this rank failed only because a peer went away first (its connection
// closed, or the run was aborted) — an echo, never reported as the root cause.
class CommError : public Error {
 public:
  CommError(ErrorKind kind, int rank, std::string op, const std::string& message, bool peer_failure = false)
      : Error(kind, message), rank_(rank), op_(std::move(op)), peer_failure_(peer_failure) {}
  int rank() const { return rank_; }
  const std::string& op() const { return op_; }  // collective_name(), or "connect"
  bool peer_failure() const { return peer_failure_; }

 private:
  int rank_;
  std::string op_;
  bool peer_failure_;
};

// "rank R: OP (PURPOSE, step S) VERB: WHAT" — the one message format of a CommError.
CommError comm_error(ErrorKind kind, int rank, CollectiveKind op, const CommContext& ctx,
                     const std::string& verb, const std::string& what, bool peer_failure = false);

// The check every backend makes before a collective: a communicator that failed
// (`broken`) refuses, and one whose run was aborted by another rank fails and
// becomes broken. Throws the CommError; returns when the collective may run.
void throw_if_unusable(bool& broken, const std::atomic<bool>* abort, int rank, CollectiveKind op,
                       const CommContext& ctx);

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;

  // Every rank passes the same count and dtype. In-place sum.
  virtual void all_reduce(Buffer buf) = 0;
  // in.count == size() * out.count; rank r receives the sum of chunk r.
  virtual void reduce_scatter(Buffer in, Buffer out) = 0;
  // out.count == size() * in.count; rank r's input lands at offset r·in.count.
  virtual void all_gather(Buffer in, Buffer out) = 0;
  // counts[r] elements from rank r, concatenated in rank order into out.
  virtual void all_gather_v(Buffer in, Buffer out, const std::vector<int64_t>& counts) = 0;

  // Labels for what follows; plain backends ignore them, the counting decorator records them.
  virtual void set_context(const CommContext& ctx) { (void)ctx; }
};

// "2.28.3": the NCCL library this process loaded; "" in a build without CUDA.
std::string nccl_library_version();

}  // namespace muoncheck::impl
