#include "harness/launch/local_ranks.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/error.hpp"
#include "impl/comm/process_group.hpp"

extern char** environ;

namespace muoncheck::launch {
namespace {

using Clock = std::chrono::steady_clock;
// A worker exits at once on rank 0's end message (and by itself 5 s later, whatever it is
// doing: process_group.hpp); one still there after this is killed.
constexpr auto kWorkerExitGrace = std::chrono::seconds(8);

std::string& executable() {
  static std::string path;
  return path;
}

// A fresh directory for the group's store, under TMPDIR (else /tmp).
std::string fresh_store() {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/muoncheck-ranks-XXXXXX";
  if (!::mkdtemp(pattern.data()))
    throw Error(ErrorKind::Infrastructure, "ranks as processes: cannot make a store directory " + pattern + ": " + std::strerror(errno));
  return pattern;
}

// One worker: `EXE check --ranks processes --store DIR` under torchrun's variables for `rank`,
// stdout to /dev/null (rank 0 reports), stderr shared.
pid_t start_worker(const std::string& exe, const std::string& store, int rank, int world) {
  std::vector<std::string> args = {exe, "check", "--ranks", "processes", "--store", store};
  const std::vector<std::pair<std::string, std::string>> mine = {
      {"RANK", std::to_string(rank)}, {"WORLD_SIZE", std::to_string(world)}, {"LOCAL_RANK", std::to_string(rank)},
      {"LOCAL_WORLD_SIZE", std::to_string(world)}};
  std::vector<std::string> env_text;
  for (char** e = environ; *e; ++e) {   // every variable but the launchers' (ours decide)
    const std::string kv = *e;
    const std::string key = kv.substr(0, kv.find('='));
    const bool launcher = key.rfind("OMPI_COMM_WORLD_", 0) == 0 || key.rfind("SLURM_", 0) == 0 ||
                          std::any_of(mine.begin(), mine.end(), [&](const auto& m) { return m.first == key; });
    if (!launcher) env_text.push_back(kv);
  }
  for (const auto& [k, v] : mine) env_text.push_back(k + "=" + v);
  std::vector<char*> argv, envp;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (auto& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {   // the child: only async-signal-safe calls until exec
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);   // gone with muoncheck, whatever ends it
    const int null = ::open("/dev/null", O_RDWR);
    ::dup2(null, 0);
    ::dup2(null, 1);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  if (pid < 0) throw Error(ErrorKind::Infrastructure, std::string("ranks as processes: fork: ") + std::strerror(errno));
  return pid;
}

}  // namespace

void set_rank_executable(const std::string& path) { executable() = path; }
const std::string& rank_executable() { return executable(); }

LocalRanks::LocalRanks(int world, std::chrono::milliseconds timeout) {
  if (executable().empty())
    throw Error(ErrorKind::Unsupported, "engine.ranks is processes: this program cannot start muoncheck rank processes");
  store_ = fresh_store();
  try {
    for (int r = 1; r < world; ++r) workers_.push_back(start_worker(executable(), store_, r, world));
    impl::ProcessPlacement where;
    where.rank = 0;
    where.world = world;
    where.store_dir = store_;
    group_ = new impl::ProcessGroup(where, timeout);   // never destroyed (process_group.hpp)
  } catch (const std::exception& e) {
    stop_workers();
    std::error_code ignored;
    std::filesystem::remove_all(store_, ignored);
    throw Error(ErrorKind::Infrastructure, std::string("ranks as processes: ") + e.what());
  }
}

LocalRanks::~LocalRanks() {
  if (group_) group_->end(0);
  stop_workers();
  std::error_code ignored;   // the shards of a checkpoint scenario are gone already; the store's keys go now
  std::filesystem::remove_all(store_, ignored);
}

void LocalRanks::stop_workers() {
  const auto deadline = Clock::now() + (group_ ? kWorkerExitGrace : std::chrono::seconds(0));
  for (const pid_t pid : workers_) {
    int status = 0;
    while (::waitpid(pid, &status, WNOHANG) == 0) {
      if (Clock::now() >= deadline) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  workers_.clear();
}

}  // namespace muoncheck::launch
