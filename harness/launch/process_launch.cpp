#include "harness/launch/process_launch.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <memory>
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

// How long rank 0's command may go on after the group lost a rank (its runs all fail at
// once; what is left is judging work already under way) before rank 0 writes the report
// itself and exits.
constexpr auto kFinishAfterLoss = std::chrono::milliseconds(1500);

// The report of a run that a lost rank ended before its command could write one: one
// scenario (the run under way), its error naming the lost rank.
void write_loss_report(const ProcessRun& run, int writer, const std::string& scenario, const std::string& message) {
  std::fprintf(stderr, "muoncheck: infrastructure: %s\n", message.c_str());
  if (run.report_path.empty()) return;
  ScenarioResult r;
  r.scenario = scenario.empty() ? "(before the first run)" : scenario;
  r.error = ScenarioError{ErrorKind::Infrastructure, message};
  const RunMetadata meta{run.command, "ranks as processes, written by rank " + std::to_string(writer), "", 0.0};
  write_report(run.report_path, build_report(meta, {r}, {}));
  std::printf("report: %s (written by rank %d)\n", run.report_path.c_str(), writer);
}

// Rank 0: the command on its own thread, so a lost rank ends the run within
// kFinishAfterLoss even while the command is still judging.
int run_rank0(impl::ProcessGroup& g, const ProcessRun& run, const std::function<int()>& run_command) {
  std::promise<int> done;
  auto finished = done.get_future();
  std::thread command([&] {
    try {
      done.set_value(run_command());
    } catch (...) {
      done.set_exception(std::current_exception());
    }
  });
  while (finished.wait_for(std::chrono::milliseconds(20)) != std::future_status::ready) {
    if (!g.lost()) continue;
    if (finished.wait_for(kFinishAfterLoss) == std::future_status::ready) break;
    const std::string message = impl::loss_message(g);
    write_loss_report(run, 0, message.substr(message.rfind(" during ") + 8), message);
    g.end(3);
    std::fflush(stdout);
    std::_Exit(3);   // the command's threads are still judging: nothing of theirs is needed
  }
  command.join();
  int code = 3;
  try {
    code = finished.get();
  } catch (...) {
    g.end(3);
    throw;
  }
  if (const auto lost = g.lost()) {
    std::fprintf(stderr, "muoncheck: infrastructure: rank %d of %d was lost during the run (see the report)\n", *lost, g.world());
    code = 3;
  }
  g.end(code);
  return code;
}

// Rank 0 is gone: the surviving workers meet; the lowest writes the report.
int after_rank0_lost(impl::ProcessGroup& g, const ProcessRun& run, const impl::ServiceEnd& end) {
  g.set(survivor_key(g.rank()), "1");
  std::this_thread::sleep_for(kMeetSurvivors);
  int lowest = g.rank();
  for (int r = 1; r < g.rank(); ++r)
    if (g.has(survivor_key(r))) {
      lowest = r;
      break;
    }
  if (lowest == g.rank()) write_loss_report(run, g.rank(), end.last_job, end.rank0_lost);
  else std::fprintf(stderr, "muoncheck: infrastructure: %s\n", end.rank0_lost.c_str());
  return 3;
}

}  // namespace

int run_as_process_rank(const LauncherEnv& env, const ProcessRun& run, const std::function<int()>& run_command) {
  if (run.store_dir.empty()) throw Error(ErrorKind::Usage, "--ranks processes needs --store DIR (a directory every rank sees)");
  std::error_code ec;
  std::filesystem::create_directories(run.store_dir, ec);
  if (ec) throw Error(ErrorKind::Usage, "--store " + run.store_dir + ": cannot create the directory: " + ec.message());
  impl::ProcessPlacement where = env.placement;
  where.store_dir = run.store_dir;
  impl::ProcessGroup& g = impl::ProcessGroup::install(where, run.timeout);
  if (g.rank() != 0) {
    const auto end = impl::serve_engine_jobs(g);
    return end.exit_code ? *end.exit_code : after_rank0_lost(g, run, end);
  }
  return run_rank0(g, run, run_command);
}

}  // namespace muoncheck::launch
