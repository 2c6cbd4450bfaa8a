// loglik_csr_kernels.cuh: the CSR shared-alpha kernel (see loglik_slice.cuh
// for its walk). Device code only; loglik_csr.cu instantiates and launches
// it.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "loglik_cells.cuh"
#include "loglik_rows.cuh"
#include "loglik_slice.cuh"
#include "loglik_smem.cuh"
#include "../loglik_types.cuh"
#include "../tuning.cuh"

namespace dirmn {
namespace cuda {
namespace dev {

// CSR entries are read E at a time from E-aligned blocks (E = 16 bytes over
// the wider of the value and column types), so each lane has 16-byte loads in
// flight like the dense kernels. A row's first and last blocks reach into
// neighbouring rows; those entries are masked. The value and column arrays
// carry kCsrSlack entries of zero padding so the last block stays inside.
template <CellType C, bool kCol16>
struct CsrBlock {
  static constexpr int kValueBytes = CellTraits<C>::kBytes;
  static constexpr int kColBytes = kCol16 ? 2 : 4;
  static constexpr int E = kVectorBytes / (kValueBytes > kColBytes ? kValueBytes : kColBytes);
  static constexpr CellType kColCell = kCol16 ? CellType::U16 : CellType::U32;
  RawVec<E * kValueBytes> val;
  RawVec<E * kColBytes> col;
  int64_t first;  // entry index of element 0; -1: no block
  __device__ __forceinline__ void load(const CsrView& v, int64_t b, bool valid) {
    if (valid) {
      first = b * E;
      val.load(static_cast<const char*>(v.values) + first * kValueBytes);
      col.load(static_cast<const char*>(v.col) + first * kColBytes);
    } else {
      first = -1;
    }
  }
};

template <CellType C, bool kCol16, class TabT, int KG, bool kL2>
__device__ __forceinline__ void add_block(const CsrBlock<C, kCol16>& x, int64_t begin, int64_t end,
                                          int64_t col0, const char* tab, uint32_t entry_bytes,
                                          int kc, int k0, const SharedAlphaArgs& a,
                                          double (&acc)[KG]) {
  using B = CsrBlock<C, kCol16>;
  if (x.first < 0) return;
  const uint32_t row_bytes = static_cast<uint32_t>(a.panel_cols) * sizeof(TabT);
#pragma unroll
  for (int i = 0; i < B::E; ++i) {
    const int64_t e = x.first + i;
    if (e < begin || e >= end) continue;
    const uint32_t c = static_cast<uint32_t>(cell_index<B::kColCell, B::E>(x.col, i));
    bool tabulated;
    uint32_t n_int;
    double n;
    if constexpr (C == CellType::F64) {
      n = cell_value<C, B::E>(x.val, i);
      tabulated = n < static_cast<double>(a.cut) && n == floor(n);
      n_int = tabulated ? static_cast<uint32_t>(n) : 0u;
    } else {
      n_int = static_cast<uint32_t>(cell_index<C, B::E>(x.val, i));
      n = static_cast<double>(n_int);
      tabulated = n_int < static_cast<uint32_t>(a.cut);
    }
    if (tabulated) {
      const uint32_t off = n_int * row_bytes + (c - static_cast<uint32_t>(col0)) * sizeof(TabT);
#pragma unroll
      for (int kk = 0; kk < KG; ++kk) {
        if (KG > 1 && kk >= kc) break;
        acc[kk] += static_cast<double>(tab_read<TabT, kL2>(tab + kk * entry_bytes, off));
      }
    } else {
#pragma unroll
      for (int kk = 0; kk < KG; ++kk) {
        if (KG > 1 && kk >= kc) break;
        const int k = k0 + kk;
        acc[kk] += shifted_term(__ldg(a.alpha + static_cast<int64_t>(k) * a.cols + c), n,
                                a.ksums[k].log_a);
      }
    }
  }
}

// The entry ranges of a lane group's rows in one row chunk (this panel).
template <int R>
struct RowExtents {
  int64_t begin[R];
  int64_t end[R];
};

template <int R>
__device__ __forceinline__ RowExtents<R> load_extents(const CsrView& view, int64_t row0, int panel,
                                                      int panels) {
  RowExtents<R> x;
#pragma unroll
  for (int r = 0; r < R; ++r) {
    const int64_t row = row0 + r;
    x.begin[r] = x.end[r] = 0;
    if (row < view.rows) {
      const int64_t start = __ldg(view.row_ptr + row);
      if (panels > 1) {
        const uint32_t* pp = view.panel_ptr + row * (panels + 1) + panel;
        x.begin[r] = start + __ldg(pp);
        x.end[r] = start + __ldg(pp + 1);
      } else {
        x.begin[r] = start;
        x.end[r] = __ldg(view.row_ptr + row + 1);
      }
    }
  }
  return x;
}

// Blocks of E entries covering [begin, end): the first, and how many.
template <int E>
__device__ __forceinline__ int64_t first_block(int64_t begin) { return begin / E; }
template <int E>
__device__ __forceinline__ int64_t block_count(int64_t begin, int64_t end) {
  return end > begin ? (end - 1) / E - begin / E + 1 : 0;
}

// CSR rows are walked like dense ones: a stream of steps (row chunk, block
// offset) with the next step's blocks in flight while one is evaluated. The
// row extents of the chunk after next are loaded a whole chunk ahead, so
// crossing into a new chunk never waits for its row pointers. With kL2
// (TablePlan::l2_tables) the block reads its slice's tables from global
// memory where build_tables left them, and copies nothing.
template <CellType C, bool kCol16, class TabT, int KG, bool kL2>
__global__ void __launch_bounds__(kBlockThreads, kSharedBlocksPerSm)
    shared_alpha_csr(CsrView view, SharedAlphaArgs a) {
  using B = CsrBlock<C, kCol16>;
  constexpr int kLanes = 32;
  constexpr int R = kCsrRowsPerGroup;
  extern __shared__ __align__(16) unsigned char smem[];
  const SliceGeometry g = slice_geometry(a, kLanes, R);
  if constexpr (!kL2) start_tables<TabT>(reinterpret_cast<TabT*>(smem), a, g.k0, g.kc, g.panel, g.entries);
  const int64_t col0 = static_cast<int64_t>(g.panel) * a.panel_cols;
  const char* tab = kL2 ? static_cast<const char*>(a.tables) +
                              static_cast<int64_t>(g.k0) * g.entries * static_cast<int64_t>(sizeof(TabT))
                        : reinterpret_cast<const char*>(smem);
  const uint32_t entry_bytes = static_cast<uint32_t>(g.entries) * sizeof(TabT);
  const auto group_row0 = [&](int64_t chunk) {
    return chunk * g.rows_per_block + static_cast<int64_t>(g.group) * R;
  };
  const auto longest = [&](const RowExtents<R>& x) {
    int64_t m = 0;
#pragma unroll
    for (int r = 0; r < R; ++r) m = max(m, block_count<B::E>(x.begin[r], x.end[r]));
    return m;
  };
  const auto load_blocks = [&](B (&dst)[R], const RowExtents<R>& x, int64_t off) {
    const int64_t o = off + g.lane_in_group;
#pragma unroll
    for (int r = 0; r < R; ++r)
      dst[r].load(view, first_block<B::E>(x.begin[r]) + o, o < block_count<B::E>(x.begin[r], x.end[r]));
  };

  int64_t chunk = blockIdx.x;
  RowExtents<R> cur = load_extents<R>(view, group_row0(chunk), g.panel, a.panels);
  RowExtents<R> after = load_extents<R>(view, group_row0(chunk + gridDim.x), g.panel, a.panels);
  RowData rd = prefetch_row<R, KG>(group_row0(chunk), g, view.rows, view.row_lcoef, a);
  int64_t span = longest(cur);
  int64_t off = 0;
  B next[R];
  load_blocks(next, cur, 0);
  if constexpr (!kL2) wait_tables();
  double adjust = resolve_row(rd);
  rd = prefetch_row<R, KG>(group_row0(chunk + gridDim.x), g, view.rows, view.row_lcoef, a);

  double acc[R][KG];
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int kk = 0; kk < KG; ++kk) acc[r][kk] = 0.0;

  while (chunk * g.rows_per_block < view.rows) {
    B x[R];
#pragma unroll
    for (int r = 0; r < R; ++r) x[r] = next[r];
    // A row group may have no entries here: its one (empty) step still
    // finishes the rows.
    const bool last = off + kLanes >= span;
    if (last)
      load_blocks(next, after, 0);
    else
      load_blocks(next, cur, off + kLanes);
#pragma unroll
    for (int r = 0; r < R; ++r)
      add_block<C, kCol16, TabT, KG, kL2>(x[r], cur.begin[r], cur.end[r], col0, tab, entry_bytes,
                                          g.kc, g.k0, a, acc[r]);
    if (last) {
      finish_group<R, KG>(acc, group_row0(chunk), g, view.rows, adjust, a);
      chunk += gridDim.x;
      cur = after;
      after = load_extents<R>(view, group_row0(chunk + gridDim.x), g.panel, a.panels);
      adjust = resolve_row(rd);
      rd = prefetch_row<R, KG>(group_row0(chunk + gridDim.x), g, view.rows, view.row_lcoef, a);
      span = longest(cur);
      off = 0;
    } else {
      off += kLanes;
    }
  }
}

}  // namespace dev
}  // namespace cuda
}  // namespace dirmn
