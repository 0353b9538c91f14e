#include "impl/comm/nccl_communicator.hpp"

#include <latch>
#include <numeric>
#include <thread>
#include <vector>

#include <cuda_runtime_api.h>
#include <nccl.h>

#include "impl/comm/agreeing_communicator.hpp"
#include "impl/comm/rank_failures.hpp"
#include "impl/math/cuda/cuda_check.hpp"
#include "impl/math/cuda/device_buffer.hpp"

namespace muoncheck::impl {
namespace {

using Clock = std::chrono::steady_clock;
using cuda::DeviceBuffer;

ncclDataType_t nccl_type(DType t) {
  switch (t) {
    case DType::fp32: return ncclFloat32;
    case DType::bf16: return ncclBfloat16;
    case DType::fp16: return ncclFloat16;
  }
  return ncclFloat32;
}

ncclConfig_t nonblocking_config() {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  return config;
}

// Polls a non-blocking communicator until its pending call finished. Returns the final
// state: ncclSuccess, an error, or ncclInProgress when `give_up()` said stop first.
template <class GiveUp>
ncclResult_t wait_ready(ncclComm_t comm, GiveUp&& give_up) {
  ncclResult_t state = ncclInProgress;
  while (true) {
    if (ncclCommGetAsyncError(comm, &state) != ncclSuccess) return ncclSystemError;
    if (state != ncclInProgress || give_up()) return state;
    std::this_thread::yield();
  }
}

class NcclCommunicator final : public Communicator {
 public:
  NcclCommunicator(ncclComm_t comm, int rank, int size, int device, std::chrono::milliseconds timeout,
                   const std::atomic<bool>* abort)
      : comm_(comm), rank_(rank), size_(size), device_(device), timeout_(timeout), abort_(abort) {
    cuda::check(cudaSetDevice(device_), "cudaSetDevice");
    cuda::check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  }
  ~NcclCommunicator() override {
    (void)cudaSetDevice(device_);
    if (comm_ != nullptr) {
      // Finalize flushes this rank's pending work; every rank does it together (after the
      // run's latch). If that does not finish in time, or the run failed, abort instead.
      bool clean = !broken_ && ncclCommFinalize(comm_) != ncclSystemError;
      if (clean) {
        const auto deadline = Clock::now() + timeout_;
        clean = wait_ready(comm_, [&] { return Clock::now() > deadline; }) == ncclSuccess;
      }
      (void)(clean ? ncclCommDestroy(comm_) : ncclCommAbort(comm_));
    }
    if (stream_ != nullptr) (void)cudaStreamDestroy(stream_);
  }

  // The owner's body failed outside a collective: tear down with abort, not finalize.
  void mark_failed() { broken_ = true; }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void set_context(const CommContext& ctx) override { ctx_ = ctx; }

  void all_reduce(Buffer buf) override {
    const auto k = CollectiveKind::all_reduce;
    guarded(k, [&] {
      void* d = stage_in(in_, buf);
      call(k, ncclAllReduce(d, d, buf.count, nccl_type(buf.dtype), ncclSum, comm_, stream_));
      finish(k, buf, d);
    });
  }
  void reduce_scatter(Buffer in, Buffer out) override {
    const auto k = CollectiveKind::reduce_scatter;
    if (in.count != out.count * size_ || in.dtype != out.dtype) bad_args(k, "in.count must be size() * out.count");
    guarded(k, [&] {
      void* din = stage_in(in_, in);
      void* dout = out_.reserve(static_cast<size_t>(std::max<int64_t>(out.bytes(), 1)));
      call(k, ncclReduceScatter(din, dout, out.count, nccl_type(out.dtype), ncclSum, comm_, stream_));
      finish(k, out, dout);
    });
  }
  void all_gather(Buffer in, Buffer out) override {
    const auto k = CollectiveKind::all_gather;
    if (out.count != in.count * size_ || in.dtype != out.dtype) bad_args(k, "out.count must be size() * in.count");
    guarded(k, [&] {
      void* din = stage_in(in_, in);
      void* dout = out_.reserve(static_cast<size_t>(std::max<int64_t>(out.bytes(), 1)));
      call(k, ncclAllGather(din, dout, in.count, nccl_type(in.dtype), comm_, stream_));
      finish(k, out, dout);
    });
  }
  // NCCL has no all-gather-v: one broadcast per rank with something to send, in one group.
  void all_gather_v(Buffer in, Buffer out, const std::vector<int64_t>& counts) override {
    const auto k = CollectiveKind::all_gather_v;
    if (static_cast<int>(counts.size()) != size_ || in.count != counts[static_cast<size_t>(rank_)] ||
        out.count != std::accumulate(counts.begin(), counts.end(), int64_t{0}) || in.dtype != out.dtype)
      bad_args(k, "counts must have size() entries, counts[rank] == in.count and sum == out.count");
    guarded(k, [&] {
      void* din = stage_in(in_, in);
      auto* dout = static_cast<char*>(out_.reserve(static_cast<size_t>(std::max<int64_t>(out.bytes(), 1))));
      const int64_t eb = dtype_bytes(out.dtype);
      call(k, ncclGroupStart());
      int64_t off = 0;
      for (int r = 0; r < size_; ++r) {
        const int64_t c = counts[static_cast<size_t>(r)];
        if (c > 0) call(k, ncclBroadcast(din, dout + off * eb, c, nccl_type(out.dtype), r, comm_, stream_));
        off += c;
      }
      call(k, ncclGroupEnd());
      finish(k, out, dout);
    });
  }

