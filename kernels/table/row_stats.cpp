// row_stats.cpp: the per-row and per-column statistics of an encoded
// table -- row totals, log multinomial coefficients, row maxima, column
// maxima and nonzeros -- computed from the compact form, which is narrower
// and row-major whatever the caller's layout was.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "../math/special.hpp"
#include "build.hpp"
#include "validate.hpp"

namespace dirmn {
namespace {

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

inline double log_factorial(const double* table, double n) {
  if (n < kLogFactorialTable && build::whole(n)) return table[static_cast<size_t>(n)];
  return std::lgamma(n + 1.0);
}

// Row totals, multinomial coefficients, row maxima and column statistics
// from the encoded table, over row blocks in parallel.
template <class VT>
bool row_stats_typed(HostTable* t, HostThreads& threads, int parts, const Interrupt& interrupt) {
  const int64_t rows = t->rows, cols = t->cols;
  const VT* x = reinterpret_cast<const VT*>(t->values.data());
  const double* lf = log_factorial_table();
  t->row_total.assign(static_cast<size_t>(rows), 0.0);
  t->row_lcoef.assign(static_cast<size_t>(rows), 0.0);
  const bool peaks = keeps_row_peaks(t->vtype);
  if (peaks) t->row_peak_at.assign(static_cast<size_t>(rows), 0);
  else std::vector<int64_t>().swap(t->row_peak_at);
  std::vector<std::vector<double>> cmax(static_cast<size_t>(parts),
                                        std::vector<double>(static_cast<size_t>(cols), 0.0));
  std::vector<std::vector<int64_t>> cnnz(static_cast<size_t>(parts),
                                         std::vector<int64_t>(static_cast<size_t>(cols), 0));
  const bool finished = build::for_row_blocks(threads, rows, parts, interrupt, [&](int k, int64_t r0, int64_t r1) {
    double* col_max = cmax[static_cast<size_t>(k)].data();
    int64_t* col_nnz = cnnz[static_cast<size_t>(k)].data();
    for (int64_t i = r0; i < r1; ++i) {
      double total = 0.0, mx = 0.0, rest = 0.0;
      int64_t arg = 0;  // the largest count's position among the row's stored cells
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
      auto cell = [&](int64_t j, int64_t at, double n) {
        total += n;
        ++col_nnz[j];
        if (n > col_max[j]) col_max[j] = n;
        if (n > mx) {
          if (mx > 0.0) rest += lfact(mx);
          mx = n;
          arg = at;
        } else {
          rest += lfact(n);
        }
      };
      if (t->sparse) {
        const int64_t p0 = t->row_ptr[static_cast<size_t>(i)];
        for (int64_t p = p0; p < t->row_ptr[static_cast<size_t>(i) + 1]; ++p)
          cell(static_cast<int64_t>(t->col_idx[static_cast<size_t>(p)]), p - p0, static_cast<double>(x[p]));
      } else {
        const VT* row = x + i * cols;
        for (int64_t j = 0; j < cols; ++j)
          if (row[j] != 0) cell(j, j, static_cast<double>(row[j]));
      }
      const size_t r = static_cast<size_t>(i);
      t->row_total[r] = total;
      if (peaks) t->row_peak_at[r] = arg;
      t->row_lcoef[r] = math::lpoch(mx + 1.0, total - mx) - rest;
    }
  });
  if (!finished) return false;
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
  return true;
}

// row_stats for the dense 8-bit table, the most common form, written to
// vectorise: every cell is handled branch-free (lf[0] = 0 and zero counts
// add nothing), and the largest count's position is found afterwards. With
// counts below 256 subtracting log(n*!) from the row's sum loses nothing
// that matters (see row_stats_typed for why large counts need care).
bool row_stats_dense_u8(HostTable* t, HostThreads& threads, int parts, const Interrupt& interrupt) {
  const int64_t rows = t->rows, cols = t->cols;
  const uint8_t* x = t->values.data();
  const double* lf = log_factorial_table();
  t->row_total.assign(static_cast<size_t>(rows), 0.0);
  t->row_lcoef.assign(static_cast<size_t>(rows), 0.0);
  std::vector<int64_t>().swap(t->row_peak_at);  // counts below 256 never regroup
  std::vector<std::vector<uint8_t>> cmax(static_cast<size_t>(parts),
                                         std::vector<uint8_t>(static_cast<size_t>(cols), 0));
  std::vector<std::vector<int64_t>> cnnz(static_cast<size_t>(parts),
                                         std::vector<int64_t>(static_cast<size_t>(cols), 0));
  const bool finished = build::for_row_blocks(threads, rows, parts, interrupt, [&](int k, int64_t r0, int64_t r1) {
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
      const size_t r = static_cast<size_t>(i);
      const double rest = ((lsum[0] + lsum[1]) + (lsum[2] + lsum[3])) - lf[mx];
      t->row_total[r] = static_cast<double>(total);
      t->row_lcoef[r] = math::lpoch(mx + 1.0, static_cast<double>(total) - mx) - rest;
    }
  });
  if (!finished) return false;
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
  return true;
}

}  // namespace

bool compute_row_stats(HostTable* t, HostThreads& threads, int parts, const Interrupt& interrupt) {
  bool finished = true;
  with_value_type(t->vtype, [&](auto tag) {
    finished = row_stats_typed<decltype(tag)>(t, threads, parts, interrupt);
  });
  return finished;
}

bool compute_row_stats_dense_u8(HostTable* t, HostThreads& threads, int parts,
                                const Interrupt& interrupt) {
  return row_stats_dense_u8(t, threads, parts, interrupt);
}

}  // namespace dirmn
