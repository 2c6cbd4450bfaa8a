// loglik_slice.cuh: what the dense and CSR shared-alpha kernels share --
// where a block's slice and lanes sit, the steps of its walk over the rows,
// and the row epilogue. Device code only.
//
// A block owns one slice -- a group of parameter vectors (a bundle on dense
// tables) on one column panel -- and copies that slice's tables into shared
// memory once (cp.async, overlapping its first loads; CSR tables read
// through L2 are not copied), then walks its share of the rows. Lanes of a warp form groups of LANES lanes; each group
// carries R rows at a time, and walks them as a stream of steps with the
// next step's loads in flight while one step computes. Row epilogues run
// two stages ahead: a row's total is loaded a chunk early and its
// normaliser lpoch(A, N) - N log A looked up a chunk early, so finishing a
// row never waits on memory.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "loglik_rows.cuh"
#include "../loglik_types.cuh"

namespace dirmn {
namespace cuda {
namespace dev {

// Where a block's slice and lanes sit; shared by the dense and CSR kernels.
struct SliceGeometry {
  int panel, k0, kc, entries;
  int lanes, lane_in_group, group;  // group: index of the lane group in the block
  int64_t rows_per_block;
};

__device__ __forceinline__ SliceGeometry slice_geometry(const SharedAlphaArgs& a, int lanes,
                                                        int rows_per_group) {
  SliceGeometry g;
  const int slice = a.slice_base + static_cast<int>(blockIdx.y);
  g.panel = slice % a.panels;
  g.k0 = (slice / a.panels) * a.k_group;
  g.kc = min(a.k_group, a.k_total - g.k0);
  g.entries = a.cut * static_cast<int>(a.panel_cols);
  g.lanes = lanes;
  g.lane_in_group = static_cast<int>(threadIdx.x) % lanes;
  g.group = static_cast<int>(threadIdx.x) / lanes;
  g.rows_per_block = static_cast<int64_t>(kBlockThreads / lanes) * rows_per_group;
  return g;
}

// Stage one of the row epilogue: the adjustment the lane that sum_owner
// gives index r * KG + kk will add to row r of the chunk at row0 under
// vector kk, read from the per-row normalisers made with the tables.
template <int R, int KG>
__device__ __forceinline__ RowData prefetch_row(int64_t row0, const SliceGeometry& g, int64_t rows,
                                                const double* row_lcoef, const SharedAlphaArgs& a) {
  RowData d;
  const int idx = sum_owner<R * KG>(g.lane_in_group, g.lanes);
  const int64_t row = row0 + idx / KG;
  const int k = g.k0 + idx % KG;
  if (idx >= 0 && row0 >= 0 && row < rows && a.panels == 1 && k < a.k_total) {
    d.adjust = __ldg(a.row_adjust + static_cast<int64_t>(k) * rows + row);
    if (a.full) d.adjust += __ldg(row_lcoef + row);
  }
  return d;
}

// Stage two: the adjustment finish_row adds.
__device__ __forceinline__ double resolve_row(const RowData& d) { return d.adjust; }

// Reduces the group's row sums and writes them: the lane that sum_owner
// gives index r * KG + kk finishes row r under parameter vector kk. Leaves
// acc zeroed.
template <int R, int KG>
__device__ __forceinline__ void finish_group(double (&acc)[R][KG], int64_t row0,
                                             const SliceGeometry& g, int64_t rows, double adjust,
                                             const SharedAlphaArgs& a) {
  static_assert(((R * KG) & (R * KG - 1)) == 0, "rows x vectors per group must be a power of two");
  TransposeSum<R * KG>::run(&acc[0][0], g.lane_in_group, g.lanes / 2);
  const int idx = sum_owner<R * KG>(g.lane_in_group, g.lanes);
  const int r = idx / KG, kk = idx % KG;
  const int64_t row = row0 + r;
  if (idx >= 0 && kk < g.kc && row < rows) finish_row(acc[0][0], row, g.k0 + kk, g.panel, rows, adjust, a);
#pragma unroll
  for (int rr = 0; rr < R; ++rr)
#pragma unroll
    for (int j = 0; j < KG; ++j) acc[rr][j] = 0.0;
}

// One step of a lane group's walk over its rows: row chunk and the vector
// (dense) or entry (CSR) offset within the rows.
struct Step {
  int64_t chunk;
  int64_t offset;
};

// The step after s, given how many vectors (entries) a row chunk spans.
__device__ __forceinline__ Step next_step(Step s, int64_t span, int lanes) {
  s.offset += lanes;
  if (s.offset >= span) {
    s.offset = 0;
    s.chunk += gridDim.x;
  }
  return s;
}

}  // namespace dev
}  // namespace cuda
}  // namespace dirmn
