// Runs a command with this process as one rank of a process group (--ranks processes):
// joins the group through the FileStore in `store_dir`, then
//   - rank 0 runs the command (every engine run becomes a job of the group,
//     impl/run_processes.hpp), judges and writes the report, and tells the workers its exit
//     code; exit 3 when the group lost a rank, after the report is written;
//   - a worker serves jobs until rank 0's end and exits with its code. When rank 0 is lost,
//     the surviving workers meet in the store; the lowest writes the report (one scenario,
//     the run rank 0 was in, with the error naming rank 0) and every survivor exits 3.
#pragma once
#include <chrono>
#include <functional>
#include <string>

#include "harness/launch/launcher_env.hpp"
#include "impl/comm/communicator.hpp"

namespace muoncheck::launch {

struct ProcessRun {
  std::string command;        // "check", "run", ...
  std::string report_path;    // where the command writes its report ("" when none)
  std::string store_dir;      // --store: a directory no earlier run used, seen by every rank
  std::chrono::milliseconds timeout = impl::kDefaultCollectiveTimeout;
};

// `run_command` runs the command and returns its exit code (main's mapping of errors).
int run_as_process_rank(const LauncherEnv& env, const ProcessRun& run, const std::function<int()>& run_command);

}  // namespace muoncheck::launch
