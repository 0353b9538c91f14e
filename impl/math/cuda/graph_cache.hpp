// Replays recurring work on a stream as CUDA graphs. Work is named by a key that must
// capture everything its launches depend on (input and workspace addresses, shape,
// configuration): the first time a key is seen the work runs eagerly (so every library
// plan, pointer array and module it needs exists before any capture), the second time it is
// captured (thread-local capture mode) and launched, and from then on only launched. Work
// that cannot be captured runs eagerly from then on. The graph runs exactly the kernels the
// eager run does, in the same order, so results are the same bits.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include <cuda_runtime_api.h>

namespace muoncheck::impl::cuda {

class GraphCache {
 public:
  using Key = std::vector<uint64_t>;
  GraphCache() = default;
  ~GraphCache() { clear(); }
  GraphCache(const GraphCache&) = delete;
  GraphCache& operator=(const GraphCache&) = delete;

  // Runs `work` (it enqueues on `stream` and returns a pointer the caller wants back, e.g.
  // where the result lies) or the graph captured from it.
  void* run(const Key& key, cudaStream_t stream, const std::function<void*()>& work);

  size_t size() const { return entries_.size(); }
  void clear();

 private:
  struct Entry {
    int seen = 0;
    bool eager_only = false;
    cudaGraphExec_t exec = nullptr;
    void* result = nullptr;
  };
  void* capture(Entry& e, cudaStream_t stream, const std::function<void*()>& work);

  std::map<Key, Entry> entries_;
};

}  // namespace muoncheck::impl::cuda
