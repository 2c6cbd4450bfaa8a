// counts_build.cpp: validation of caller count tables and their conversion to
// the compact HostTable form (narrowest integer type, dense or CSR).
//
// Dense input is read twice, never copied wider than its final form: a scan
// validates every cell and gathers the statistics that choose the storage, an
// encode pass writes the chosen form. Both walk the caller's memory in its
// own order (row- or column-major) so either layout streams.
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstring>
#include <limits>
#include <new>
#include <type_traits>
#include <thread>

#include "../../kernels/dirmn_math.hpp"
#include "internal.hpp"

namespace dirmn {
namespace capi {
namespace {

// Counts above 2^53 are not all representable as doubles; the library's
// arithmetic is double, so larger counts are rejected rather than rounded.
constexpr double kMaxCount = 9007199254740992.0;
// Sparse storage is chosen when it takes at most this fraction of the dense
// form's bytes: below it, skipping zeros outweighs the index reads.
constexpr double kSparseByteRatio = 0.75;
// log(n!) for small n comes from a table built once; larger n use lgamma.
constexpr int kLogFactorialTable = 1024;

// log(n!) for n < kLogFactorialTable, built once.
const double* log_factorial_table() {
  static const std::vector<double> table = [] {
    std::vector<double> t(kLogFactorialTable);
    double s = 0.0;
    t[0] = 0.0;
    for (int i = 1; i < kLogFactorialTable; ++i) {
      s += std::log(static_cast<double>(i));
      t[static_cast<size_t>(i)] = s;
    }
    return t;
  }();
  return table.data();
}

// x is a whole number; for 0 <= x <= 2^53 (every accepted count) a round
// trip through int64 decides it without a libm call (floor is not inlined
// on baseline x86-64).
inline bool whole(double x) { return x == static_cast<double>(static_cast<int64_t>(x)); }

inline double log_factorial(const double* table, double n) {
  if (n < kLogFactorialTable && whole(n)) return table[static_cast<size_t>(n)];
  return std::lgamma(n + 1.0);
}

bool valid_dtype(dirmn_dtype d) {
  return d == DIRMN_INT32 || d == DIRMN_INT64 || d == DIRMN_FLOAT32 || d == DIRMN_FLOAT64;
}

// Checks one count; on failure writes why into `why` (a static string).
template <class S>
bool check_count(S x, bool real_valued, const char** why) {
  if (std::is_integral<S>::value) {
    if (x < 0) return *why = "is negative", false;
    if (static_cast<double>(x) > kMaxCount) return *why = "exceeds 2^53", false;
    return true;
  } else {
    const double d = static_cast<double>(x);
    if (std::isnan(d)) return *why = "is NaN", false;
    if (std::isinf(d)) return *why = "is infinite", false;
    if (d < 0) return *why = "is negative", false;
    if (d > kMaxCount) return *why = "exceeds 2^53", false;
    if (!real_valued && !whole(d))
      return *why = "is not an integer (set DIRMN_COUNTS_REAL_VALUED for real-valued counts)",
             false;
    return true;
  }
}

dirmn_status bad_count(dirmn_context* ctx, const char* fn, int64_t i, int64_t j, double value,
                       const char* why) {
  return fail(ctx, DIRMN_ERROR_INVALID_COUNTS,
              "%s: row %" PRId64 ", column %" PRId64 " (0-based): count %.17g %s", fn, i, j,
              value, why);
}

// What choosing the storage needs, gathered by the validation scan (per
// thread, then merged). Everything else about the rows and columns is
// computed afterwards from the compact table (row_stats), which is narrower
// and row-major whatever the caller's layout.
struct ScanStats {
  int64_t nnz = 0;
  double max_count = 0.0;
  bool integral = true;

