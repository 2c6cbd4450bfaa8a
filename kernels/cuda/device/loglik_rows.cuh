// loglik_rows.cuh: what makes and finishes a row's sum -- the shifted terms
// evaluated directly (cells past the tables, row totals past the row-term
// tables), the write of a finished row or of a panel's partial, and the
// lane-group reductions that add a row's lanes. Device code only.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "../../math/special.hpp"
#include "../loglik_types.cuh"

namespace dirmn {
namespace cuda {
namespace dev {

// Every lane of a warp, for the shuffles.
constexpr unsigned kFullMask = 0xffffffffu;

// lpoch(a, n) - n log A: the shifted term of one cell that is not tabulated.
// Kept out of line: it is rare, and inlining it would cost the hot loops
// registers.
inline __device__ __noinline__ double shifted_term(double a, double n, double log_a_sum) {
  return math::lpoch(a, n) - n * log_a_sum;
}

// lpoch(A, N) - N log A: the row's shifted normaliser.
inline __device__ __noinline__ double shifted_norm(double a_sum, double n, double log_a_sum) {
  return math::lpoch(a_sum, n) - n * log_a_sum;
}

__device__ __forceinline__ double row_term(const SharedAlphaArgs& a, int k, double n) {
  if (n < static_cast<double>(a.row_term_len))
    return __ldg(a.row_term + static_cast<int64_t>(k) * a.row_term_len + static_cast<int64_t>(n));
  const KSums s = a.ksums[k];
  return shifted_norm(s.a, n, s.log_a);
}

// What finishing a row adds to its sum, loaded a chunk ahead of the sum:
// [lcoef] - (lpoch(A, N) - N log A).
struct RowData {
  double adjust = 0.0;
};

// Writes a finished row sum: with one panel the result, sum + adjust where
// adjust = [lcoef] - (lpoch(A, N) - N log A) was resolved ahead; with
// several panels a partial sum.
__device__ __forceinline__ void finish_row(double sum, int64_t row, int k, int panel, int64_t rows,
                                           double adjust, const SharedAlphaArgs& a) {
  if (a.panels > 1) {
    a.partial[(static_cast<int64_t>(panel) * rows + row) * a.k_total + k] = sum;
    return;
  }
  a.out[row * a.out_sr + static_cast<int64_t>(k) * a.out_sk] = sum + adjust;
}

// Sums `v` over the `width` lanes of an aligned lane group (width a power of
// two); every lane of the group ends with the sum.
__device__ __forceinline__ double group_sum(double v, int width) {
  for (int off = width / 2; off > 0; off /= 2) v += __shfl_xor_sync(kFullMask, v, off);
  return v;
}

// Sums N values (a power of two, N <= lanes) over the `lanes` lanes of an
// aligned group at once, by halving: at each of the first log2 N butterfly
// stages a lane keeps half its values and trades the other half with its
// partner, so the group moves N - 1 values per lane in all instead of
// N log2(lanes) for N separate reductions; the remaining stages reduce the
// one value left. Afterwards lane l holds the sum of value
// l / (lanes / N) -- see sum_owner.
template <int N>
struct TransposeSum {
  static __device__ __forceinline__ void run(double* v, int lane, int off) {
    constexpr int H = N / 2;
    const bool upper = (lane & off) != 0;
#pragma unroll
    for (int i = 0; i < H; ++i) {
      const double send = upper ? v[i] : v[i + H];
      const double keep = upper ? v[i + H] : v[i];
      v[i] = keep + __shfl_xor_sync(kFullMask, send, off);
    }
    TransposeSum<H>::run(v, lane, off / 2);
  }
};
template <>
struct TransposeSum<1> {
  static __device__ __forceinline__ void run(double* v, int, int off) {
    for (; off > 0; off /= 2) v[0] += __shfl_xor_sync(kFullMask, v[0], off);
  }
};

// Which of the N values lane `lane` of a group of `lanes` ends up holding
// after TransposeSum, or -1 for the lanes that hold a copy someone else
// writes.
template <int N>
__device__ __forceinline__ int sum_owner(int lane, int lanes) {
  const int span = lanes / N;
  return lane % span == 0 ? lane / span : -1;
}

}  // namespace dev
}  // namespace cuda
}  // namespace dirmn
