// How the oracle uses the machine's cores (two by default): either the rows of
// one matrix product, or independent tasks (one per param) on a shared queue.
// Work never nests: inside a task, products run on the task's own thread.
// Each output is written by exactly one thread, so results never depend on the
// thread count or the schedule.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <numeric>
#include <thread>
#include <vector>

namespace muoncheck::oracle {

int thread_count();            // default min(2, hardware threads)
void set_thread_count(int n);  // benchmarks compare 1 and 2; n ≥ 1
bool& in_parallel_task();      // thread-local: this thread runs one of parallel_tasks' tasks

// Below this many multiply-adds a product runs on the calling thread.
inline constexpr double kParallelMinWork = 16384;

// Splits rows [0, n) into thread_count() contiguous ranges of about equal cost
// (cost(i) is row i's work) and runs body(lo, hi) on each, the last on this thread.
template <class Cost, class Body>
void parallel_rows(int64_t n, Cost cost, Body body) {
  std::vector<double> prefix(static_cast<size_t>(n) + 1, 0.0);
  for (int64_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + cost(i);
  const int nt = in_parallel_task() ? 1 : static_cast<int>(std::min<int64_t>(thread_count(), n));
  if (nt <= 1 || prefix[n] < kParallelMinWork) { body(int64_t{0}, n); return; }
  std::vector<int64_t> cut{0};
  for (int t = 1; t < nt; ++t) {
    const double goal = prefix[n] * t / nt;
    cut.push_back(std::lower_bound(prefix.begin(), prefix.end(), goal) - prefix.begin());
  }
  cut.push_back(n);
  std::vector<std::thread> pool;
  for (int t = 0; t + 1 < nt; ++t) pool.emplace_back(body, cut[t], cut[t + 1]);
  body(cut[nt - 1], cut[nt]);
  for (auto& th : pool) th.join();
}

// Runs body(i) for every task, largest cost first, on thread_count() threads
// pulling from one queue — when that balances (no task above half the total);
// otherwise in order on this thread, leaving the cores to each product's rows.
// An exception in a task is rethrown here after all threads have joined.
template <class Body>
void parallel_tasks(const std::vector<double>& cost, Body body) {
  const size_t n = cost.size();
  const double total = std::accumulate(cost.begin(), cost.end(), 0.0);
  const double largest = n ? *std::max_element(cost.begin(), cost.end()) : 0.0;
  const int nt = in_parallel_task() ? 1 : static_cast<int>(std::min<size_t>(thread_count(), n));
  if (nt <= 1 || largest > total / 2 || total < kParallelMinWork) {
    for (size_t i = 0; i < n; ++i) body(i);
    return;
  }
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return cost[a] > cost[b]; });
  std::atomic<size_t> next{0};
  std::vector<std::exception_ptr> errors(nt);
  auto worker = [&](int w) {
    in_parallel_task() = true;
    try {
      for (size_t k; (k = next.fetch_add(1)) < n;) body(order[k]);
    } catch (...) {
      errors[w] = std::current_exception();
      next.store(n);
    }
    in_parallel_task() = false;
  };
  std::vector<std::thread> pool;
  for (int w = 1; w < nt; ++w) pool.emplace_back(worker, w);
  worker(0);
  for (auto& th : pool) th.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace muoncheck::oracle
