#include "harness/external/worker_process.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "core/error.hpp"

namespace muoncheck::external {

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kPollSliceMs = 100;   // how often a wait looks at the child's exit
constexpr size_t kMaxLineBytes = size_t{1} << 30;

int ms_left(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, kPollSliceMs));
}

std::string replaced(std::string s, const std::string& what, const std::string& with) {
  for (size_t at = 0; (at = s.find(what, at)) != std::string::npos; at += with.size()) s.replace(at, what.size(), with);
  return s;
}

// Every live process below `root` (children of children...), read from /proc: torchrun starts
// each rank in its own session, so killing torchrun's process group alone would orphan them.
std::vector<pid_t> descendants(pid_t root) {
  std::vector<std::pair<pid_t, pid_t>> parent_of;   // (pid, ppid)
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(e.path() / "stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    const auto close = line.rfind(')');
    if (close == std::string::npos) continue;
    char state = 0;
    int ppid = 0;
    if (std::sscanf(line.c_str() + close + 1, " %c %d", &state, &ppid) != 2) continue;
    parent_of.emplace_back(std::stoi(name), ppid);
  }
  std::set<pid_t> found{root};
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& [pid, ppid] : parent_of)
      if (found.count(ppid) && found.insert(pid).second) grew = true;
  }
  found.erase(root);
  return {found.begin(), found.end()};
}

// A TCP port free at this moment (the kernel's pick), for a worker's rendezvous: two workers on one
// machine (two versions side by side) must not share one.
std::string free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    if (fd >= 0) ::close(fd);
    throw Error(ErrorKind::Infrastructure, std::string("resident worker: no free TCP port: ") + std::strerror(errno));
  }
  ::close(fd);
  return std::to_string(ntohs(a.sin_port));
}

}  // namespace

WorkerProcess::WorkerProcess(WorkerCommand command) : command_(std::move(command)) {
  if (command_.argv.empty()) throw Error(ErrorKind::Internal, "resident worker: empty command line");
  signal(SIGPIPE, SIG_IGN);   // a dead worker is an error value, not a signal that ends muoncheck
}

WorkerProcess::~WorkerProcess() {
  if (conn_fd_ >= 0) {
    const std::string quit = "{\"quit\": true}\n";
    (void)!::send(conn_fd_, quit.data(), quit.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  }
  if (pid_ > 0) {
    for (int i = 0; i < 20 && !reaped_; ++i) {   // up to 2 s for a clean exit
      if (::waitpid(pid_, &wait_status_, WNOHANG) == pid_) reaped_ = true;
      else std::this_thread::sleep_for(std::chrono::milliseconds(kPollSliceMs));
    }
  }
  stop();
}

void WorkerProcess::stop() {
  if (pid_ > 0) {
    const auto below = descendants(pid_);
    for (pid_t p : below) ::kill(p, SIGKILL);
    if (!reaped_) {
      ::kill(-pid_, SIGKILL);
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &wait_status_, 0);
    }
  }
  pid_ = -1;
  reaped_ = false;
  for (int* fd : {&conn_fd_, &listen_fd_})
    if (*fd >= 0) ::close(*fd), *fd = -1;
  if (!socket_path_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(std::filesystem::path(socket_path_).parent_path(), ec);
    socket_path_.clear();
  }
  buffer_.clear();
}

std::string WorkerProcess::exit_text() {
  if (pid_ <= 0) return "not running";
  if (!reaped_) {
    if (::waitpid(pid_, &wait_status_, WNOHANG) != pid_) return "still running";
    reaped_ = true;
  }
  if (WIFEXITED(wait_status_)) return "exited with status " + std::to_string(WEXITSTATUS(wait_status_));
  if (WIFSIGNALED(wait_status_)) return "killed by signal " + std::to_string(WTERMSIG(wait_status_));
  return "stopped";
}

void WorkerProcess::fail(const std::string& what) {
  std::string how = exit_text();
  for (int i = 0; i < 100 && how == "still running"; ++i) {   // a closed socket: the exit follows within moments
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    how = exit_text();
  }
  stop();
  throw Error(ErrorKind::Infrastructure, "resident worker `" + command_.argv.front() + "`: " + what + " (" + how +
                                             "; killed with its process tree; log " + command_.log_path + ")");
}

