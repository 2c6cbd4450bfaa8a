// ingest_dense_kernels.cuh: the kernels that make a table of a caller's
// dense device array (ingest_dense.cu launches them): validation and
// statistics over the strided array, its encoding into compact rows, the
// row statistics of a dense table, and the conversion of compact rows to
// CSR. Device code only, for that one translation unit.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "../ingest_common.cuh"
#include "ingest_kernels.cuh"
#include "loglik_cells.cuh"
#include "loglik_rows.cuh"
#include "../tuning.cuh"

namespace dirmn {
namespace cuda {
namespace {

using namespace ingest;
using namespace ingest_tuning;

// A caller's strided dense array. `col_major` picks the walk: the minor
// index runs along the smaller stride so a warp's reads coalesce.
template <class S>
struct StridedSource {
  const S* data;
  int64_t rows, cols, rs, cs;
  bool col_major;
  __device__ __forceinline__ int64_t minor_n() const { return col_major ? rows : cols; }
  __device__ __forceinline__ int64_t major_n() const { return col_major ? cols : rows; }
};

// Calls f(i, j, x) for every cell, in tiles of kTileMinor x kTileMajor.
template <class S, class F>
__device__ __forceinline__ void for_each_cell(const StridedSource<S>& src, F&& f) {
  const int64_t mn = src.minor_n(), mj = src.major_n();
  const int64_t tiles_minor = ceil_div<int64_t>(mn, kTileMinor);
  const int64_t tiles = tiles_minor * ceil_div<int64_t>(mj, kTileMajor);
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int64_t minor = (tile % tiles_minor) * kTileMinor + threadIdx.x;
    const int64_t m0 = (tile / tiles_minor) * kTileMajor;
    if (minor >= mn) continue;
    for (int64_t m = m0; m < min(m0 + kTileMajor, mj); ++m) {
      const int64_t i = src.col_major ? minor : m;
      const int64_t j = src.col_major ? m : minor;
      f(i, j, static_cast<double>(__ldg(src.data + i * src.rs + j * src.cs)));
    }
  }
}

template <class S>
__global__ void __launch_bounds__(kBlockThreads)
    validate_strided(StridedSource<S> src, bool real_valued, ScanSummary* sum) {
  unsigned long long nnz = 0, max_bits = 0;
  unsigned non_integral = 0;
  for_each_cell(src, [&](int64_t i, int64_t j, double x) {
    if (count_issue(x, real_valued) != kCountOk) {
      const unsigned long long key = src.col_major ? static_cast<unsigned long long>(j * src.rows + i)
                                                   : static_cast<unsigned long long>(i * src.cols + j);
      atomicMin(&sum->problem, key);
      return;
    }
    if (x != 0.0) {
      ++nnz;
      max_bits = max(max_bits, static_cast<unsigned long long>(__double_as_longlong(x)));
      if (x != floor(x)) non_integral = 1;
    }
  });
  publish(sum, nnz, max_bits, non_integral);
}

template <class S, class D>
__global__ void __launch_bounds__(kBlockThreads)
    encode_strided(StridedSource<S> src, D* dst, int64_t pitch) {
  for_each_cell(src, [&](int64_t i, int64_t j, double x) { dst[i * pitch + j] = static_cast<D>(x); });
}

// Row totals and log multinomial coefficients of a row-major table, one warp
// per row (fixed summation order: results do not depend on scheduling).
template <CellType C>
__global__ void __launch_bounds__(kBlockThreads)
    dense_row_stats(const void* values, int64_t pitch, int64_t rows, int64_t cols,
                    double* row_total, double* row_lcoef) {
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * kWarpsPerBlock;
  for (int64_t row = blockIdx.x * static_cast<int64_t>(kWarpsPerBlock) + threadIdx.x / 32;
       row < rows; row += warps) {
    double n_sum = 0.0, lfact = 0.0;
    for (int64_t v = lane; v < cols; v += 32) {
      const double n = dev::load_cell<C>(values, row * pitch + v);
      n_sum += n;
      if (n > 1.0) lfact += lgamma(n + 1.0);
    }
    n_sum = dev::group_sum(n_sum, 32);
    lfact = dev::group_sum(lfact, 32);
    if (lane == 0) {
      row_total[row] = n_sum;
      row_lcoef[row] = lgamma(n_sum + 1.0) - lfact;
    }
  }
}

template <CellType C>
__global__ void __launch_bounds__(kBlockThreads)
    dense_row_nnz(const void* values, int64_t pitch, int64_t rows, int64_t cols, int64_t* row_nnz) {
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * kWarpsPerBlock;
  for (int64_t row = blockIdx.x * static_cast<int64_t>(kWarpsPerBlock) + threadIdx.x / 32;
       row < rows; row += warps) {
    int64_t c = 0;
    for (int64_t v = lane; v < cols; v += 32) c += dev::load_cell<C>(values, row * pitch + v) != 0.0;
    for (int off = 16; off > 0; off /= 2) c += __shfl_xor_sync(dev::kFullMask, c, off);
    if (lane == 0) row_nnz[row] = c;
  }
}

// Dense compact -> CSR, one warp per row; a ballot keeps columns in order.
template <CellType C, class D, class I>
__global__ void __launch_bounds__(kBlockThreads)
    dense_to_csr(const void* values, int64_t pitch, int64_t rows, int64_t cols,
                 const int64_t* row_ptr, void* cols_out, void* vals_out) {
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * kWarpsPerBlock;
  for (int64_t row = blockIdx.x * static_cast<int64_t>(kWarpsPerBlock) + threadIdx.x / 32;
       row < rows; row += warps) {
    int64_t slot = row_ptr[row];
    for (int64_t v0 = 0; v0 < cols; v0 += 32) {
      const int64_t v = v0 + lane;
      const double x = v < cols ? dev::load_cell<C>(values, row * pitch + v) : 0.0;
      const unsigned mask = __ballot_sync(dev::kFullMask, x != 0.0);
      if (x != 0.0) put_entry<D, I>(slot + __popc(mask & ((1u << lane) - 1u)), v, x, cols_out, vals_out);
      slot += __popc(mask);
    }
  }
}

}  // namespace
}  // namespace cuda
}  // namespace dirmn
