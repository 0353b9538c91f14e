#include "harness/launch/process_launch.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <memory>
#include <optional>
#include <thread>

#include "core/error.hpp"
#include "harness/judge/scenario_result.hpp"
#include "harness/report/report.hpp"
#include "impl/run_processes.hpp"

namespace muoncheck::launch {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kMeetSurvivors = std::chrono::milliseconds(1500);

std::string survivor_key(int rank) { return "survivor/" + std::to_string(rank); }

// How long a rank's work may go on after the group lost a rank (rank 0: its runs all fail
// at once, what is left is judging under way; a worker: a job failing) before the rank
// writes the report itself, if it is the one to, and exits.
constexpr auto kFinishAfterLoss = std::chrono::milliseconds(1500);

// The report of a run that a lost rank ended before its command could write one: one
// scenario (the run under way), its error naming the lost rank.
void write_loss_report(const ProcessRun& run, int writer, const std::string& scenario, const std::string& message) {
  std::fprintf(stderr, "muoncheck: infrastructure: %s\n", message.c_str());
  if (run.report_path.empty()) return;
  ScenarioResult r;
  r.scenario = scenario.empty() ? "(before the first run)" : scenario;
  r.error = ScenarioError{ErrorKind::Infrastructure, message};
  const RunMetadata meta{run.command, "ranks as processes, written by rank " + std::to_string(writer), 0.0};
  write_report(run.report_path, build_report(meta, {r}, {}, summarize({r}, {}, meta)));
  std::printf("report: %s (written by rank %d)\n", run.report_path.c_str(), writer);
}

// Runs `work` on its own thread and returns its result; once the group is stopping (a lost
// rank; on a worker also rank 0's end), gives it kFinishAfterLoss more and otherwise returns
// nothing: the caller then exits while `work` may still be blocked (in a connect to a lost
// rank, say).
template <class T>
std::optional<T> until_stopped(impl::ProcessGroup& g, const std::function<T()>& work) {
  auto task = std::make_shared<std::packaged_task<T()>>(work);
  auto finished = task->get_future();
  std::thread thread([task] { (*task)(); });
  while (finished.wait_for(std::chrono::milliseconds(20)) != std::future_status::ready) {
    if (g.stopping().load() && finished.wait_for(kFinishAfterLoss) != std::future_status::ready) {
      thread.detach();
      return std::nullopt;
    }
  }
  thread.join();
  return finished.get();
}

// Rank 0: the command, and the workers' exit code. Exit 3 when the group lost a rank.
int run_rank0(impl::ProcessGroup& g, const ProcessRun& run, const std::function<int()>& run_command) {
  std::optional<int> code;
  try {
    code = until_stopped<int>(g, run_command);
  } catch (...) {
    g.end(3);
    throw;
  }
  if (!code) {   // the command is still judging: nothing of it is needed any more
    write_loss_report(run, 0, impl::last_job_name(), impl::loss_message(g));
    g.end(3);
    std::fflush(stdout);
    std::_Exit(3);
  }
  if (const auto lost = g.lost()) {
    std::fprintf(stderr, "muoncheck: infrastructure: rank %d of %d was lost during the run (see the report)\n", *lost, g.world());
    code = 3;
  }
  g.end(*code);
  return *code;
}

// Rank 0 is gone: the surviving workers meet; the lowest writes the report.
int after_rank0_lost(impl::ProcessGroup& g, const ProcessRun& run) {
  g.set(survivor_key(g.rank()), "1");
  std::this_thread::sleep_for(kMeetSurvivors);
  int lowest = g.rank();
  for (int r = 1; r < g.rank(); ++r)
    if (g.has(survivor_key(r))) {
      lowest = r;
      break;
    }
  const std::string message = impl::loss_message(g);
  if (lowest == g.rank()) write_loss_report(run, g.rank(), impl::last_job_name(), message);
  else std::fprintf(stderr, "muoncheck: infrastructure: %s\n", message.c_str());
  std::fflush(stdout);
  return 3;
}

// A worker: serves rank 0's runs; its exit code is rank 0's.
int run_worker(impl::ProcessGroup& g, const ProcessRun& run) {
  const auto served = until_stopped<std::optional<int>>(g, [&g] { return impl::serve_engine_jobs(g); });
  if (served && *served) return **served;
  if (const auto code = g.ended()) std::_Exit(*code);   // rank 0 is done; the service is blocked
  const int code = after_rank0_lost(g, run);
  if (!served) std::_Exit(code);   // the service is still blocked on rank 0
  return code;
}

}  // namespace

int run_as_process_rank(const LauncherEnv& env, const ProcessRun& run, const std::function<int()>& run_command) {
  if (run.store_dir.empty()) throw Error(ErrorKind::Usage, "--ranks processes needs --store DIR (a directory every rank sees)");
  std::error_code ec;
  std::filesystem::create_directories(run.store_dir, ec);
  if (ec) throw Error(ErrorKind::Usage, "--store " + run.store_dir + ": cannot create the directory: " + ec.message());
  impl::ProcessPlacement where = env.placement;
  where.store_dir = run.store_dir;
  impl::ProcessGroup* group = nullptr;
  try {
    group = &impl::ProcessGroup::install(where, run.timeout);
  } catch (const impl::CommError& e) {   // a rank never came: still a report, from rank 0
    if (where.rank != 0) throw;
    write_loss_report(run, 0, "", e.what());
    return 3;
  }
  impl::ProcessGroup& g = *group;
  return g.rank() == 0 ? run_rank0(g, run, run_command) : run_worker(g, run);
}

}  // namespace muoncheck::launch