  inline void add(double x) {
    ++nnz;
    if (x > max_count) max_count = x;
    if (!whole(x)) integral = false;
  }
  void merge(const ScanStats& o) {
    nnz += o.nnz;
    max_count = std::max(max_count, o.max_count);
    integral = integral && o.integral;
  }
};

ValueType choose_vtype(const ScanStats& s, bool real_valued) {
  if (real_valued && !s.integral) return ValueType::F64;
  if (s.max_count < 256.0) return ValueType::U8;
  if (s.max_count < 65536.0) return ValueType::U16;
  if (s.max_count < 4294967296.0) return ValueType::U32;
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

// Sets the table's shape and allocates its storage (zeroed when dense).
void layout_table(const ScanStats& s, const std::vector<int64_t>& row_nnz, int64_t rows,
                  int64_t cols, bool real_valued, bool sparse, ValueType vt, HostTable* t) {
  t->rows = rows;
  t->cols = cols;
  t->nnz = s.nnz;
  t->sparse = sparse;
  t->real_valued = real_valued;
  t->vtype = vt;
  t->max_count = s.max_count;
  if (sparse) {
    t->row_ptr.resize(static_cast<size_t>(rows + 1));
    t->row_ptr[0] = 0;
    for (int64_t i = 0; i < rows; ++i)
      t->row_ptr[static_cast<size_t>(i + 1)] =
          t->row_ptr[static_cast<size_t>(i)] + row_nnz[static_cast<size_t>(i)];
    t->col_idx.resize(static_cast<size_t>(s.nnz));
    t->values.resize(static_cast<size_t>(s.nnz) * value_bytes(vt));
  } else {
    t->values.assign(static_cast<size_t>(rows * cols) * value_bytes(vt), 0);
  }
}

constexpr int64_t kRowTile = 256;

// Calls f(i, j) over rows [r0, r1) of a rows x cols strided array in the
// order that walks memory forwards: rows innermost when rows are contiguous
// (column-major). Stops early when f returns false.
template <class F>
bool for_each_cell(int64_t r0, int64_t r1, int64_t rows, int64_t cols, int64_t rs, int64_t cs,
                   F&& f) {
  const bool col_major = (rows > 1 && cols > 1) ? rs < cs : cols == 1;
  if (col_major) {
    // Tiles of kRowTile rows: each column's slice of a tile is contiguous,
    // and the per-row state the caller updates stays in cache across columns.
    for (int64_t t0 = r0; t0 < r1; t0 += kRowTile) {
      const int64_t t1 = std::min(r1, t0 + kRowTile);
      for (int64_t j = 0; j < cols; ++j)
        for (int64_t i = t0; i < t1; ++i)
          if (!f(i, j)) return false;
    }
  } else {
    for (int64_t i = r0; i < r1; ++i)
      for (int64_t j = 0; j < cols; ++j)
        if (!f(i, j)) return false;
  }
  return true;
}

// Below this many cells a table is scanned by the calling thread alone:
// starting threads would cost more than they save.
constexpr int64_t kCellsPerScanThread = int64_t{1} << 20;

// Runs body(part, r0, r1) over `parts` contiguous row blocks on their own
// threads (part 0 on the caller's).
template <class F>
void for_row_blocks(int64_t rows, int parts, F&& body) {
  std::vector<std::thread> pool;
  const int64_t per = (rows + parts - 1) / parts;
  for (int p = 1; p < parts; ++p) {
    const int64_t r0 = std::min(rows, p * per), r1 = std::min(rows, r0 + per);
    pool.emplace_back([&body, p, r0, r1] { body(p, r0, r1); });
  }
  body(0, 0, std::min(rows, per));
  for (auto& t : pool) t.join();
}

int scan_threads(int64_t rows, int64_t cols, int threads) {
  const int64_t by_size = rows * cols / kCellsPerScanThread + 1;
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>({by_size, threads, rows})));
}

// Row totals, multinomial coefficients, row maxima and column statistics
// from the encoded table, over row blocks in parallel.
template <class VT>
void row_stats_typed(HostTable* t, int parts) {
  const int64_t rows = t->rows, cols = t->cols;
  const VT* x = reinterpret_cast<const VT*>(t->values.data());
  const double* lf = log_factorial_table();
  t->row_total.assign(static_cast<size_t>(rows), 0.0);
  t->row_lcoef.assign(static_cast<size_t>(rows), 0.0);
  t->row_max.assign(static_cast<size_t>(rows), 0.0);
  t->row_argmax.assign(static_cast<size_t>(rows), 0);
  std::vector<std::vector<double>> cmax(static_cast<size_t>(parts),
                                        std::vector<double>(static_cast<size_t>(cols), 0.0));
  std::vector<std::vector<int64_t>> cnnz(static_cast<size_t>(parts),
                                         std::vector<int64_t>(static_cast<size_t>(cols), 0));
  for_row_blocks(rows, parts, [&](int k, int64_t r0, int64_t r1) {
    double* col_max = cmax[static_cast<size_t>(k)].data();
    int64_t* col_nnz = cnnz[static_cast<size_t>(k)].data();
    for (int64_t i = r0; i < r1; ++i) {
      double total = 0.0, mx = 0.0, rest = 0.0;
      int64_t arg = 0;
      // log(N! / prod n!) = log(N! / n*!) - sum over the other cells of
      // log n!, with N!/n*! as a rising factorial: for a row dominated by
      // one large count lgamma(N + 1) - lgamma(n* + 1) would cancel to
      // nothing. A displaced maximum joins `rest` when a larger count
      // arrives, so nothing is ever subtracted.
      auto lfact = [&](double n) {
        // Narrow integer counts below the table size need no checks.
        if (std::is_integral<VT>::value && n < kLogFactorialTable)
          return lf[static_cast<size_t>(n)];
        return log_factorial(lf, n);
      };
      auto cell = [&](int64_t j, double n) {
        total += n;
        ++col_nnz[j];
        if (n > col_max[j]) col_max[j] = n;
        if (n > mx) {
          if (mx > 0.0) rest += lfact(mx);
          mx = n;
          arg = j;
        } else {
          rest += lfact(n);
        }
      };
      if (t->sparse) {
        for (int64_t p = t->row_ptr[static_cast<size_t>(i)]; p < t->row_ptr[static_cast<size_t>(i) + 1]; ++p)
          cell(static_cast<int64_t>(t->col_idx[static_cast<size_t>(p)]), static_cast<double>(x[p]));
      } else {
        const VT* row = x + i * cols;
        for (int64_t j = 0; j < cols; ++j)
          if (row[j] != 0) cell(j, static_cast<double>(row[j]));
      }
      const size_t r = static_cast<size_t>(i);
      t->row_total[r] = total;
      t->row_max[r] = mx;
      t->row_argmax[r] = arg;
      t->row_lcoef[r] = math::lpoch(mx + 1.0, total - mx) - rest;
    }
  });
  t->col_max.assign(static_cast<size_t>(cols), 0.0);
  t->col_nnz.assign(static_cast<size_t>(cols), 0);
  for (int k = 0; k < parts; ++k)
    for (size_t j = 0; j < static_cast<size_t>(cols); ++j) {
      t->col_max[j] = std::max(t->col_max[j], cmax[static_cast<size_t>(k)][j]);
      t->col_nnz[j] += cnnz[static_cast<size_t>(k)][j];
    }
  double total = 0.0;
  for (double n : t->row_total) total += n;
  t->total = total;
}

// row_stats for the dense 8-bit table, the most common form, written to
// vectorise: every cell is handled branch-free (lf[0] = 0 and zero counts
// add nothing), and the largest count's position is found afterwards. With
// counts below 256 subtracting log(n*!) from the row's sum loses nothing
// that matters (see row_stats_typed for why large counts need care).
void row_stats_dense_u8(HostTable* t, int parts) {
  const int64_t rows = t->rows, cols = t->cols;
  const uint8_t* x = t->values.data();
  const double* lf = log_factorial_table();
  t->row_total.assign(static_cast<size_t>(rows), 0.0);
  t->row_lcoef.assign(static_cast<size_t>(rows), 0.0);
  t->row_max.assign(static_cast<size_t>(rows), 0.0);
  t->row_argmax.assign(static_cast<size_t>(rows), 0);
  std::vector<std::vector<uint8_t>> cmax(static_cast<size_t>(parts),
                                         std::vector<uint8_t>(static_cast<size_t>(cols), 0));
  std::vector<std::vector<int64_t>> cnnz(static_cast<size_t>(parts),
                                         std::vector<int64_t>(static_cast<size_t>(cols), 0));
  for_row_blocks(rows, parts, [&](int k, int64_t r0, int64_t r1) {
    uint8_t* col_max = cmax[static_cast<size_t>(k)].data();
    int64_t* col_nnz = cnnz[static_cast<size_t>(k)].data();
    for (int64_t i = r0; i < r1; ++i) {
      const uint8_t* row = x + i * cols;
      int64_t total = 0;
      uint8_t mx = 0;
      double lsum[4] = {0.0, 0.0, 0.0, 0.0};
      for (int64_t j = 0; j < cols; ++j) {
        const uint8_t n = row[j];
        total += n;
        mx = n > mx ? n : mx;
        col_max[j] = n > col_max[j] ? n : col_max[j];
        col_nnz[j] += n != 0;
        lsum[j & 3] += lf[n];
      }
      int64_t arg = 0;
      while (arg < cols && row[arg] != mx) ++arg;
      const size_t r = static_cast<size_t>(i);
      const double rest = ((lsum[0] + lsum[1]) + (lsum[2] + lsum[3])) - lf[mx];
      t->row_total[r] = static_cast<double>(total);
      t->row_max[r] = mx;
      t->row_argmax[r] = mx > 0 ? arg : 0;
      t->row_lcoef[r] = math::lpoch(mx + 1.0, static_cast<double>(total) - mx) - rest;
    }
  });
  t->col_max.assign(static_cast<size_t>(cols), 0.0);
  t->col_nnz.assign(static_cast<size_t>(cols), 0);
  for (int k = 0; k < parts; ++k)
    for (size_t j = 0; j < static_cast<size_t>(cols); ++j) {
      t->col_max[j] = std::max<double>(t->col_max[j], cmax[static_cast<size_t>(k)][j]);
      t->col_nnz[j] += cnnz[static_cast<size_t>(k)][j];
    }
  double total = 0.0;
  for (double n : t->row_total) total += n;
  t->total = total;
}

void row_stats(HostTable* t, int parts) {
  switch (t->vtype) {
    case ValueType::U8: return row_stats_typed<uint8_t>(t, parts);
    case ValueType::U16: return row_stats_typed<uint16_t>(t, parts);
    case ValueType::U32: return row_stats_typed<uint32_t>(t, parts);
    case ValueType::F64: return row_stats_typed<double>(t, parts);
  }
}

template <class VT, class S>
void encode_dense_source(const S* src, int64_t rows, int64_t cols, int64_t rs, int64_t cs,
                         int parts, HostTable* t) {
  VT* dst = reinterpret_cast<VT*>(t->values.data());
  for_row_blocks(rows, parts, [&](int, int64_t r0, int64_t r1) {
    if (t->sparse) {
      // Columns ascend within each row whichever order cells are visited, as
      // long as a row's cells are visited in column order: both walks do that.
      std::vector<int64_t> cursor(t->row_ptr.begin() + r0, t->row_ptr.begin() + r1);
      for_each_cell(r0, r1, rows, cols, rs, cs, [&](int64_t i, int64_t j) {
        const S x = src[i * rs + j * cs];
        if (x != 0) {
          const int64_t p = cursor[static_cast<size_t>(i - r0)]++;
          dst[p] = static_cast<VT>(x);
          t->col_idx[static_cast<size_t>(p)] = static_cast<uint32_t>(j);
        }
        return true;
      });
    } else {
      for_each_cell(r0, r1, rows, cols, rs, cs, [&](int64_t i, int64_t j) {
        dst[i * cols + j] = static_cast<VT>(src[i * rs + j * cs]);
        return true;
      });
    }
  });
}

template <class S>
void encode_dense_any(const S* src, int64_t rows, int64_t cols, int64_t rs, int64_t cs,
                      int parts, HostTable* t) {
  switch (t->vtype) {
    case ValueType::U8: return encode_dense_source<uint8_t>(src, rows, cols, rs, cs, parts, t);
    case ValueType::U16: return encode_dense_source<uint16_t>(src, rows, cols, rs, cs, parts, t);
    case ValueType::U32: return encode_dense_source<uint32_t>(src, rows, cols, rs, cs, parts, t);
    case ValueType::F64: return encode_dense_source<double>(src, rows, cols, rs, cs, parts, t);
  }
}

// Converts a dense 8-bit table to CSR in place.
void to_sparse(HostTable* t) {
  const int64_t rows = t->rows, cols = t->cols;
  std::vector<unsigned char> vals(static_cast<size_t>(t->nnz));
  std::vector<uint32_t> idx(static_cast<size_t>(t->nnz));
  std::vector<int64_t> ptr(static_cast<size_t>(rows + 1), 0);
  int64_t q = 0;
  for (int64_t i = 0; i < rows; ++i) {
    const unsigned char* row = t->values.data() + i * cols;
    for (int64_t j = 0; j < cols; ++j)
      if (row[j] != 0) {
        vals[static_cast<size_t>(q)] = row[j];
        idx[static_cast<size_t>(q++)] = static_cast<uint32_t>(j);
      }
    ptr[static_cast<size_t>(i + 1)] = q;
  }
  t->values.swap(vals);
  t->col_idx.swap(idx);
  t->row_ptr.swap(ptr);
  t->sparse = true;
}

// The common case, counts in [0, 255]: validation and encoding fused into
// one pass that writes the dense 8-bit table directly. Returns false as soon
// as a cell is negative, too large, non-integral or not a number; the caller
// then takes the general path, which reports the cell or widens the type.
template <class S>
bool try_encode_u8(const S* src, int64_t rows, int64_t cols, int64_t rs, int64_t cs, int parts,
                   HostTable* t) {
  t->values.resize(static_cast<size_t>(rows * cols));
  uint8_t* dst = t->values.data();
  std::vector<char> ok(static_cast<size_t>(parts), 1);
  for_row_blocks(rows, parts, [&](int k, int64_t r0, int64_t r1) {
    ok[static_cast<size_t>(k)] = for_each_cell(r0, r1, rows, cols, rs, cs, [&](int64_t i, int64_t j) {
      const S x = src[i * rs + j * cs];
      // One comparison catches negatives, NaN and values above 255.
      if (!(x >= 0 && x <= 255)) return false;
      const uint8_t u = static_cast<uint8_t>(x);
      if (!std::is_integral<S>::value && static_cast<S>(u) != x) return false;
      dst[i * cols + j] = u;
      return true;
    });
  });
  for (char o : ok)
    if (!o) return false;
  return true;
}

template <class S>
dirmn_status build_dense_typed(dirmn_context* ctx, const char* fn, const S* src, int64_t rows,
                               int64_t cols, int64_t rs, int64_t cs, bool real_valued,
                               dirmn_storage storage, int threads, HostTable* t) {
  const int parts = scan_threads(rows, cols, threads);
  if (try_encode_u8(src, rows, cols, rs, cs, parts, t)) {
    t->rows = rows;
    t->cols = cols;
    t->sparse = false;
    t->real_valued = real_valued;
    t->vtype = ValueType::U8;
    row_stats_dense_u8(t, parts);
    int64_t nnz = 0;
    for (int64_t n : t->col_nnz) nnz += n;
    t->nnz = nnz;
    t->max_count = 0.0;
    for (double m : t->col_max) t->max_count = std::max(t->max_count, m);
    if (choose_sparse(storage, rows, cols, nnz, ValueType::U8)) to_sparse(t);
    return DIRMN_SUCCESS;
  }
  struct Part {
    ScanStats stats;
    bool ok = true;
    int64_t bad_i = 0, bad_j = 0;
    const char* why = "";
  };
  std::vector<Part> part(static_cast<size_t>(parts));
  std::vector<int64_t> row_nnz(static_cast<size_t>(rows), 0);
  for_row_blocks(rows, parts, [&](int k, int64_t r0, int64_t r1) {
    Part& p = part[static_cast<size_t>(k)];
    p.ok = for_each_cell(r0, r1, rows, cols, rs, cs, [&](int64_t i, int64_t j) {
      const S x = src[i * rs + j * cs];
      if (x == 0) return true;
      if (!check_count<S>(x, real_valued, &p.why)) {
        p.bad_i = i;
        p.bad_j = j;
        return false;
      }
      p.stats.add(static_cast<double>(x));
      ++row_nnz[static_cast<size_t>(i)];
      return true;
    });
  });
  ScanStats s;
  for (const Part& p : part) {
    if (!p.ok)
      return bad_count(ctx, fn, p.bad_i, p.bad_j,
                       static_cast<double>(src[p.bad_i * rs + p.bad_j * cs]), p.why);
    s.merge(p.stats);
  }
  const ValueType vt = choose_vtype(s, real_valued);
  const bool sparse = choose_sparse(storage, rows, cols, s.nnz, vt);
  layout_table(s, row_nnz, rows, cols, real_valued, sparse, vt, t);
  encode_dense_any<S>(src, rows, cols, rs, cs, parts, t);
  row_stats(t, parts);
  return DIRMN_SUCCESS;
}

// Checks that the largest element index of a strided array fits in int64.
bool strided_extent_ok(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  int64_t a = 0, b = 0, c = 0;
  if (__builtin_mul_overflow(rows - 1, rs, &a)) return false;
  if (__builtin_mul_overflow(cols - 1, cs, &b)) return false;
  return !__builtin_add_overflow(a, b, &c);
}

template <class I>
int64_t index_at(const void* p, int64_t k) {
  return static_cast<int64_t>(static_cast<const I*>(p)[k]);
}

int64_t read_index(dirmn_index_type t, const void* p, int64_t k) {
  return t == DIRMN_INDEX_INT32 ? index_at<int32_t>(p, k) : index_at<int64_t>(p, k);
}

template <class S>
double value_at(const void* p, int64_t k) {
  return static_cast<double>(static_cast<const S*>(p)[k]);
}

}  // namespace

dirmn_status check_dense_shape(dirmn_context* ctx, const char* fn, int64_t rows, int64_t cols,
                               dirmn_dtype dtype, int64_t row_stride, int64_t col_stride) {
  if (rows <= 0 || cols <= 0)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT,
                "%s: rows (%" PRId64 ") and cols (%" PRId64 ") must be positive", fn, rows, cols);
  if (cols > static_cast<int64_t>(UINT32_MAX))
    return fail(ctx, DIRMN_ERROR_OVERFLOW, "%s: cols (%" PRId64 ") exceeds 2^32 - 1", fn, cols);
  int64_t cells = 0;
  if (__builtin_mul_overflow(rows, cols, &cells) || cells > PTRDIFF_MAX / 8)
    return fail(ctx, DIRMN_ERROR_OVERFLOW,
                "%s: rows x cols (%" PRId64 " x %" PRId64 ") overflows", fn, rows, cols);
  if (!valid_dtype(dtype))
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, "%s: unknown dtype %d", fn,
                static_cast<int>(dtype));
  if ((rows > 1 && row_stride < 1) || (cols > 1 && col_stride < 1))
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT,
                "%s: strides must be >= 1 (row_stride %" PRId64 ", col_stride %" PRId64 ")", fn,
                row_stride, col_stride);
  if (!strided_extent_ok(rows, cols, rows == 1 ? 0 : row_stride, cols == 1 ? 0 : col_stride))
    return fail(ctx, DIRMN_ERROR_OVERFLOW,
                "%s: the strided extent of a %" PRId64 " x %" PRId64
                " array with strides (%" PRId64 ", %" PRId64 ") overflows",
                fn, rows, cols, row_stride, col_stride);
  return DIRMN_SUCCESS;
}

