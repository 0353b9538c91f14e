// Hopper warpgroup MMA (wgmma, sm_90a) for 16-bit operands with fp32 accumulators: the shapes
// the resident NS kernel uses (m64n64k16 and m64n128k16 with A in registers and B in shared
// memory; m64n32k16, m64n64k16 and m64n96k16 with both in shared memory), m64n128k16 with both
// in shared memory (the triangle product), first k-steps that write d without reading it (the
// streamed kernel: SsFirst, RsFirst), and the shared-memory layout and descriptors the shared
// operands are read through.
//
// A warpgroup is four consecutive warps (128 threads, the first warp's index a multiple of 4).
// Warp w of it holds rows 16w..16w+15 of the 64-row tile: its A registers are the mma.sync
// m16n8k16 A fragment of those rows, and its 64 accumulators are, for each 8-column group j of
// the 128, d[4j..4j+3] = (g, 8j+2t), (g, 8j+2t+1), (g+8, 8j+2t), (g+8, 8j+2t+1) with g = lane/4,
// t = lane%4, as mma.sync's C fragment (N = 64: the first 32 of them).
//
// The products run asynchronously: issue (fence, the MMAs, commit), then wait_groups until the
// group is done before its accumulators are read or its shared memory is written. Shared memory
// written by ordinary stores must be made visible to them first (proxy_fence, then a barrier).
#pragma once
#include <cstdint>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace muoncheck::impl::cuda::wgmma {

// The 128-byte-swizzled layout of a 16-bit matrix of kRows rows: 64-column blocks of
// kRows × 128 bytes, one after the other; in a block, row r at byte 128·r, its 16-byte pieces
// permuted by XOR with r mod 8. The block's base must be 1024-byte aligned.
template <int kRows>
struct Swizzled128 {
  static constexpr int kBlockBytes = kRows * 128;
  static_assert(kRows % 8 == 0, "whole 8-row groups");
  // Byte offset of (row, col), col a multiple of 2 (a pair of values stays adjacent).
  __device__ static __forceinline__ int offset(int row, int col) {
    return (col / 64) * kBlockBytes + row * 128 + ((((col % 64) / 8) ^ (row % 8)) * 16) + (col % 8) * 2;
  }
};

// The descriptor of B for k rows row0.. (a multiple of 8) and n columns col0.. (a multiple
// of 64) of a Swizzled128 matrix at shared address base, read MN-major (the row index is K):
// 64-column blocks kBlockBytes apart, 8-row groups 1024 bytes apart, 128-byte swizzle.
template <int kRows>
__device__ __forceinline__ uint64_t mn_major_descriptor(uint32_t base, int row0, int col0) {
  const uint32_t address = base + (col0 / 64) * Swizzled128<kRows>::kBlockBytes + row0 * 128;
  return static_cast<uint64_t>((address & 0x3FFFF) >> 4) |
         static_cast<uint64_t>(Swizzled128<kRows>::kBlockBytes >> 4) << 16 |   // leading: next 64 columns
         static_cast<uint64_t>(1024 >> 4) << 32 |                                // stride: next 8 rows
         static_cast<uint64_t>(1) << 62;                                         // 128-byte swizzle
}

// The descriptor of an operand read K-major from a Swizzled128 matrix at shared address base:
// rows row0.. (a multiple of 8; M or N) × k columns col0.. (a multiple of 16), 8-row groups
// 1024 bytes apart, 128-byte swizzle (a k-step of 16 stays inside one 128-byte row).
template <int kRows>
__device__ __forceinline__ uint64_t k_major_descriptor(uint32_t base, int row0, int col0) {
  const uint32_t address = base + (col0 / 64) * Swizzled128<kRows>::kBlockBytes + row0 * 128 + (col0 % 64) * 2;
  return static_cast<uint64_t>((address & 0x3FFFF) >> 4) | static_cast<uint64_t>(1) << 16 |
         static_cast<uint64_t>(1024 >> 4) << 32 | static_cast<uint64_t>(1) << 62;
}

__device__ __forceinline__ void fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int kPending>
__device__ __forceinline__ void wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}
// Ordinary shared-memory stores before it are seen by later wgmma reads (after a barrier).
__device__ __forceinline__ void proxy_fence() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

