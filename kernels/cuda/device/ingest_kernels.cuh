// ingest_kernels.cuh: what the ingest kernels share -- the warp reductions
// of their statistics and the summary they fold them into, the write of a
// compact CSR entry -- and the kernel of the panel offsets that finish a
// CSR table of several panels (ingest_common.cu launches it). Device code
// only.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "../ingest_common.cuh"
#include "loglik_cells.cuh"
#include "loglik_rows.cuh"
#include "../tuning.cuh"

namespace dirmn {
namespace cuda {
namespace ingest {

__device__ __forceinline__ unsigned long long warp_sum_u64(unsigned long long v) {
  for (int off = 16; off > 0; off /= 2) v += __shfl_xor_sync(dev::kFullMask, v, off);
  return v;
}
__device__ __forceinline__ unsigned long long warp_max_u64(unsigned long long v) {
  for (int off = 16; off > 0; off /= 2) v = max(v, __shfl_xor_sync(dev::kFullMask, v, off));
  return v;
}
__device__ __forceinline__ unsigned warp_or(unsigned v) {
  return __any_sync(dev::kFullMask, v != 0u) ? 1u : 0u;
}

// Folds one lane's statistics into the summary: one atomic per warp.
__device__ __forceinline__ void publish(ScanSummary* s, unsigned long long nnz,
                                        unsigned long long max_bits, unsigned non_integral) {
  nnz = warp_sum_u64(nnz);
  max_bits = warp_max_u64(max_bits);
  non_integral = warp_or(non_integral);
  if ((threadIdx.x & 31) == 0) {
    if (nnz) atomicAdd(&s->nnz, nnz);
    if (max_bits) atomicMax(&s->max_bits, max_bits);
    if (non_integral) atomicOr(&s->non_integral, 1u);
  }
}

// Writes one nonzero into a compact CSR slot.
template <class D, class I>
__device__ __forceinline__ void put_entry(int64_t slot, int64_t col, double x, void* cols_out,
                                          void* vals_out) {
  static_cast<I*>(cols_out)[slot] = static_cast<I>(col);
  static_cast<D*>(vals_out)[slot] = static_cast<D>(x);
}

}  // namespace ingest

namespace {

// Per row and panel, the offset (from the row's start) of its first entry at
// or past the panel's first column. One warp per row; each entry fills the
// panels that start between its predecessor's column and its own.
template <bool kCol16>
__global__ void __launch_bounds__(kBlockThreads)
    build_panel_ptr(const int64_t* row_ptr, const void* col, int64_t rows, int64_t panel_cols,
                    int panels, uint32_t* panel_ptr) {
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * kWarpsPerBlock;
  for (int64_t row = blockIdx.x * static_cast<int64_t>(kWarpsPerBlock) + threadIdx.x / 32;
       row < rows; row += warps) {
    const int64_t begin = row_ptr[row], end = row_ptr[row + 1];
    uint32_t* pp = panel_ptr + row * (panels + 1);
    for (int64_t e = begin + lane; e <= end; e += 32) {
      const int64_t lo = e == begin ? -1 : dev::load_col<kCol16>(col, e - 1) / panel_cols;
      const int64_t hi = e == end ? panels : dev::load_col<kCol16>(col, e) / panel_cols;
      for (int64_t p = lo + 1; p <= hi; ++p) pp[p] = static_cast<uint32_t>(e - begin);
    }
  }
}

}  // namespace
}  // namespace cuda
}  // namespace dirmn
