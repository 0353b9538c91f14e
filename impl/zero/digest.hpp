// A 64-bit FNV-1a digest over raw bytes: ranks compare digests of the state that must
// be replicated instead of shipping the state itself.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace muoncheck::impl {

class Digest {
 public:
  void add_bytes(const void* p, size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (size_t i = 0; i < n; ++i) h_ = (h_ ^ b[i]) * 0x100000001B3ull;
  }
  template <class T>
  void add(const T& v) { add_bytes(&v, sizeof(T)); }
  template <class T>
  void add(const std::vector<T>& v) { add_bytes(v.data(), v.size() * sizeof(T)); }
  uint64_t value() const { return h_; }

 private:
  uint64_t h_ = 0xCBF29CE484222325ull;
};

}  // namespace muoncheck::impl
