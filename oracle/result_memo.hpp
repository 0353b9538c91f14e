// The oracle's and the control's results, computed once per process and handed to every
// judgement that asks for the same computation: the exact trajectory, the control ensemble,
// and the single steps of the stepwise check. Judgements of one suite share a lot of it —
// llama2-zero3-init differs from llama2-zero3 only in zero_init, which neither reads; the
// two-layer scenarios are each other's gas, dp and stage variants.
//
// Every entry is keyed by control_fingerprint(s) — what the step engine reads of a scenario
// (the oracle and the control are one engine with different rounding hooks, so the key
// that fixes a control member's every bit fixes the exact oracle's too) — plus the
// precision or ensemble size, and for a single step the step index and the whole state it
// starts from, bit for bit. So a memoised result is the very result the call would compute;
// tests/oracle/result_memo_test.cpp checks that equal keys give bit-identical results.
// A stepwise check's step 0 starts from the initial state, so it is the trajectory's own
// step 0 and comes from the trajectory (also checked bit for bit by that test).
//
// Entries are dropped least recently used first once they hold more than `max_bytes`.
// Thread-safe; a result is computed outside the lock, once: a thread asking for a result
// another thread is computing waits for it.
#pragma once
#include <cstddef>
#include <future>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/scenario.hpp"
#include "core/trajectory.hpp"
#include "oracle/oracle.hpp"

namespace muoncheck::oracle {

class ResultMemo {
 public:
  static constexpr size_t kDefaultMaxBytes = size_t{1} << 30;
  explicit ResultMemo(size_t max_bytes = kDefaultMaxBytes) : max_bytes_(max_bytes) {}

  std::shared_ptr<const Trajectory> exact(const Scenario& s, Precision p);
  std::shared_ptr<const std::vector<Trajectory>> ensemble(const Scenario& s, int members);
  // One exact step from `before` (oracle::step_from).
  std::shared_ptr<const StepRecord> exact_step(const Scenario& s, int step, const TrainingState& before, Precision p);
  // One step of each of the first `members` control members from `before` (control_steps_from).
  std::shared_ptr<const std::vector<StepRecord>> member_steps(const Scenario& s, int step, const TrainingState& before,
                                                              int members);

  struct Counts {
    long hits = 0, misses = 0;
    size_t bytes = 0;
  };
  Counts counts() const;

 private:
  template <class V, class Make>
  std::shared_ptr<const V> get(const std::string& key, Make make);
  void evict_locked();

  struct Entry {
    std::shared_ptr<const void> value;
    size_t bytes = 0;
    std::list<std::string>::iterator age;
  };
  size_t max_bytes_;
  mutable std::mutex mutex_;
  std::map<std::string, Entry> entries_;
  std::map<std::string, std::shared_future<std::shared_ptr<const void>>> computing_;
  std::list<std::string> by_age_;   // front: most recently used
  Counts counts_;
};

// The bytes a result holds (its doubles and records), for the memo's budget.
size_t bytes_of(const Trajectory& t);
size_t bytes_of(const StepRecord& r);
// A TrainingState as an exact byte string (every double's bits, the scaler, the step count).
std::string state_key(const TrainingState& st);

}  // namespace muoncheck::oracle
