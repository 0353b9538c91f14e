#include "impl/comm/gloo_communicator.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <stdexcept>

#include <gloo/allgather.h>     // gloo::allgather
#include <gloo/allgatherv.h>    // gloo::allgatherv
#include <gloo/allreduce.h>     // gloo::allreduce with a custom reduce function
#include <gloo/rendezvous/context.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>
#include <gloo/types.h>         // gloo::Slot for the ring reduce-scatter

namespace muoncheck::impl {
namespace {

using std::chrono::milliseconds;

// Slot prefix of our ring reduce-scatter; Gloo's own collectives use 0x01..0x08.
constexpr uint8_t kReduceScatterSlotPrefix = 0x40;

// Gloo only cares about the element size; call f with a value of the storage type.
template <class F>
void with_storage_type(DType t, F&& f) {
  if (t == DType::fp32) {
    f(float{});
  } else {
    f(uint16_t{});
  }
}

// Gloo's words for "the peer's socket went away" (tcp/pair.cc). A Gloo timeout closes the
// timed-out rank's pairs at once, so its peers see these before it has even thrown.
bool peer_went_away(const std::string& what) {
  for (const char* s : {"Connection closed by peer", "Socket closed", "Socket unexpectedly closed",
                        "Connection reset", "Broken pipe"}) {
    if (what.find(s) != std::string::npos) return true;
  }
  return false;
}

std::string count_str(const char* name, int64_t v) { return std::string(name) + " " + std::to_string(v); }

}  // namespace

void add_elements(DType t, void* out, const void* a, const void* b, size_t n) {
  if (t == DType::fp32) {
    auto* o = static_cast<float*>(out);
    const auto* x = static_cast<const float*>(a);
    const auto* y = static_cast<const float*>(b);
    for (size_t i = 0; i < n; ++i) o[i] = x[i] + y[i];
    return;
  }
  auto* o = static_cast<uint16_t*>(out);
  const auto* x = static_cast<const uint16_t*>(a);
  const auto* y = static_cast<const uint16_t*>(b);
  for (size_t i = 0; i < n; ++i) o[i] = to_bits16(t, from_bits16(t, x[i]) + from_bits16(t, y[i]));
}

GlooCommunicator::GlooCommunicator(int rank, int size, gloo::rendezvous::Store& store,
                                   milliseconds timeout, const std::atomic<bool>* abort,
                                   std::shared_ptr<gloo::transport::Device> device)
    : rank_(rank), size_(size), timeout_(timeout), abort_(abort) {
  const std::string where = "rank " + std::to_string(rank) + ": connect (dp " + std::to_string(size) + ") failed: ";
  if (size < 1 || rank < 0 || rank >= size || timeout.count() <= 0) {
    throw CommError(ErrorKind::Internal, rank, "connect", where + "need 0 <= rank < dp and timeout > 0");
  }
  try {
    if (!device) device = create_loopback_device();
    auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
    context->setTimeout(timeout);  // bounds the rendezvous and every pair operation
    context->connectFullMesh(store, device);
    context_ = std::move(context);
  } catch (const std::exception& e) {
    throw CommError(ErrorKind::Infrastructure, rank, "connect", where + e.what());
  }
}

GlooCommunicator::~GlooCommunicator() { close(); }

void GlooCommunicator::start_run(milliseconds timeout, const std::atomic<bool>* abort) {
  if (broken_ || !context_ || timeout.count() <= 0)
    throw CommError(ErrorKind::Internal, rank_, "connect",
                    "rank " + std::to_string(rank_) + ": a failed or closed communicator cannot start another run");
  timeout_ = timeout;
  abort_ = abort;
  ctx_ = CommContext{};
  context_->setTimeout(timeout);
}

std::shared_ptr<gloo::transport::Device> create_loopback_device() {
  gloo::transport::tcp::attr attr;
  attr.hostname = "127.0.0.1";  // loopback only: every rank is a thread of this process
  attr.ai_family = AF_INET;
  return gloo::transport::tcp::CreateDevice(attr);
}

void GlooCommunicator::close() {
  broken_ = true;
  // Destroying the context closes every pair's socket and joins the device's event loop;
  // a peer blocked on one of those sockets sees "connection closed" at once.
  context_.reset();
}

template <class F>
void GlooCommunicator::guarded(CollectiveKind kind, F&& body) {
  throw_if_unusable(broken_, abort_, rank_, kind, ctx_);
  try {
    body();
  } catch (const std::exception& e) {
    // A half-done collective leaves the pairs unusable. We do not close them here: the
    // owner records this error first, then closes us. (Gloo itself closes them on a
    // timeout, before we even throw; peers then fail with an echo, flagged peer_failure.)
    broken_ = true;
    throw comm_error(ErrorKind::Infrastructure, rank_, kind, ctx_, "failed", e.what(), peer_went_away(e.what()));
  }
}

void GlooCommunicator::bad_args(CollectiveKind kind, const std::string& what) const {
  throw comm_error(ErrorKind::Internal, rank_, kind, ctx_, "bad arguments", what);
}

void GlooCommunicator::all_reduce(Buffer buf) {
  if (buf.count < 0) bad_args(CollectiveKind::all_reduce, count_str("count", buf.count));
  guarded(CollectiveKind::all_reduce, [&] {
    if (buf.count == 0) return;  // every rank passes the same count: all skip alike
    gloo::AllreduceOptions opts(context_);
    opts.setTimeout(timeout_);
    with_storage_type(buf.dtype, [&](auto tag) {
      using T = decltype(tag);
      opts.setOutput(static_cast<T*>(buf.data), static_cast<size_t>(buf.count));
    });
    const DType t = buf.dtype;
    opts.setReduceFunction([t](void* c, const void* a, const void* b, size_t n) { add_elements(t, c, a, b, n); });
    gloo::allreduce(opts);
  });
}

void GlooCommunicator::reduce_scatter(Buffer in, Buffer out) {
  if (in.dtype != out.dtype || out.count < 0 || in.count != out.count * size_) {
    bad_args(CollectiveKind::reduce_scatter,
             "need in.count == dp * out.count and one dtype, got in.count " + std::to_string(in.count) +
                 ", out.count " + std::to_string(out.count) + ", dp " + std::to_string(size_));
  }
  guarded(CollectiveKind::reduce_scatter, [&] { ring_reduce_scatter(in, out); });
}

// Ring reduce-scatter on Gloo's point-to-point buffers (Gloo 0.5 has no options-style
// reduce-scatter for custom types). Step s: send partial chunk (r-s-1) to r+1, receive
// partial chunk (r-s-2) from r-1 and add our own piece; after dp-1 steps chunk r is
// complete here. Chunk c is summed in the fixed order c+1, c+2, ..., c (deterministic).
// `in` is never written.
void GlooCommunicator::ring_reduce_scatter(const Buffer& in, const Buffer& out) {
  const int p = size_;
  const size_t n = static_cast<size_t>(out.count);
  const size_t chunk_bytes = n * static_cast<size_t>(dtype_bytes(in.dtype));
  const char* src = static_cast<const char*>(in.data);
  auto chunk = [&](int c) { return src + static_cast<size_t>(((c % p) + p) % p) * chunk_bytes; };
  if (n == 0) return;
  if (p == 1) {
    std::memcpy(out.data, in.data, chunk_bytes);
    return;
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  auto remaining = [&] {
    auto left = std::chrono::duration_cast<milliseconds>(deadline - std::chrono::steady_clock::now());
    return std::max(left, milliseconds(1));
  };
  std::vector<char> acc(2 * chunk_bytes);  // ping-pong: one chunk in flight, one being summed
  std::vector<char> rx(chunk_bytes);
  auto rx_buf = context_->createUnboundBuffer(rx.data(), chunk_bytes);
  const int next = (rank_ + 1) % p;
  const int prev = (rank_ + p - 1) % p;
  for (int s = 0; s < p - 1; ++s) {
    const char* send_ptr = s == 0 ? chunk(rank_ - 1) : acc.data() + static_cast<size_t>((s - 1) % 2) * chunk_bytes;
    auto tx_buf = context_->createUnboundBuffer(const_cast<char*>(send_ptr), chunk_bytes);
    const uint64_t slot = gloo::Slot::build(kReduceScatterSlotPrefix, static_cast<uint32_t>(s));
    rx_buf->recv(prev, slot);
    tx_buf->send(next, slot);
    if (!rx_buf->waitRecv(remaining())) throw std::runtime_error("ring receive aborted");
    char* dst = s == p - 2 ? static_cast<char*>(out.data) : acc.data() + static_cast<size_t>(s % 2) * chunk_bytes;
    add_elements(in.dtype, dst, rx.data(), chunk(rank_ - s - 2), n);
    if (!tx_buf->waitSend(remaining())) throw std::runtime_error("ring send aborted");
  }
}

void GlooCommunicator::all_gather(Buffer in, Buffer out) {
  if (in.dtype != out.dtype || in.count < 0 || out.count != in.count * size_) {
    bad_args(CollectiveKind::all_gather,
             "need out.count == dp * in.count and one dtype, got in.count " + std::to_string(in.count) +
                 ", out.count " + std::to_string(out.count) + ", dp " + std::to_string(size_));
  }
  guarded(CollectiveKind::all_gather, [&] {
    if (in.count == 0) return;
    gloo::AllgatherOptions opts(context_);
    opts.setTimeout(timeout_);
    with_storage_type(in.dtype, [&](auto tag) {
      using T = decltype(tag);
      opts.setInput(static_cast<T*>(in.data), static_cast<size_t>(in.count));
      opts.setOutput(static_cast<T*>(out.data), static_cast<size_t>(out.count));
    });
    gloo::allgather(opts);
  });
}

void GlooCommunicator::all_gather_v(Buffer in, Buffer out, const std::vector<int64_t>& counts) {
  const bool shape_ok = static_cast<int>(counts.size()) == size_ &&
                        std::all_of(counts.begin(), counts.end(), [](int64_t c) { return c >= 0; });
  const int64_t total = std::accumulate(counts.begin(), counts.end(), int64_t{0});
  if (in.dtype != out.dtype || !shape_ok || in.count != counts[static_cast<size_t>(rank_)] || out.count != total) {
    bad_args(CollectiveKind::all_gather_v,
             "need dp non-negative counts, in.count == counts[rank], out.count == sum(counts); got " +
                 std::to_string(counts.size()) + " counts, in.count " + std::to_string(in.count) +
                 ", out.count " + std::to_string(out.count) + ", sum " + std::to_string(total));
  }
  guarded(CollectiveKind::all_gather_v, [&] {
    if (total == 0) return;
    std::vector<size_t> elements(counts.begin(), counts.end());
    gloo::AllgathervOptions opts(context_);
    opts.setTimeout(timeout_);
    with_storage_type(in.dtype, [&](auto tag) {
      using T = decltype(tag);
      T dummy{};  // a rank contributing nothing still hands Gloo a valid pointer
      opts.setInput(in.count > 0 ? static_cast<T*>(in.data) : &dummy, static_cast<size_t>(in.count));
      opts.setOutput(static_cast<T*>(out.data), elements);
      gloo::allgatherv(opts);
    });
  });
}

}  // namespace muoncheck::impl
