// wgmma.cuh: Hopper's warpgroup MMA (wgmma.mma_async) on 8-bit integers,
// for the tensor-core kernels' sm_90a code (tensor_loglik_wg.cuh,
// tensor_histogram_wg.cuh). Hopper's tensor cores reach their full rate
// only through it: mma.sync m16n8k32 (tensor_mma.cuh), issued warp by warp
// with both operands in registers, leaves them idle much of the time, and
// a wider N (up to 64 here) brings wgmma closer to the peak.
//
// Conventions (PTX ISA, "Asynchronous Warpgroup Level Matrix Multiply"):
// - A warpgroup (4 consecutive warps, 128 threads) computes
//   D (64 x N, int32) += A (64 x 32) B (32 x N).
// - A comes from registers, laid out per warp as mma.m16n8k32's A fragment
//   (tensor_mma.cuh): warp w of the group holds rows 16 w .. 16 w + 15.
// - B comes from shared memory through a descriptor, "K-major" (the only
//   layout for 8-bit types): 8 x 16-byte core matrices, 8 N-rows of 16
//   K-bytes each, 128 contiguous bytes; core_offset() gives the layout used
//   here.
// - D: thread (g, t) of warp w holds, for every 8-column block i,
//   d[4 i + 0, 1] = row 16 w + g, columns 8 i + 2 t, + 1 and
//   d[4 i + 2, 3] = row 16 w + g + 8, the same columns.
// The instruction runs asynchronously: its A registers and accumulators may
// not be touched until a wgmma_wait covers it, and registers written by
// other instructions need a wgmma_fence before a wgmma reads them. Shared
// memory written through the generic proxy (stores, cp.async) needs
// fence_async_smem by the writing threads, then a barrier, before a wgmma
// reads it.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

// Only sm_90a code has wgmma. Elsewhere wgmma_u8 compiles to a trap and the
// fences and waits to nothing: the host never launches a kernel that uses
// them there (it asks wgmma_available() first).
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define DIRMN_HAS_WGMMA 1
#else
#define DIRMN_HAS_WGMMA 0
#endif

namespace dirmn {
namespace cuda {
namespace wgmma {

constexpr int kGroupThreads = 128;  // a warpgroup
constexpr int kGroupWarps = 4;
constexpr int kM = 64;              // rows of D per instruction
constexpr int kWarpRows = kM / kGroupWarps;  // a warp's rows of A and D: g and g + kWarpRows / 2
constexpr int kK = 32;              // k of one 8-bit instruction, in bytes
constexpr int kCoreRows = 8;        // a core matrix: 8 rows of 16 bytes
constexpr int kCoreRowBytes = 16;
constexpr int kCoreBytes = kCoreRows * kCoreRowBytes;

// Byte of B(k, n) (k < 32, n < N) in a K-major tile of N columns: core
// matrices (k / 16, n / 8) at (k / 16) N 16 + (n / 8) 128. Neighbours in
// K are then N 16 bytes apart (the descriptor's leading offset), in N 128
// (its stride offset).
__host__ __device__ constexpr int core_offset(int k, int n, int cols) {
  return (k / kCoreRowBytes) * cols * kCoreRowBytes + (n / kCoreRows) * kCoreBytes + (n % kCoreRows) * kCoreRowBytes +
         k % kCoreRowBytes;
}
__host__ __device__ constexpr int leading_offset(int cols) { return cols * kCoreRowBytes; }
constexpr int kStrideOffset = kCoreBytes;

// The 64-bit shared-memory descriptor: the address, leading and stride
// byte offsets, each in 16-byte units in a 14-bit field. The base-offset
// and layout fields stay 0: no swizzle.
constexpr int kDescUnitShift = 4;
constexpr uint32_t kDescFieldMask = (1u << 14) - 1;
constexpr int kDescLeadingShift = 16;
constexpr int kDescStrideShift = 32;
__device__ __forceinline__ uint64_t smem_desc(const void* p, uint32_t leading, uint32_t stride) {
  const uint32_t addr = static_cast<uint32_t>(__cvta_generic_to_shared(p));
  const auto field = [](uint32_t bytes) { return static_cast<uint64_t>((bytes >> kDescUnitShift) & kDescFieldMask); };
  return field(addr) | (field(leading) << kDescLeadingShift) | (field(stride) << kDescStrideShift);
}

__device__ __forceinline__ void wgmma_fence() {
#if DIRMN_HAS_WGMMA
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void wgmma_commit() {
#if DIRMN_HAS_WGMMA
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
}
template <int N>
__device__ __forceinline__ void wgmma_wait() {
#if DIRMN_HAS_WGMMA
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
#endif
}
// Makes this thread's generic-proxy writes to shared memory visible to
// wgmma's reads (the async proxy).
__device__ __forceinline__ void fence_async_smem() {
#if DIRMN_HAS_WGMMA
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}

// scale-d: D = A B + D (0 would drop D; the accumulators start at 0 instead).
constexpr int kAccumulate = 1;

// Keeps the compiler from moving reads or writes of these registers across
// this point: after a wgmma_wait (the accumulators' reads) and before the
// first wgmma (their initial values).
template <int R>
__device__ __forceinline__ void fence_operands(int (&d)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+r"(d[i])::"memory");
}

__device__ __forceinline__ void wgmma_u8(int (&d)[16], const uint32_t (&a)[4], uint64_t b_desc) {
#if DIRMN_HAS_WGMMA
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %21, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n32k32.s32.u8.u8 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, "
      "{%16, %17, %18, %19}, %20, p;\n}\n"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]),
        "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_desc), "r"(kAccumulate));
#else
  (void)d; (void)a; (void)b_desc;
  __trap();
#endif
}

__device__ __forceinline__ void wgmma_u8(int (&d)[24], const uint32_t (&a)[4], uint64_t b_desc) {
#if DIRMN_HAS_WGMMA
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %29, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n48k32.s32.u8.u8 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23}, "
      "{%24, %25, %26, %27}, %28, p;\n}\n"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]),
        "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15]),
        "+r"(d[16]), "+r"(d[17]), "+r"(d[18]), "+r"(d[19]), "+r"(d[20]), "+r"(d[21]), "+r"(d[22]), "+r"(d[23])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_desc), "r"(kAccumulate));
#else
  (void)d; (void)a; (void)b_desc;
  __trap();
#endif
}

__device__ __forceinline__ void wgmma_u8(int (&d)[32], const uint32_t (&a)[4], uint64_t b_desc) {
#if DIRMN_HAS_WGMMA
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k32.s32.u8.u8 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
      "{%32, %33, %34, %35}, %36, p;\n}\n"
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]),
        "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15]),
        "+r"(d[16]), "+r"(d[17]), "+r"(d[18]), "+r"(d[19]), "+r"(d[20]), "+r"(d[21]), "+r"(d[22]), "+r"(d[23]),
        "+r"(d[24]), "+r"(d[25]), "+r"(d[26]), "+r"(d[27]), "+r"(d[28]), "+r"(d[29]), "+r"(d[30]), "+r"(d[31])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b_desc), "r"(kAccumulate));
#else
  (void)d; (void)a; (void)b_desc;
  __trap();
#endif
}

}  // namespace wgmma
}  // namespace cuda
}  // namespace dirmn
