// loglik_lookup.cuh: the shifted terms of one dense vector of cells under a
// block's parameter vectors: its table lookups (an entry per vector, or a
// bundle's entries in 16-byte reads), and the direct path for cells past
// the tables. Device code only.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "loglik_cells.cuh"
#include "loglik_rows.cuh"
#include "loglik_smem.cuh"
#include "../loglik_types.cuh"

namespace dirmn {
namespace cuda {
namespace dev {

// The bundled lookups of one dense vector whose cells all fit the tables:
// for each cell, the group's KG entries in KG / kHalfEntries 16-byte reads.
// Float entries are summed in float in balanced groups of four cells and
// converted once per vector, as in the per-vector path.
template <int W, int LANES, class TabT, int KG>
__device__ __forceinline__ void add_bundles(const uint32_t (&off)[W], const char* tab,
                                            uint32_t half_bytes, double (&acc)[KG]) {
  constexpr int kE = kHalfEntries<TabT>;
  constexpr int kH = KG / kE;
  constexpr uint32_t kStep = LANES * kPosBytes<TabT, KG>;
  if constexpr (sizeof(TabT) == sizeof(float) && W >= 4) {
    // One half at a time: its four entries per cell are all a group of
    // four cells holds in registers.
#pragma unroll
    for (int h = 0; h < kH; ++h) {
      float part[kE];
#pragma unroll
      for (int e = 0; e < kE; ++e) part[e] = 0.0f;
#pragma unroll
      for (int q = 0; q < W; q += 4) {
        float v[4][kE];
#pragma unroll
        for (int jj = 0; jj < 4; ++jj)
          load_half<float>(tab + off[q + jj] + (q + jj) * kStep + h * half_bytes, v[jj]);
#pragma unroll
        for (int e = 0; e < kE; ++e) part[e] += (v[0][e] + v[1][e]) + (v[2][e] + v[3][e]);
      }
#pragma unroll
      for (int e = 0; e < kE; ++e) acc[h * kE + e] += static_cast<double>(part[e]);
    }
  } else {
#pragma unroll
    for (int j = 0; j < W; ++j) {
      TabT v[KG];
#pragma unroll
      for (int h = 0; h < kH; ++h) load_half<TabT>(tab + off[j] + j * kStep + h * half_bytes, &v[h * kE]);
#pragma unroll
      for (int kk = 0; kk < KG; ++kk) acc[kk] += static_cast<double>(v[kk]);
    }
  }
}

// add_vector for a vector whose cells all fit the tables (fits_table): its
// lookups alone.
template <CellType C, int W, int LANES, class TabT, int KG>
__device__ __forceinline__ void add_fitting_vector(const RawVec<W * CellTraits<C>::kBytes>& x,
                                                   const char* tab, const SharedAlphaArgs& a,
                                                   double (&acc)[KG]) {
  constexpr uint32_t kStep = LANES * kPosBytes<TabT, KG>;  // bytes from cell j to cell j + 1
  // Bytes from count n to n + 1, and (bundles) from one half to the next.
  const uint32_t row_bytes = static_cast<uint32_t>(a.panel_cols) * KG * sizeof(TabT);
  const uint32_t half_bytes = static_cast<uint32_t>(a.panel_cols) * kVectorBytes;
  uint32_t off[W];
#pragma unroll
  for (int j = 0; j < W; ++j) off[j] = static_cast<uint32_t>(cell_index<C, W>(x, j)) * row_bytes;
  if constexpr (KG > 1) {
    add_bundles<W, LANES, TabT, KG>(off, tab, half_bytes, acc);
  } else if constexpr (sizeof(TabT) == sizeof(float)) {
    // Float lookups are summed in float in small balanced groups and
    // converted once per vector: conversions run at a quarter of the add
    // rate, and same-sign terms keep the float error near 3 ulp.
    float part = 0.0f;
    if constexpr (W >= 4) {
#pragma unroll
      for (int q = 0; q < W; q += 4)
        part += (tab_load<float>(tab, off[q] + q * kStep) + tab_load<float>(tab, off[q + 1] + (q + 1) * kStep)) +
                (tab_load<float>(tab, off[q + 2] + (q + 2) * kStep) + tab_load<float>(tab, off[q + 3] + (q + 3) * kStep));
    } else {
#pragma unroll
      for (int j = 0; j < W; ++j) part += tab_load<float>(tab, off[j] + j * kStep);
    }
    acc[0] += static_cast<double>(part);
  } else {
#pragma unroll
    for (int j = 0; j < W; ++j) acc[0] += tab_load<double>(tab, off[j] + j * kStep);
  }
}

// Adds the shifted terms of one dense vector to acc[kk] for the slice's
// parameter vectors. `tab` points at the entry of cell 0 for n = 0 (cell j
// is LANES entries further); col is the column of cell 0.
template <CellType C, int W, int LANES, class TabT, int KG>
__device__ __forceinline__ void add_vector(const RawVec<W * CellTraits<C>::kBytes>& x,
                                           const char* tab, int64_t col, int kc, int k0,
                                           const SharedAlphaArgs& a,
                                           double (&acc)[KG]) {
  if (a.all_fit || fits_table<C, W>(x, a.cut, a.integral)) {
    add_fitting_vector<C, W, LANES, TabT, KG>(x, tab, a, acc);
    return;
  }
  constexpr uint32_t kStep = LANES * kPosBytes<TabT, KG>;
  const uint32_t row_bytes = static_cast<uint32_t>(a.panel_cols) * KG * sizeof(TabT);
  const uint32_t half_bytes = static_cast<uint32_t>(a.panel_cols) * kVectorBytes;
  // Some cell is large or not an integer: those are evaluated directly.
#pragma unroll
  for (int j = 0; j < W; ++j) {
    const double n = cell_value<C, W>(x, j);
    if (n == 0.0) continue;
    const bool tabulated = n < static_cast<double>(a.cut) && n == floor(n);
    const uint32_t o = static_cast<uint32_t>(tabulated ? n : 0.0) * row_bytes + j * kStep;
#pragma unroll
    for (int kk = 0; kk < KG; ++kk) {
      if (KG > 1 && kk >= kc) break;
      if (tabulated) {
        constexpr int kE = kHalfEntries<TabT>;
        const uint32_t at = KG > 1 ? o + (kk / kE) * half_bytes + (kk % kE) * sizeof(TabT) : o;
        acc[kk] += static_cast<double>(tab_load<TabT>(tab, at));
      } else {
        const int k = k0 + kk;
        acc[kk] += shifted_term(__ldg(a.alpha + static_cast<int64_t>(k) * a.cols + col + j), n,
                                a.ksums[k].log_a);
      }
    }
  }
}

}  // namespace dev
}  // namespace cuda
}  // namespace dirmn
