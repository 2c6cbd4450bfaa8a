// ingest_csr_kernels.cuh: the kernels that make a table of a caller's device
// CSR arrays (ingest_csr.cu launches them): validation of the pointers and
// entries, the statistics of sorted rows, and the conversions of sorted
// rows to compact CSR or dense rows. Device code only, for that one
// translation unit.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "../ingest_common.cuh"
#include "ingest_kernels.cuh"
#include "loglik_rows.cuh"
#include "../tuning.cuh"

namespace dirmn {
namespace cuda {
namespace {

using namespace ingest;

// Checks a caller's CSR pointer array: key 0 for ptr[0] != 0, o + 1 for a
// step ptr[o] -> ptr[o + 1] that goes back or past nnz, rows + 1 for
// ptr[rows] != nnz -- the order the host path checks in.
template <class P>
__global__ void validate_ptr(const P* ptr, int64_t rows, int64_t nnz, ScanSummary* sum) {
  for (int64_t o = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; o <= rows;
       o += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t a = static_cast<int64_t>(ptr[o]);
    if (o == 0 && a != 0) atomicMin(&sum->problem, 0ull);
    if (o < rows) {
      const int64_t b = static_cast<int64_t>(ptr[o + 1]);
      if (b < a || b > nnz) atomicMin(&sum->problem, static_cast<unsigned long long>(o + 1));
    } else if (a != nnz) {
      atomicMin(&sum->problem, static_cast<unsigned long long>(rows + 1));
    }
  }
}

// Checks every entry (index in range: key 2e; count valid: key 2e + 1, so
// an entry's index is reported before its value, as on the host), converts
// it to (uint32 column, double count) and notes whether columns ascend.
template <class P, class I, class S>
__global__ void __launch_bounds__(kBlockThreads)
    validate_entries(const P* ptr, const I* idx, const S* val, int64_t rows, int64_t cols,
                     bool real_valued, uint32_t* keys, double* counts, ScanSummary* sum) {
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * kWarpsPerBlock;
  unsigned unsorted = 0;
  for (int64_t row = blockIdx.x * static_cast<int64_t>(kWarpsPerBlock) + threadIdx.x / 32;
       row < rows; row += warps) {
    const int64_t begin = static_cast<int64_t>(ptr[row]), end = static_cast<int64_t>(ptr[row + 1]);
    for (int64_t e = begin + lane; e < end; e += 32) {
      const int64_t c = static_cast<int64_t>(idx[e]);
      if (c < 0 || c >= cols) {
        atomicMin(&sum->problem, static_cast<unsigned long long>(2 * e));
        continue;
      }
      const double x = static_cast<double>(val[e]);
      if (count_issue(x, real_valued) != kCountOk)
        atomicMin(&sum->problem, static_cast<unsigned long long>(2 * e + 1));
      keys[e] = static_cast<uint32_t>(c);
      counts[e] = x;
      if (e > begin && static_cast<int64_t>(idx[e - 1]) > c) unsorted = 1;
    }
  }
  unsorted = warp_or(unsorted);
  if (lane == 0 && unsorted) atomicOr(&sum->unsorted, 1u);
}

// Over sorted rows: finds repeated columns (key row * cols + col), and
// gathers the statistics (explicit zeros are not nonzeros).
__global__ void __launch_bounds__(kBlockThreads)
    csr_row_stats(const int64_t* begin_ptr, const int64_t* end_ptr, const uint32_t* keys, const double* counts, int64_t rows, int64_t cols,
                  double* row_total, double* row_lcoef, int64_t* row_nnz, ScanSummary* sum) {
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * kWarpsPerBlock;
  unsigned long long nnz = 0, max_bits = 0;
  unsigned non_integral = 0;
  for (int64_t row = blockIdx.x * static_cast<int64_t>(kWarpsPerBlock) + threadIdx.x / 32;
       row < rows; row += warps) {
    const int64_t begin = begin_ptr[row], end = end_ptr[row];
    double n_sum = 0.0, lfact = 0.0;
    int64_t c = 0;
    for (int64_t e = begin + lane; e < end; e += 32) {
      if (e > begin && keys[e] == keys[e - 1])
        atomicMin(&sum->problem, static_cast<unsigned long long>(row * cols + keys[e]));
      const double x = counts[e];
      if (x == 0.0) continue;
      ++c;
      n_sum += x;
      if (x > 1.0) lfact += lgamma(x + 1.0);
      max_bits = max(max_bits, static_cast<unsigned long long>(__double_as_longlong(x)));
      if (x != floor(x)) non_integral = 1;
    }
    n_sum = dev::group_sum(n_sum, 32);
    lfact = dev::group_sum(lfact, 32);
    for (int off = 16; off > 0; off /= 2) c += __shfl_xor_sync(dev::kFullMask, c, off);
    if (lane == 0) {
      row_total[row] = n_sum;
      row_lcoef[row] = lgamma(n_sum + 1.0) - lfact;
      row_nnz[row] = c;
    }
    nnz += lane == 0 ? static_cast<unsigned long long>(c) : 0ull;
  }
  publish(sum, nnz, max_bits, non_integral);
}

// Sorted CSR (with explicit zeros) -> compact CSR, one warp per row.
template <class D, class I>
__global__ void __launch_bounds__(kBlockThreads)
    compact_csr(const int64_t* begin_ptr, const int64_t* end_ptr, const uint32_t* keys,
                const double* counts, int64_t rows, const int64_t* row_ptr, void* cols_out,
                void* vals_out) {
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * kWarpsPerBlock;
  for (int64_t row = blockIdx.x * static_cast<int64_t>(kWarpsPerBlock) + threadIdx.x / 32;
       row < rows; row += warps) {
    const int64_t begin = begin_ptr[row], end = end_ptr[row];
    int64_t slot = row_ptr[row];
    for (int64_t e0 = begin; e0 < end; e0 += 32) {
      const int64_t e = e0 + lane;
      const double x = e < end ? counts[e] : 0.0;
      const unsigned mask = __ballot_sync(dev::kFullMask, x != 0.0);
      if (x != 0.0) put_entry<D, I>(slot + __popc(mask & ((1u << lane) - 1u)), keys[e], x, cols_out, vals_out);
      slot += __popc(mask);
    }
  }
}

// Sorted CSR -> dense compact rows (zeroed beforehand).
template <class D>
__global__ void __launch_bounds__(kBlockThreads)
    scatter_dense(const int64_t* begin_ptr, const int64_t* end_ptr, const uint32_t* keys,
                  const double* counts, int64_t rows, D* dst, int64_t pitch) {
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * kWarpsPerBlock;
  for (int64_t row = blockIdx.x * static_cast<int64_t>(kWarpsPerBlock) + threadIdx.x / 32;
       row < rows; row += warps)
    for (int64_t e = begin_ptr[row] + lane; e < end_ptr[row]; e += 32)
      dst[row * pitch + keys[e]] = static_cast<D>(counts[e]);
}

template <class P>
__global__ void widen_ptr(const P* in, int64_t n, int64_t* out) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    out[i] = static_cast<int64_t>(in[i]);
}

}  // namespace
}  // namespace cuda
}  // namespace dirmn