 private:
  template <class F>
  void guarded(CollectiveKind kind, F&& body) {
    throw_if_unusable(broken_, abort_, rank_, kind, ctx_);
    try {
      cuda::check(cudaSetDevice(device_), "cudaSetDevice");
      body();
    } catch (const CommError&) {
      broken_ = true;
      throw;
    } catch (const std::exception& e) {
      broken_ = true;
      throw comm_error(ErrorKind::Infrastructure, rank_, kind, ctx_, "failed", e.what());
    }
  }
  [[noreturn]] void bad_args(CollectiveKind kind, const std::string& what) const {
    throw comm_error(ErrorKind::Internal, rank_, kind, ctx_, "bad arguments", what);
  }
  void call(CollectiveKind kind, ncclResult_t r) {
    if (r == ncclSuccess || r == ncclInProgress) return;
    throw comm_error(ErrorKind::Infrastructure, rank_, kind, ctx_, "failed",
                     std::string("NCCL: ") + ncclGetErrorString(r) + ": " + ncclGetLastError(comm_));
  }
  void* stage_in(DeviceBuffer& b, const Buffer& host) {
    void* d = b.reserve(static_cast<size_t>(std::max<int64_t>(host.bytes(), 1)));
    if (host.count > 0)
      cuda::check(cudaMemcpyAsync(d, host.data, static_cast<size_t>(host.bytes()), cudaMemcpyHostToDevice, stream_),
                  "cudaMemcpyAsync H2D");
    return d;
  }
  // Waits (polling, bounded by the timeout and the abort flag) for the enqueued
  // collective, then copies the result back to the host buffer.
  void finish(CollectiveKind kind, const Buffer& host, const void* d) {
    const auto deadline = Clock::now() + timeout_;
    bool aborted = false, timed_out = false;
    auto give_up = [&] {
      aborted = abort_ != nullptr && abort_->load();
      timed_out = Clock::now() > deadline;
      return aborted || timed_out;
    };
    ncclResult_t state = wait_ready(comm_, give_up);        // the enqueue itself (non-blocking mode)
    while (state == ncclSuccess) {                          // then the kernels on the stream
      const cudaError_t q = cudaStreamQuery(stream_);
      if (q == cudaSuccess) break;
      if (q != cudaErrorNotReady) cuda::check(q, "cudaStreamQuery");
      if (ncclCommGetAsyncError(comm_, &state) != ncclSuccess) state = ncclSystemError;
      if (give_up()) {
        state = ncclInProgress;
        break;
      }
      std::this_thread::yield();
    }
    if (state != ncclSuccess) {
      broken_ = true;
      (void)ncclCommAbort(comm_);                           // frees the stream's stuck kernels
      comm_ = nullptr;
      if (aborted) throw comm_error(ErrorKind::Infrastructure, rank_, kind, ctx_, "aborted", "another rank failed", true);
      if (timed_out)
        throw comm_error(ErrorKind::Infrastructure, rank_, kind, ctx_, "timed out",
                         "no completion within " + std::to_string(timeout_.count()) + " ms");
      throw comm_error(ErrorKind::Infrastructure, rank_, kind, ctx_, "failed",
                       std::string("NCCL: ") + ncclGetErrorString(state));
    }
    if (host.count > 0)
      cuda::check(cudaMemcpyAsync(host.data, d, static_cast<size_t>(host.bytes()), cudaMemcpyDeviceToHost, stream_),
                  "cudaMemcpyAsync D2H");
    cuda::check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  }

