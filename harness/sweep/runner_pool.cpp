#include "harness/sweep/runner_pool.hpp"

#include "core/error.hpp"

namespace muoncheck {

RunnerPool::RunnerPool(std::vector<CaseRunner> runners) : runners_(std::move(runners)) {
  if (runners_.empty()) throw Error(ErrorKind::Internal, "runner pool: no runner");
  for (size_t k = 0; k < runners_.size(); ++k) lanes_.emplace_back([this, k] { lane(k); });
}

RunnerPool::~RunnerPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  ready_.notify_all();
  for (auto& t : lanes_) t.join();
}

void RunnerPool::lane(size_t k) {
  while (true) {
    std::function<void(const CaseRunner&)> job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      ready_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    job(runners_[k]);   // a packaged_task: an exception goes to its future
  }
}

}  // namespace muoncheck
