// Hopper's tensor memory accelerator (TMA, sm_90) and the shared-memory barriers its copies
// complete on: the PTX the triangle product (triangle_product.cu) pipelines its operands with
// (multicast into both blocks of its clusters),
// the resident NS kernel's stores into the other blocks of its cluster (ns_resident.cu), and the
// streamed NS kernel's bulk copies (ns_streamed.cu).
//
// A copy moves one box of a tensor map (cuTensorMapEncodeTiled, built on the host) from global
// into shared memory and counts its bytes on an mbarrier; a consumer waits for the barrier's
// phase, which completes when the expected bytes and arrivals are in. Phases alternate 0, 1, 0…;
// waiting on parity p returns once the phase of parity p has completed (on a fresh barrier,
// parity 1 counts as completed: a producer's first wait on an empty slot passes at once).
#pragma once
#include <cstdint>

#include <cuda.h>

namespace muoncheck::impl::cuda::tma {

__device__ __forceinline__ void init(uint32_t bar, uint32_t arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(arrivals) : "memory");
}
// The barriers' initialization is seen by the async proxy (the copies) and the other threads
// (after a barrier of the block).
__device__ __forceinline__ void fence_init() { asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"); }

__device__ __forceinline__ void arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// One arrival that also announces `bytes` of copies still to land in this phase.
__device__ __forceinline__ void arrive_expect(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
// One try of the wait below, SEM the qualifiers between ".parity" and ".shared::cta".
#define MUONCHECK_MBARRIER_TRY_WAIT(SEM)                                                              \
  asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity" SEM                                     \
               ".shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"                             \
               : "=r"(done)                                                                          \
               : "r"(bar), "r"(parity)                                                               \
               : "memory")
__device__ __forceinline__ void wait(uint32_t bar, uint32_t parity) {
  uint32_t done = 0;
  do MUONCHECK_MBARRIER_TRY_WAIT(""); while (done == 0);
}
// The same wait, with the acquire at cluster scope: for a phase completed by other blocks' stores
// (store_async), so that what they stored is seen once the wait returns.
__device__ __forceinline__ void wait_cluster(uint32_t bar, uint32_t parity) {
  uint32_t done = 0;
  do MUONCHECK_MBARRIER_TRY_WAIT(".acquire.cluster"); while (done == 0);
}
#undef MUONCHECK_MBARRIER_TRY_WAIT

// 16 bytes into another block of the cluster (dst and bar are shared::cluster addresses in that
// block, from mapa), counted on its barrier bar as they land: no fence or cluster barrier on the
// sender's side; the receiver announces the bytes (arrive_expect) and waits (wait_cluster).
__device__ __forceinline__ void store_async(uint32_t dst, const uint4& v, uint32_t bar) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [%0], {%1, %2, %3, %4}, [%5];\n" ::"r"(dst),
               "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w), "r"(bar)
               : "memory");
}

// The box at coordinates (x, y, z) of a 3-D tensor map (x the innermost) into shared memory at
// dst, its bytes counted on bar. Past the tensor's edges the box is filled with zeros.
__device__ __forceinline__ void load_3d(uint32_t dst, const CUtensorMap* map, int x, int y, int z, uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], "
      "[%5];\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y), "r"(z), "r"(bar)
      : "memory");
}

// The same box into every block of the cluster in cta_mask (bit r: block rank r), at dst's offset in
// each, its bytes counted on the barrier at bar's offset in each (so each receiver announces them).
__device__ __forceinline__ void load_3d_multicast(uint32_t dst, const CUtensorMap* map, int x, int y, int z, uint32_t bar,
                                                  uint16_t cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%2, "
      "%3, %4}], [%5], %6;\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y), "r"(z), "r"(bar), "h"(cta_mask)
      : "memory");
}

// One arrival on a barrier of another block of the cluster (bar: a shared::cluster address, from
// cluster_address), with the default release at block scope: enough to say "this slot was read"
// to a copier that only overwrites it by TMA (a release at cluster scope costs a GPU-wide fence).
__device__ __forceinline__ void arrive_remote(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

// The box at coordinates (x, y, z) of a 3-D tensor map from shared memory at src into global
// memory, in this thread's current bulk group (commit_bulk, wait_bulk below); past the tensor's
// edges nothing is written.
__device__ __forceinline__ void store_3d(const CUtensorMap* map, int x, int y, int z, uint32_t src) {
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [%0, {%1, %2, %3}], [%4];\n" ::"l"(
                   reinterpret_cast<uint64_t>(map)),
               "r"(x), "r"(y), "r"(z), "r"(src)
               : "memory");
}

// `bytes` (a multiple of 16, both addresses 16-byte aligned) from global src into shared memory at
// dst, counted on bar: a 1-D bulk copy.
__device__ __forceinline__ void load_1d(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
               "l"(src), "r"(bytes), "r"(bar)
               : "memory");
}
// `bytes` from shared src to global dst, in this thread's current bulk group; commit_bulk closes
// the group, wait_bulk_read<N> returns once all but the last N groups have read their shared
// memory, wait_bulk<N> once their writes are done.
__device__ __forceinline__ void store_1d(void* dst, uint32_t src, uint32_t bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n" ::"l"(dst), "r"(src), "r"(bytes) : "memory");
}
__device__ __forceinline__ void commit_bulk() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
template <int kPending>
__device__ __forceinline__ void wait_bulk_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(kPending) : "memory");
}
template <int kPending>
__device__ __forceinline__ void wait_bulk() {
  asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(kPending) : "memory");
}

// A barrier of `threads` threads (a multiple of 32) under id (1…15; 0 is __syncthreads').
__device__ __forceinline__ void named_barrier(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
// Its other half: these threads arrive without waiting; the barrier completes once the others
// (named_barrier) have arrived too.
__device__ __forceinline__ void named_barrier_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

}  // namespace muoncheck::impl::cuda::tma
