// cpu_loglik.cpp: the per-row log-likelihood on the host threads.
//
// Shared alpha: per parameter vector, a table T_v[n] = lpoch(alpha_v, n) for
// n below a per-column cut-off turns each nonzero cell into one lookup
// (T_v[0] = 0 makes dense zero cells free of branches). Columns whose counts
// exceed the cut-off, or which are too sparse to amortise a table, go through
// math::lpoch directly. Per-row alpha has no reuse: every nonzero cell costs
// one lpoch. Terms are centred (cpu_rows.hpp); the full form's rows with a
// single nonzero cell take one_cell_full instead (cpu_rows.hpp).
#include <algorithm>
#include <cmath>
#include <functional>
#include <new>
#include <type_traits>

#include "cpu_rows.hpp"

namespace dirmn {
namespace cpu {
namespace {

// Counts at or above this are never tabulated: a table entry per possible
// value would cost more to build than it saves.
constexpr int64_t kTableMaxCount = 255;
// A column gets a table when it has at least this many nonzeros per table
// entry; below that, evaluating its cells directly is cheaper.
constexpr double kTableMinNnzPerEntry = 0.5;

// Per-column table layout, shared by every parameter vector of a call.
struct TableLayout {
  std::vector<int64_t> offset;  // start of column v's entries
  std::vector<int64_t> cut;     // entries for n < cut[v] exist
  int64_t size = 0;
  bool covers_all = true;       // every stored count has an entry
};

TableLayout plan_tables(const HostTable& t) {
  TableLayout L;
  L.offset.resize(static_cast<size_t>(t.cols));
  L.cut.resize(static_cast<size_t>(t.cols));
  for (int64_t v = 0; v < t.cols; ++v) {
    const double cmax = t.col_max[static_cast<size_t>(v)];
    const int64_t want = static_cast<int64_t>(std::min<double>(cmax, kTableMaxCount)) + 1;
    const bool worth = static_cast<double>(t.col_nnz[static_cast<size_t>(v)]) >=
                       kTableMinNnzPerEntry * static_cast<double>(want);
    // Real-valued counts are tabulated only at their integer values, so they
    // always keep the direct path available (covers_all = false).
    const int64_t cut = worth ? want : 1;
    L.offset[static_cast<size_t>(v)] = L.size;
    L.cut[static_cast<size_t>(v)] = cut;
    L.size += cut;
    if (static_cast<double>(cut) <= cmax || t.real_valued) L.covers_all = false;
  }
  return L;
}

// T_v[n] = sum_{j<n} log((alpha_v + j) / A) = lpoch(alpha_v, n) - n log A,
// accumulated with Kahan compensation so entries near the cut-off keep full
// precision; for the full form T_v[n] = sum_{j<n} log((alpha_v + j) / (j + 1))
// = lpoch(alpha_v, n) - lgamma(n + 1), uncentred (cpu_rows.hpp).
template <bool Full>
void fill_table(const TableLayout& L, const double* alpha, int64_t cols, double log_a_sum,
                double* T) {
  // log(j + 1) for j below the largest cut-off, once per call.
  double log_k[kTableMaxCount + 1];
  if (Full)
    for (int64_t j = 0; j <= kTableMaxCount; ++j) log_k[j] = std::log(static_cast<double>(j + 1));
  for (int64_t v = 0; v < cols; ++v) {
    double* tv = T + L.offset[static_cast<size_t>(v)];
    const int64_t cut = L.cut[static_cast<size_t>(v)];
    const double a = alpha[v];
    double sum = 0.0, comp = 0.0;
    tv[0] = 0.0;
    for (int64_t n = 1; n < cut; ++n) {
      const double y =
          (std::log(a + static_cast<double>(n - 1)) - (Full ? log_k[n - 1] : log_a_sum)) - comp;
      const double s = sum + y;
      comp = (s - sum) - y;
      sum = s;
      tv[n] = sum;
    }
  }
}

// The term of one stored cell, table first.
template <bool Full, class T>
inline double cell_term(T n, int64_t v, const TableLayout& L, const double* table,
                        const double* alpha, double log_a_sum) {
  if (std::is_floating_point<T>::value) {
    const double d = static_cast<double>(n);
    if (d == 0.0) return 0.0;
    if (d < static_cast<double>(L.cut[static_cast<size_t>(v)]) && d == std::floor(d))
      return table[L.offset[static_cast<size_t>(v)] + static_cast<int64_t>(d)];
    return cell_value<Full>(alpha[v], d, log_a_sum);
  }
  if (static_cast<int64_t>(n) < L.cut[static_cast<size_t>(v)])
    return table[L.offset[static_cast<size_t>(v)] + static_cast<int64_t>(n)];
  return cell_value<Full>(alpha[v], static_cast<double>(n), log_a_sum);
}

// Sum over v in [v0, v1) of lpoch(alpha_v, n_bv) for a dense row. Four
// accumulators break the floating-point dependency chain so the loop runs at
// load throughput.
template <bool Full, class T>
double dense_row_shared(const T* x, int64_t v0, int64_t v1, const TableLayout& L,
                        const double* table, const double* alpha, double log_a_sum) {
  double s[4] = {0.0, 0.0, 0.0, 0.0};
  const int64_t* off = L.offset.data();
  int64_t v = v0;
  if (L.covers_all) {
    for (; v + 4 <= v1; v += 4) {
      s[0] += table[off[v] + static_cast<int64_t>(x[v])];
      s[1] += table[off[v + 1] + static_cast<int64_t>(x[v + 1])];
      s[2] += table[off[v + 2] + static_cast<int64_t>(x[v + 2])];
      s[3] += table[off[v + 3] + static_cast<int64_t>(x[v + 3])];
    }
    for (; v < v1; ++v) s[0] += table[off[v] + static_cast<int64_t>(x[v])];
  } else {
    for (; v < v1; ++v) s[v & 3] += cell_term<Full, T>(x[v], v, L, table, alpha, log_a_sum);
  }
  return (s[0] + s[1]) + (s[2] + s[3]);
}

// The same over a sparse row, leaving out column `skip` (-1: none).
template <bool Full, class T>
double sparse_row_shared(const T* x, const uint32_t* col, int64_t begin, int64_t end,
                         int64_t skip, const TableLayout& L, const double* table,
                         const double* alpha, double log_a_sum) {
  double s[2] = {0.0, 0.0};
  for (int64_t i = begin; i < end; ++i) {
    const int64_t v = static_cast<int64_t>(col[i]);
    if (v != skip) s[i & 1] += cell_term<Full, T>(x[i], v, L, table, alpha, log_a_sum);
  }
  return s[0] + s[1];
}

// Per-row alpha: sum over nonzero cells of lpoch(alpha_v, n_bv), leaving out
// column `skip` (-1: none).
template <bool Full, class T>
double dense_row_rowwise(const T* x, int64_t cols, int64_t skip, const double* alpha,
                         double log_a_sum) {
  double s = 0.0;
  for (int64_t v = 0; v < cols; ++v) {
    const double n = static_cast<double>(x[v]);
    if (n != 0.0 && v != skip) s += cell_value<Full>(alpha[v], n, log_a_sum);
  }
  return s;
}

template <bool Full, class T>
double sparse_row_rowwise(const T* x, const uint32_t* col, int64_t begin, int64_t end,
                          int64_t skip, const double* alpha, double log_a_sum) {
  double s = 0.0;
  for (int64_t i = begin; i < end; ++i)
    if (static_cast<int64_t>(col[i]) != skip)
      s += cell_value<Full>(alpha[col[i]], static_cast<double>(x[i]), log_a_sum);
  return s;
}

template <bool Full, class T>
BackendResult loglik_typed(const HostTable& t, const LoglikRequest& req, HostThreads& threads,
                           const Interrupt& interrupt) {
  const int64_t rows = t.rows, cols = t.cols, K = req.k;
  const T* x = as<T>(t.values);
  const double work_per_row =
      t.sparse ? std::max(1.0, static_cast<double>(t.nnz) / static_cast<double>(rows))
               : static_cast<double>(cols);
  const int64_t rows_per_chunk = std::max<int64_t>(
      1, static_cast<int64_t>(static_cast<double>(kCellsPerChunk) / (work_per_row * static_cast<double>(K))));
  const int64_t chunks = (rows + rows_per_chunk - 1) / rows_per_chunk;

  auto store = [&](int64_t b, int64_t j, double ll) {
    req.out[b * req.out_stride_row + j * req.out_stride_k] = ll;
  };

  std::function<void(int64_t)> body;
  TableLayout layout;
  std::vector<double> tables, a_sums, log_a_sums, a_prefix, a_suffix;
  if (req.rowwise) {
    body = [&](int64_t c) {
      const int64_t r1 = std::min(rows, (c + 1) * rows_per_chunk);
      for (int64_t b = c * rows_per_chunk; b < r1; ++b) {
        const double* a = req.alpha + b * cols;
        if (Full && one_cell_row(t, b)) {
          const int64_t arg = one_cell_column<T>(t, b);
          const double a_rest =
              math::compensated_sum(a, arg) + math::compensated_sum(a + arg + 1, cols - arg - 1);
          store(b, 0, one_cell_full(a[arg], a_rest, math::compensated_sum(a, cols),
                                    t.row_total[static_cast<size_t>(b)]));
          continue;
        }
        const RowPeak peak = Full ? RowPeak{} : row_peak(t, b);
        const int64_t arg = peak.column;
        const bool big = peak.count >= kRegroupMinCount;
        const double a_rest =
            big ? math::compensated_sum(a, arg) + math::compensated_sum(a + arg + 1, cols - arg - 1) : 0.0;
        const bool rg = big && regroup_helps(a_rest, peak.count);
        const int64_t star = rg ? arg : -1;
        const double a_sum = math::compensated_sum(a, cols);
        const double log_a_sum = std::log(a_sum);
        const double rest =
            t.sparse ? sparse_row_rowwise<Full, T>(x, t.col_idx.data(), t.row_ptr[b],
                                                   t.row_ptr[b + 1], star, a, log_a_sum)
                     : dense_row_rowwise<Full, T>(x + b * cols, cols, star, a, log_a_sum);
        const double n_total = t.row_total[static_cast<size_t>(b)];
        store(b, 0,
              Full ? full_row<Full>(rest, a_sum, n_total)
                   : finish_row(rest, a_sum, log_a_sum, n_total, rg, rg ? a[star] : 0.0,
                                peak.count, a_rest));
      }
    };
  } else {
    layout = plan_tables(t);
    tables.resize(static_cast<size_t>(layout.size * K));
    a_sums.resize(static_cast<size_t>(K));
    log_a_sums.resize(static_cast<size_t>(K));
    // Prefix and suffix sums give alpha's sum without any one column to
    // full precision (A - alpha* would cancel when alpha* dominates A).
    a_prefix.resize(static_cast<size_t>(K * (cols + 1)));
    a_suffix.resize(static_cast<size_t>(K * (cols + 1)));
    for (int64_t j = 0; j < K; ++j) {
      const double* a = req.alpha + j * cols;
      a_sums[static_cast<size_t>(j)] = math::compensated_sum(a, cols);
      log_a_sums[static_cast<size_t>(j)] = std::log(a_sums[static_cast<size_t>(j)]);
      fill_table<Full>(layout, a, cols, log_a_sums[static_cast<size_t>(j)],
                 tables.data() + j * layout.size);
      double* pre = a_prefix.data() + j * (cols + 1);
      double* suf = a_suffix.data() + j * (cols + 1);
      pre[0] = 0.0;
      for (int64_t v = 0; v < cols; ++v) pre[v + 1] = pre[v] + a[v];
      suf[cols] = 0.0;
      for (int64_t v = cols - 1; v >= 0; --v) suf[v] = suf[v + 1] + a[v];
    }
    body = [&](int64_t c) {
      const int64_t r0 = c * rows_per_chunk, r1 = std::min(rows, r0 + rows_per_chunk);
      for (int64_t j = 0; j < K; ++j) {
        const double* tab = tables.data() + j * layout.size;
        const double* a = req.alpha + j * cols;
        const double la = log_a_sums[static_cast<size_t>(j)];
        for (int64_t b = r0; b < r1; ++b) {
          if (Full && one_cell_row(t, b)) {
            const int64_t arg = one_cell_column<T>(t, b);
            const double a_rest = a_prefix[static_cast<size_t>(j * (cols + 1) + arg)] +
                                  a_suffix[static_cast<size_t>(j * (cols + 1) + arg + 1)];
            store(b, j, one_cell_full(a[arg], a_rest, a_sums[static_cast<size_t>(j)],
                                      t.row_total[static_cast<size_t>(b)]));
            continue;
          }
          const RowPeak peak = Full ? RowPeak{} : row_peak(t, b);
          const int64_t arg = peak.column;
          const bool big = peak.count >= kRegroupMinCount;
          const double a_rest =
              big ? a_prefix[static_cast<size_t>(j * (cols + 1) + arg)] +
                        a_suffix[static_cast<size_t>(j * (cols + 1) + arg + 1)]
                  : 0.0;
          const bool rg = big && regroup_helps(a_rest, peak.count);
          const int64_t star = rg ? arg : -1;
          double rest;
          if (t.sparse) {
            rest = sparse_row_shared<Full, T>(x, t.col_idx.data(), t.row_ptr[b], t.row_ptr[b + 1],
                                        star, layout, tab, a, la);
          } else if (rg) {
            rest = dense_row_shared<Full, T>(x + b * cols, 0, star, layout, tab, a, la) +
                   dense_row_shared<Full, T>(x + b * cols, star + 1, cols, layout, tab, a, la);
          } else {
            rest = dense_row_shared<Full, T>(x + b * cols, 0, cols, layout, tab, a, la);
          }

          const double n_total = t.row_total[static_cast<size_t>(b)];
          store(b, j,
                Full ? full_row<Full>(rest, a_sums[static_cast<size_t>(j)], n_total)
                     : finish_row(rest, a_sums[static_cast<size_t>(j)], la, n_total, rg,
                                  rg ? a[star] : 0.0, peak.count, a_rest));
        }
      }
    };
  }
  const bool finished = threads.run(chunks, body, [&] { return interrupt.poll(); });
  if (!finished) return {DIRMN_ERROR_CANCELLED, "", 0};
  return {};
}

}  // namespace

BackendResult loglik(const HostTable& t, const LoglikRequest& req, HostThreads& threads,
                     const Interrupt& interrupt) {
  return with_value_type(t.vtype, [&](auto tag) {
    return req.full ? loglik_typed<true, decltype(tag)>(t, req, threads, interrupt)
                    : loglik_typed<false, decltype(tag)>(t, req, threads, interrupt);
  });
}

}  // namespace cpu
}  // namespace dirmn
