#include "harness/external/worker_process.hpp"

#include <fcntl.h>
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
#include "harness/external/stack_dump.hpp"

namespace muoncheck::external {

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kPollSliceMs = 100;   // how often a wait looks at the child's exit
constexpr size_t kMaxLineBytes = size_t{1} << 30;
constexpr int kStartAttempts = 3;            // a start that fails (the worker exits first) is tried again twice
constexpr int kLogTailLines = 15;            // of the worker's log, in the error that ends a sweep
constexpr size_t kLogTailLineChars = 240;
constexpr std::streamoff kLogTailBytes = 64 * 1024;
constexpr auto kLogScanInterval = std::chrono::seconds(1);   // how often a request's wait reads the log
constexpr std::streamoff kMaxRequestLogBytes = std::streamoff{4} << 20;

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

// The last `lines` lines of the worker's log, each clipped, indented under the message: on a CI or
// GPU machine the log file is often gone by the time someone reads the error.
std::string log_tail(const std::string& path, int lines) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return "\n  (log " + path + " cannot be read)";
  const std::streamoff size = in.tellg();
  const std::streamoff from = std::max<std::streamoff>(0, size - kLogTailBytes);
  std::string text(static_cast<size_t>(size - from), '\0');
  in.seekg(from);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  std::vector<std::string> last;
  for (size_t at = 0; at < text.size();) {
    size_t nl = text.find('\n', at);
    if (nl == std::string::npos) nl = text.size();
    last.push_back(text.substr(at, nl - at));
    at = nl + 1;
  }
  if (from > 0 && !last.empty()) last.erase(last.begin());   // a partial first line
  if (static_cast<int>(last.size()) > lines) last.erase(last.begin(), last.end() - lines);
  if (last.empty()) return "\n  (log " + path + " is empty)";
  std::string out = "\n  last lines of " + path + ":";
  for (const auto& l : last) out += "\n  | " + clip_for_message(l, kLogTailLineChars);
  return out;
}

// The log's text from byte `from` to its end, the last kMaxRequestLogBytes of it at most.
std::string log_from(const std::string& path, std::streamoff from) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in || from < 0) return "";
  const std::streamoff size = in.tellg();
  from = std::max(from, size - kMaxRequestLogBytes);
  if (size <= from) return "";
  std::string text(static_cast<size_t>(size - from), '\0');
  in.seekg(from);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  return text;
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
    env_text.push_back(k + "=" + v);
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

bool WorkerProcess::log_says_a_rank_raised() {
  const std::string text = log_from(command_.log_path, scanned_to_);
  const auto whole = text.rfind('\n') + 1;   // a line written in two parts is read once it is whole
  scanned_to_ += static_cast<std::streamoff>(whole);
  return !ranks_that_raised(text.substr(0, whole)).empty();
}

std::string WorkerProcess::read_line(Clock::time_point deadline, const std::string& waiting_for) {
  char chunk[1 << 16];
  std::string why = waiting_for;
  auto last_scan = Clock::now();
  bool raised = false;
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
      if (n == 0 || (errno != EINTR && errno != EAGAIN)) fail("closed the connection while we waited for " + why + stuck_text());
    }
    // A rank that raised while the others wait in a collective hangs the worker: once the log says
    // one did, the answer gets the command's raised_grace more, not the rest of the deadline.
    if (!raised && request_log_offset_ >= 0 && Clock::now() - last_scan >= kLogScanInterval) {
      last_scan = Clock::now();
      if ((raised = log_says_a_rank_raised()) && Clock::now() + command_.raised_grace < deadline) {
        deadline = Clock::now() + command_.raised_grace;
        why = "the answer, which did not come " + std::to_string(command_.raised_grace.count()) + " ms after a rank raised";
      }
    }
    if (Clock::now() >= deadline) fail("timed out waiting for " + why + stuck_text());
  }
}

// A worker that ends before its hello line (a port, a cache or a file it raced another start for) is
// started again, up to kStartAttempts in all; one that hangs there is not (each wait is the whole
// start_timeout). The error that ends the sweep carries the log's last lines.
void WorkerProcess::ensure_started() {
  for (int attempt = 1; pid_ <= 0; ++attempt) {
    const auto began = Clock::now();
    try {
      start();
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::Infrastructure) throw;
      const bool hung = Clock::now() - began >= command_.start_timeout;
      if (attempt < kStartAttempts && !hung) continue;
      throw Error(ErrorKind::Infrastructure, std::string(e.what()) + "; " + std::to_string(attempt) + " start" +
                                                 (attempt == 1 ? "" : "s") + " tried" +
                                                 log_tail(command_.log_path, kLogTailLines));
    }
  }
}

std::string WorkerProcess::request_log() const {
  return request_log_offset_ < 0 ? "" : log_from(command_.log_path, request_log_offset_);
}

std::string WorkerProcess::stuck_text() const {
  const std::string where = stuck_at(request_log());
  return where.empty() ? "" : "; " + where;
}

std::string WorkerProcess::request(const std::string& line, std::chrono::milliseconds timeout) {
  ensure_started();
  std::error_code ec;
  const auto log_size = std::filesystem::file_size(command_.log_path, ec);
  request_log_offset_ = scanned_to_ = ec ? -1 : static_cast<std::streamoff>(log_size);
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
