#include "impl/comm/process_group.hpp"

#include <sys/socket.h>

#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>

#include "impl/comm/communicator.hpp"

namespace muoncheck::impl {
namespace {

constexpr uint64_t kControlSlot = 0x7e;                  // the control mesh's only message
constexpr auto kForever = std::chrono::hours(24 * 365);   // a watcher waits for a loss or the end
constexpr auto kPollFirst = std::chrono::microseconds(200);
constexpr auto kPollMax = std::chrono::milliseconds(10);
constexpr auto kExitGrace = std::chrono::seconds(5);

// Never destroyed: at exit the watchers may still wait on the control mesh.
ProcessGroup*& installed_group() {
  static ProcessGroup* group = nullptr;
  return group;
}

// Gloo's FileStore, with its non-blocking key test in reach (protected there).
class PollableFileStore final : public gloo::rendezvous::FileStore {
 public:
  using FileStore::check;
  using FileStore::FileStore;
};

}  // namespace

ProcessGroup* ProcessGroup::installed() { return installed_group(); }

ProcessGroup& ProcessGroup::install(ProcessPlacement where, std::chrono::milliseconds timeout) {
  if (installed_group()) throw Error(ErrorKind::Internal, "ProcessGroup::install: a group is installed already");
  installed_group() = new ProcessGroup(std::move(where), timeout);
  return *installed_group();
}

ProcessGroup::ProcessGroup(ProcessPlacement where, std::chrono::milliseconds timeout)
    : where_(std::move(where)), timeout_(timeout) {
  // A write to a peer that died (its socket closed) must fail that write, which the collective
  // reports naming the peer; by default it raises SIGPIPE, which ends this rank silently and,
  // on rank 0, loses the report.
  std::signal(SIGPIPE, SIG_IGN);
  const std::string who = "rank " + std::to_string(where_.rank) + ": connect (world " + std::to_string(where_.world) + ") failed: ";
  if (where_.world < 1 || where_.rank < 0 || where_.rank >= where_.world || timeout.count() <= 0)
    throw CommError(ErrorKind::Internal, where_.rank, "connect", who + "need 0 <= rank < world and timeout > 0");
  try {
    std::filesystem::create_directories(where_.store_dir);
    store_ = std::make_unique<PollableFileStore>(where_.store_dir);
    gloo::transport::tcp::attr attr;
    attr.hostname = where_.host;
    attr.ai_family = AF_INET;
    device_ = gloo::transport::tcp::CreateDevice(attr);
    gloo::rendezvous::PrefixStore prefixed("control", *store_);
    auto context = std::make_shared<gloo::rendezvous::Context>(where_.rank, where_.world);
    context->setTimeout(timeout);
    context->connectFullMesh(prefixed, device_);
    control_ = std::move(context);
  } catch (const std::exception& e) {
    throw CommError(ErrorKind::Infrastructure, where_.rank, "connect",
                    who + e.what() + " (store " + where_.store_dir + ", this host " + where_.host + ")");
  }
  // Rank 0 watches every worker; a worker watches rank 0.
  if (where_.rank == 0) {
    for (int p = 1; p < where_.world; ++p) std::thread([this, p] { watch(p); }).detach();
  } else {
    std::thread([this] { watch(0); }).detach();
  }
}


void ProcessGroup::watch(int peer) {
  int32_t message = -1;
  bool received = false;
  try {
    auto buffer = control_->createUnboundBuffer(&message, sizeof(message));
    buffer->recv(peer, kControlSlot);
    received = buffer->waitRecv(kForever);
  } catch (const std::exception&) {
    received = false;
  }
  int exit_code = 3;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (received && peer == 0 && where_.rank != 0) {
      ended_ = message;
      exit_code = message;
    } else if (!ended_) {   // a worker's control connection never carries a message
      lost_.insert(peer);
    }
  }
  stopping_.store(true);
  if (where_.rank == 0) return;
  // A worker is done once rank 0 has ended or is gone. Its main thread normally exits at
  // once; one stuck outside a collective must not outlive the run.
  std::this_thread::sleep_for(received ? kExitGrace : timeout_ + kExitGrace);
  std::_Exit(exit_code);
}

std::optional<int> ProcessGroup::lost() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return lost_.empty() ? std::nullopt : std::optional<int>(*lost_.begin());
}

std::optional<int> ProcessGroup::ended() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return ended_;
}

void ProcessGroup::end(int exit_code) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (ended_ || !control_) return;
    ended_ = exit_code;   // from here a broken control connection is no loss
  }
  stopping_.store(true);
  if (where_.rank != 0) return;
  int32_t message = exit_code;
  for (int p = 1; p < where_.world; ++p) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (lost_.count(p)) continue;
    }
    try {
      auto buffer = control_->createUnboundBuffer(&message, sizeof(message));
      buffer->send(p, kControlSlot);
      buffer->waitSend(std::chrono::milliseconds(2000));
    } catch (const std::exception&) {   // a lost worker: nobody left to tell
    }
  }
}

void ProcessGroup::set(const std::string& key, const std::string& value) {
  store_->set(key, std::vector<char>(value.begin(), value.end()));
}

bool ProcessGroup::has(const std::string& key) {
  return static_cast<PollableFileStore&>(*store_).check({key});
}

std::optional<std::string> ProcessGroup::get(const std::string& key, std::chrono::steady_clock::time_point deadline,
                                             bool despite_loss) {
  std::chrono::microseconds pause = kPollFirst;
  for (;;) {
    if (has(key)) {
      const auto bytes = store_->get(key);
      return std::string(bytes.begin(), bytes.end());
    }
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    if (!despite_loss && stopping_.load()) return std::nullopt;
    std::this_thread::sleep_for(pause);
    pause = std::min<std::chrono::microseconds>(pause * 2, kPollMax);
  }
}

}  // namespace muoncheck::impl
