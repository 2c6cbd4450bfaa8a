// tensor_mma.cuh: what the two int8 tensor-core kernels share (the M step's
// histograms, tensor_histogram_kernels.cuh, and the likelihood of several
// parameter vectors, tensor_loglik_kernels.cuh): the m16n8k32 MMA, the
// asynchronous copies that stage their operands, and the byte-wise
// threshold test both form their 0/1 operand with.
//
// Fragments of mma.m16n8k32 (u8): lane (g, t) of a warp, g = lane / 4 and
// t = lane % 4, holds
//   A (16 x 32, row-major): rows g and g + 8, columns 4t..4t+3 and 16+4t..+3
//                           as a[0] = (g, 4t..), a[1] = (g + 8, 4t..),
//                           a[2] = (g, 16+4t..), a[3] = (g + 8, 16+4t..);
//   B (32 x 8, col-major):  column g, rows 4t..4t+3 (b0) and 16+4t..+3 (b1);
//   C (16 x 8, int32):      rows g (c[0], c[1]) and g + 8 (c[2], c[3]),
//                           columns 2t (c[0], c[2]) and 2t + 1 (c[1], c[3]).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace dirmn {
namespace cuda {
namespace tensor {

// The architecture from which mma.m16n8k32 on 8-bit integers and cp.async
// exist, as __CUDA_ARCH__ (a macro: the preprocessor tests it) and as
// cudaFuncAttributes::ptxVersion gives it.
#define DIRMN_TENSOR_MIN_CUDA_ARCH 800
constexpr int kTensorMinArch = DIRMN_TENSOR_MIN_CUDA_ARCH / 10;
constexpr int kWarpLanes = 32;
constexpr int kQuarters = 4;  // lane % 4: the quarter of the k dimension a lane holds
constexpr int kCopyBytes = 16;  // one cp.async

// A threshold test's true bytes are this value (bit 4), so counts below it
// can be compared byte-wise without carries.
constexpr uint32_t kIndicatorValue = 16;
constexpr uint32_t kEveryByte = 0x01010101u;

// Bytes of x4 that are >= m become 16, the others 0, where bias4 holds
// 16 - m in each byte (counts and m below 16): bit 4 of x + (16 - m), which
// stays below 32 (no carries between bytes).
__device__ __forceinline__ uint32_t at_least(uint32_t x4, uint32_t bias4) {
  return (x4 + bias4) & (kIndicatorValue * kEveryByte);
}

__device__ __forceinline__ void mma_u8(int (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= DIRMN_TENSOR_MIN_CUDA_ARCH
  asm volatile(
      "mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#else
  // Never reached: the host takes these paths only where the kernel's code
  // has the MMA (its ptxVersion); fail loudly if it did not.
  (void)c; (void)a; (void)b0; (void)b1;
  __trap();
#endif
}

// 16 bytes global -> shared, zero-filled past src_bytes.
__device__ __forceinline__ void copy16_async(void* dst, const void* src, int src_bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= DIRMN_TENSOR_MIN_CUDA_ARCH
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(src), "r"(src_bytes) : "memory");
#else
  (void)dst; (void)src; (void)src_bytes;
#endif
}
__device__ __forceinline__ void copy_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= DIRMN_TENSOR_MIN_CUDA_ARCH
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
template <int N>
__device__ __forceinline__ void copy_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= DIRMN_TENSOR_MIN_CUDA_ARCH
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

}  // namespace tensor
}  // namespace cuda
}  // namespace dirmn