dirmn_status check_sparse_shape(dirmn_context* ctx, const char* fn, int64_t rows, int64_t cols,
                                int64_t nnz, dirmn_index_type index_type,
                                dirmn_dtype value_dtype) {
  if (rows <= 0 || cols <= 0)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT,
                "%s: rows (%" PRId64 ") and cols (%" PRId64 ") must be positive", fn, rows, cols);
  if (cols > static_cast<int64_t>(UINT32_MAX))
    return fail(ctx, DIRMN_ERROR_OVERFLOW, "%s: cols (%" PRId64 ") exceeds 2^32 - 1", fn, cols);
  if (nnz < 0)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, "%s: nnz (%" PRId64 ") is negative", fn, nnz);
  int64_t cells = 0;
  if (__builtin_mul_overflow(rows, cols, &cells))
    return fail(ctx, DIRMN_ERROR_OVERFLOW,
                "%s: rows x cols (%" PRId64 " x %" PRId64 ") overflows", fn, rows, cols);
  if (nnz > cells)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT,
                "%s: nnz (%" PRId64 ") exceeds rows x cols (%" PRId64 ")", fn, nnz, cells);
  if (index_type != DIRMN_INDEX_INT32 && index_type != DIRMN_INDEX_INT64)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, "%s: unknown index type %d", fn,
                static_cast<int>(index_type));
  if (!valid_dtype(value_dtype))
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, "%s: unknown value dtype %d", fn,
                static_cast<int>(value_dtype));
  return DIRMN_SUCCESS;
}

