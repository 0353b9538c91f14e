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

// The accumulator operands of a wgmma with N/2 of them per thread, each list the one before and 16 more.
#define MUONCHECK_WGMMA_D16 \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), \
      "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), \
      "+f"(d[14]), "+f"(d[15])
#define MUONCHECK_WGMMA_D32 \
  MUONCHECK_WGMMA_D16, "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), \
      "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), \
      "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
// The same as outputs only (a first product, which overwrites d: no read of d before it).
#define MUONCHECK_WGMMA_O16 \
  "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3]), "=f"(d[4]), "=f"(d[5]), "=f"(d[6]), \
      "=f"(d[7]), "=f"(d[8]), "=f"(d[9]), "=f"(d[10]), "=f"(d[11]), "=f"(d[12]), "=f"(d[13]), \
      "=f"(d[14]), "=f"(d[15])
#define MUONCHECK_WGMMA_O32 \
  MUONCHECK_WGMMA_O16, "=f"(d[16]), "=f"(d[17]), "=f"(d[18]), "=f"(d[19]), "=f"(d[20]), "=f"(d[21]), \
      "=f"(d[22]), "=f"(d[23]), "=f"(d[24]), "=f"(d[25]), "=f"(d[26]), "=f"(d[27]), \
      "=f"(d[28]), "=f"(d[29]), "=f"(d[30]), "=f"(d[31])
#define MUONCHECK_WGMMA_D48 \
  MUONCHECK_WGMMA_D32, "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), \
      "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), \
      "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47])
#define MUONCHECK_WGMMA_D64 \
  MUONCHECK_WGMMA_D48, "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), \
      "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), \
      "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])