void WorkerProcess::start() {
  char dir[] = "/tmp/muoncheck-worker-XXXXXX";
  if (!::mkdtemp(dir)) throw Error(ErrorKind::Infrastructure, std::string("resident worker: mkdtemp: ") + std::strerror(errno));
  socket_path_ = std::string(dir) + "/sock";
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, socket_path_.c_str(), sizeof(addr.sun_path) - 1);
  listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0 || ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(listen_fd_, 1) != 0) {
    const std::string why = std::strerror(errno);
    stop();
    throw Error(ErrorKind::Infrastructure, "resident worker: cannot listen on " + std::string(dir) + "/sock: " + why);
  }
  std::vector<std::string> args;
  for (const auto& a : command_.argv) args.push_back(replaced(a, "{socket}", socket_path_));
  // The child's whole environment, built here: between fork and exec a child of a process with
  // other threads (`--workers N` starts workers from N threads) may only make async-signal-safe
  // calls, and setenv allocates.
  std::vector<std::string> env_text;
  for (char** e = environ; *e; ++e) {
    const std::string kv = *e;
    const std::string key = kv.substr(0, kv.find('='));
    if (std::none_of(command_.env.begin(), command_.env.end(), [&](const auto& o) { return o.first == key; }))
      env_text.push_back(kv);
  }
  for (const auto& [k, v] : command_.env)
    env_text.push_back(k + "=" + (v.find("{port}") != std::string::npos ? replaced(v, "{port}", free_port()) : v));
  std::vector<char*> argv, envp;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  const int log = ::open(command_.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log < 0) {
    stop();
    throw Error(ErrorKind::Infrastructure, "resident worker: cannot open log " + command_.log_path + ": " + std::strerror(errno));
  }
  const pid_t pid = ::fork();
  if (pid == 0) {   // the child: its own process group, log as stdout/stderr, no stdin
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);   // killed with muoncheck, whatever ends it
    const int null = ::open("/dev/null", O_RDONLY);
    ::dup2(null, 0);
    ::dup2(log, 1);
    ::dup2(log, 2);
    ::execvpe(argv[0], argv.data(), envp.data());
    std::fprintf(stderr, "resident worker: exec %s: %s\n", argv[0], std::strerror(errno));
    ::_exit(127);
  }
  ::close(log);
  if (pid < 0) {
    stop();
    throw Error(ErrorKind::Infrastructure, std::string("resident worker: fork: ") + std::strerror(errno));
  }
  ::setpgid(pid, pid);
  pid_ = pid;
  ++starts_;
  const auto deadline = Clock::now() + command_.start_timeout;
  while (conn_fd_ < 0) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, ms_left(deadline)) > 0) conn_fd_ = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (conn_fd_ >= 0) break;
    if (exit_text() != "still running") fail("ended before connecting");
    if (Clock::now() >= deadline)
      fail("did not connect within " + std::to_string(command_.start_timeout.count()) + " ms");
  }
  const std::string hello = read_line(deadline, "its hello line");
  try {
    hello_ = nlohmann::json::parse(hello);
  } catch (const std::exception&) {
    fail("sent a hello line that is not JSON: " + clip_for_message(hello));
  }
}

std::string WorkerProcess::read_line(Clock::time_point deadline, const std::string& waiting_for) {
  char chunk[1 << 16];
  while (true) {
    if (const auto nl = buffer_.find('\n'); nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return line;
    }
    if (buffer_.size() > kMaxLineBytes) fail("sent a line over " + std::to_string(kMaxLineBytes) + " bytes");
    pollfd p{conn_fd_, POLLIN, 0};
    const int ready = ::poll(&p, 1, ms_left(deadline));
    if (ready > 0) {
      const ssize_t n = ::recv(conn_fd_, chunk, sizeof(chunk), 0);
      if (n > 0) {
        buffer_.append(chunk, static_cast<size_t>(n));
        continue;
      }
      if (n == 0 || (errno != EINTR && errno != EAGAIN)) fail("closed the connection while we waited for " + waiting_for);
    }
    if (Clock::now() >= deadline) fail("timed out waiting for " + waiting_for);
  }
}

void WorkerProcess::ensure_started() {
  if (pid_ <= 0) start();
}

std::string WorkerProcess::request(const std::string& line, std::chrono::milliseconds timeout) {
  ensure_started();
  const std::string out = line + "\n";
  for (size_t sent = 0; sent < out.size();) {
    const ssize_t n = ::send(conn_fd_, out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail(std::string("cannot send the request: ") + std::strerror(errno));
    sent += static_cast<size_t>(n);
  }
  return read_line(Clock::now() + timeout, "the answer (deadline " + std::to_string(timeout.count()) + " ms)");
}

}  // namespace muoncheck::external