dirmn_status build_dense(dirmn_context* ctx, const char* fn, int64_t rows, int64_t cols,
                         dirmn_dtype dtype, const void* data, int64_t row_stride,
                         int64_t col_stride, uint32_t flags, dirmn_storage storage,
                         int threads, HostTable* out) {
  if (dirmn_status s = check_dense_shape(ctx, fn, rows, cols, dtype, row_stride, col_stride))
    return s;
  const int64_t rs = rows == 1 ? 0 : row_stride;
  const int64_t cs = cols == 1 ? 0 : col_stride;
  const bool real = (flags & DIRMN_COUNTS_REAL_VALUED) != 0;
  try {
    switch (dtype) {
      case DIRMN_INT32:
        return build_dense_typed(ctx, fn, static_cast<const int32_t*>(data), rows, cols, rs, cs,
                                 real, storage, threads, out);
      case DIRMN_INT64:
        return build_dense_typed(ctx, fn, static_cast<const int64_t*>(data), rows, cols, rs, cs,
                                 real, storage, threads, out);
      case DIRMN_FLOAT32:
        return build_dense_typed(ctx, fn, static_cast<const float*>(data), rows, cols, rs, cs,
                                 real, storage, threads, out);
      case DIRMN_FLOAT64:
        return build_dense_typed(ctx, fn, static_cast<const double*>(data), rows, cols, rs, cs,
                                 real, storage, threads, out);
    }
  } catch (const std::bad_alloc&) {
    return fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY,
                "%s: out of host memory for a %" PRId64 " x %" PRId64 " table", fn, rows, cols);
  }
  return fail(ctx, DIRMN_ERROR_INTERNAL, "%s: unreachable dtype", fn);
}

