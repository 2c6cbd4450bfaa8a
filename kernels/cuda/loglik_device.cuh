// loglik_device.cuh: device functions and kernel templates of the per-row
// log-likelihood (see loglik_types.cuh for the data and the shifted tables).
// Included by the .cu files that instantiate and launch them.
//
// Shared-alpha kernels. A block owns one slice -- a group of parameter
// vectors (a bundle on dense tables) on one column panel -- and copies that slice's
// tables into shared memory once (cp.async, overlapping its first loads),
// then walks its share of the rows. Lanes of a warp form groups of LANES
// lanes; each group carries R rows at a time, and walks them as a stream of
// steps with the next step's loads in flight while one step computes. Row
// epilogues run two stages ahead: a row's total is loaded a chunk early and
// its normaliser lpoch(A, N) - N log A looked up a chunk early, so finishing
// a row never waits on memory.
//
// Dense rows are read as vectors of `W` cells. For vector i of a row, lane
// t = i mod LANES holds cells i*W .. i*W+W-1, and the table entry of cell j
// of that vector sits at column position
//     pos = (i / LANES) * LANES * W + j * LANES + t
// so that, for each j, the lanes of a group read consecutive positions: the
// lookups of a warp are free of bank conflicts whatever counts they hold.
// CSR tables use W = 1 (pos = column) and read entries in aligned blocks.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "../dirmn_math.hpp"
#include "loglik_types.cuh"
#include "tuning.cuh"

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

// Starts copying `entries` table entries (a multiple of 16 bytes) from
// global to shared memory. On sm_80 and later the copy is asynchronous
// (cp.async), so the block's first loads of counts overlap it;
// wait_tables() completes it.
template <class TabT>
__device__ __forceinline__ void start_copy(TabT* dst, const TabT* from, int64_t entries) {
  constexpr int kPerVec = kVectorBytes / static_cast<int>(sizeof(TabT));
  const int vecs = static_cast<int>(entries / kPerVec);
  const uint4* src = reinterpret_cast<const uint4*>(from);
  uint4* d = reinterpret_cast<uint4*>(dst);
  for (int i = static_cast<int>(threadIdx.x); i < vecs; i += static_cast<int>(blockDim.x)) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    const unsigned saddr = static_cast<unsigned>(__cvta_generic_to_shared(d + i));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(saddr), "l"(src + i) : "memory");
#else
    d[i] = __ldg(src + i);
#endif
  }
}

// Per-vector tables: the kc tables of vectors k0.. on one panel (each
// `entries` long, a multiple of 32).
template <class TabT>
__device__ __forceinline__ void start_tables(TabT* dst, const SharedAlphaArgs& a, int k0, int kc,
                                             int panel, int entries) {
  const TabT* tables = static_cast<const TabT*>(a.tables);
  for (int kk = 0; kk < kc; ++kk)
    start_copy(dst + kk * entries,
               tables + ((static_cast<int64_t>(k0 + kk) * a.panels + panel) * a.cut) * a.panel_cols,
               entries);
}

// Bundled tables: the slice's block, KG x `entries` long.
template <class TabT, int KG>
__device__ __forceinline__ void start_bundle(TabT* dst, const SharedAlphaArgs& a, int slice,
                                             int entries) {
  const int64_t n = static_cast<int64_t>(KG) * entries;
  start_copy(dst, static_cast<const TabT*>(a.tables) + slice * n, n);
}

__device__ __forceinline__ void wait_tables() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
  __syncthreads();
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

// ---------------------------------------------------------------------------
// Shared-alpha kernels

// Reads a table entry at a byte offset from a shared-memory base.
template <class TabT>
__device__ __forceinline__ TabT tab_load(const char* base, uint32_t byte_off) {
  return *reinterpret_cast<const TabT*>(base + byte_off);
}

// Entries of one bundle half, and the bytes between table positions: a
// bundle half for KG > 1, one entry otherwise.
template <class TabT>
constexpr int kHalfEntries = kVectorBytes / static_cast<int>(sizeof(TabT));
template <class TabT, int KG>
constexpr uint32_t kPosBytes = KG > 1 ? kVectorBytes : sizeof(TabT);

