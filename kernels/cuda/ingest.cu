// ingest.cu: making device tables -- from a validated host table (upload) or
// from a caller's device arrays (validated on the device, then referenced in
// place or copied into the compact form).
//
// Validation finds the first bad cell in the order the host path would
// report it (the caller's memory order for dense arrays, entry order for
// CSR) by an atomicMin over a key that encodes that order; the host then
// reads the one offending value back to word the message.
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_segmented_sort.cuh>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <new>
#include <vector>

#include "device_table.cuh"
#include "loglik_cells.cuh"
#include "loglik_rows.cuh"

namespace dirmn {
namespace cuda {
namespace {

using namespace ingest_tuning;

// Counts above 2^53 are not all representable as doubles (as capi/).
constexpr double kMaxCount = 9007199254740992.0;
// Sparse storage when it takes at most this fraction of the dense bytes (as
// capi/'s choice for host tables, so both paths store a table alike).
constexpr double kSparseByteRatio = 0.75;
constexpr unsigned long long kNoProblem = ~0ull;

enum CountIssue : int {
  kCountOk = 0,
  kCountNaN,
  kCountInf,
  kCountNegative,
  kCountTooLarge,
  kCountNotInteger
};

__host__ __device__ inline int count_issue(double x, bool real_valued) {
  if (x != x) return kCountNaN;
  if (x > DBL_MAX || x < -DBL_MAX) return kCountInf;
  if (x < 0.0) return kCountNegative;
  if (x > kMaxCount) return kCountTooLarge;
  if (!real_valued && x != floor(x)) return kCountNotInteger;
  return kCountOk;
}

const char* issue_text(int issue) {
  switch (issue) {
    case kCountNaN: return "is NaN";
    case kCountInf: return "is infinite";
    case kCountNegative: return "is negative";
    case kCountTooLarge: return "exceeds 2^53";
    case kCountNotInteger:
      return "is not an integer (set DIRMN_COUNTS_REAL_VALUED for real-valued counts)";
    default: return "is invalid";
  }
}

// What a validation or statistics pass leaves for the host.
struct ScanSummary {
  unsigned long long problem;  // smallest problem key, kNoProblem if none
  unsigned long long nnz;
  unsigned long long max_bits;  // non-negative doubles order like their bit patterns
  unsigned int non_integral;
  unsigned int unsorted;
};

// ---------------------------------------------------------------------------
// Device code

__device__ __forceinline__ unsigned long long warp_sum_u64(unsigned long long v) {
  for (int off = 16; off > 0; off /= 2) v += __shfl_xor_sync(dev::kFullMask, v, off);
  return v;
}
__device__ __forceinline__ unsigned long long warp_max_u64(unsigned long long v) {
  for (int off = 16; off > 0; off /= 2) v = max(v, __shfl_xor_sync(dev::kFullMask, v, off));
  return v;
}
__device__ __forceinline__ unsigned warp_or(unsigned v) {
  return __any_sync(dev::kFullMask, v != 0u) ? 1u : 0u;
}

// Folds one lane's statistics into the summary: one atomic per warp.
__device__ __forceinline__ void publish(ScanSummary* s, unsigned long long nnz,
                                        unsigned long long max_bits, unsigned non_integral) {
  nnz = warp_sum_u64(nnz);
  max_bits = warp_max_u64(max_bits);
  non_integral = warp_or(non_integral);
  if ((threadIdx.x & 31) == 0) {
    if (nnz) atomicAdd(&s->nnz, nnz);
    if (max_bits) atomicMax(&s->max_bits, max_bits);
    if (non_integral) atomicOr(&s->non_integral, 1u);
  }
}

// A caller's strided dense array. `col_major` picks the walk: the minor
// index runs along the smaller stride so a warp's reads coalesce.
template <class S>
struct StridedSource {
  const S* data;
  int64_t rows, cols, rs, cs;
  bool col_major;
  __device__ __forceinline__ int64_t minor_n() const { return col_major ? rows : cols; }
  __device__ __forceinline__ int64_t major_n() const { return col_major ? cols : rows; }
};

// Calls f(i, j, x) for every cell, in tiles of kTileMinor x kTileMajor.
template <class S, class F>
__device__ __forceinline__ void for_each_cell(const StridedSource<S>& src, F&& f) {
  const int64_t mn = src.minor_n(), mj = src.major_n();
  const int64_t tiles_minor = ceil_div<int64_t>(mn, kTileMinor);
  const int64_t tiles = tiles_minor * ceil_div<int64_t>(mj, kTileMajor);
  for (int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const int64_t minor = (tile % tiles_minor) * kTileMinor + threadIdx.x;
    const int64_t m0 = (tile / tiles_minor) * kTileMajor;
    if (minor >= mn) continue;
    for (int64_t m = m0; m < min(m0 + kTileMajor, mj); ++m) {
      const int64_t i = src.col_major ? minor : m;
      const int64_t j = src.col_major ? m : minor;
      f(i, j, static_cast<double>(__ldg(src.data + i * src.rs + j * src.cs)));
    }
  }
}

template <class S>
__global__ void __launch_bounds__(kBlockThreads)
    validate_strided(StridedSource<S> src, bool real_valued, ScanSummary* sum) {
  unsigned long long nnz = 0, max_bits = 0;
  unsigned non_integral = 0;
  for_each_cell(src, [&](int64_t i, int64_t j, double x) {
    if (count_issue(x, real_valued) != kCountOk) {
      const unsigned long long key = src.col_major ? static_cast<unsigned long long>(j * src.rows + i)
                                                   : static_cast<unsigned long long>(i * src.cols + j);
      atomicMin(&sum->problem, key);
      return;
    }
    if (x != 0.0) {
      ++nnz;
      max_bits = max(max_bits, static_cast<unsigned long long>(__double_as_longlong(x)));
      if (x != floor(x)) non_integral = 1;
    }
  });
  publish(sum, nnz, max_bits, non_integral);
}

template <class S, class D>
__global__ void __launch_bounds__(kBlockThreads)
    encode_strided(StridedSource<S> src, D* dst, int64_t pitch) {
  for_each_cell(src, [&](int64_t i, int64_t j, double x) { dst[i * pitch + j] = static_cast<D>(x); });
}

// Row totals and log multinomial coefficients of a row-major table, one warp
// per row (fixed summation order: results do not depend on scheduling).
template <CellType C>
__global__ void __launch_bounds__(kBlockThreads)
    dense_row_stats(const void* values, int64_t pitch, int64_t rows, int64_t cols,
                    double* row_total, double* row_lcoef) {
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * kWarpsPerBlock;
  for (int64_t row = blockIdx.x * static_cast<int64_t>(kWarpsPerBlock) + threadIdx.x / 32;
       row < rows; row += warps) {
    double n_sum = 0.0, lfact = 0.0;
    for (int64_t v = lane; v < cols; v += 32) {
      const double n = dev::load_cell<C>(values, row * pitch + v);
      n_sum += n;
      if (n > 1.0) lfact += lgamma(n + 1.0);
    }
    n_sum = dev::group_sum(n_sum, 32);
    lfact = dev::group_sum(lfact, 32);
    if (lane == 0) {
      row_total[row] = n_sum;
      row_lcoef[row] = lgamma(n_sum + 1.0) - lfact;
    }
  }
}

template <CellType C>
__global__ void __launch_bounds__(kBlockThreads)
    dense_row_nnz(const void* values, int64_t pitch, int64_t rows, int64_t cols, int64_t* row_nnz) {
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * kWarpsPerBlock;
  for (int64_t row = blockIdx.x * static_cast<int64_t>(kWarpsPerBlock) + threadIdx.x / 32;
       row < rows; row += warps) {
    int64_t c = 0;
    for (int64_t v = lane; v < cols; v += 32) c += dev::load_cell<C>(values, row * pitch + v) != 0.0;
    for (int off = 16; off > 0; off /= 2) c += __shfl_xor_sync(dev::kFullMask, c, off);
    if (lane == 0) row_nnz[row] = c;
  }
}

// Writes one nonzero into a compact CSR slot.
template <class D, class I>
__device__ __forceinline__ void put_entry(int64_t slot, int64_t col, double x, void* cols_out,
                                          void* vals_out) {
  static_cast<I*>(cols_out)[slot] = static_cast<I>(col);
  static_cast<D*>(vals_out)[slot] = static_cast<D>(x);
}

// Dense compact -> CSR, one warp per row; a ballot keeps columns in order.
template <CellType C, class D, class I>
__global__ void __launch_bounds__(kBlockThreads)
    dense_to_csr(const void* values, int64_t pitch, int64_t rows, int64_t cols,
                 const int64_t* row_ptr, void* cols_out, void* vals_out) {
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * kWarpsPerBlock;
  for (int64_t row = blockIdx.x * static_cast<int64_t>(kWarpsPerBlock) + threadIdx.x / 32;
       row < rows; row += warps) {
    int64_t slot = row_ptr[row];
    for (int64_t v0 = 0; v0 < cols; v0 += 32) {
      const int64_t v = v0 + lane;
      const double x = v < cols ? dev::load_cell<C>(values, row * pitch + v) : 0.0;
      const unsigned mask = __ballot_sync(dev::kFullMask, x != 0.0);
      if (x != 0.0) put_entry<D, I>(slot + __popc(mask & ((1u << lane) - 1u)), v, x, cols_out, vals_out);
      slot += __popc(mask);
    }
  }
}

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

// Per row and panel, the offset (from the row's start) of its first entry at
// or past the panel's first column. One warp per row; each entry fills the
// panels that start between its predecessor's column and its own.
template <bool kCol16>
__global__ void __launch_bounds__(kBlockThreads)
    build_panel_ptr(const int64_t* row_ptr, const void* col, int64_t rows, int64_t panel_cols,
                    int panels, uint32_t* panel_ptr) {
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * kWarpsPerBlock;
  for (int64_t row = blockIdx.x * static_cast<int64_t>(kWarpsPerBlock) + threadIdx.x / 32;
       row < rows; row += warps) {
    const int64_t begin = row_ptr[row], end = row_ptr[row + 1];
    uint32_t* pp = panel_ptr + row * (panels + 1);
    for (int64_t e = begin + lane; e <= end; e += 32) {
      const int64_t lo = e == begin ? -1 : dev::load_col<kCol16>(col, e - 1) / panel_cols;
      const int64_t hi = e == end ? panels : dev::load_col<kCol16>(col, e) / panel_cols;
      for (int64_t p = lo + 1; p <= hi; ++p) pp[p] = static_cast<uint32_t>(e - begin);
    }
  }
}

// ---------------------------------------------------------------------------
// Host helpers

BackendResult to_host(void* dst, const void* src, size_t bytes, const LaunchEnv& env) {
  DIRMN_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, env.stream),
                 "cudaMemcpyAsync (device to host)");
  DIRMN_CUDA_TRY(cudaStreamSynchronize(env.stream), "cudaStreamSynchronize");
  return {};
}

BackendResult reset_summary(DeviceBuffer& buf, const LaunchEnv& env) {
  DIRMN_TRY(buf.reserve(sizeof(ScanSummary), "cudaMalloc (validation summary)"));
  ScanSummary init{};
  init.problem = kNoProblem;
  DIRMN_CUDA_TRY(cudaMemcpyAsync(buf.get(), &init, sizeof init, cudaMemcpyHostToDevice, env.stream),
                 "cudaMemcpyAsync (validation summary)");
  // The source is a stack variable: wait until the copy has read it.
  DIRMN_CUDA_TRY(cudaStreamSynchronize(env.stream), "cudaStreamSynchronize");
  return {};
}

ValueType choose_vtype(double max_count, bool integral, bool real_valued) {
  if (real_valued && !integral) return ValueType::F64;
  if (max_count < 256.0) return ValueType::U8;
  if (max_count < 65536.0) return ValueType::U16;
  if (max_count < 4294967296.0) return ValueType::U32;
  return ValueType::F64;
}

bool choose_sparse(dirmn_storage storage, int64_t rows, int64_t cols, int64_t nnz, ValueType vt) {
  if (storage == DIRMN_STORAGE_DENSE) return false;
  if (storage == DIRMN_STORAGE_SPARSE) return true;
  const double vb = static_cast<double>(value_bytes(vt));
  const double dense = static_cast<double>(rows) * static_cast<double>(cols) * vb;
  const double sparse = static_cast<double>(nnz) * (vb + sizeof(uint32_t)) +
                        static_cast<double>(rows + 1) * sizeof(int64_t);
  return sparse <= kSparseByteRatio * dense;
}

CellType cell_of(ValueType vt) {
  switch (vt) {
    case ValueType::U8: return CellType::U8;
    case ValueType::U16: return CellType::U16;
    case ValueType::U32: return CellType::U32;
    case ValueType::F64: return CellType::F64;
  }
  return CellType::F64;
}

int64_t compact_pitch(int64_t cols, int bytes) {
  return round_up<int64_t>(cols * bytes, kRowAlignBytes) / bytes;
}

// The compact CSR arrays of nnz entries plus zeroed slack (see
// kCsrSlackEntries).
BackendResult reserve_csr(DeviceTable* t, int64_t nnz, int vb, const LaunchEnv& env) {
  const size_t cb = t->col16 ? 2 : 4;
  const size_t n = static_cast<size_t>(nnz);
  const size_t slack = static_cast<size_t>(kCsrSlackEntries);
  DIRMN_TRY(t->col_idx.reserve((n + slack) * cb, "cudaMalloc (column indices)"));
  DIRMN_TRY(t->values_buf.reserve((n + slack) * vb, "cudaMalloc (counts values)"));
  DIRMN_CUDA_TRY(cudaMemsetAsync(t->col_idx.get<char>() + n * cb, 0, slack * cb, env.stream),
                 "cudaMemsetAsync (column slack)");
  DIRMN_CUDA_TRY(cudaMemsetAsync(t->values_buf.get<char>() + n * vb, 0, slack * vb, env.stream),
                 "cudaMemsetAsync (value slack)");
  return {};
}

template <CellType C>
void launch_row_stats_c(const DeviceTable& t, const LaunchEnv& env, int grid) {
  dense_row_stats<C><<<grid, kBlockThreads, 0, env.stream>>>(
      t.values, t.pitch, t.rows, t.cols, t.row_total.get<double>(), t.row_lcoef.get<double>());
}

BackendResult launch_dense_row_stats(const DeviceTable& t, const LaunchEnv& env) {
  const int grid = stride_grid(t.rows * 32, env.sm_count);
  switch (t.cell) {
    case CellType::U8: launch_row_stats_c<CellType::U8>(t, env, grid); break;
    case CellType::U16: launch_row_stats_c<CellType::U16>(t, env, grid); break;
    case CellType::U32: launch_row_stats_c<CellType::U32>(t, env, grid); break;
    case CellType::F64: launch_row_stats_c<CellType::F64>(t, env, grid); break;
    case CellType::F32: launch_row_stats_c<CellType::F32>(t, env, grid); break;
    case CellType::I32: launch_row_stats_c<CellType::I32>(t, env, grid); break;
  }
  DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (dense_row_stats)");
  return {};
}

// Device-wide sum and maximum of the row totals (CUB; deterministic).
BackendResult total_and_max(DeviceTable* t, const LaunchEnv& env) {
  DeviceBuffer out(t->device), temp(t->device);
  DIRMN_TRY(out.reserve(2 * sizeof(double), "cudaMalloc (row total reduction)"));
  double* d_out = out.get<double>();
  const double* in = t->row_total.get<double>();
  size_t sum_bytes = 0, max_bytes = 0;
  DIRMN_CUDA_TRY(cub::DeviceReduce::Sum(nullptr, sum_bytes, in, d_out, t->rows, env.stream),
                 "cub::DeviceReduce::Sum");
  DIRMN_CUDA_TRY(cub::DeviceReduce::Max(nullptr, max_bytes, in, d_out + 1, t->rows, env.stream),
                 "cub::DeviceReduce::Max");
  DIRMN_TRY(temp.reserve(std::max(sum_bytes, max_bytes), "cudaMalloc (reduction workspace)"));
  DIRMN_CUDA_TRY(cub::DeviceReduce::Sum(temp.get(), sum_bytes, in, d_out, t->rows, env.stream),
                 "cub::DeviceReduce::Sum");
  DIRMN_CUDA_TRY(cub::DeviceReduce::Max(temp.get(), max_bytes, in, d_out + 1, t->rows, env.stream),
                 "cub::DeviceReduce::Max");
  double h[2] = {0.0, 0.0};
  DIRMN_TRY(to_host(h, d_out, sizeof h, env));
  t->total = h[0];
  t->max_row_total = h[1];
  return {};
}

BackendResult build_panels(DeviceTable* t, const LaunchEnv& env) {
  t->plan = make_plan(*t);
  if (!t->sparse || t->plan.panels <= 1) return {};
  const size_t n = static_cast<size_t>(t->rows) * static_cast<size_t>(t->plan.panels + 1);
  DIRMN_TRY(t->panel_ptr.reserve(n * sizeof(uint32_t), "cudaMalloc (panel offsets)"));
  const int grid = stride_grid(t->rows * 32, env.sm_count);
  if (t->col16)
    build_panel_ptr<true><<<grid, kBlockThreads, 0, env.stream>>>(
        t->row_ptr.get<int64_t>(), t->col_idx.get(), t->rows, t->plan.panel_cols,
        t->plan.panels, t->panel_ptr.get<uint32_t>());
  else
    build_panel_ptr<false><<<grid, kBlockThreads, 0, env.stream>>>(
        t->row_ptr.get<int64_t>(), t->col_idx.get(), t->rows, t->plan.panel_cols,
        t->plan.panels, t->panel_ptr.get<uint32_t>());
  DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (build_panel_ptr)");
  DIRMN_CUDA_TRY(cudaStreamSynchronize(env.stream), "cudaStreamSynchronize");
  return {};
}

// A compact CSR table of value type `vt` from a compact row-major dense
// table of cell type C (row nonzeros, a scan for the row pointers, then an
// ordered fill).
template <CellType C>
BackendResult dense_to_csr_c(DeviceTable* t, const void* dense, int64_t pitch, ValueType vt,
                             const LaunchEnv& env) {
  const int grid = stride_grid(t->rows * 32, env.sm_count);
  DeviceBuffer row_nnz(t->device), temp(t->device);
  DIRMN_TRY(row_nnz.reserve(static_cast<size_t>(t->rows) * sizeof(int64_t), "cudaMalloc (row nonzeros)"));
  DIRMN_TRY(t->row_ptr.reserve(static_cast<size_t>(t->rows + 1) * sizeof(int64_t), "cudaMalloc (row pointers)"));
  dense_row_nnz<C><<<grid, kBlockThreads, 0, env.stream>>>(dense, pitch, t->rows, t->cols,
                                                            row_nnz.get<int64_t>());
  DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (dense_row_nnz)");
  int64_t* rp = t->row_ptr.get<int64_t>();
  DIRMN_CUDA_TRY(cudaMemsetAsync(rp, 0, sizeof(int64_t), env.stream), "cudaMemsetAsync");
  size_t bytes = 0;
  DIRMN_CUDA_TRY(cub::DeviceScan::InclusiveSum(nullptr, bytes, row_nnz.get<int64_t>(), rp + 1, t->rows, env.stream),
                 "cub::DeviceScan::InclusiveSum");
  DIRMN_TRY(temp.reserve(bytes, "cudaMalloc (scan workspace)"));
  DIRMN_CUDA_TRY(cub::DeviceScan::InclusiveSum(temp.get(), bytes, row_nnz.get<int64_t>(), rp + 1, t->rows, env.stream),
                 "cub::DeviceScan::InclusiveSum");
  DIRMN_TRY(reserve_csr(t, t->nnz, static_cast<int>(value_bytes(vt)), env));
  void* co = t->col_idx.get();
  void* vo = t->values_buf.get();
#define DIRMN_D2C(D, I) \
  dense_to_csr<C, D, I><<<grid, kBlockThreads, 0, env.stream>>>(dense, pitch, t->rows, t->cols, rp, co, vo)
  switch (vt) {
    case ValueType::U8: if (t->col16) DIRMN_D2C(uint8_t, uint16_t); else DIRMN_D2C(uint8_t, uint32_t); break;
    case ValueType::U16: if (t->col16) DIRMN_D2C(uint16_t, uint16_t); else DIRMN_D2C(uint16_t, uint32_t); break;
    case ValueType::U32: if (t->col16) DIRMN_D2C(uint32_t, uint16_t); else DIRMN_D2C(uint32_t, uint32_t); break;
    case ValueType::F64: if (t->col16) DIRMN_D2C(double, uint16_t); else DIRMN_D2C(double, uint32_t); break;
  }
#undef DIRMN_D2C
  DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (dense_to_csr)");
  DIRMN_CUDA_TRY(cudaStreamSynchronize(env.stream), "cudaStreamSynchronize");
  t->values = t->values_buf.get();
  return {};
}

BackendResult dense_to_csr_any(DeviceTable* t, const void* dense, int64_t pitch, CellType c,
                               ValueType vt, const LaunchEnv& env) {
  switch (c) {
    case CellType::U8: return dense_to_csr_c<CellType::U8>(t, dense, pitch, vt, env);
    case CellType::U16: return dense_to_csr_c<CellType::U16>(t, dense, pitch, vt, env);
    case CellType::U32: return dense_to_csr_c<CellType::U32>(t, dense, pitch, vt, env);
    case CellType::F64: return dense_to_csr_c<CellType::F64>(t, dense, pitch, vt, env);
    default: break;
  }
  return {DIRMN_ERROR_INTERNAL, "dense_to_csr: not a compact cell type", 0};
}

template <class S>
BackendResult ingest_strided(const DeviceDenseInput& in, DeviceTable* t, CountsProblem* problem,
                             const LaunchEnv& env) {
  StridedSource<S> src;
  src.data = static_cast<const S*>(in.data);
  src.rows = in.rows;
  src.cols = in.cols;
  src.rs = in.row_stride;
  src.cs = in.col_stride;
  // The walk the host path would take: rows innermost when rows are the
  // contiguous dimension.
  src.col_major = (in.rows > 1 && in.cols > 1) ? in.row_stride < in.col_stride : in.cols == 1;
  const int64_t tiles = ceil_div<int64_t>(src.col_major ? in.rows : in.cols, kTileMinor) *
                        ceil_div<int64_t>(src.col_major ? in.cols : in.rows, kTileMajor);
  const int grid = static_cast<int>(std::min<int64_t>(tiles, int64_t{env.sm_count} * kStrideBlocksPerSm));

  DeviceBuffer sum_buf(t->device);
  DIRMN_TRY(reset_summary(sum_buf, env));
  validate_strided<S><<<grid, kBlockThreads, 0, env.stream>>>(src, in.real_valued, sum_buf.get<ScanSummary>());
  DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (validate_strided)");
  ScanSummary s{};
  DIRMN_TRY(to_host(&s, sum_buf.get(), sizeof s, env));
  if (s.problem != kNoProblem) {
    const int64_t key = static_cast<int64_t>(s.problem);
    const int64_t i = src.col_major ? key % in.rows : key / in.cols;
    const int64_t j = src.col_major ? key / in.rows : key % in.cols;
    S x{};
    DIRMN_TRY(to_host(&x, src.data + i * src.rs + j * src.cs, sizeof x, env));
    problem->kind = CountsProblem::kBadCount;
    problem->row = i;
    problem->col = j;
    problem->value = static_cast<double>(x);
    problem->why = issue_text(count_issue(static_cast<double>(x), in.real_valued));
    return {DIRMN_ERROR_INVALID_COUNTS, "", 0};
  }
  t->nnz = static_cast<int64_t>(s.nnz);
  double mx = 0.0;
  std::memcpy(&mx, &s.max_bits, sizeof mx);
  t->max_count = mx;
  t->integral = s.non_integral == 0;
  t->real_valued = in.real_valued;

  DIRMN_TRY(t->row_total.reserve(static_cast<size_t>(in.rows) * sizeof(double), "cudaMalloc (row totals)"));
  DIRMN_TRY(t->row_lcoef.reserve(static_cast<size_t>(in.rows) * sizeof(double), "cudaMalloc (row coefficients)"));

  // The header promises an in-place reference only for integer counts;
  // real-valued fractions are copied (as doubles).
  const bool in_place = (in.dtype == DIRMN_FLOAT32 || in.dtype == DIRMN_INT32) &&
                        (in.cols == 1 || in.col_stride == 1) &&
                        in.storage != DIRMN_STORAGE_SPARSE && t->integral;
  if (in_place) {
    t->wrapped = true;
    t->sparse = false;
    t->cell = in.dtype == DIRMN_FLOAT32 ? CellType::F32 : CellType::I32;
    t->values = in.data;
    t->pitch = in.rows == 1 ? in.cols : in.row_stride;
    // 16-byte reads need aligned rows that end on a vector boundary (the
    // last vector of the last row must not run past the caller's array).
    const bool aligned = reinterpret_cast<uintptr_t>(in.data) % kVectorBytes == 0 &&
                         (t->pitch * 4) % kVectorBytes == 0 && (in.cols * 4) % kVectorBytes == 0;
    t->vec = aligned ? kVectorBytes / 4 : 1;
    DIRMN_TRY(launch_dense_row_stats(*t, env));
  } else {
    const ValueType vt = choose_vtype(t->max_count, t->integral, in.real_valued);
    const bool sparse = choose_sparse(in.storage, in.rows, in.cols, t->nnz, vt);
    const int vb = static_cast<int>(value_bytes(vt));
    const int64_t pitch = compact_pitch(in.cols, vb);
    DeviceBuffer dense(t->device);
    DIRMN_TRY(dense.reserve(static_cast<size_t>(in.rows) * static_cast<size_t>(pitch) * vb,
                            "cudaMalloc (counts values)"));
    DIRMN_CUDA_TRY(cudaMemsetAsync(dense.get(), 0, static_cast<size_t>(in.rows) * pitch * vb, env.stream),
                   "cudaMemsetAsync (counts values)");
    switch (vt) {
      case ValueType::U8: encode_strided<S, uint8_t><<<grid, kBlockThreads, 0, env.stream>>>(src, dense.get<uint8_t>(), pitch); break;
      case ValueType::U16: encode_strided<S, uint16_t><<<grid, kBlockThreads, 0, env.stream>>>(src, dense.get<uint16_t>(), pitch); break;
      case ValueType::U32: encode_strided<S, uint32_t><<<grid, kBlockThreads, 0, env.stream>>>(src, dense.get<uint32_t>(), pitch); break;
      case ValueType::F64: encode_strided<S, double><<<grid, kBlockThreads, 0, env.stream>>>(src, dense.get<double>(), pitch); break;
    }
    DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (encode_strided)");
    t->cell = cell_of(vt);
    t->values = dense.get();
    t->pitch = pitch;
    t->vec = kVectorBytes / vb;
    DIRMN_TRY(launch_dense_row_stats(*t, env));
    if (sparse) {
      t->sparse = true;
      t->col16 = in.cols <= 65536;
      DIRMN_TRY(dense_to_csr_any(t, dense.get(), pitch, t->cell, vt, env));
    } else {
      t->sparse = false;
      t->values_buf = std::move(dense);
      t->values = t->values_buf.get();
    }
  }
  DIRMN_TRY(total_and_max(t, env));
  return build_panels(t, env);
}

// Reads ptr[i] of a caller's pointer array (error reporting only).
BackendResult read_index(dirmn_index_type type, const void* p, int64_t i, int64_t* out,
                         const LaunchEnv& env) {
  if (type == DIRMN_INDEX_INT32) {
    int32_t v = 0;
    DIRMN_TRY(to_host(&v, static_cast<const int32_t*>(p) + i, sizeof v, env));
    *out = v;
  } else {
    DIRMN_TRY(to_host(out, static_cast<const int64_t*>(p) + i, sizeof *out, env));
  }
  return {};
}

BackendResult read_value(dirmn_dtype type, const void* p, int64_t i, double* out, const LaunchEnv& env) {
  switch (type) {
    case DIRMN_INT32: { int32_t v = 0; DIRMN_TRY(to_host(&v, static_cast<const int32_t*>(p) + i, sizeof v, env)); *out = v; break; }
    case DIRMN_FLOAT32: { float v = 0; DIRMN_TRY(to_host(&v, static_cast<const float*>(p) + i, sizeof v, env)); *out = v; break; }
    default: DIRMN_TRY(to_host(out, static_cast<const double*>(p) + i, sizeof *out, env)); break;
  }
  return {};
}

// The row holding entry e: the last row whose ptr is <= e (ptr validated).
BackendResult row_of_entry(const DeviceCsrInput& in, int64_t e, int64_t* row, const LaunchEnv& env) {
  int64_t lo = 0, hi = in.rows;  // ptr[lo] <= e < ptr[hi]
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    int64_t p = 0;
    DIRMN_TRY(read_index(in.index_type, in.ptr, mid, &p, env));
    if (p <= e) lo = mid; else hi = mid;
  }
  *row = lo;
  return {};
}

