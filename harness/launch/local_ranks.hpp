// Ranks as processes for one judgement, started by this process: a scenario whose
// engine.ranks is processes runs on a group of this process (rank 0) and world - 1 worker
// processes, copies of the muoncheck executable launched as a launcher would launch them
// (`muoncheck check --ranks processes --store DIR` with torchrun's variables), meeting in a
// fresh store directory. The workers serve the judgement's runs (the scenario, its variants,
// the re-runs) as the jobs of any launch; at the end rank 0 tells them so, they exit, and the
// store (checkpoint shards included) is removed. So `muoncheck check` stays one command.
#pragma once
#include <chrono>
#include <string>
#include <sys/types.h>
#include <vector>

namespace muoncheck::impl {
class ProcessGroup;
}

namespace muoncheck::launch {

// The executable the workers run (cli/main.cpp sets it to its own); empty: none, and a
// scenario whose ranks are processes is Unsupported.
void set_rank_executable(const std::string& path);
const std::string& rank_executable();

class LocalRanks {
 public:
  // Starts world - 1 workers and connects the group (Infrastructure error when one does not
  // come within `timeout`; the started ones are stopped).
  LocalRanks(int world, std::chrono::milliseconds timeout);
  ~LocalRanks();   // ends the group, waits for the workers (kills one that outlives a grace), removes the store
  LocalRanks(const LocalRanks&) = delete;
  LocalRanks& operator=(const LocalRanks&) = delete;

  impl::ProcessGroup& group() { return *group_; }

 private:
  void stop_workers();

  std::string store_;
  std::vector<pid_t> workers_;
  impl::ProcessGroup* group_ = nullptr;
};

}  // namespace muoncheck::launch