#define MUONCHECK_WGMMA_RS_M64N64K16(TYPE) \
  asm volatile( \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n" \
      "wgmma.mma_async.sync.aligned.m64n64k16.f32." TYPE "." TYPE " {%0, %1, %2, %3, %4, %5, %6, " \
      "%7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, " \
      "%25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, p, 1, 1, 1;" \
      "\n}\n" \
      : MUONCHECK_WGMMA_D32 \
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(accumulate))

#define MUONCHECK_WGMMA_RS_M64N128K16(TYPE) \
  asm volatile( \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n" \
      "wgmma.mma_async.sync.aligned.m64n128k16.f32." TYPE "." TYPE " {%0, %1, %2, %3, %4, %5, %6, " \
      "%7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, " \
      "%25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, " \
      "%43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, " \
      "%61, %62, %63}, {%64, %65, %66, %67}, %68, p, 1, 1, 1;" \
      "\n}\n" \
      : MUONCHECK_WGMMA_D64 \
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(accumulate))

#define MUONCHECK_WGMMA_SS_M64N32K16(TYPE) \
  asm volatile( \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n" \
      "wgmma.mma_async.sync.aligned.m64n32k16.f32." TYPE "." TYPE " {%0, %1, %2, %3, %4, %5, %6, " \
      "%7, %8, %9, %10, %11, %12, %13, %14, %15}, %16, %17, p, 1, 1, 0, 0;" \
      "\n}\n" \
      : MUONCHECK_WGMMA_D16 \
      : "l"(a), "l"(b), "r"(accumulate))

#define MUONCHECK_WGMMA_SS_M64N64K16(TYPE) \
  asm volatile( \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n" \
      "wgmma.mma_async.sync.aligned.m64n64k16.f32." TYPE "." TYPE " {%0, %1, %2, %3, %4, %5, %6, " \
      "%7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, " \
      "%25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, 0, 0;" \
      "\n}\n" \
      : MUONCHECK_WGMMA_D32 \
      : "l"(a), "l"(b), "r"(accumulate))

#define MUONCHECK_WGMMA_RS_M64N64K16_FIRST(TYPE) \
  asm volatile( \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n" \
      "wgmma.mma_async.sync.aligned.m64n64k16.f32." TYPE "." TYPE " {%0, %1, %2, %3, %4, %5, %6, " \
      "%7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, " \
      "%25, %26, %27, %28, %29, %30, %31}, {%32, %33, %34, %35}, %36, p, 1, 1, 1;" \
      "\n}\n" \
      : MUONCHECK_WGMMA_O32 \
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(accumulate))
// The first k-step of a product (d overwritten): the streamed kernel's products.
#define MUONCHECK_WGMMA_SS_M64N32K16_FIRST(TYPE) \
  asm volatile( \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n" \
      "wgmma.mma_async.sync.aligned.m64n32k16.f32." TYPE "." TYPE " {%0, %1, %2, %3, %4, %5, %6, " \
      "%7, %8, %9, %10, %11, %12, %13, %14, %15}, %16, %17, p, 1, 1, 0, 0;" \
      "\n}\n" \
      : MUONCHECK_WGMMA_O16 \
      : "l"(a), "l"(b), "r"(accumulate))

#define MUONCHECK_WGMMA_SS_M64N64K16_FIRST(TYPE) \
  asm volatile( \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n" \
      "wgmma.mma_async.sync.aligned.m64n64k16.f32." TYPE "." TYPE " {%0, %1, %2, %3, %4, %5, %6, " \
      "%7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, " \
      "%25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, 0, 0;" \
      "\n}\n" \
      : MUONCHECK_WGMMA_O32 \
      : "l"(a), "l"(b), "r"(accumulate))

#define MUONCHECK_WGMMA_SS_M64N96K16(TYPE) \
  asm volatile( \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %50, 0;\n" \
      "wgmma.mma_async.sync.aligned.m64n96k16.f32." TYPE "." TYPE " {%0, %1, %2, %3, %4, %5, %6, " \
      "%7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, " \
      "%25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, " \
      "%43, %44, %45, %46, %47}, %48, %49, p, 1, 1, 0, 0;" \
      "\n}\n" \
      : MUONCHECK_WGMMA_D48 \
      : "l"(a), "l"(b), "r"(accumulate))

#define MUONCHECK_WGMMA_SS_M64N128K16(TYPE) \
  asm volatile( \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n" \
      "wgmma.mma_async.sync.aligned.m64n128k16.f32." TYPE "." TYPE " {%0, %1, %2, %3, %4, %5, %6, " \
      "%7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, " \
      "%25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, " \
      "%43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, " \
      "%61, %62, %63}, %64, %65, p, 1, 1, 0, 0;" \
      "\n}\n" \
      : MUONCHECK_WGMMA_D64 \
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
      MUONCHECK_WGMMA_RS_M64N##N##K16(NAME);                                                                 \
    }                                                                                                        \
  };
#define MUONCHECK_WGMMA_SS(N, T, NAME)                                                                   \
  template <>                                                                                            \
  struct Ss<T, N> {                                                                                      \
    __device__ static __forceinline__ void mma(float (&d)[N / 2], uint64_t a, uint64_t b, int accumulate) { \
      MUONCHECK_WGMMA_SS_M64N##N##K16(NAME);                                                             \
    }                                                                                                    \
  };
#define MUONCHECK_WGMMA_SS_FIRST(N, T, NAME)                                                             \
  template <>                                                                                            \
  struct SsFirst<T, N> {                                                                                 \
    __device__ static __forceinline__ void mma(float (&d)[N / 2], uint64_t a, uint64_t b) {              \
      const int accumulate = 0;                                                                          \
      MUONCHECK_WGMMA_SS_M64N##N##K16_FIRST(NAME);                                                       \
    }                                                                                                    \
  };
#define MUONCHECK_WGMMA_RS_FIRST(N, T, NAME)                                                             \
  template <>                                                                                            \
  struct RsFirst<T, N> {                                                                                 \
    __device__ static __forceinline__ void mma(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t b) {  \
      const int accumulate = 0;                                                                          \
      MUONCHECK_WGMMA_RS_M64N##N##K16_FIRST(NAME);                                                       \
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
#undef MUONCHECK_WGMMA_SS_M64N64K16_FIRST
#undef MUONCHECK_WGMMA_SS_M64N32K16_FIRST
#undef MUONCHECK_WGMMA_RS_M64N64K16_FIRST
#undef MUONCHECK_WGMMA_SS_M64N32K16
#undef MUONCHECK_WGMMA_RS_M64N128K16
#undef MUONCHECK_WGMMA_RS_M64N64K16
#undef MUONCHECK_WGMMA_D64
#undef MUONCHECK_WGMMA_D48
#undef MUONCHECK_WGMMA_D32
#undef MUONCHECK_WGMMA_D16
#undef MUONCHECK_WGMMA_O32
#undef MUONCHECK_WGMMA_O16

}  // namespace muoncheck::impl::cuda::wgmma
