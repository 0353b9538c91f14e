// N CaseRunners run side by side (`muoncheck sweep --impl ... --workers N`: one resident worker
// each). Each runner is called only from its own long-lived thread (a lane), one call at a time,
// so a runner needs no locking of its own; and the processes a resident worker starts keep their
// parent, since a worker's child is killed when the *thread* that forked it ends
// (PR_SET_PDEATHSIG, worker_process.hpp). A submitted job goes to whichever lane is free first,
// in submission order; its result (or exception) comes back through the future.
#pragma once
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

#include "core/scenario.hpp"
#include "harness/sweep/attribution.hpp"
#include "harness/traces/trace_io.hpp"

namespace muoncheck {

// Runs one case with a set of known-defect fixes applied (none for the case itself; attribution
// re-runs it with some). A runner that cannot apply fixes answers a trace whose error says so.
using CaseRunner = std::function<Trace(const Scenario&, const FixSet&)>;

// The error a runner's trace carries when a fix cannot be applied (the Python exception's name,
// as the adapters format errors: "FixDoesNotApply: known defect ID: why").
inline constexpr const char* kFixDoesNotApply = "FixDoesNotApply: ";

class RunnerPool {
 public:
  explicit RunnerPool(std::vector<CaseRunner> runners);   // Internal error when empty
  ~RunnerPool();   // each lane finishes the job it runs; jobs not started are dropped
  RunnerPool(const RunnerPool&) = delete;
  RunnerPool& operator=(const RunnerPool&) = delete;

  int size() const { return static_cast<int>(runners_.size()); }

  // Runs job(runner) on the first free lane.
  template <class Job>
  auto submit(Job job) -> std::future<std::invoke_result_t<Job, const CaseRunner&>> {
    using Result = std::invoke_result_t<Job, const CaseRunner&>;
    auto task = std::make_shared<std::packaged_task<Result(const CaseRunner&)>>(std::move(job));
    auto result = task->get_future();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      queue_.emplace_back([task](const CaseRunner& run) { (*task)(run); });
    }
    ready_.notify_one();
    return result;
  }

 private:
  void lane(size_t k);

  std::vector<CaseRunner> runners_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void(const CaseRunner&)>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> lanes_;
};

}  // namespace muoncheck