  ncclComm_t comm_;
  int rank_, size_, device_;
  std::chrono::milliseconds timeout_;
  const std::atomic<bool>* abort_;
  cudaStream_t stream_ = nullptr;
  CommContext ctx_;
  bool broken_ = false;
  DeviceBuffer in_, out_;
};

std::string hex_of(const ncclUniqueId& id) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (char c : id.internal) {
    const auto b = static_cast<unsigned char>(c);
    s += digits[b >> 4];
    s += digits[b & 15];
  }
  return s;
}

ncclUniqueId id_of(const std::string& hex) {
  ncclUniqueId id{};
  if (hex.size() != 2 * sizeof(id.internal))
    throw Error(ErrorKind::Usage, "NCCL unique id: expected " + std::to_string(2 * sizeof(id.internal)) +
                                      " hex digits, got " + std::to_string(hex.size()));
  for (size_t i = 0; i < sizeof(id.internal); ++i) id.internal[i] = static_cast<char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  return id;
}

void check_nccl(ncclResult_t r, const std::string& what) {
  if (r == ncclSuccess || r == ncclInProgress) return;
  throw Error(ErrorKind::Infrastructure, "NCCL: " + what + ": " + ncclGetErrorString(r));
}

// Waits for a non-blocking init; aborts the communicator and throws on failure or timeout.
void finish_init(ncclComm_t comm, int rank, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  const ncclResult_t state = wait_ready(comm, [&] { return Clock::now() > deadline; });
  if (state == ncclSuccess) return;
  (void)ncclCommAbort(comm);
  throw CommError(ErrorKind::Infrastructure, rank, "connect",
                  "rank " + std::to_string(rank) + ": connect (nccl) failed: " +
                      (state == ncclInProgress ? std::string("timed out") : std::string(ncclGetErrorString(state))));
}

}  // namespace

std::string nccl_version() {
  int v = 0;
  if (ncclGetVersion(&v) != ncclSuccess) return "unknown";
  return std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
}

std::string nccl_unique_id_hex() {
  ncclUniqueId id;
  check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
  return hex_of(id);
}

std::unique_ptr<Communicator> nccl_connect(const std::string& unique_id_hex, int rank, int size, int device,
                                           std::chrono::milliseconds timeout) {
  const ncclUniqueId id = id_of(unique_id_hex);
  cuda::check(cudaSetDevice(device), "cudaSetDevice");
  ncclConfig_t config = nonblocking_config();
  ncclComm_t comm = nullptr;
  check_nccl(ncclCommInitRankConfig(&comm, size, id, rank, &config), "ncclCommInitRankConfig");
  finish_init(comm, rank, timeout);
  return std::make_unique<NcclCommunicator>(comm, rank, size, device, timeout, nullptr);
}

void run_ranks_nccl(int dp, std::chrono::milliseconds timeout,
                    const std::function<void(Communicator&, int device)>& body) {
  const int devices = cuda::device_count();
  if (devices == 0)
    throw Error(ErrorKind::Infrastructure, "comm nccl: no CUDA device (cudaGetDeviceCount failed or returned 0)");
  if (dp > devices)
    throw Error(ErrorKind::Unsupported, "comm nccl: dp " + std::to_string(dp) + " needs " + std::to_string(dp) +
                                            " GPUs (one rank per GPU), " + std::to_string(devices) +
                                            " visible; use --comm gloo or --dp");
  // Group init of all local ranks from this thread (ncclCommInitAll, but non-blocking).
  ncclUniqueId id;
  check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
  std::vector<ncclComm_t> comms(static_cast<size_t>(dp), nullptr);
  ncclConfig_t config = nonblocking_config();
  check_nccl(ncclGroupStart(), "ncclGroupStart");
  for (int r = 0; r < dp; ++r) {
    cuda::check(cudaSetDevice(r), "cudaSetDevice");
    check_nccl(ncclCommInitRankConfig(&comms[static_cast<size_t>(r)], dp, id, r, &config), "ncclCommInitRankConfig");
  }
  check_nccl(ncclGroupEnd(), "ncclGroupEnd");
  for (int r = 0; r < dp; ++r) finish_init(comms[static_cast<size_t>(r)], r, timeout);

  RankFailures failures;
  std::latch all_done(dp);
  std::vector<std::thread> threads;
  for (int r = 0; r < dp; ++r) {
    threads.emplace_back([&, r] {
      std::unique_ptr<NcclCommunicator> comm;
      try {
        comm = std::make_unique<NcclCommunicator>(comms[static_cast<size_t>(r)], r, dp, r, timeout, &failures.abort);
        AgreeingCommunicator agreeing(*comm);   // a mismatch is an error, not a hang or garbage
        body(agreeing, r);
      } catch (...) {
        failures.record(r, std::current_exception());
        if (comm) comm->mark_failed();
      }
      all_done.arrive_and_wait();   // a finished rank keeps its communicator until all are done
      comm.reset();
    });
  }
  for (auto& t : threads) t.join();
  if (const auto* root = failures.root_cause()) rethrow_as_one_error(root->rank, root->error);
}

std::string nccl_library_version() {
  int code = 0;
  if (ncclGetVersion(&code) != ncclSuccess) return "unknown";
  return std::to_string(code / 10000) + "." + std::to_string(code % 10000 / 100) + "." + std::to_string(code % 100);
}

}  // namespace muoncheck::impl
