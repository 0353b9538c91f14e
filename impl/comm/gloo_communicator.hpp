// Communicator over Gloo's TCP transport (loopback): one instance per rank thread, all
// connected through one shared rendezvous store. Every collective honours the timeout.
// A failure inside a collective is thrown as CommError and leaves the instance broken (it
// only throws); the owner then calls close() or destroys it, which frees blocked peers.
#pragma once
#include <atomic>
#include <chrono>
#include <memory>

#include "impl/comm/communicator.hpp"

namespace gloo {
class Context;
namespace rendezvous {
class Store;
}
namespace transport {
class Device;
}
}  // namespace gloo

namespace muoncheck::impl {

class GlooCommunicator final : public Communicator {
 public:
  // Blocks until all `size` ranks have connected through `store` (or `timeout` passes:
  // CommError op "connect"). `abort`, when given, is read before every collective: once
  // true, the collective throws at once instead of waiting for peers that are gone.
  // `device`: the TCP device (event loop) to connect through; null: one of its own.
  GlooCommunicator(int rank, int size, gloo::rendezvous::Store& store,
                   std::chrono::milliseconds timeout, const std::atomic<bool>* abort = nullptr,
                   std::shared_ptr<gloo::transport::Device> device = nullptr);
  ~GlooCommunicator() override;
  GlooCommunicator(const GlooCommunicator&) = delete;
  GlooCommunicator& operator=(const GlooCommunicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void all_reduce(Buffer buf) override;
  void reduce_scatter(Buffer in, Buffer out) override;
  void all_gather(Buffer in, Buffer out) override;
  void all_gather_v(Buffer in, Buffer out, const std::vector<int64_t>& counts) override;
  void set_context(const CommContext& ctx) override { ctx_ = ctx; }

  // Drops every connection (idempotent); peers waiting on this rank fail fast. Call it
  // after a failure has been recorded, so peers' echoes come strictly later.
  void close();

  // Readies a connected communicator whose last run succeeded on every rank for the next
  // run (gloo_mesh_pool.hpp): that run's timeout and abort flag, no collective context.
  // Throws CommError{Internal} when this communicator failed or was closed.
  void start_run(std::chrono::milliseconds timeout, const std::atomic<bool>* abort);
  bool broken() const { return broken_; }

 private:
  template <class F>
  void guarded(CollectiveKind kind, F&& body);
  [[noreturn]] void bad_args(CollectiveKind kind, const std::string& what) const;
  void ring_reduce_scatter(const Buffer& in, const Buffer& out);

  int rank_;
  int size_;
  std::chrono::milliseconds timeout_;
  const std::atomic<bool>* abort_;
  CommContext ctx_;
  bool broken_ = false;
  std::shared_ptr<gloo::Context> context_;
};

// A Gloo TCP device on 127.0.0.1: one event-loop thread serving every pair connected
// through it (any number of ranks and meshes of this process).
std::shared_ptr<gloo::transport::Device> create_loopback_device();

// out[i] = a[i] + b[i] in `t`: fp32 adds floats; bf16/fp16 decode the bit patterns, add in
// float and round back (float has ≥ 2p+2 bits for both, so this equals one exact rounding).
void add_elements(DType t, void* out, const void* a, const void* b, size_t n);

}  // namespace muoncheck::impl
