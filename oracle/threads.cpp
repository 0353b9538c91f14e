// The oracle's thread count: both cores by default (see parallel.hpp);
// benchmarks set 1 to measure scaling.
#include <algorithm>
#include <atomic>
#include <thread>

#include "oracle/parallel.hpp"

namespace muoncheck::oracle {

namespace {
std::atomic<int> g_threads{std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 1, 2)};
}

int thread_count() { return g_threads.load(); }
void set_thread_count(int n) { g_threads.store(std::max(1, n)); }
bool& in_parallel_task() {
  thread_local bool flag = false;
  return flag;
}

}  // namespace muoncheck::oracle
