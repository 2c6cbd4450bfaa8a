// loglik_dense_kernels.cuh: the dense shared-alpha kernels -- the general
// one (any number of parameter vectors, panels and rows; see
// loglik_slice.cuh for its walk) and the one for small tables. Device code
// only; loglik_dense_launch.cuh instantiates and launches them.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "loglik_cells.cuh"
#include "loglik_lookup.cuh"
#include "loglik_rows.cuh"
#include "loglik_slice.cuh"
#include "loglik_smem.cuh"
#include "../loglik_types.cuh"
#include "../tuning.cuh"

namespace dirmn {
namespace cuda {
namespace dev {

template <CellType C, int W, int LANES, class TabT, int KG>
__global__ void __launch_bounds__(kBlockThreads, kSharedBlocksPerSm)
    shared_alpha_dense(DenseView view, SharedAlphaArgs a) {
  extern __shared__ __align__(16) unsigned char smem[];
  constexpr int R = KG > 1 ? kMultiKRowsPerGroup : kRowsPerGroup;
  const SliceGeometry g = slice_geometry(a, LANES, R);
  if constexpr (KG > 1)
    start_bundle<TabT, KG>(reinterpret_cast<TabT*>(smem), a, a.slice_base + static_cast<int>(blockIdx.y),
                           g.entries);
  else
    start_tables<TabT>(reinterpret_cast<TabT*>(smem), a, g.k0, g.kc, g.panel, g.entries);

  const int64_t col0 = static_cast<int64_t>(g.panel) * a.panel_cols;
  const int64_t width = min(a.panel_cols, view.cols - col0);
  const int64_t nvec = (width + W - 1) / W;
  constexpr int kBytes = W * CellTraits<C>::kBytes;
  const char* values = static_cast<const char*>(view.values);
  const int64_t pitch_bytes = view.pitch * CellTraits<C>::kBytes;

  // Loads the group's vectors of step s (zeros outside the table).
  auto load = [&](RawVec<kBytes>(&x)[R], Step s) {
    const int64_t row0 = s.chunk * g.rows_per_block + static_cast<int64_t>(g.group) * R;
    const int64_t vi = s.offset + g.lane_in_group;
#pragma unroll
    for (int r = 0; r < R; ++r) {
      if (vi < nvec && row0 + r < view.rows) {
        x[r].load(values + (row0 + r) * pitch_bytes + (col0 + vi * W) * CellTraits<C>::kBytes);
      } else {
#pragma unroll
        for (int i = 0; i < static_cast<int>(sizeof(x[r].w) / sizeof(uint32_t)); ++i) x[r].w[i] = 0;
      }
    }
  };

  const auto group_row0 = [&](int64_t chunk) {
    return chunk * g.rows_per_block + static_cast<int64_t>(g.group) * R;
  };
  Step s{static_cast<int64_t>(blockIdx.x), 0};
  RawVec<kBytes> next[R];
  load(next, s);
  RowData rd = prefetch_row<R, KG>(group_row0(s.chunk), g, view.rows, view.row_lcoef, a);
  wait_tables();
  double adjust = resolve_row(rd);
  rd = prefetch_row<R, KG>(group_row0(s.chunk + gridDim.x), g, view.rows, view.row_lcoef, a);

  double acc[R][KG];
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int kk = 0; kk < KG; ++kk) acc[r][kk] = 0.0;

