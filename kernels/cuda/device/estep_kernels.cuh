// estep_kernels.cuh: the kernels of a DM mixture's E step on the device.
// From the rows x k full log-likelihoods L and the log mixing weights, per
// row b:
//   x_j = L_bj + log pi_j,  m = max_j x_j,  e_j = exp(x_j - m),  s = sum_j e_j,
//   z_bj = e_j / s,  lse_b = m + log s,  w_bj = r_b z_bj,
// exactly as the host E step forms them (the max and the sum over j in
// component order), so both backends give the same responsibilities. Sums
// over rows are made in a fixed order (a fixed map of rows to blocks and
// threads, and a fixed order within a block), so they repeat bit for bit
// from run to run.
//
// Up to kEmGroupMaxK components, estep_groups does it all in one pass: a
// group of lanes per row, a lane per component (coalesced reads and writes,
// one exp per responsibility), the likelihood kernel's panels (up to
// kEmFusedPanels of them) finished on the way in, and each block's column
// sums on the way out. Beyond kEmGroupMaxK components the log-likelihoods
// are finished first and estep_rows and reduce_columns take a row per
// thread.
//
// Device code only, for estep.cu (anonymous namespace: one unit includes it).
#pragma once

#include <cmath>

#include "../../math/logsumexp.hpp"
#include "../device_table.cuh"
#include "loglik_rows.cuh"

