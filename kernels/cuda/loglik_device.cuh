// loglik_device.cuh: device functions and kernel templates of the per-row
// log-likelihood (see loglik_types.cuh for the data and the shifted tables).
// Included by the .cu files that instantiate and launch them.
//
// Shared-alpha kernels. A block owns one slice -- a group of up to
// kMaxKGroup parameter vectors on one column panel -- and copies that slice's
// tables into shared memory once, then walks its share of the rows. Lanes of
// a warp form groups of `lanes_per_row` lanes; each group carries
// kRowsPerGroup rows at a time so several loads are in flight per lane.
//
// Dense rows are read as vectors of `W` cells. For vector i of a row, lane
// t = i mod lanes_per_row holds cells i*W .. i*W+W-1, and the table entry of
// cell j of that vector sits at column position
//     pos = (i / lanes) * lanes * W + j * lanes + t
// so that, for each j, the lanes of a group read consecutive positions: the
// lookups of a warp are free of bank conflicts whatever counts they hold.
// CSR tables use W = 1 (pos = column).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "../dirmn_math.hpp"
#include "loglik_types.cuh"

namespace dirmn {
namespace cuda {
namespace dev {

constexpr unsigned kFullMask = 0xffffffffu;

// ---------------------------------------------------------------------------
// Reading cells

// A vector of W cells of type C as loaded from memory: Bytes = W * size.
template <int Bytes>
struct RawVec;
template <>
struct RawVec<16> {
  uint32_t w[4];
  __device__ __forceinline__ void load(const void* p) {
    const uint4 v = __ldg(static_cast<const uint4*>(p));
    w[0] = v.x; w[1] = v.y; w[2] = v.z; w[3] = v.w;
  }
};
template <>
struct RawVec<8> {
  uint32_t w[2];
  __device__ __forceinline__ void load(const void* p) {
    const uint2 v = __ldg(static_cast<const uint2*>(p));
    w[0] = v.x; w[1] = v.y;
  }
};
template <>
struct RawVec<4> {
  uint32_t w[1];
  __device__ __forceinline__ void load(const void* p) {
    w[0] = __ldg(static_cast<const unsigned int*>(p));
  }
};
template <>
struct RawVec<2> {
  uint32_t w[1];
  __device__ __forceinline__ void load(const void* p) {
    w[0] = __ldg(static_cast<const unsigned short*>(p));
  }
};
template <>
struct RawVec<1> {
  uint32_t w[1];
  __device__ __forceinline__ void load(const void* p) {
    w[0] = __ldg(static_cast<const unsigned char*>(p));
  }
};

template <CellType C>
struct CellTraits;
template <>
struct CellTraits<CellType::U8> {
  static constexpr int kBytes = 1;
  static constexpr bool kIntegral = true;
};
template <>
struct CellTraits<CellType::U16> {
  static constexpr int kBytes = 2;
  static constexpr bool kIntegral = true;
};
template <>
struct CellTraits<CellType::U32> {
  static constexpr int kBytes = 4;
  static constexpr bool kIntegral = true;
};
template <>
struct CellTraits<CellType::I32> {
  static constexpr int kBytes = 4;
  static constexpr bool kIntegral = true;
};
template <>
struct CellTraits<CellType::F32> {
  static constexpr int kBytes = 4;
  static constexpr bool kIntegral = false;
};
template <>
struct CellTraits<CellType::F64> {
  static constexpr int kBytes = 8;
  static constexpr bool kIntegral = false;
};

// Cell j of a loaded vector, as a double (exact for every stored count).
template <CellType C, int W>
__device__ __forceinline__ double cell_value(const RawVec<W * CellTraits<C>::kBytes>& x, int j) {
  if constexpr (C == CellType::U8) {
    return static_cast<double>((x.w[j / 4] >> (8 * (j % 4))) & 0xffu);
  } else if constexpr (C == CellType::U16) {
    return static_cast<double>((x.w[j / 2] >> (16 * (j % 2))) & 0xffffu);
  } else if constexpr (C == CellType::U32) {
    return static_cast<double>(x.w[j]);
  } else if constexpr (C == CellType::I32) {
    return static_cast<double>(static_cast<int32_t>(x.w[j]));
  } else if constexpr (C == CellType::F32) {
    return static_cast<double>(__uint_as_float(x.w[j]));
  } else {
    return __hiloint2double(static_cast<int>(x.w[2 * j + 1]), static_cast<int>(x.w[2 * j]));
  }
}

// 2^23: adding it to a float in [0, 2^23) leaves the integer part in the
// mantissa bits, a cheaper float-to-int than the conversion unit.
constexpr float kFloatIntMagic = 8388608.0f;
constexpr int kFloatIntMagicBits = 0x4B000000;

// Cell j as an int, valid when the vector passed fits_table() (so the
// count is an integer below the table cut).
template <CellType C, int W>
__device__ __forceinline__ int cell_index(const RawVec<W * CellTraits<C>::kBytes>& x, int j) {
  if constexpr (C == CellType::U8) {
    return static_cast<int>((x.w[j / 4] >> (8 * (j % 4))) & 0xffu);
  } else if constexpr (C == CellType::U16) {
    return static_cast<int>((x.w[j / 2] >> (16 * (j % 2))) & 0xffffu);
  } else if constexpr (C == CellType::U32 || C == CellType::I32) {
    return static_cast<int>(x.w[j]);
  } else if constexpr (C == CellType::F32) {
    return __float_as_int(__uint_as_float(x.w[j]) + kFloatIntMagic) - kFloatIntMagicBits;
  } else {
    return static_cast<int>(cell_value<C, W>(x, j));
  }
}

// True when every cell of the vector is an integer below `cut`, so all of
// them are table lookups.
template <CellType C, int W>
__device__ __forceinline__ bool fits_table(const RawVec<W * CellTraits<C>::kBytes>& x, int cut,
                                           bool integral) {
  if constexpr (C == CellType::U8 && W == 16) {
    unsigned m = __vmaxu4(__vmaxu4(x.w[0], x.w[1]), __vmaxu4(x.w[2], x.w[3]));
    m = __vmaxu4(m, m >> 16);
    m = __vmaxu4(m, m >> 8);
    return static_cast<int>(m & 0xffu) < cut;
  } else if constexpr (C == CellType::U8 || C == CellType::U16 || C == CellType::U32) {
    uint32_t m = 0;
#pragma unroll
    for (int j = 0; j < W; ++j) m = max(m, static_cast<uint32_t>(cell_index<C, W>(x, j)));
    return m < static_cast<uint32_t>(cut);
  } else if constexpr (C == CellType::I32) {
    int m = 0;
#pragma unroll
    for (int j = 0; j < W; ++j) m = max(m, static_cast<int>(x.w[j]));
    return m < cut;
  } else if constexpr (C == CellType::F32) {
    if (!integral) return false;
    float m = 0.0f;
#pragma unroll
    for (int j = 0; j < W; ++j) m = fmaxf(m, __uint_as_float(x.w[j]));
    return m < static_cast<float>(cut);
  } else {
    bool ok = true;
#pragma unroll
    for (int j = 0; j < W; ++j) {
      const double n = cell_value<C, W>(x, j);
      ok = ok && n < static_cast<double>(cut) && n == floor(n);
    }
    return ok;
  }
}

// One stored cell of any type, by element index.
template <CellType C>
__device__ __forceinline__ double load_cell(const void* values, int64_t idx) {
  if constexpr (C == CellType::U8) {
    return static_cast<double>(__ldg(static_cast<const unsigned char*>(values) + idx));
  } else if constexpr (C == CellType::U16) {
    return static_cast<double>(__ldg(static_cast<const unsigned short*>(values) + idx));
  } else if constexpr (C == CellType::U32) {
    return static_cast<double>(__ldg(static_cast<const unsigned int*>(values) + idx));
  } else if constexpr (C == CellType::I32) {
    return static_cast<double>(__ldg(static_cast<const int*>(values) + idx));
  } else if constexpr (C == CellType::F32) {
    return static_cast<double>(__ldg(static_cast<const float*>(values) + idx));
  } else {
    return __ldg(static_cast<const double*>(values) + idx);
  }
}

template <bool kCol16>
__device__ __forceinline__ int64_t load_col(const void* col, int64_t e) {
  if constexpr (kCol16) {
    return static_cast<int64_t>(__ldg(static_cast<const unsigned short*>(col) + e));
  } else {
    return static_cast<int64_t>(__ldg(static_cast<const unsigned int*>(col) + e));
  }
}

// ---------------------------------------------------------------------------
// The mathematics, in double

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

// Writes a finished row sum (one panel: the result; several: a partial).
__device__ __forceinline__ void finish_row(double sum, int64_t row, int k, int panel, int64_t rows,
                                           const double* row_total, const double* row_lcoef,
                                           const SharedAlphaArgs& a) {
  if (a.panels > 1) {
    a.partial[(static_cast<int64_t>(panel) * rows + row) * a.k_total + k] = sum;
    return;
  }
  double v = sum - row_term(a, k, __ldg(row_total + row));
  if (a.full) v += __ldg(row_lcoef + row);
  a.out[row * a.out_sr + static_cast<int64_t>(k) * a.out_sk] = v;
}

// Sums `v` over the `width` lanes of an aligned lane group (width a power of
// two); every lane of the group ends with the sum.
__device__ __forceinline__ double group_sum(double v, int width) {
  for (int off = width / 2; off > 0; off /= 2) v += __shfl_xor_sync(kFullMask, v, off);
  return v;
}

// Copies the slice's kc tables (each `entries` long) into shared memory.
template <class TabT>
__device__ __forceinline__ void load_tables(TabT* dst, const SharedAlphaArgs& a, int k0, int kc,
                                            int panel, int64_t entries) {
  constexpr int kPerVec = 16 / static_cast<int>(sizeof(TabT));
  const int64_t vecs = entries / kPerVec;  // entries is a multiple of 32
  const TabT* tables = static_cast<const TabT*>(a.tables);
  for (int kk = 0; kk < kc; ++kk) {
    const uint4* src = reinterpret_cast<const uint4*>(
        tables + ((static_cast<int64_t>(k0 + kk) * a.panels + panel) * a.cut) * a.panel_cols);
    uint4* d = reinterpret_cast<uint4*>(dst + kk * entries);
    for (int64_t i = threadIdx.x; i < vecs; i += blockDim.x) d[i] = __ldg(src + i);
  }
}

// Picks acc[r][kk] for the lane's (r, kk) without a run-time register index.
template <int KG>
__device__ __forceinline__ double select_acc(const double (&acc)[kRowsPerGroup][KG], int idx) {
  double v = 0.0;
#pragma unroll
  for (int r = 0; r < kRowsPerGroup; ++r)
#pragma unroll
    for (int kk = 0; kk < KG; ++kk)
      if (idx == r * KG + kk) v = acc[r][kk];
  return v;
}

// ---------------------------------------------------------------------------
// Shared-alpha kernels

// Adds the shifted terms of one dense vector to acc[kk] for the slice's
// parameter vectors. pos0 is the table position of cell 0 (cell j is at
// pos0 + j * lanes); col is the column of cell 0.
template <CellType C, int W, class TabT, int KG>
__device__ __forceinline__ void add_vector(const RawVec<W * CellTraits<C>::kBytes>& x, int pos0,
                                           int lanes, int64_t col, const TabT* tab,
                                           int entries, int kc, int k0,
                                           const SharedAlphaArgs& a, double (&acc)[KG]) {
  const int P = static_cast<int>(a.panel_cols);
  if (fits_table<C, W>(x, a.cut, a.integral)) {
#pragma unroll
    for (int kk = 0; kk < KG; ++kk) {
      if (KG > 1 && kk >= kc) break;
      const TabT* t = tab + kk * entries + pos0;
      if constexpr (sizeof(TabT) == sizeof(float)) {
        // Float lookups are summed pairwise in float and converted once per
        // vector: the conversion unit runs at a quarter of the add rate.
        float s[W];
#pragma unroll
        for (int j = 0; j < W; ++j) s[j] = t[cell_index<C, W>(x, j) * P + j * lanes];
#pragma unroll
        for (int step = 1; step < W; step *= 2)
#pragma unroll
          for (int j = 0; j + step < W; j += 2 * step) s[j] += s[j + step];
        acc[kk] += static_cast<double>(s[0]);
      } else {
#pragma unroll
        for (int j = 0; j < W; ++j) acc[kk] += t[cell_index<C, W>(x, j) * P + j * lanes];
      }
    }
    return;
  }
  // Some cell is large or not an integer: those are evaluated directly.
#pragma unroll
  for (int j = 0; j < W; ++j) {
    const double n = cell_value<C, W>(x, j);
    if (n == 0.0) continue;
    const bool tabulated = n < static_cast<double>(a.cut) && n == floor(n);
#pragma unroll
    for (int kk = 0; kk < KG; ++kk) {
      if (KG > 1 && kk >= kc) break;
      if (tabulated) {
        acc[kk] += static_cast<double>(
            tab[kk * entries + pos0 + static_cast<int>(n) * P + j * lanes]);
      } else {
        const int k = k0 + kk;
        acc[kk] += shifted_term(__ldg(a.alpha + static_cast<int64_t>(k) * a.cols + col + j), n,
                                a.ksums[k].log_a);
      }
    }
  }
}

// The shifted term of one CSR entry (count n > 0 at local column u).
template <class TabT, int KG>
__device__ __forceinline__ void add_entry(double n, int u, int64_t col, const TabT* tab,
                                          int entries, int kc, int k0,
                                          const SharedAlphaArgs& a, double (&acc)[KG]) {
  const int P = static_cast<int>(a.panel_cols);
  const bool tabulated = n < static_cast<double>(a.cut) && (a.integral || n == floor(n));
#pragma unroll
  for (int kk = 0; kk < KG; ++kk) {
    if (KG > 1 && kk >= kc) break;
    if (tabulated) {
      acc[kk] += static_cast<double>(tab[kk * entries + static_cast<int>(n) * P + u]);
    } else {
      const int k = k0 + kk;
      acc[kk] += shifted_term(__ldg(a.alpha + static_cast<int64_t>(k) * a.cols + col), n,
                              a.ksums[k].log_a);
    }
  }
}

// Where a block's slice and lanes sit; shared by the dense and CSR kernels.
struct SliceGeometry {
  int panel, k0, kc, entries;
  int lanes, lane_in_group, group;  // group: index of the lane group in the block
  int64_t rows_per_block;
};

__device__ __forceinline__ SliceGeometry slice_geometry(const SharedAlphaArgs& a) {
  SliceGeometry g;
  const int slice = a.slice_base + static_cast<int>(blockIdx.y);
  g.panel = slice % a.panels;
  g.k0 = (slice / a.panels) * a.k_group;
  g.kc = min(a.k_group, a.k_total - g.k0);
  g.entries = a.cut * static_cast<int>(a.panel_cols);
  g.lanes = a.lanes_per_row;
  const int lane = static_cast<int>(threadIdx.x) & 31;
  g.lane_in_group = lane % g.lanes;
  g.group = static_cast<int>(threadIdx.x) / g.lanes;
  g.rows_per_block = static_cast<int64_t>(kBlockThreads / g.lanes) * kRowsPerGroup;
  return g;
}

// Reduces the group's row sums and writes them: lane r * KG + kk of each
// group finishes row r under parameter vector kk.
template <int KG>
__device__ __forceinline__ void finish_group(double (&acc)[kRowsPerGroup][KG], int64_t row0,
                                             const SliceGeometry& g, int64_t rows,
                                             const double* row_total, const double* row_lcoef,
                                             const SharedAlphaArgs& a) {
#pragma unroll
  for (int r = 0; r < kRowsPerGroup; ++r)
#pragma unroll
    for (int kk = 0; kk < KG; ++kk) acc[r][kk] = group_sum(acc[r][kk], g.lanes);
  const int idx = g.lane_in_group;
  const int r = idx / KG, kk = idx % KG;
  const double v = select_acc<KG>(acc, idx);
  const int64_t row = row0 + r;
  if (idx < kRowsPerGroup * KG && kk < g.kc && row < rows)
    finish_row(v, row, g.k0 + kk, g.panel, rows, row_total, row_lcoef, a);
}

template <CellType C, int W, class TabT, int KG>
__global__ void __launch_bounds__(kBlockThreads)
    shared_alpha_dense(DenseView view, SharedAlphaArgs a) {
  extern __shared__ __align__(16) unsigned char smem[];
  TabT* tab = reinterpret_cast<TabT*>(smem);
  const SliceGeometry g = slice_geometry(a);
  load_tables<TabT>(tab, a, g.k0, g.kc, g.panel, g.entries);
  __syncthreads();

  const int64_t col0 = static_cast<int64_t>(g.panel) * a.panel_cols;
  const int64_t width = min(a.panel_cols, view.cols - col0);
  const int64_t nvec = (width + W - 1) / W;
  constexpr int kBytes = W * CellTraits<C>::kBytes;
  const char* base_ptr = static_cast<const char*>(view.values);
  const int64_t pitch_bytes = view.pitch * CellTraits<C>::kBytes;

  for (int64_t chunk = blockIdx.x; chunk * g.rows_per_block < view.rows; chunk += gridDim.x) {
    const int64_t row0 = chunk * g.rows_per_block + static_cast<int64_t>(g.group) * kRowsPerGroup;
    double acc[kRowsPerGroup][KG];
#pragma unroll
    for (int r = 0; r < kRowsPerGroup; ++r)
#pragma unroll
      for (int kk = 0; kk < KG; ++kk) acc[r][kk] = 0.0;

    for (int64_t vbase = 0; vbase < nvec; vbase += g.lanes) {
      const int64_t vi = vbase + g.lane_in_group;
      const int64_t col = col0 + vi * W;
      RawVec<kBytes> x[kRowsPerGroup];
#pragma unroll
      for (int r = 0; r < kRowsPerGroup; ++r) {
        const int64_t row = row0 + r;
        if (vi < nvec && row < view.rows) {
          x[r].load(base_ptr + row * pitch_bytes + col * CellTraits<C>::kBytes);
        } else {
#pragma unroll
          for (int i = 0; i < static_cast<int>(sizeof(x[r].w) / sizeof(uint32_t)); ++i) x[r].w[i] = 0;
        }
      }
      const int pos0 = static_cast<int>(vbase) * W + g.lane_in_group;
#pragma unroll
      for (int r = 0; r < kRowsPerGroup; ++r)
        add_vector<C, W, TabT, KG>(x[r], pos0, g.lanes, col, tab, g.entries, g.kc, g.k0, a, acc[r]);
    }
    finish_group<KG>(acc, row0, g, view.rows, view.row_total, view.row_lcoef, a);
  }
}

template <CellType C, bool kCol16, class TabT, int KG>
__global__ void __launch_bounds__(kBlockThreads)
    shared_alpha_csr(CsrView view, SharedAlphaArgs a) {
  extern __shared__ __align__(16) unsigned char smem[];
  TabT* tab = reinterpret_cast<TabT*>(smem);
  const SliceGeometry g = slice_geometry(a);
  load_tables<TabT>(tab, a, g.k0, g.kc, g.panel, g.entries);
  __syncthreads();
  const int64_t col0 = static_cast<int64_t>(g.panel) * a.panel_cols;

  for (int64_t chunk = blockIdx.x; chunk * g.rows_per_block < view.rows; chunk += gridDim.x) {
    const int64_t row0 = chunk * g.rows_per_block + static_cast<int64_t>(g.group) * kRowsPerGroup;
    int64_t begin[kRowsPerGroup], end[kRowsPerGroup];
    int64_t longest = 0;
#pragma unroll
    for (int r = 0; r < kRowsPerGroup; ++r) {
      const int64_t row = row0 + r;
      begin[r] = end[r] = 0;
      if (row < view.rows) {
        const int64_t start = __ldg(view.row_ptr + row);
        if (a.panels > 1) {
          const uint32_t* pp = view.panel_ptr + row * (a.panels + 1) + g.panel;
          begin[r] = start + __ldg(pp);
          end[r] = start + __ldg(pp + 1);
        } else {
          begin[r] = start;
          end[r] = __ldg(view.row_ptr + row + 1);
        }
      }
      longest = max(longest, end[r] - begin[r]);
    }
    double acc[kRowsPerGroup][KG];
#pragma unroll
    for (int r = 0; r < kRowsPerGroup; ++r)
#pragma unroll
      for (int kk = 0; kk < KG; ++kk) acc[r][kk] = 0.0;

    for (int64_t off = 0; off < longest; off += g.lanes) {
      int64_t col[kRowsPerGroup];
      double n[kRowsPerGroup];
#pragma unroll
      for (int r = 0; r < kRowsPerGroup; ++r) {
        const int64_t e = begin[r] + off + g.lane_in_group;
        if (e < end[r]) {
          col[r] = load_col<kCol16>(view.col, e);
          n[r] = load_cell<C>(view.values, e);
        } else {
          col[r] = col0;
          n[r] = 0.0;
        }
      }
#pragma unroll
      for (int r = 0; r < kRowsPerGroup; ++r)
        if (n[r] != 0.0)
          add_entry<TabT, KG>(n[r], static_cast<int>(col[r] - col0), col[r], tab, g.entries, g.kc,
                              g.k0, a, acc[r]);
    }
    finish_group<KG>(acc, row0, g, view.rows, view.row_total, view.row_lcoef, a);
  }
}

// ---------------------------------------------------------------------------
// Tables

// Position of local column u in a panel's table row (see the file comment).
__device__ __forceinline__ int64_t table_pos(int64_t u, int vec, int lanes) {
  const int64_t vi = u / vec;
  const int64_t j = u % vec;
  return (vi / lanes) * lanes * vec + j * lanes + vi % lanes;
}

// One thread per (k, panel, column): T[n] = sum_{i<n} (log(alpha + i) - log A),
// Kahan-compensated like the CPU backend's tables. One thread per (k, N) for
// the row terms lpoch(A, N) - N log A.
template <class TabT>
__global__ void build_tables(TableBuildArgs b) {
  const int64_t per_k = static_cast<int64_t>(b.panels) * b.panel_cols;
  const int64_t n_cols = per_k * b.k_total;
  const int64_t n_rows = b.row_term_len * b.k_total;
  TabT* tables = static_cast<TabT*>(b.tables);
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n_cols + n_rows;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    if (i < n_cols) {
      const int k = static_cast<int>(i / per_k);
      const int64_t rem = i % per_k;
      const int panel = static_cast<int>(rem / b.panel_cols);
      const int64_t u = rem % b.panel_cols;
      const int64_t v = static_cast<int64_t>(panel) * b.panel_cols + u;
      TabT* t = tables + (static_cast<int64_t>(k) * b.panels + panel) * b.cut * b.panel_cols +
                table_pos(u, b.vec, b.lanes);
      t[0] = TabT(0);
      if (v >= b.cols) {
        for (int n = 1; n < b.cut; ++n) t[n * b.panel_cols] = TabT(0);
        continue;
      }
      const double alpha = b.alpha[static_cast<int64_t>(k) * b.cols + v];
      const double log_a = b.ksums[k].log_a;
      double sum = 0.0, comp = 0.0;
      for (int n = 1; n < b.cut; ++n) {
        const double y = (log(alpha + static_cast<double>(n - 1)) - log_a) - comp;
        const double s = sum + y;
        comp = (s - sum) - y;
        sum = s;
        t[n * b.panel_cols] = static_cast<TabT>(sum);
      }
    } else {
      const int64_t j = i - n_cols;
      const int k = static_cast<int>(j / b.row_term_len);
      const double n = static_cast<double>(j % b.row_term_len);
      const KSums s = b.ksums[k];
      b.row_term[j] = shifted_norm(s.a, n, s.log_a);
    }
  }
}

// ---------------------------------------------------------------------------
// Row-wise alpha: no reuse across rows, so every nonzero cell is one lpoch
// in double. One warp per row; A_b is summed over all columns.

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