// Tells the compiler that the accumulators may change here, so that no read of them moves
// above a wait and no write below an issue.
template <int kN>
__device__ __forceinline__ void pin(float (&d)[kN]) {
#pragma unroll
  for (int i = 0; i < kN; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// The accumulator operands of a wgmma with N/2 of them per thread, each list the one before and 16 more;
// C their constraint: "+f" read and written, "=f" only written (a first k-step, which overwrites d).
#define MUONCHECK_WGMMA_D16(C) \
  C(d[0]), C(d[1]), C(d[2]), C(d[3]), C(d[4]), C(d[5]), C(d[6]), \
      C(d[7]), C(d[8]), C(d[9]), C(d[10]), C(d[11]), C(d[12]), C(d[13]), \
      C(d[14]), C(d[15])
#define MUONCHECK_WGMMA_D32(C) \
  MUONCHECK_WGMMA_D16(C), C(d[16]), C(d[17]), C(d[18]), C(d[19]), C(d[20]), C(d[21]), \
      C(d[22]), C(d[23]), C(d[24]), C(d[25]), C(d[26]), C(d[27]), \
      C(d[28]), C(d[29]), C(d[30]), C(d[31])
#define MUONCHECK_WGMMA_D48(C) \
  MUONCHECK_WGMMA_D32(C), C(d[32]), C(d[33]), C(d[34]), C(d[35]), C(d[36]), C(d[37]), \
      C(d[38]), C(d[39]), C(d[40]), C(d[41]), C(d[42]), C(d[43]), \
      C(d[44]), C(d[45]), C(d[46]), C(d[47])
#define MUONCHECK_WGMMA_D64(C) \
  MUONCHECK_WGMMA_D48(C), C(d[48]), C(d[49]), C(d[50]), C(d[51]), C(d[52]), C(d[53]), \
      C(d[54]), C(d[55]), C(d[56]), C(d[57]), C(d[58]), C(d[59]), \
      C(d[60]), C(d[61]), C(d[62]), C(d[63])

#define MUONCHECK_WGMMA_RS_M64N64K16(TYPE, C) \
  asm volatile( \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n" \
      "wgmma.mma_async.sync.aligned.m64n64k16.f32." TYPE "." TYPE " {%0, %1, %2, %3, %4, %5, %6, " \
      "%7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, " \
      "%25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, p, 1, 1, 1;" \
      "\n}\n" \
      : MUONCHECK_WGMMA_D32(C) \
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(accumulate))

#define MUONCHECK_WGMMA_RS_M64N128K16(TYPE, C) \
  asm volatile( \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n" \
      "wgmma.mma_async.sync.aligned.m64n128k16.f32." TYPE "." TYPE " {%0, %1, %2, %3, %4, %5, %6, " \
      "%7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, " \
      "%25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, " \
      "%43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, " \
      "%61, %62, %63}, {%64, %65, %66, %67}, %68, p, 1, 1, 1;" \
      "\n}\n" \
      : MUONCHECK_WGMMA_D64(C) \
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(accumulate))

#define MUONCHECK_WGMMA_SS_M64N32K16(TYPE, C) \
  asm volatile( \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n" \
      "wgmma.mma_async.sync.aligned.m64n32k16.f32." TYPE "." TYPE " {%0, %1, %2, %3, %4, %5, %6, " \
      "%7, %8, %9, %10, %11, %12, %13, %14, %15}, %16, %17, p, 1, 1, 0, 0;" \
      "\n}\n" \
      : MUONCHECK_WGMMA_D16(C) \
      : "l"(a), "l"(b), "r"(accumulate))

#define MUONCHECK_WGMMA_SS_M64N64K16(TYPE, C) \
  asm volatile( \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n" \
      "wgmma.mma_async.sync.aligned.m64n64k16.f32." TYPE "." TYPE " {%0, %1, %2, %3, %4, %5, %6, " \
      "%7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, " \
      "%25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, 0, 0;" \
      "\n}\n" \
      : MUONCHECK_WGMMA_D32(C) \
      : "l"(a), "l"(b), "r"(accumulate))

#define MUONCHECK_WGMMA_SS_M64N96K16(TYPE, C) \
  asm volatile( \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %50, 0;\n" \
      "wgmma.mma_async.sync.aligned.m64n96k16.f32." TYPE "." TYPE " {%0, %1, %2, %3, %4, %5, %6, " \
      "%7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, " \
      "%25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, " \
      "%43, %44, %45, %46, %47}, %48, %49, p, 1, 1, 0, 0;" \
      "\n}\n" \
      : MUONCHECK_WGMMA_D48(C) \
      : "l"(a), "l"(b), "r"(accumulate))

#define MUONCHECK_WGMMA_SS_M64N128K16(TYPE, C) \
  asm volatile( \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n" \
      "wgmma.mma_async.sync.aligned.m64n128k16.f32." TYPE "." TYPE " {%0, %1, %2, %3, %4, %5, %6, " \
      "%7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, " \
      "%25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, " \
      "%43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, " \
      "%61, %62, %63}, %64, %65, p, 1, 1, 0, 0;" \
      "\n}\n" \
      : MUONCHECK_WGMMA_D64(C) \
      : "l"(a), "l"(b), "r"(accumulate))

// d (+)= a · B for one k-step of 16, N = kN (64 or 128): a the warp's A fragment, b the
// descriptor of B (16 × kN, MN-major); accumulate 0 overwrites d.
template <class T, int kN>
struct Rs;
// d (+)= A · B for one k-step of 16, both from shared memory, K-major; N = kN (32, 64, 96 or 128).
template <class T, int kN>
struct Ss;
// d = A · B for one k-step of 16, both from shared memory, K-major; N = 32 or 64: the first
// k-step of a product whose d holds nothing live before it.
template <class T, int kN>
struct SsFirst;
// d = a · B for one k-step of 16 (Rs's operands), N = 64: the first k-step of a product.
template <class T, int kN>
struct RsFirst;
#define MUONCHECK_WGMMA_RS(N, T, NAME)                                                                       \
  template <>                                                                                                \
  struct Rs<T, N> {                                                                                          \
    __device__ static __forceinline__ void mma(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t b, int accumulate) { \
      MUONCHECK_WGMMA_RS_M64N##N##K16(NAME, "+f");                                                                 \
    }                                                                                                        \
  };
#define MUONCHECK_WGMMA_SS(N, T, NAME)                                                                   \
  template <>                                                                                            \
  struct Ss<T, N> {                                                                                      \
    __device__ static __forceinline__ void mma(float (&d)[N / 2], uint64_t a, uint64_t b, int accumulate) { \
      MUONCHECK_WGMMA_SS_M64N##N##K16(NAME, "+f");                                                             \
    }                                                                                                    \
  };
#define MUONCHECK_WGMMA_SS_FIRST(N, T, NAME)                                                             \
  template <>                                                                                            \
  struct SsFirst<T, N> {                                                                                 \
    __device__ static __forceinline__ void mma(float (&d)[N / 2], uint64_t a, uint64_t b) {              \
      const int accumulate = 0;                                                                          \
      MUONCHECK_WGMMA_SS_M64N##N##K16(NAME, "=f");                                                       \
    }                                                                                                    \
  };
#define MUONCHECK_WGMMA_RS_FIRST(N, T, NAME)                                                             \
  template <>                                                                                            \
  struct RsFirst<T, N> {                                                                                 \
    __device__ static __forceinline__ void mma(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t b) {  \
      const int accumulate = 0;                                                                          \
      MUONCHECK_WGMMA_RS_M64N##N##K16(NAME, "=f");                                                       \
    }                                                                                                    \
  };
MUONCHECK_WGMMA_RS(64, __nv_bfloat16, "bf16")
MUONCHECK_WGMMA_RS(64, __half, "f16")
MUONCHECK_WGMMA_RS(128, __nv_bfloat16, "bf16")
MUONCHECK_WGMMA_RS(128, __half, "f16")
MUONCHECK_WGMMA_SS(32, __nv_bfloat16, "bf16")
MUONCHECK_WGMMA_SS(32, __half, "f16")
MUONCHECK_WGMMA_SS(64, __nv_bfloat16, "bf16")
MUONCHECK_WGMMA_SS(64, __half, "f16")
MUONCHECK_WGMMA_SS(96, __nv_bfloat16, "bf16")
MUONCHECK_WGMMA_SS(96, __half, "f16")
MUONCHECK_WGMMA_SS(128, __nv_bfloat16, "bf16")
MUONCHECK_WGMMA_SS(128, __half, "f16")
MUONCHECK_WGMMA_SS_FIRST(32, __nv_bfloat16, "bf16")
MUONCHECK_WGMMA_SS_FIRST(32, __half, "f16")
MUONCHECK_WGMMA_SS_FIRST(64, __nv_bfloat16, "bf16")
MUONCHECK_WGMMA_SS_FIRST(64, __half, "f16")
#undef MUONCHECK_WGMMA_SS_FIRST
MUONCHECK_WGMMA_RS_FIRST(64, __nv_bfloat16, "bf16")
MUONCHECK_WGMMA_RS_FIRST(64, __half, "f16")
#undef MUONCHECK_WGMMA_RS_FIRST
#undef MUONCHECK_WGMMA_SS
#undef MUONCHECK_WGMMA_RS

// d = Σ_ks a[ks] · B(16·ks.., col0..): all kRows/16 k-steps of a kRows-row Swizzled128 B at
// shared address b_base, issued as one group (fence, the MMAs, commit); wait before reading d.
template <class T, int kN, int kRows>
__device__ __forceinline__ void issue(float (&d)[kN / 2], const uint32_t (&a)[kRows / 16][4], uint32_t b_base, int col0) {
  fence();
#pragma unroll
  for (int ks = 0; ks < kRows / 16; ++ks) Rs<T, kN>::mma(d, a[ks], mn_major_descriptor<kRows>(b_base, 16 * ks, col0), ks);
  commit();
}

#undef MUONCHECK_WGMMA_SS_M64N128K16
#undef MUONCHECK_WGMMA_SS_M64N96K16
#undef MUONCHECK_WGMMA_SS_M64N64K16
#undef MUONCHECK_WGMMA_SS_M64N32K16
#undef MUONCHECK_WGMMA_RS_M64N128K16
#undef MUONCHECK_WGMMA_RS_M64N64K16
#undef MUONCHECK_WGMMA_D64
#undef MUONCHECK_WGMMA_D48
#undef MUONCHECK_WGMMA_D32
#undef MUONCHECK_WGMMA_D16

}  // namespace muoncheck::impl::cuda::wgmma