dirmn_status build_sparse(dirmn_context* ctx, const char* fn, dirmn_sparse_format format,
                          int64_t rows, int64_t cols, int64_t nnz, dirmn_index_type index_type,
                          const void* ptr, const void* indices, dirmn_dtype value_dtype,
                          const void* values, uint32_t flags, dirmn_storage storage,
                          HostTable* out) {
  if (dirmn_status s = check_sparse_shape(ctx, fn, rows, cols, nnz, index_type, value_dtype))
    return s;
  if (format != DIRMN_CSR && format != DIRMN_CSC)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, "%s: unknown sparse format %d", fn,
                static_cast<int>(format));
  if (ptr == nullptr)
    return fail(ctx, DIRMN_ERROR_NULL_POINTER, "%s: ptr is NULL", fn);
  if (nnz > 0 && (indices == nullptr || values == nullptr))
    return fail(ctx, DIRMN_ERROR_NULL_POINTER, "%s: indices or values is NULL with nnz = %" PRId64,
                fn, nnz);

  const bool csr = format == DIRMN_CSR;
  const int64_t outer = csr ? rows : cols, inner = csr ? cols : rows;
  const char* outer_name = csr ? "row" : "column";
  const char* inner_name = csr ? "column" : "row";
  const bool real = (flags & DIRMN_COUNTS_REAL_VALUED) != 0;

  // The compressed pointer array must run from 0 to nnz without going back.
  if (read_index(index_type, ptr, 0) != 0)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, "%s: ptr[0] is %" PRId64 ", expected 0", fn,
                read_index(index_type, ptr, 0));
  for (int64_t o = 0; o < outer; ++o) {
    const int64_t a = read_index(index_type, ptr, o), b = read_index(index_type, ptr, o + 1);
    if (b < a || b > nnz)
      return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT,
                  "%s: ptr[%" PRId64 "] = %" PRId64 " is below ptr[%" PRId64 "] = %" PRId64
                  " or above nnz = %" PRId64,
                  fn, o + 1, b, o, a, nnz);
  }
  if (read_index(index_type, ptr, outer) != nnz)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT,
                "%s: ptr[%" PRId64 "] is %" PRId64 ", expected nnz = %" PRId64, fn, outer,
                read_index(index_type, ptr, outer), nnz);

  try {
    auto value = [&](int64_t k) {
      switch (value_dtype) {
        case DIRMN_INT32: return value_at<int32_t>(values, k);
        case DIRMN_INT64: return value_at<int64_t>(values, k);
        case DIRMN_FLOAT32: return value_at<float>(values, k);
        default: return value_at<double>(values, k);
      }
    };
    // Validate every entry, then sort into CSR by counting sort on rows:
    // visiting the outer dimension in order gives sorted inner indices
    // within each output row for CSC input; CSR input is first transposed
    // the same way so its column indices come out sorted too.
    std::vector<int64_t> cnt(static_cast<size_t>(inner) + 1, 0);
    for (int64_t o = 0; o < outer; ++o) {
      const int64_t a = read_index(index_type, ptr, o), b = read_index(index_type, ptr, o + 1);
      for (int64_t k = a; k < b; ++k) {
        const int64_t in = read_index(index_type, indices, k);
        if (in < 0 || in >= inner)
          return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT,
                      "%s: entry %" PRId64 " (%s %" PRId64 "): %s index %" PRId64
                      " is outside [0, %" PRId64 ")",
                      fn, k, outer_name, o, inner_name, in, inner);
        const double x = value(k);
        const char* why = "";
        const bool ok =
            value_dtype == DIRMN_INT32 ? check_count<int32_t>(static_cast<int32_t>(x), real, &why)
            : value_dtype == DIRMN_INT64
                ? check_count<int64_t>(static_cast<const int64_t*>(values)[k], real, &why)
            : value_dtype == DIRMN_FLOAT32
                ? check_count<float>(static_cast<const float*>(values)[k], real, &why)
                : check_count<double>(x, real, &why);
        if (!ok) return bad_count(ctx, fn, csr ? o : in, csr ? in : o, x, why);
        ++cnt[static_cast<size_t>(in) + 1];
      }
    }
    // Transpose into the inner-major order (a CSR of the transposed table),
    // inner indices now run over the outer dimension in ascending order.
    for (int64_t i = 0; i < inner; ++i) cnt[static_cast<size_t>(i) + 1] += cnt[static_cast<size_t>(i)];
    std::vector<int64_t> t_idx(static_cast<size_t>(nnz));
    std::vector<double> t_val(static_cast<size_t>(nnz));
    {
      std::vector<int64_t> cur(cnt.begin(), cnt.end() - 1);
      for (int64_t o = 0; o < outer; ++o) {
        const int64_t a = read_index(index_type, ptr, o), b = read_index(index_type, ptr, o + 1);
        for (int64_t k = a; k < b; ++k) {
          const int64_t in = read_index(index_type, indices, k);
          const int64_t p = cur[static_cast<size_t>(in)]++;
          t_idx[static_cast<size_t>(p)] = o;
          t_val[static_cast<size_t>(p)] = value(k);
        }
      }
    }
    // Now (inner -> outer). For CSC input, inner = rows: that is CSR already,
    // with columns ascending. For CSR input, inner = cols: transpose once more.
    std::vector<int64_t> r_ptr, r_col;
    std::vector<double> r_val;
    if (!csr) {
      r_ptr = std::move(cnt);
      r_col = std::move(t_idx);
      r_val = std::move(t_val);
    } else {
      r_ptr.assign(static_cast<size_t>(rows) + 1, 0);
      for (int64_t p = 0; p < nnz; ++p) ++r_ptr[static_cast<size_t>(t_idx[static_cast<size_t>(p)]) + 1];
      for (int64_t i = 0; i < rows; ++i) r_ptr[static_cast<size_t>(i) + 1] += r_ptr[static_cast<size_t>(i)];
      r_col.resize(static_cast<size_t>(nnz));
      r_val.resize(static_cast<size_t>(nnz));
      std::vector<int64_t> cur(r_ptr.begin(), r_ptr.end() - 1);
      for (int64_t j = 0; j < cols; ++j)
        for (int64_t p = cnt[static_cast<size_t>(j)]; p < cnt[static_cast<size_t>(j) + 1]; ++p) {
          const int64_t i = t_idx[static_cast<size_t>(p)];
          const int64_t q = cur[static_cast<size_t>(i)]++;
          r_col[static_cast<size_t>(q)] = j;
          r_val[static_cast<size_t>(q)] = t_val[static_cast<size_t>(p)];
        }
    }
    // Sorted rows make repeats adjacent.
    ScanStats s;
    std::vector<int64_t> row_nnz(static_cast<size_t>(rows), 0);
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t p = r_ptr[static_cast<size_t>(i)]; p < r_ptr[static_cast<size_t>(i) + 1]; ++p) {
        if (p > r_ptr[static_cast<size_t>(i)] && r_col[static_cast<size_t>(p)] == r_col[static_cast<size_t>(p) - 1])
          return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT,
                      "%s: row %" PRId64 ", column %" PRId64
                      " (0-based) appears more than once",
                      fn, i, r_col[static_cast<size_t>(p)]);
        const double x = r_val[static_cast<size_t>(p)];
        if (x != 0.0) {
          s.add(x);
          ++row_nnz[static_cast<size_t>(i)];
        }
      }
    const ValueType vt = choose_vtype(s, real);
    const bool sparse = choose_sparse(storage, rows, cols, s.nnz, vt);
    layout_table(s, row_nnz, rows, cols, real, sparse, vt, out);
    // Encode: explicit zeros were not counted and are dropped here.
    auto put = [&](int64_t slot, double x) {
      switch (vt) {
        case ValueType::U8: reinterpret_cast<uint8_t*>(out->values.data())[slot] = static_cast<uint8_t>(x); break;
        case ValueType::U16: reinterpret_cast<uint16_t*>(out->values.data())[slot] = static_cast<uint16_t>(x); break;
        case ValueType::U32: reinterpret_cast<uint32_t*>(out->values.data())[slot] = static_cast<uint32_t>(x); break;
        case ValueType::F64: reinterpret_cast<double*>(out->values.data())[slot] = x; break;
      }
    };
    int64_t q = 0;
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t p = r_ptr[static_cast<size_t>(i)]; p < r_ptr[static_cast<size_t>(i) + 1]; ++p) {
        const double x = r_val[static_cast<size_t>(p)];
        if (x == 0.0) continue;
        const int64_t j = r_col[static_cast<size_t>(p)];
        if (sparse) {
          out->col_idx[static_cast<size_t>(q)] = static_cast<uint32_t>(j);
          put(q++, x);
        } else {
          put(i * cols + j, x);
        }
      }
    row_stats(out, 1);
  } catch (const std::bad_alloc&) {
    return fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY,
                "%s: out of host memory for a %" PRId64 " x %" PRId64 " table with %" PRId64
                " nonzeros",
                fn, rows, cols, nnz);
  }
  return DIRMN_SUCCESS;
}

}  // namespace capi
}  // namespace dirmn