template <class P, class I, class S>
BackendResult ingest_csr_typed(const DeviceCsrInput& in, DeviceTable* t, CountsProblem* problem,
                               const LaunchEnv& env) {
  const P* ptr = static_cast<const P*>(in.ptr);
  DeviceBuffer sum_buf(t->device);
  DIRMN_TRY(reset_summary(sum_buf, env));
  ScanSummary* d_sum = sum_buf.get<ScanSummary>();
  validate_ptr<P><<<stride_grid(in.rows + 1, env.sm_count), kBlockThreads, 0, env.stream>>>(ptr, in.rows, in.nnz, d_sum);
  DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (validate_ptr)");
  ScanSummary s{};
  DIRMN_TRY(to_host(&s, d_sum, sizeof s, env));
  if (s.problem != kNoProblem) {
    const int64_t k = static_cast<int64_t>(s.problem);
    problem->kind = CountsProblem::kBadPointer;
    problem->entry = k == in.rows + 1 ? in.rows : k;
    int64_t v = 0, prev = 0;
    DIRMN_TRY(read_index(in.index_type, in.ptr, problem->entry, &v, env));
    if (k >= 1 && k <= in.rows) DIRMN_TRY(read_index(in.index_type, in.ptr, k - 1, &prev, env));
    problem->value = static_cast<double>(v);
    problem->prev = static_cast<double>(prev);
    problem->why = k == 0 ? "start" : k == in.rows + 1 ? "end" : "order";
    return {DIRMN_ERROR_INVALID_ARGUMENT, "", 0};
  }

  const size_t nnz = static_cast<size_t>(in.nnz);
  DeviceBuffer keys(t->device), counts(t->device), keys2(t->device), counts2(t->device),
      begin(t->device), temp(t->device);
  DIRMN_TRY(keys.reserve(nnz * sizeof(uint32_t), "cudaMalloc (column indices)"));
  DIRMN_TRY(counts.reserve(nnz * sizeof(double), "cudaMalloc (counts)"));
  DIRMN_TRY(begin.reserve(static_cast<size_t>(in.rows + 1) * sizeof(int64_t), "cudaMalloc (row pointers)"));
  int64_t* rp_in = begin.get<int64_t>();
  widen_ptr<P><<<stride_grid(in.rows + 1, env.sm_count), kBlockThreads, 0, env.stream>>>(ptr, in.rows + 1, rp_in);
  DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (widen_ptr)");
  const int row_grid = stride_grid(in.rows * 32, env.sm_count);
  if (in.nnz > 0) {
    validate_entries<P, I, S><<<row_grid, kBlockThreads, 0, env.stream>>>(
        ptr, static_cast<const I*>(in.indices), static_cast<const S*>(in.values), in.rows, in.cols,
        in.real_valued, keys.get<uint32_t>(), counts.get<double>(), d_sum);
    DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (validate_entries)");
  }
  DIRMN_TRY(to_host(&s, d_sum, sizeof s, env));
  if (s.problem != kNoProblem) {
    const int64_t e = static_cast<int64_t>(s.problem / 2);
    int64_t row = 0;
    DIRMN_TRY(row_of_entry(in, e, &row, env));
    if (s.problem % 2 == 0) {
      int64_t c = 0;
      DIRMN_TRY(read_index(in.index_type, in.indices, e, &c, env));
      problem->kind = CountsProblem::kBadIndex;
      problem->entry = e;
      problem->row = row;
      problem->value = static_cast<double>(c);
    } else {
      int64_t c = 0;
      double x = 0.0;
      DIRMN_TRY(read_index(in.index_type, in.indices, e, &c, env));
      DIRMN_TRY(read_value(in.value_dtype, in.values, e, &x, env));
      problem->kind = CountsProblem::kBadCount;
      problem->row = row;
      problem->col = c;
      problem->value = x;
      problem->why = issue_text(count_issue(x, in.real_valued));
    }
    return {problem->kind == CountsProblem::kBadIndex ? DIRMN_ERROR_INVALID_ARGUMENT
                                                      : DIRMN_ERROR_INVALID_COUNTS,
            "", 0};
  }

  const uint32_t* sorted_keys = keys.get<uint32_t>();
  const double* sorted_counts = counts.get<double>();
  if (s.unsorted) {
    if (in.nnz > std::numeric_limits<int>::max() || in.rows > std::numeric_limits<int>::max())
      return {DIRMN_ERROR_NOT_SUPPORTED, "unsorted device CSR with more than 2^31 - 1 entries or rows", 0};
    DIRMN_TRY(keys2.reserve(nnz * sizeof(uint32_t), "cudaMalloc (sorted column indices)"));
    DIRMN_TRY(counts2.reserve(nnz * sizeof(double), "cudaMalloc (sorted counts)"));
    size_t bytes = 0;
    DIRMN_CUDA_TRY(cub::DeviceSegmentedSort::SortPairs(
                       nullptr, bytes, keys.get<uint32_t>(), keys2.get<uint32_t>(), counts.get<double>(),
                       counts2.get<double>(), static_cast<int>(in.nnz), static_cast<int>(in.rows), rp_in,
                       rp_in + 1, env.stream),
                   "cub::DeviceSegmentedSort::SortPairs");
    DIRMN_TRY(temp.reserve(bytes, "cudaMalloc (sort workspace)"));
    DIRMN_CUDA_TRY(cub::DeviceSegmentedSort::SortPairs(
                       temp.get(), bytes, keys.get<uint32_t>(), keys2.get<uint32_t>(), counts.get<double>(),
                       counts2.get<double>(), static_cast<int>(in.nnz), static_cast<int>(in.rows), rp_in,
                       rp_in + 1, env.stream),
                   "cub::DeviceSegmentedSort::SortPairs");
    sorted_keys = keys2.get<uint32_t>();
    sorted_counts = counts2.get<double>();
  }

  DeviceBuffer row_nnz(t->device);
  DIRMN_TRY(row_nnz.reserve(static_cast<size_t>(in.rows) * sizeof(int64_t), "cudaMalloc (row nonzeros)"));
  DIRMN_TRY(t->row_total.reserve(static_cast<size_t>(in.rows) * sizeof(double), "cudaMalloc (row totals)"));
  DIRMN_TRY(t->row_lcoef.reserve(static_cast<size_t>(in.rows) * sizeof(double), "cudaMalloc (row coefficients)"));
  DIRMN_TRY(reset_summary(sum_buf, env));
  csr_row_stats<<<row_grid, kBlockThreads, 0, env.stream>>>(
      rp_in, rp_in + 1, sorted_keys, sorted_counts, in.rows, in.cols, t->row_total.get<double>(),
      t->row_lcoef.get<double>(), row_nnz.get<int64_t>(), d_sum);
  DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (csr_row_stats)");
  DIRMN_TRY(to_host(&s, d_sum, sizeof s, env));
  if (s.problem != kNoProblem) {
    problem->kind = CountsProblem::kRepeatedIndex;
    problem->row = static_cast<int64_t>(s.problem / static_cast<unsigned long long>(in.cols));
    problem->col = static_cast<int64_t>(s.problem % static_cast<unsigned long long>(in.cols));
    return {DIRMN_ERROR_INVALID_ARGUMENT, "", 0};
  }
  t->nnz = static_cast<int64_t>(s.nnz);
  double mx = 0.0;
  std::memcpy(&mx, &s.max_bits, sizeof mx);
  t->max_count = mx;
  t->integral = s.non_integral == 0;
  t->real_valued = in.real_valued;

  const ValueType vt = choose_vtype(t->max_count, t->integral, in.real_valued);
  t->sparse = choose_sparse(in.storage, in.rows, in.cols, t->nnz, vt);
  t->cell = cell_of(vt);
  const int vb = static_cast<int>(value_bytes(vt));
  if (t->sparse) {
    t->col16 = in.cols <= 65536;
    DIRMN_TRY(t->row_ptr.reserve(static_cast<size_t>(in.rows + 1) * sizeof(int64_t), "cudaMalloc (row pointers)"));
    int64_t* rp = t->row_ptr.get<int64_t>();
    DIRMN_CUDA_TRY(cudaMemsetAsync(rp, 0, sizeof(int64_t), env.stream), "cudaMemsetAsync");
    size_t bytes = 0;
    DIRMN_CUDA_TRY(cub::DeviceScan::InclusiveSum(nullptr, bytes, row_nnz.get<int64_t>(), rp + 1, in.rows, env.stream),
                   "cub::DeviceScan::InclusiveSum");
    DIRMN_TRY(temp.reserve(bytes, "cudaMalloc (scan workspace)"));
    DIRMN_CUDA_TRY(cub::DeviceScan::InclusiveSum(temp.get(), bytes, row_nnz.get<int64_t>(), rp + 1, in.rows, env.stream),
                   "cub::DeviceScan::InclusiveSum");
    DIRMN_TRY(reserve_csr(t, t->nnz, vb, env));
    void* co = t->col_idx.get();
    void* vo = t->values_buf.get();
#define DIRMN_CC(D, I)                                                                   \
  compact_csr<D, I><<<row_grid, kBlockThreads, 0, env.stream>>>(rp_in, rp_in + 1, sorted_keys, \
                                                                sorted_counts, in.rows, rp, co, vo)
    switch (vt) {
      case ValueType::U8: if (t->col16) DIRMN_CC(uint8_t, uint16_t); else DIRMN_CC(uint8_t, uint32_t); break;
      case ValueType::U16: if (t->col16) DIRMN_CC(uint16_t, uint16_t); else DIRMN_CC(uint16_t, uint32_t); break;
      case ValueType::U32: if (t->col16) DIRMN_CC(uint32_t, uint16_t); else DIRMN_CC(uint32_t, uint32_t); break;
      case ValueType::F64: if (t->col16) DIRMN_CC(double, uint16_t); else DIRMN_CC(double, uint32_t); break;
    }
#undef DIRMN_CC
    DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (compact_csr)");
  } else {
    const int64_t pitch = compact_pitch(in.cols, vb);
    const size_t bytes = static_cast<size_t>(in.rows) * static_cast<size_t>(pitch) * vb;
    DIRMN_TRY(t->values_buf.reserve(bytes, "cudaMalloc (counts values)"));
    DIRMN_CUDA_TRY(cudaMemsetAsync(t->values_buf.get(), 0, bytes, env.stream), "cudaMemsetAsync (counts values)");
    t->pitch = pitch;
    t->vec = kVectorBytes / vb;
#define DIRMN_SD(D) \
  scatter_dense<D><<<row_grid, kBlockThreads, 0, env.stream>>>(rp_in, rp_in + 1, sorted_keys, sorted_counts, in.rows, t->values_buf.get<D>(), pitch)
    switch (vt) {
      case ValueType::U8: DIRMN_SD(uint8_t); break;
      case ValueType::U16: DIRMN_SD(uint16_t); break;
      case ValueType::U32: DIRMN_SD(uint32_t); break;
      case ValueType::F64: DIRMN_SD(double); break;
    }
#undef DIRMN_SD
    DIRMN_CUDA_TRY(cudaGetLastError(), "kernel launch (scatter_dense)");
  }
  t->values = t->values_buf.get();
  DIRMN_TRY(total_and_max(t, env));
  return build_panels(t, env);
}

