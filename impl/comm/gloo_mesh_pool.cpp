#include "impl/comm/gloo_mesh_pool.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <thread>

namespace muoncheck::impl {

GlooMeshPool& GlooMeshPool::process() {
  static auto* pool = new GlooMeshPool();   // deliberately never destroyed (see the header)
  return *pool;
}

std::shared_ptr<gloo::transport::Device> GlooMeshPool::device() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!device_) {
    std::thread maker([&] {   // the device's loop thread inherits this thread's policy (see the header)
      sched_param none{};
      pthread_setschedparam(pthread_self(), SCHED_BATCH, &none);
      device_ = create_loopback_device();
    });
    maker.join();
  }
  return device_;
}

std::optional<GlooMeshPool::Mesh> GlooMeshPool::take(int dp) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = idle_.find(dp);
  if (it == idle_.end() || it->second.empty()) return std::nullopt;
  Mesh m = std::move(it->second.back());
  it->second.pop_back();
  return m;
}

void GlooMeshPool::give_back(Mesh mesh) {
  const bool whole = !mesh.empty() && std::all_of(mesh.begin(), mesh.end(), [&](const auto& c) {
    return c && !c->broken() && c->size() == static_cast<int>(mesh.size());
  });
  if (!whole || static_cast<int>(mesh.size()) > kMaxKeptRanks) return;   // closed here, as the mesh goes out of scope
  std::lock_guard<std::mutex> lock(mutex_);
  auto& kept = idle_[static_cast<int>(mesh.size())];
  if (kept.size() < kKeptPerSize) kept.push_back(std::move(mesh));
}

size_t GlooMeshPool::idle(int dp) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = idle_.find(dp);
  return it == idle_.end() ? 0 : it->second.size();
}

void GlooMeshPool::clear() {
  std::map<int, std::vector<Mesh>> closing;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closing.swap(idle_);
  }
}

}  // namespace muoncheck::impl
