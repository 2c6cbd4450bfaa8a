// loglik_rowwise_kernels.cuh: the kernels of row-wise alpha (a parameter
// vector per row). There is no reuse across rows, so every nonzero cell is
// one lpoch in double. One warp per row; A_b is summed over all columns.
// Device code only; loglik_dense.cu and loglik_csr.cu launch them.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "../../math/special.hpp"
#include "loglik_cells.cuh"
#include "loglik_rows.cuh"
#include "../loglik_types.cuh"

namespace dirmn {
namespace cuda {
namespace dev {

__device__ __forceinline__ void rowwise_finish(double s, double a_sum, int64_t row,
                                               const double* row_total, const double* row_lcoef,
                                               const RowwiseArgs& a) {
  double v = s - math::lpoch(a_sum, row_total[row]);
  if (a.full) v += row_lcoef[row];
  a.out[row * a.out_sr] = v;
}

template <CellType C>
__global__ void __launch_bounds__(kBlockThreads) rowwise_dense(DenseView view, RowwiseArgs a) {
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * kWarpsPerBlock;
  for (int64_t row = blockIdx.x * static_cast<int64_t>(kWarpsPerBlock) + threadIdx.x / 32;
       row < view.rows; row += warps) {
    const double* alpha = a.alpha + row * view.cols;
    double s = 0.0, a_sum = 0.0;
    for (int64_t v = lane; v < view.cols; v += 32) {
      const double al = __ldg(alpha + v);
      a_sum += al;
      const double n = load_cell<C>(view.values, row * view.pitch + v);
      if (n != 0.0) s += math::lpoch(al, n);
    }
    s = group_sum(s, 32);
    a_sum = group_sum(a_sum, 32);
    if (lane == 0) rowwise_finish(s, a_sum, row, view.row_total, view.row_lcoef, a);
  }
}

template <CellType C, bool kCol16>
__global__ void __launch_bounds__(kBlockThreads) rowwise_csr(CsrView view, RowwiseArgs a) {
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * kWarpsPerBlock;
  for (int64_t row = blockIdx.x * static_cast<int64_t>(kWarpsPerBlock) + threadIdx.x / 32;
       row < view.rows; row += warps) {
    const double* alpha = a.alpha + row * view.cols;
    double s = 0.0, a_sum = 0.0;
    for (int64_t v = lane; v < view.cols; v += 32) a_sum += __ldg(alpha + v);
    const int64_t end = __ldg(view.row_ptr + row + 1);
    for (int64_t e = __ldg(view.row_ptr + row) + lane; e < end; e += 32) {
      const int64_t col = load_col<kCol16>(view.col, e);
      s += math::lpoch(__ldg(alpha + col), load_cell<C>(view.values, e));
    }
    s = group_sum(s, 32);
    a_sum = group_sum(a_sum, 32);
    if (lane == 0) rowwise_finish(s, a_sum, row, view.row_total, view.row_lcoef, a);
  }
}

}  // namespace dev
}  // namespace cuda
}  // namespace dirmn