template <class P, class I>
BackendResult ingest_csr_pi(const DeviceCsrInput& in, DeviceTable* t, CountsProblem* problem,
                            const LaunchEnv& env) {
  switch (in.value_dtype) {
    case DIRMN_INT32: return ingest_csr_typed<P, I, int32_t>(in, t, problem, env);
    case DIRMN_FLOAT32: return ingest_csr_typed<P, I, float>(in, t, problem, env);
    case DIRMN_FLOAT64: return ingest_csr_typed<P, I, double>(in, t, problem, env);
    default: break;
  }
  return {DIRMN_ERROR_NOT_SUPPORTED, "int64 device values", 0};
}

}  // namespace

BackendResult upload_host_table(const HostTable& h, DeviceTable* t, const LaunchEnv& env) {
  t->rows = h.rows;
  t->cols = h.cols;
  t->nnz = h.nnz;
  t->max_count = h.max_count;
  t->total = h.total;
  t->real_valued = h.real_valued;
  t->cell = cell_of(h.vtype);
  t->sparse = h.sparse;
  t->integral = h.vtype != ValueType::F64 || h.max_count == 0.0;
  double max_rt = 0.0;
  for (double n : h.row_total) max_rt = std::max(max_rt, n);
  t->max_row_total = max_rt;
  const int vb = static_cast<int>(value_bytes(h.vtype));
  if (h.vtype == ValueType::F64) {
    // Doubles may hold integers too (counts >= 2^32); tables care whether
    // every count is one.
    const double* x = reinterpret_cast<const double*>(h.values.data());
    const size_t n = h.values.size() / sizeof(double);
    bool integral = true;
    for (size_t i = 0; i < n && integral; ++i) integral = x[i] == std::floor(x[i]);
    t->integral = integral;
  }
  const size_t rows = static_cast<size_t>(h.rows);
  DIRMN_TRY(t->row_total.reserve(rows * sizeof(double), "cudaMalloc (row totals)"));
  DIRMN_TRY(t->row_lcoef.reserve(rows * sizeof(double), "cudaMalloc (row coefficients)"));
  DIRMN_CUDA_TRY(cudaMemcpyAsync(t->row_total.get(), h.row_total.data(), rows * sizeof(double),
                                 cudaMemcpyHostToDevice, env.stream),
                 "cudaMemcpyAsync (row totals)");
  DIRMN_CUDA_TRY(cudaMemcpyAsync(t->row_lcoef.get(), h.row_lcoef.data(), rows * sizeof(double),
                                 cudaMemcpyHostToDevice, env.stream),
                 "cudaMemcpyAsync (row coefficients)");
  if (h.sparse) {
    const size_t nnz = static_cast<size_t>(h.nnz);
    t->col16 = h.cols <= 65536;
    DIRMN_TRY(t->row_ptr.reserve((rows + 1) * sizeof(int64_t), "cudaMalloc (row pointers)"));
    DIRMN_TRY(reserve_csr(t, h.nnz, vb, env));
    DIRMN_CUDA_TRY(cudaMemcpyAsync(t->row_ptr.get(), h.row_ptr.data(), (rows + 1) * sizeof(int64_t),
                                   cudaMemcpyHostToDevice, env.stream),
                   "cudaMemcpyAsync (row pointers)");
    if (nnz > 0)
      DIRMN_CUDA_TRY(cudaMemcpyAsync(t->values_buf.get(), h.values.data(), nnz * vb,
                                     cudaMemcpyHostToDevice, env.stream),
                     "cudaMemcpyAsync (counts values)");
    if (nnz == 0) {
      // Nothing to copy (and the host vectors may hold no buffer at all).
    } else if (t->col16) {
      std::vector<uint16_t> narrow;
      try {
        narrow.assign(h.col_idx.begin(), h.col_idx.end());
      } catch (const std::bad_alloc&) {
        return {DIRMN_ERROR_OUT_OF_MEMORY, "host copy of column indices", 0};
      }
      DIRMN_CUDA_TRY(cudaMemcpyAsync(t->col_idx.get(), narrow.data(), nnz * 2, cudaMemcpyHostToDevice,
                                     env.stream),
                     "cudaMemcpyAsync (column indices)");
      // `narrow` is pageable: the copy has read it once this returns, but
      // the wait below also keeps the order obvious.
      DIRMN_CUDA_TRY(cudaStreamSynchronize(env.stream), "cudaStreamSynchronize");
    } else {
      DIRMN_CUDA_TRY(cudaMemcpyAsync(t->col_idx.get(), h.col_idx.data(), nnz * 4,
                                     cudaMemcpyHostToDevice, env.stream),
                     "cudaMemcpyAsync (column indices)");
    }
  } else {
    t->vec = kVectorBytes / vb;
    t->pitch = compact_pitch(h.cols, vb);
    const size_t row_bytes = static_cast<size_t>(h.cols) * vb;
    const size_t pitch_bytes = static_cast<size_t>(t->pitch) * vb;
    DIRMN_TRY(t->values_buf.reserve(rows * pitch_bytes, "cudaMalloc (counts values)"));
    if (pitch_bytes != row_bytes)
      DIRMN_CUDA_TRY(cudaMemsetAsync(t->values_buf.get(), 0, rows * pitch_bytes, env.stream),
                     "cudaMemsetAsync (counts values)");
    DIRMN_CUDA_TRY(cudaMemcpy2DAsync(t->values_buf.get(), pitch_bytes, h.values.data(), row_bytes,
                                     row_bytes, rows, cudaMemcpyHostToDevice, env.stream),
                   "cudaMemcpy2DAsync (counts values)");
  }
  t->values = t->values_buf.get();
  DIRMN_CUDA_TRY(cudaStreamSynchronize(env.stream), "cudaStreamSynchronize");
  return build_panels(t, env);
}