  while (s.chunk * g.rows_per_block < view.rows) {
    RawVec<kBytes> x[R];
#pragma unroll
    for (int r = 0; r < R; ++r) x[r] = next[r];
    // The next step's loads are in flight while this step computes.
    const Step n = next_step(s, nvec, LANES);
    load(next, n);
    const int64_t vi = s.offset + g.lane_in_group;
    const char* tab = reinterpret_cast<const char*>(smem) +
                      (static_cast<uint32_t>(s.offset) * W + g.lane_in_group) * kPosBytes<TabT, KG>;
#pragma unroll
    for (int r = 0; r < R; ++r)
      add_vector<C, W, LANES, TabT, KG>(x[r], tab, col0 + vi * W, g.kc, g.k0, a, acc[r]);
    if (n.chunk != s.chunk) {
      finish_group<R, KG>(acc, group_row0(s.chunk), g, view.rows, adjust, a);
      adjust = resolve_row(rd);
      rd = prefetch_row<R, KG>(group_row0(n.chunk + gridDim.x), g, view.rows, view.row_lcoef, a);
    }
    s = n;
  }
}

// Small dense tables: one parameter vector, one column panel, and fewer
// rows than one wave of shared_alpha_dense's row chunks. Such a call is
// bound by latency, not bandwidth: the launch, one trip to memory for the
// counts, the tables and the row normalisers, and the fetch of the kernel's
// own instructions, which after other work has evicted them from L2 costs
// about one memory trip per few kilobytes executed. So every load is issued
// before the first wait (kSmallDepth vectors per lane), each lane group
// carries one row (rows spread over as many blocks as they fill), and the
// body is one short loop. kAllFit (a.all_fit: every count is tabulated)
// leaves out the path for large counts, most of the kernel's code.
template <CellType C, int W, int LANES, class TabT, bool kAllFit>
__global__ void __launch_bounds__(kBlockThreads)
    shared_alpha_dense_small(DenseView view, SharedAlphaArgs a) {
  extern __shared__ __align__(16) unsigned char smem[];
  constexpr int kBytes = W * CellTraits<C>::kBytes;
  constexpr int kGroups = kBlockThreads / LANES;
  constexpr int kDepth = kSmallDepth<W>;
  const int entries = a.cut * static_cast<int>(a.panel_cols);
  start_tables<TabT>(reinterpret_cast<TabT*>(smem), a, 0, 1, 0, entries);
  const int lane = static_cast<int>(threadIdx.x) % LANES;
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kGroups + threadIdx.x / LANES;
  const bool live = row < view.rows;
  const int64_t nvec = (view.cols + W - 1) / W;
  const char* base = static_cast<const char*>(view.values) +
                     (live ? row : 0) * view.pitch * CellTraits<C>::kBytes;
  // next[d] holds vector vi of the lane's walk with (vi - lane) / LANES = d
  // mod kDepth.
  RawVec<kBytes> next[kDepth];
  const auto load = [&](RawVec<kBytes>& dst, int64_t vi) {
    if (live && vi < nvec) {
      dst.load(base + vi * kBytes);
    } else {
#pragma unroll
      for (int i = 0; i < static_cast<int>(sizeof(dst.w) / sizeof(uint32_t)); ++i) dst.w[i] = 0;
    }
  };
#pragma unroll
  for (int d = 0; d < kDepth; ++d) load(next[d], lane + d * LANES);
  double adjust = 0.0;
  if (live && lane == 0) {
    adjust = __ldg(a.row_adjust + row);
    if (a.full) adjust += __ldg(view.row_lcoef + row);
  }
  wait_tables();
  double acc[1] = {0.0};
  for (int64_t first = lane; first < nvec; first += kDepth * LANES) {
#pragma unroll
    for (int d = 0; d < kDepth; ++d) {
      const int64_t vi = first + d * LANES;
      if (vi >= nvec) break;
      const RawVec<kBytes> x = next[d];
      load(next[d], vi + kDepth * LANES);
      const char* tab = reinterpret_cast<const char*>(smem) +
                        (static_cast<uint32_t>(vi - lane) * W + lane) * sizeof(TabT);
      if constexpr (kAllFit)
        add_fitting_vector<C, W, LANES, TabT, 1>(x, tab, a, acc);
      else
        add_vector<C, W, LANES, TabT, 1>(x, tab, vi * W, 1, 0, a, acc);
    }
  }
  const double sum = group_sum(acc[0], LANES);
  if (live && lane == 0) a.out[row * a.out_sr] = sum + adjust;
}

}  // namespace dev
}  // namespace cuda
}  // namespace dirmn
