// Fork/join of branch streams; see stream_branches.hpp.
#include "dev/cuda/stream_branches.hpp"

#include "impl/math/cuda/cuda_check.hpp"

namespace muoncheck::impl::cuda {

StreamBranches::~StreamBranches() {
  for (cudaStream_t s : streams_) (void)cudaStreamDestroy(s);
  for (cudaEvent_t e : done_) (void)cudaEventDestroy(e);
  if (forked_ != nullptr) (void)cudaEventDestroy(forked_);
}

void StreamBranches::grow(int n) {
  if (forked_ == nullptr) check(cudaEventCreateWithFlags(&forked_, cudaEventDisableTiming), "cudaEventCreate (fork)");
  while (static_cast<int>(streams_.size()) < n) {
    cudaStream_t s = nullptr;
    check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate (branch)");
    streams_.push_back(s);
    cudaEvent_t e = nullptr;
    check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreate (join)");
    done_.push_back(e);
  }
}

void StreamBranches::fork(cudaStream_t origin, int n) {
  grow(n);
  check(cudaEventRecord(forked_, origin), "cudaEventRecord (fork)");
  for (int i = 0; i < n; ++i) check(cudaStreamWaitEvent(streams_[i], forked_, 0), "cudaStreamWaitEvent (fork)");
}

void StreamBranches::join(cudaStream_t origin, int n) {
  for (int i = 0; i < n; ++i) {
    check(cudaEventRecord(done_[i], streams_[i]), "cudaEventRecord (join)");
    check(cudaStreamWaitEvent(origin, done_[i], 0), "cudaStreamWaitEvent (join)");
  }
}

}  // namespace muoncheck::impl::cuda
