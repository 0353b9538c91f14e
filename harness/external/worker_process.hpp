// A resident worker: one long-lived child process (a torchrun job, a Python adapter, any
// program) that answers one JSON line per request line over a Unix socket. The worker connects
// to the socket this side listens on (its path replaces "{socket}" in the command line), sends
// one hello line, then answers requests in order. Every wait has a deadline: a worker that does
// not start, exits, closes the socket or misses a request's deadline is killed with its whole
// process group and the call throws Error{Infrastructure} saying which; the next request starts
// a fresh worker. A request's deadline shortens to raised_grace once the worker's log says a rank raised
// ("muoncheck: rank R raised ...": the others may be waiting for it in a collective), and the error
// of a request that ends so quotes what the log says of it (harness/external/stack_dump.hpp). So
// a crashing or hanging implementation is a verdict, never a hang of muoncheck.
#pragma once
#include <sys/types.h>

#include <chrono>
#include <ios>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace muoncheck::external {

struct WorkerCommand {
  std::vector<std::string> argv;                             // "{socket}" is replaced by the socket path
  std::vector<std::pair<std::string, std::string>> env;      // set on top of this process's environment
  std::string log_path;                                      // the worker's stdout and stderr (appended)
  std::chrono::milliseconds start_timeout{std::chrono::minutes(10)};   // until the hello line
  std::chrono::milliseconds raised_grace{std::chrono::seconds(20)};    // for an answer once the log says a rank raised
};

class WorkerProcess {
 public:
  explicit WorkerProcess(WorkerCommand command);
  ~WorkerProcess();   // asks the worker to quit, then kills its process group
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  // Sends `line` (one JSON object, no newline) and returns the worker's one-line answer. Starts
  // the worker first when none runs. Throws Error{Infrastructure} (worker killed) on a start
  // failure, exit, closed socket or a missed deadline.
  std::string request(const std::string& line, std::chrono::milliseconds timeout);

  // Starts the worker when none runs (what request() does first); a worker that exits before its
  // hello line is started again, three starts in all. Throws Error{Infrastructure} with the log's
  // last lines when none came up.
  void ensure_started();
  bool running() const { return pid_ > 0; }
  // What the worker wrote to its log since the last request was sent (the last 4 MiB of it).
  std::string request_log() const;
  const nlohmann::json& hello() const { return hello_; }   // the running worker's hello line
  int starts() const { return starts_; }                   // workers started so far (1 + restarts)
  const std::string& log_path() const { return command_.log_path; }
  void stop();                                              // kill the worker (a later request restarts it)

 private:
  void start();
  [[noreturn]] void fail(const std::string& what);   // kills the worker, throws
  std::string read_line(std::chrono::steady_clock::time_point deadline, const std::string& waiting_for);
  std::string exit_text();   // "exited with status 1" / "killed by signal 9" / "still running"
  std::string stuck_text() const;   // "; stuck at ..." from the stacks the request's ranks dumped to the log, or ""
  bool log_says_a_rank_raised();    // whether the log's new whole lines hold "muoncheck: rank R raised ..."

  WorkerCommand command_;
  std::string socket_path_;
  int listen_fd_ = -1, conn_fd_ = -1;
  pid_t pid_ = -1;
  int wait_status_ = 0;
  bool reaped_ = false;
  std::string buffer_;
  nlohmann::json hello_;
  int starts_ = 0;
  std::streamoff request_log_offset_ = -1;   // the log's size when the request in flight was sent
  std::streamoff scanned_to_ = -1;           // how far log_says_a_rank_raised has read it
};

}  // namespace muoncheck::external
