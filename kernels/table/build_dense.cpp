// build_dense.cpp: validation of a caller's dense host table and its
// encoding into the compact form.
//
// Dense input is read twice, never copied wider than its final form: a scan
// validates every cell and gathers the statistics that choose the storage, an
// encode pass writes the chosen form. Both walk the caller's memory in its
// own order (row- or column-major) so either layout streams, and both run
// over row blocks on the host threads.
#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "build.hpp"
#include "storage.hpp"
#include "validate.hpp"

namespace dirmn {
namespace {

using build::ScanStats;

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
// waking threads would cost more than they save.
constexpr int64_t kCellsPerScanThread = int64_t{1} << 20;
// Larger tables go in row blocks of about this many cells, at least one per
// thread: the interrupt callback is polled between blocks, so a 1 GB table
// can be stopped every few milliseconds, not only before it starts.
constexpr int64_t kCellsPerBlock = int64_t{1} << 22;

// The row statistics keep a column array per block: one block per thread.
int stat_parts(int64_t rows, int64_t cols, int threads) {
  const int64_t by_size = rows * cols / kCellsPerScanThread + 1;
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>({by_size, threads, rows})));
}

int scan_parts(int64_t rows, int64_t cols, int threads) {
  const int64_t cells = rows * cols;
  if (cells < kCellsPerScanThread) return 1;
  const int64_t blocks = std::max<int64_t>(threads, cells / kCellsPerBlock + 1);
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>({blocks, rows, int64_t{1} << 20})));
}