BackendResult ingest_device_dense(const DeviceDenseInput& in, DeviceTable* t,
                                  CountsProblem* problem, const LaunchEnv& env) {
  t->rows = in.rows;
  t->cols = in.cols;
  const bool copies = !((in.dtype == DIRMN_FLOAT32 || in.dtype == DIRMN_INT32) &&
                        (in.cols == 1 || in.col_stride == 1) && in.storage != DIRMN_STORAGE_SPARSE);
  if (copies && in.storage == DIRMN_STORAGE_DENSE) {
    // A dense copy takes at least a byte per cell: where that exceeds the
    // device, say so before spending a pass over the caller's array.
    size_t free_b = 0, total_b = 0;
    DIRMN_CUDA_TRY(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
    if (static_cast<double>(in.rows) * static_cast<double>(in.cols) > static_cast<double>(total_b))
      return {DIRMN_ERROR_OUT_OF_MEMORY, "a dense compact copy of the table exceeds the device memory", 0};
  }
  switch (in.dtype) {
    case DIRMN_INT32: return ingest_strided<int32_t>(in, t, problem, env);
    case DIRMN_FLOAT32: return ingest_strided<float>(in, t, problem, env);
    case DIRMN_FLOAT64: return ingest_strided<double>(in, t, problem, env);
    default: break;
  }
  return {DIRMN_ERROR_NOT_SUPPORTED, "int64 device arrays", 0};
}

BackendResult ingest_device_csr(const DeviceCsrInput& in, DeviceTable* t, CountsProblem* problem,
                                const LaunchEnv& env) {
  t->rows = in.rows;
  t->cols = in.cols;
  if (in.index_type == DIRMN_INDEX_INT32) return ingest_csr_pi<int32_t, int32_t>(in, t, problem, env);
  return ingest_csr_pi<int64_t, int64_t>(in, t, problem, env);
}

}  // namespace cuda
}  // namespace dirmn
