#include "harness/judge/judge_runs.hpp"

#include "core/scenario_io.hpp"

namespace muoncheck {

JudgeRuns::JudgeRuns(impl::ImplOptions options, oracle::ResultMemo& memo, int members, int workers)
    : options_(std::move(options)), memo_(memo), members_(members) {
  for (int w = 0; w < std::max(1, workers); ++w) workers_.emplace_back([this] { work(); });
}

JudgeRuns::~JudgeRuns() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    queue_.clear();   // never started: their futures are simply never read
  }
  ready_.notify_all();
  for (auto& w : workers_) w.join();
}

std::string JudgeRuns::key(const Scenario& s, bool again) const {
  return (again ? "again\n" : "") + scenario_to_json(s).dump();
}

void JudgeRuns::start(const Scenario& s, bool controls, bool again) {
  const std::string k = key(s, again);
  std::lock_guard<std::mutex> lock(mutex_);
  if (runs_.count(k)) return;
  auto task = std::make_shared<std::packaged_task<SideRun()>>([this, s, controls] {
    SideRun r;
    r.impl = std::make_shared<const impl::ImplResult>(impl::run_impl(s, options_));
    r.observed = std::make_shared<const Observation>(observation_of(*r.impl));
    if (controls) r.controls = memo_.ensemble(s, members_);
    return r;
  });
  runs_[k] = task->get_future().share();
  queue_.push_back([task] { (*task)(); });
  ready_.notify_one();
}

SideRun JudgeRuns::get(const Scenario& s, bool controls, bool again) {
  const std::string k = key(s, again);
  std::shared_future<SideRun> run;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!runs_.count(k)) {
      lock.unlock();
      start(s, controls, again);
      lock.lock();
      // Asked for now: ahead of the runs queued for later verdicts.
      if (!queue_.empty()) {
        auto mine = std::move(queue_.back());
        queue_.pop_back();
        queue_.push_front(std::move(mine));
      }
    }
    run = runs_.at(k);
  }
  SideRun r = run.get();
  if (controls && !r.controls) r.controls = memo_.ensemble(s, members_);
  return r;
}

void JudgeRuns::work() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      ready_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();
  }
}

}  // namespace muoncheck
