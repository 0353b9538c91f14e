// CUDA graph capture and replay per key; see graph_cache.hpp.
#include "impl/math/cuda/graph_cache.hpp"

#include "impl/math/cuda/cuda_check.hpp"

namespace muoncheck::impl::cuda {

void GraphCache::clear() {
  for (auto& [key, e] : entries_)
    if (e.exec != nullptr) (void)cudaGraphExecDestroy(e.exec);
  entries_.clear();
}

void* GraphCache::capture(Entry& e, cudaStream_t stream, const std::function<void*()>& work) {
  check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
  void* result = nullptr;
  cudaGraph_t graph = nullptr;
  try {
    result = work();
  } catch (const Error&) {
    // A call that cannot be captured: close the capture, forget it, run eagerly from now on.
    (void)cudaStreamEndCapture(stream, &graph);
    if (graph != nullptr) (void)cudaGraphDestroy(graph);
    (void)cudaGetLastError();
    e.eager_only = true;
    return work();
  }
  check(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
  const cudaError_t made = cudaGraphInstantiate(&e.exec, graph, 0);
  (void)cudaGraphDestroy(graph);
  check(made, "cudaGraphInstantiate");
  e.result = result;
  check(cudaGraphLaunch(e.exec, stream), "cudaGraphLaunch");
  return result;
}

void* GraphCache::run(const Key& key, cudaStream_t stream, const std::function<void*()>& work) {
  Entry& e = entries_[key];
  ++e.seen;
  if (e.exec != nullptr) {
    check(cudaGraphLaunch(e.exec, stream), "cudaGraphLaunch");
    return e.result;
  }
  if (e.eager_only || e.seen < 2) return work();
  return capture(e, stream, work);
}

}  // namespace muoncheck::impl::cuda