template <class VT, class S>
bool encode_dense_source(const S* src, int64_t rows, int64_t cols, int64_t rs, int64_t cs,
                         HostThreads& threads, int parts, const Interrupt& interrupt,
                         HostTable* t) {
  VT* dst = reinterpret_cast<VT*>(t->values.data());
  return build::for_row_blocks(threads, rows, parts, interrupt, [&](int, int64_t r0, int64_t r1) {
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
bool encode_dense_any(const S* src, int64_t rows, int64_t cols, int64_t rs, int64_t cs,
                      HostThreads& threads, int parts, const Interrupt& interrupt, HostTable* t) {
  bool finished = true;
  with_value_type(t->vtype, [&](auto tag) {
    finished = encode_dense_source<decltype(tag)>(src, rows, cols, rs, cs, threads, parts,
                                                  interrupt, t);
  });
  return finished;
}

// Converts a dense 8-bit table to CSR in place.
void to_sparse(HostTable* t) {
  const int64_t rows = t->rows, cols = t->cols;
  TableArray<unsigned char> vals(static_cast<size_t>(t->nnz));
  TableArray<uint32_t> idx(static_cast<size_t>(t->nnz));
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
// *cancelled: the interrupt callback stopped it.
template <class S>
bool try_encode_u8(const S* src, int64_t rows, int64_t cols, int64_t rs, int64_t cs,
                   HostThreads& threads, int parts, const Interrupt& interrupt, HostTable* t,
                   bool* cancelled) {
  t->values.resize(static_cast<size_t>(rows * cols));
  uint8_t* dst = t->values.data();
  std::vector<char> ok(static_cast<size_t>(parts), 1);
  *cancelled = !build::for_row_blocks(threads, rows, parts, interrupt, [&](int k, int64_t r0, int64_t r1) {
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
  if (*cancelled) return false;
  for (char o : ok)
    if (!o) return false;
  return true;
}

// The scan stops at the first bad cell it meets, which in a column-major
// walk need not be the first in row-major order, and which of several a
// block meets depends on where the blocks start, that is on the thread
// count. Blocks before the problem's were clean, so the first bad cell in
// row-major order lies in rows [r0, problem->row] of its block: walk those
// again row by row (totals from zero) and report that one.
template <class S>
void first_bad_row_major(const S* src, int64_t r0, int64_t rs, int64_t cs, int64_t cols,
                         bool real_valued, CountsProblem* problem) {
  const double limit = build::row_total_limit(real_valued);
  for (int64_t i = r0; i <= problem->row; ++i) {
    double total = 0.0;
    for (int64_t j = 0; j < cols; ++j) {
      const S x = src[i * rs + j * cs];
      if (x == 0) continue;
      CountsProblem p;
      if (!build::check_count<S>(x, real_valued, &p) ||
          !build::add_to_row(&total, static_cast<double>(x), limit, real_valued, &p)) {
        build::bad_count(&p, i, j, x);
        *problem = p;
        return;
      }
    }
  }
}

template <class S>
dirmn_status build_dense_typed(const S* src, int64_t rows, int64_t cols, int64_t rs, int64_t cs,
                               bool real_valued, dirmn_storage storage, HostThreads& threads,
                               const Interrupt& interrupt, HostTable* t, CountsProblem* problem) {
  const int parts = scan_parts(rows, cols, threads.size());
  bool cancelled = false;
  const bool u8 = try_encode_u8(src, rows, cols, rs, cs, threads, parts, interrupt, t, &cancelled);
  if (cancelled) return DIRMN_ERROR_CANCELLED;
  if (u8) {
    t->rows = rows;
    t->cols = cols;
    t->sparse = false;
    t->real_valued = real_valued;
    t->vtype = ValueType::U8;
    if (!compute_row_stats_dense_u8(t, threads, stat_parts(rows, cols, threads.size()), interrupt))
      return DIRMN_ERROR_CANCELLED;
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
    CountsProblem problem;
  };
  std::vector<Part> part(static_cast<size_t>(parts));
  std::vector<int64_t> row_nnz(static_cast<size_t>(rows), 0);
  // Running row totals, bounded as the counts are (both walks visit a row's
  // cells in column order, so the cell that crosses the bound is the same).
  // An 8-bit table (above) cannot reach the bound: 255 x 2^32 columns < 2^53.
  std::vector<double> row_sum(static_cast<size_t>(rows), 0.0);
  const double limit = build::row_total_limit(real_valued);
  const bool scanned = build::for_row_blocks(threads, rows, parts, interrupt, [&](int k, int64_t r0, int64_t r1) {
    Part& p = part[static_cast<size_t>(k)];
    p.ok = for_each_cell(r0, r1, rows, cols, rs, cs, [&](int64_t i, int64_t j) {
      const S x = src[i * rs + j * cs];
      if (x == 0) return true;
      const double d = static_cast<double>(x);
      if (!build::check_count<S>(x, real_valued, &p.problem) ||
          !build::add_to_row(&row_sum[static_cast<size_t>(i)], d, limit, real_valued, &p.problem)) {
        build::bad_count(&p.problem, i, j, x);
        return false;
      }
      p.stats.add(d);
      ++row_nnz[static_cast<size_t>(i)];
      return true;
    });
  });
  if (!scanned) return DIRMN_ERROR_CANCELLED;
  ScanStats s;
  const int64_t per = (rows + parts - 1) / parts;  // for_row_blocks' blocks
  for (size_t k = 0; k < part.size(); ++k) {
    if (!part[k].ok) {
      *problem = part[k].problem;
      first_bad_row_major(src, std::min(rows, static_cast<int64_t>(k) * per), rs, cs, cols,
                          real_valued, problem);
      return DIRMN_ERROR_INVALID_COUNTS;
    }
    s.merge(part[k].stats);
  }
  const ValueType vt = choose_vtype(s.max_count, s.integral, real_valued);
  const bool sparse = choose_sparse(storage, rows, cols, s.nnz, vt);
  build::layout_table(s, row_nnz, rows, cols, real_valued, sparse, vt, t);
  if (!encode_dense_any<S>(src, rows, cols, rs, cs, threads, parts, interrupt, t) ||
      !compute_row_stats(t, threads, stat_parts(rows, cols, threads.size()), interrupt))
    return DIRMN_ERROR_CANCELLED;
  return DIRMN_SUCCESS;
}

}  // namespace

dirmn_status build_dense_table(const DenseInput& in, HostThreads& threads,
                               const Interrupt& interrupt, HostTable* out, CountsProblem* problem) {
  const int64_t rs = in.rows == 1 ? 0 : in.row_stride;
  const int64_t cs = in.cols == 1 ? 0 : in.col_stride;
  switch (in.dtype) {
    case DIRMN_INT32:
      return build_dense_typed(static_cast<const int32_t*>(in.data), in.rows, in.cols, rs, cs,
                               in.real_valued, in.storage, threads, interrupt, out, problem);
    case DIRMN_INT64:
      return build_dense_typed(static_cast<const int64_t*>(in.data), in.rows, in.cols, rs, cs,
                               in.real_valued, in.storage, threads, interrupt, out, problem);
    case DIRMN_FLOAT32:
      return build_dense_typed(static_cast<const float*>(in.data), in.rows, in.cols, rs, cs,
                               in.real_valued, in.storage, threads, interrupt, out, problem);
    case DIRMN_FLOAT64:
      return build_dense_typed(static_cast<const double*>(in.data), in.rows, in.cols, rs, cs,
                               in.real_valued, in.storage, threads, interrupt, out, problem);
  }
  return DIRMN_ERROR_INVALID_ARGUMENT;
}

}  // namespace dirmn