namespace dirmn {
namespace cuda {
namespace {

constexpr int kReduceThreads = kBlockThreads;
constexpr int kWarpLanes = 32;
constexpr unsigned kFullMask = 0xffffffffu;
static_assert(kEmGroupMaxK <= kWarpLanes, "a row's components fit in a warp");
static_assert(kReduceThreads % kWarpLanes == 0, "whole warps");


// The maximum of v over the P lanes of an aligned group (any order gives
// the same maximum, so a butterfly).
template <int P>
__device__ __forceinline__ double group_max(double v) {
#pragma unroll
  for (int d = P / 2; d >= 1; d /= 2) v = fmax(v, __shfl_xor_sync(kFullMask, v, d));
  return v;
}

// Block q takes rows q * kEmReduceRows .. + kEmReduceRows - 1; lane l of
// warp w takes component j = l % P of rows w * (32 / P) + l / P, stepping by
// the block's rows per step. Each lane keeps its component's sums; the
// block's partial of column c then adds them over the block's lanes of
// that component in thread order. P (lanes per row) is a template
// argument so that the gathers over a row's lanes unroll.
template <int P>
__global__ void __launch_bounds__(kReduceThreads)
    estep_groups(EmDevice em, const double* __restrict__ log_pi) {
  constexpr int lanes = P;
  __shared__ double s_z[kReduceThreads], s_w[kReduceThreads], s_wmax[kReduceThreads];
  __shared__ double s_lse[kReduceThreads], s_change[kReduceThreads];
  const int lane = static_cast<int>(threadIdx.x) % kWarpLanes, warp = static_cast<int>(threadIdx.x) / kWarpLanes;
  const int j = lane % lanes, base = lane - j;
  const int64_t k = em.k, rows = em.rows;
  const bool on = j < k;
  const int per_warp = kWarpLanes / lanes;
  const int64_t step = static_cast<int64_t>(kReduceThreads / kWarpLanes) * per_warp;
  const int64_t r0 = static_cast<int64_t>(blockIdx.x) * kEmReduceRows;
  const int64_t r1 = min(rows, r0 + kEmReduceRows);
  const double lp = on ? log_pi[j] : 0.0;
  const SharedAlphaArgs& a = em.panel;
  double z_sum = 0.0, w_sum = 0.0, w_max = 0.0, lse_sum = 0.0, change_max = 0.0;
  for (int64_t b0 = r0 + static_cast<int64_t>(warp) * per_warp; b0 < r1; b0 += step) {
    const int64_t b = b0 + lane / lanes;
    const bool row = b < r1;
    const bool cell = row && on;
    double x = -INFINITY;
    if (cell) {
      double l;
      if (em.L != nullptr) {
        l = em.L[b * k + j];
      } else {
        // As launch_finish_panels: the panels in order, then the row's terms.
        // Four loads in flight at a time; the sum keeps panel order.
        double sum = 0.0;
        int p = 0;
        for (; p + 4 <= a.panels; p += 4) {
          const double x0 = a.partial[(p * rows + b) * k + j], x1 = a.partial[((p + 1) * rows + b) * k + j];
          const double x2 = a.partial[((p + 2) * rows + b) * k + j], x3 = a.partial[((p + 3) * rows + b) * k + j];
          sum += x0;
          sum += x1;
          sum += x2;
          sum += x3;
        }
        for (; p < a.panels; ++p) sum += a.partial[(p * rows + b) * k + j];
        l = sum - dev::row_term(a, j, em.row_total[b]);
        if (a.full) l += em.row_lcoef[b];
      }
      x = l + lp;
    }
    // The row's max and sum in component order, as the host forms them
    // (lanes past k add their 0 after the last component: no change).
    const double m = group_max<P>(x);
    const double e = cell ? exp(x - m) : 0.0;
    double s = 0.0;
#pragma unroll
    for (int i = 0; i < P; ++i) s += __shfl_sync(kFullMask, e, base + i);
    const double r = row && em.row_w != nullptr ? em.row_w[b] : 1.0;
    double change = 0.0;
    if (cell) {
      const double zj = e / s;
      change = fabs(zj - em.z_old[b * k + j]);
      em.z[b * k + j] = zj;
      const double wj = math::m_step_weight(r, zj);
      em.w[b * k + j] = wj;
      z_sum += zj;
      w_sum += wj;
      w_max = fmax(w_max, wj);
    }
    change = group_max<P>(change);
    if (row && j == 0) {
      const double lse = m + log(s);
      em.aux[b * kEmAux + 0] = r * lse;
      em.aux[b * kEmAux + 1] = change;
      em.aux[b * kEmAux + 2] = lse;
      lse_sum += r * lse;
      change_max = fmax(change_max, change);
    }
  }
  s_z[threadIdx.x] = z_sum;
  s_w[threadIdx.x] = w_sum;
  s_wmax[threadIdx.x] = w_max;
  s_lse[threadIdx.x] = lse_sum;
  s_change[threadIdx.x] = change_max;
  __syncthreads();
  // Column c of em_column's order: its lanes' values in thread order.
  const int64_t c = threadIdx.x;
  if (c >= em_reduced_columns(k)) return;
  const double* src;
  int comp;
  bool take_max;
  if (c < k) {
    src = s_z, comp = static_cast<int>(c), take_max = false;
  } else if (c < 2 * k) {
    src = s_w, comp = static_cast<int>(c - k), take_max = false;
  } else if (c == 2 * k) {
    src = s_lse, comp = 0, take_max = false;
  } else if (c == 2 * k + 1) {
    src = s_change, comp = 0, take_max = true;
  } else {
    src = s_wmax, comp = static_cast<int>(c - 2 * k - 2), take_max = true;
  }
  double v = 0.0;
  for (int t = comp; t < kReduceThreads; t += lanes) v = take_max ? fmax(v, src[t]) : v + src[t];
  em.part[c * gridDim.x + blockIdx.x] = v;
}

__global__ void estep_rows(const double* __restrict__ L, int64_t rows, int k,
                           const double* __restrict__ log_pi, const double* __restrict__ row_w,
                           const double* __restrict__ z_old, double* __restrict__ z,
                           double* __restrict__ w, double* __restrict__ aux) {
  for (int64_t b = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; b < rows;
       b += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const double* l = L + b * k;
    double m = -INFINITY;
    for (int j = 0; j < k; ++j) m = fmax(m, l[j] + log_pi[j]);
    double s = 0.0;
    for (int j = 0; j < k; ++j) s += exp(l[j] + log_pi[j] - m);
    const double r = row_w != nullptr ? row_w[b] : 1.0;
    double change = 0.0;
    for (int j = 0; j < k; ++j) {
      const double zj = exp(l[j] + log_pi[j] - m) / s;
      change = fmax(change, fabs(zj - z_old[b * k + j]));
      z[b * k + j] = zj;
      w[b * k + j] = math::m_step_weight(r, zj);
    }
    const double lse = m + log(s);
    aux[b * kEmAux + 0] = r * lse;
    aux[b * kEmAux + 1] = change;
    aux[b * kEmAux + 2] = lse;
  }
}

// The E step's column reductions, deterministic. Column c of the 3k + 2 is
//   c < k: z_bc;  k <= c < 2k: w_b(c-k);  2k: r_b lse_b;  2k + 1: the
//   largest change;  c >= 2k + 2: w_b(c-2k-2), a maximum (the largest
//   weights the tensor-core M step scales by).
// Block (q, c) reduces column c over the q-th run of kReduceRows rows in a
// fixed order into part[c * runs + q]; finish_columns then adds the runs in
// order.
constexpr int64_t kReduceRows = kEmReduceRows;

struct EmColumn {
  const double* a;
  int64_t stride;
  bool take_max;
};

__device__ __forceinline__ EmColumn em_column(int64_t c, int64_t k, const double* z, const double* w,
                                              const double* aux) {
  if (c < k) return {z + c, k, false};
  if (c < 2 * k) return {w + (c - k), k, false};
  if (c < 2 * k + 2) return {aux + (c - 2 * k), kEmAux, c == 2 * k + 1};
  return {w + (c - 2 * k - 2), k, true};
}

__global__ void reduce_columns(const double* __restrict__ z, const double* __restrict__ w,
                               const double* __restrict__ aux, int64_t rows, int64_t k,
                               double* __restrict__ part) {
  __shared__ double buf[kReduceThreads];
  const EmColumn col = em_column(blockIdx.y, k, z, w, aux);
  const int64_t r0 = static_cast<int64_t>(blockIdx.x) * kReduceRows;
  const int64_t r1 = min(rows, r0 + kReduceRows);
  double v = 0.0;
  for (int64_t b = r0 + threadIdx.x; b < r1; b += blockDim.x) {
    const double x = col.a[b * col.stride];
    v = col.take_max ? fmax(v, x) : v + x;
  }
  buf[threadIdx.x] = v;
  __syncthreads();
  for (int half = kReduceThreads / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.x) < half) {
      const double o = buf[threadIdx.x + half];
      buf[threadIdx.x] = col.take_max ? fmax(buf[threadIdx.x], o) : buf[threadIdx.x] + o;
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) part[static_cast<int64_t>(blockIdx.y) * gridDim.x + blockIdx.x] = buf[0];
}

// Block c adds column c's runs: thread t those congruent to t, in order,
// then a fixed tree.
__global__ void finish_columns(const double* __restrict__ part, int64_t k, int64_t runs,
                               double* __restrict__ out) {
  __shared__ double buf[kReduceThreads];
  const int64_t c = blockIdx.x;
  const bool take_max = c == 2 * k + 1 || c >= 2 * k + 2;
  double v = 0.0;
  for (int64_t q = threadIdx.x; q < runs; q += blockDim.x) {
    const double x = part[c * runs + q];
    v = take_max ? fmax(v, x) : v + x;
  }
  buf[threadIdx.x] = v;
  __syncthreads();
  for (int half = kReduceThreads / 2; half > 0; half /= 2) {
    if (static_cast<int>(threadIdx.x) < half) {
      const double o = buf[threadIdx.x + half];
      buf[threadIdx.x] = take_max ? fmax(buf[threadIdx.x], o) : buf[threadIdx.x] + o;
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) out[c] = buf[0];
}

}  // namespace
}  // namespace cuda
}  // namespace dirmn