// One bundle half (16 bytes of shared memory) as its entries.
template <class TabT>
__device__ __forceinline__ void load_half(const char* p, TabT* v) {
  const uint4 u = *reinterpret_cast<const uint4*>(p);
  if constexpr (sizeof(TabT) == sizeof(float)) {
    v[0] = __uint_as_float(u.x);
    v[1] = __uint_as_float(u.y);
    v[2] = __uint_as_float(u.z);
    v[3] = __uint_as_float(u.w);
  } else {
    v[0] = __hiloint2double(static_cast<int>(u.y), static_cast<int>(u.x));
    v[1] = __hiloint2double(static_cast<int>(u.w), static_cast<int>(u.z));
  }
}

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

template <CellType C, bool kCol16, class TabT, int KG>
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
        acc[kk] += static_cast<double>(tab_load<TabT>(tab + kk * entry_bytes, off));
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
// crossing into a new chunk never waits for its row pointers.
template <CellType C, bool kCol16, class TabT, int KG>
__global__ void __launch_bounds__(kBlockThreads, kSharedBlocksPerSm)
    shared_alpha_csr(CsrView view, SharedAlphaArgs a) {
  using B = CsrBlock<C, kCol16>;
  constexpr int kLanes = 32;
  constexpr int R = kCsrRowsPerGroup;
  extern __shared__ __align__(16) unsigned char smem[];
  const SliceGeometry g = slice_geometry(a, kLanes, R);
  start_tables<TabT>(reinterpret_cast<TabT*>(smem), a, g.k0, g.kc, g.panel, g.entries);
  const int64_t col0 = static_cast<int64_t>(g.panel) * a.panel_cols;
  const char* tab = reinterpret_cast<const char*>(smem);
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
  wait_tables();
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
      add_block<C, kCol16, TabT, KG>(x[r], cur.begin[r], cur.end[r], col0, tab, entry_bytes, g.kc, g.k0,
                                     a, acc[r]);
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

// ---------------------------------------------------------------------------
// Tables

// Position of local column u in a panel's table row (see the file comment).
__device__ __forceinline__ int64_t table_pos(int64_t u, int vec, int lanes) {
  const int64_t vi = u / vec;
  const int64_t j = u % vec;
  return (vi / lanes) * lanes * vec + j * lanes + vi % lanes;
}

// The entry of count 0 for vector k at table position `pos` of a panel, and
// the entries from one count to the next (see loglik_types.cuh).
template <class TabT>
__device__ __forceinline__ TabT* table_entry(const TableBuildArgs& b, int k, int panel, int64_t pos,
                                             int64_t* n_stride) {
  TabT* tables = static_cast<TabT*>(b.tables);
  if (b.bundle == 0) {
    *n_stride = b.panel_cols;
    return tables + (static_cast<int64_t>(k) * b.panels + panel) * b.cut * b.panel_cols + pos;
  }
  constexpr int kE = kHalfEntries<TabT>;
  const int halves = b.bundle / kE;
  const int group = k / b.bundle, kk = k % b.bundle;
  *n_stride = static_cast<int64_t>(b.bundle) * b.panel_cols;
  const int64_t slice = static_cast<int64_t>(group) * b.panels + panel;
  return tables + ((slice * b.cut * halves + kk / kE) * b.panel_cols + pos) * kE + kk % kE;
}

// One thread per (k, panel, column): T[n] = sum_{i<n} (log(alpha + i) - log A),
// Kahan-compensated like the CPU backend's tables. One thread per (k, N) for
// the row terms lpoch(A, N) - N log A.
template <class TabT>
__global__ void build_tables(TableBuildArgs b) {
  const int64_t per_k = static_cast<int64_t>(b.panels) * b.panel_cols;
  // Bundled tables fill their last group: vectors past k_total get zeros.
  const int64_t k_items = b.bundle > 0 ? round_up<int64_t>(b.k_total, b.bundle) : b.k_total;
  const int64_t n_cols = per_k * k_items;
  const int64_t n_rows = b.row_term_len * b.k_total;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n_cols + n_rows;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    if (i < n_cols) {
      const int k = static_cast<int>(i / per_k);
      const int64_t rem = i % per_k;
      const int panel = static_cast<int>(rem / b.panel_cols);
      const int64_t u = rem % b.panel_cols;
      const int64_t v = static_cast<int64_t>(panel) * b.panel_cols + u;
      int64_t stride = 0;
      TabT* t = table_entry<TabT>(b, k, panel, table_pos(u, b.vec, b.lanes), &stride);
      t[0] = TabT(0);
      if (v >= b.cols || k >= b.k_total) {
        for (int n = 1; n < b.cut; ++n) t[n * stride] = TabT(0);
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
        t[n * stride] = static_cast<TabT>(sum);
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
