// Independent launches side by side: fork(origin, n) makes n branch streams wait for the work
// enqueued so far on origin, join(origin, n) makes origin wait for everything enqueued on them.
// Inside a stream capture the branches join the capture, so the graph holds parallel branches.
// Streams and events are created on first use (outside any capture: the first run of a
// recurring NS is eager, graph_cache.hpp) and kept.
#pragma once
#include <vector>

#include <cuda_runtime_api.h>

namespace muoncheck::impl::cuda {

class StreamBranches {
 public:
  StreamBranches() = default;
  ~StreamBranches();
  StreamBranches(const StreamBranches&) = delete;
  StreamBranches& operator=(const StreamBranches&) = delete;

  void fork(cudaStream_t origin, int n);
  cudaStream_t branch(int i) const { return streams_[static_cast<size_t>(i)]; }
  void join(cudaStream_t origin, int n);

 private:
  void grow(int n);

  std::vector<cudaStream_t> streams_;
  std::vector<cudaEvent_t> done_;   // one per branch
  cudaEvent_t forked_ = nullptr;
};

}  // namespace muoncheck::impl::cuda
