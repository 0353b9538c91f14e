// Shared-memory access the wgmma kernels share (the triangle product, the resident and streamed
// NS kernels): 32-bit shared addresses (this block's and, in a cluster, the others'), a pair of
// 16-bit values as one 32-bit register, and the ldmatrix / stmatrix .trans moves of four 8 × 8
// blocks.
#pragma once
#include <cstdint>

#include "impl/math/cuda/dtype_device.cuh"

namespace muoncheck::impl::cuda {

__device__ __forceinline__ uint32_t shared_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// Where shared address a of this block lies in block `rank` of the cluster (distributed shared
// memory; a shared::cluster address).
__device__ __forceinline__ uint32_t cluster_address(uint32_t a, int rank) {
  uint32_t r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(a), "r"(rank));
  return r;
}

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(shared_address(p)));
}

template <class T>
__device__ __forceinline__ uint32_t as_bits(const Pair<T>& p) {
  return *reinterpret_cast<const uint32_t*>(&p);
}
__device__ __forceinline__ void stmatrix_x4_trans(void* p, const uint32_t (&r)[4]) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1,%2,%3,%4};\n" ::"r"(shared_address(p)), "r"(r[0]),
               "r"(r[1]), "r"(r[2]), "r"(r[3])
               : "memory");
}

}  // namespace muoncheck::impl::cuda
