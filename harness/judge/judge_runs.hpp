// The implementation runs of one judgement — the scenario, its relational variants, the
// gas-1 re-split and the determinism re-run — with the control ensemble of each, started
// up front on as many workers as the oracle has threads (two by default), in the order the
// verdicts read them. A run is mostly waiting on loopback messages, so two runs side by side
// keep both cores busy where one leaves them idle; the runs themselves are exactly the runs
// judge_scenario made one after another before (each a fresh run of its scenario; the
// determinism re-run is a second run of the scenario, never the first one reused).
// A scenario asked for twice is run once (the gas-1 re-split is the gas variant when gas > 1).
#pragma once
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/scenario.hpp"
#include "impl/run_impl.hpp"
#include "oracle/result_memo.hpp"
#include "properties/observation.hpp"

namespace muoncheck {

struct SideRun {
  std::shared_ptr<const impl::ImplResult> impl;
  std::shared_ptr<const Observation> observed;               // what the invariants read of it
  std::shared_ptr<const std::vector<Trajectory>> controls;   // null when not asked for
};

class JudgeRuns {
 public:
  // `workers` ≥ 1 runs at a time; `members`: the control ensemble's size.
  JudgeRuns(impl::ImplOptions options, oracle::ResultMemo& memo, int members, int workers);
  ~JudgeRuns();   // waits for the runs already started; drops the others
  JudgeRuns(const JudgeRuns&) = delete;
  JudgeRuns& operator=(const JudgeRuns&) = delete;

  // Queues a run of `s` (with its control ensemble when `controls`); `again`: a second,
  // separate run of a scenario queued before (the determinism re-run).
  void start(const Scenario& s, bool controls, bool again = false);
  // The run of `s` (queued now, ahead of the rest, if it was not); rethrows its error
  // (Unsupported for a scenario the implementation cannot run).
  SideRun get(const Scenario& s, bool controls, bool again = false);

 private:
  std::string key(const Scenario& s, bool again) const;
  void work();

  impl::ImplOptions options_;
  oracle::ResultMemo& memo_;
  int members_;
  std::mutex mutex_;
  std::condition_variable ready_;
  bool stopping_ = false;
  std::deque<std::function<void()>> queue_;
  std::map<std::string, std::shared_future<SideRun>> runs_;
  std::vector<std::thread> workers_;
};

}  // namespace muoncheck
