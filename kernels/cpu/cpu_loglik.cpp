// cpu_loglik.cpp: the per-row log-likelihood on the host threads.
//
// Shared alpha: per parameter vector, a table T_v[n] = lpoch(alpha_v, n) for
// n below a per-column cut-off turns each nonzero cell into one lookup
// (T_v[0] = 0 makes dense zero cells free of branches); the K vectors' tables
// are interleaved, so a cell's K terms are one contiguous read. Columns whose counts
// exceed the cut-off, or which are too sparse to amortise a table, go through
// math::lpoch directly. Per-row alpha has no reuse: every nonzero cell costs
// one lpoch. Terms are centred (cpu_rows.hpp); the full form's rows with a
// single nonzero cell take one_cell_full instead (cpu_rows.hpp).
#include <algorithm>
#include <cmath>
#include <functional>
#include <new>
#include <type_traits>

#include "../math/vector_math.hpp"
#include "cpu_rows.hpp"

namespace dirmn {
namespace cpu {
namespace {

// T_v[n] = sum_{j<n} log((alpha_v + j) / A) = lpoch(alpha_v, n) - n log A,
// accumulated with Kahan compensation so entries near the cut-off keep full
// precision; for the full form T_v[n] = sum_{j<n} log((alpha_v + j) / (j + 1))
// = lpoch(alpha_v, n) - lgamma(n + 1), uncentred (cpu_rows.hpp). Component
// j of K writes entry (offset_v + n) K + j: a cell's K terms are one
// contiguous read (one or two cache lines), so K components cost about one
// table walk instead of K walks through K tables.
// log(i + 1) for i below the layout's largest cut, once per call (the
// full form's table entries divide by them).
struct LogFactors {
  double log_k[kTableMaxCount + 1];
  explicit LogFactors(const TableLayout& L) {
    for (int64_t i = 0; i + 1 < L.max_cut; ++i) log_k[i] = std::log(static_cast<double>(i + 1));
  }
};

// The logs log(alpha_v + n - 1), n < cut, of a run of columns are taken
// in one vectorised call (vector_math.hpp) of up to kLogBatch entries: a
// scalar log per entry was most of a small table's E step, and a call per
// column cost more than it saved where cuts are a few entries.
constexpr int64_t kLogBatch = 1024;
static_assert(kLogBatch >= kTableMaxCount, "a column's entries fit one batch");

template <bool Full>
void fill_table(const TableLayout& L, const double* log_k, const double* alpha, int64_t v0,
                int64_t v1, double log_a_sum, int64_t K, int64_t j, double* T) {
  double x[kLogBatch], lx[kLogBatch];
  for (int64_t v = v0; v < v1;) {
    // A run of columns whose entries fill at most one batch.
    int64_t w = v, m = 0;
    for (; w < v1; ++w) {
      const int64_t cut = L.cut(w);
      if (cut <= 1) continue;  // the shared entry 0, zeroed with the tables
      if (m + cut - 1 > kLogBatch) break;
      for (int64_t n = 1; n < cut; ++n) x[m++] = alpha[w] + static_cast<double>(n - 1);
    }
    log_many(x, lx, m);
    const double* l = lx;
    for (; v < w; ++v) {
      const int64_t cut = L.cut(v);
      if (cut <= 1) continue;
      double* tv = T + L.offset(v) * K + j;
      double sum = 0.0, comp = 0.0;
      tv[0] = 0.0;
      for (int64_t n = 1; n < cut; ++n) {
        const double y = (l[n - 1] - (Full ? log_k[n - 1] : log_a_sum)) - comp;
        const double s = sum + y;
        comp = (s - sum) - y;
        sum = s;
        tv[n * K] = sum;
      }
      l += cut - 1;
    }
  }
}

// Columns per task of the per-call set-up (tables and lgamma of alpha):
// tasks over columns, not components, so no two threads write the
// interleaved entries of one cache line.
constexpr int64_t kSetupCols = 2048;

// Components are summed this many at a time: their accumulators stay in
// registers and the first level of cache.
constexpr int64_t kGroup = 16;

// Doubles per cache line.
constexpr int64_t kLineDoubles = 8;

// What the row passes of one group of components read: the interleaved
// tables at the group's first component, and the group's alphas and log A.
struct Group {
  const TableLayout* L;
  const double* table;      // tables + j0 (entries K apart per count)
  int64_t K, kg, cols;
  const double* alpha;      // alpha of component j0 (cols per component)
  const double* log_a_sum;  // of component j0 on
  // lgamma(alpha) at the layout's deep columns, from component j0 on: D =
  // L->deep.size() per component, column v at L->deep_slot[v].
  const double* lgamma_alpha;
};

// Adds one stored cell's terms for the group's components to acc, table
// first.
// KG is the group's size where it is known at compile time (1), else 0
// (g.kg): one component's loop then has no inner loop to run.
template <int KG>
inline int64_t group_size(const Group& g) {
  return KG > 0 ? KG : g.kg;
}

template <bool Full, class T, int KG>
inline void add_cell(T n, int64_t v, const Group& g, double* acc) {
  const TableLayout& L = *g.L;
  const uint64_t word = L.packed[static_cast<size_t>(v)];
  const int64_t cut = static_cast<int64_t>(word & ((uint64_t{1} << kCutBits) - 1));
  const double d = static_cast<double>(n);
  const bool tabulated = std::is_floating_point<T>::value
                             ? d < static_cast<double>(cut) && d == std::floor(d)
                             : static_cast<int64_t>(n) < cut;
  if (tabulated) {
    const double* p = g.table + (static_cast<int64_t>(word >> kCutBits) + static_cast<int64_t>(d)) * g.K;
    for (int64_t j = 0; j < group_size<KG>(g); ++j) acc[j] += p[j];
    return;
  }
  if (d == 0.0) return;
  if (math::deep_count_applies(d)) {
    const math::DeepCount c = math::deep_count(d);
    const int64_t D = static_cast<int64_t>(L.deep.size());
    const double* lga = g.lgamma_alpha + L.deep_slot[static_cast<size_t>(v)];
    for (int64_t j = 0; j < group_size<KG>(g); ++j) {
      const double a = g.alpha[j * g.cols + v];
      acc[j] += math::deep_alpha_applies(a)
                    ? deep_value<Full>(a, lga[j * D], c, g.log_a_sum[j])
                    : cell_value<Full>(a, d, g.log_a_sum[j]);
    }
    return;
  }
  for (int64_t j = 0; j < group_size<KG>(g); ++j)
    acc[j] += cell_value<Full>(g.alpha[j * g.cols + v], d, g.log_a_sum[j]);
}

// Sum over the cells of a dense row, leaving out column `skip` (-1: none),
// into rest[0..kg). Four accumulators per component (by column mod 4) break
// the floating-point dependency chain; each component's sum is the same
// whatever the group, so K components give the K = 1 values bit for bit.
template <bool Full, class T, int KG>
void dense_row_shared(const T* x, int64_t cols, int64_t skip, const Group& g, double* rest) {
  double acc[4][kGroup] = {};
  if (!std::is_floating_point<T>::value && g.L->covers_all) {
    // Every count has its entry (zeros' is 0): no test per cell.
    const uint64_t* packed = g.L->packed.data();
    for (int64_t v = 0; v < cols; ++v) {
      if (v == skip) continue;
      const double* p = g.table + (static_cast<int64_t>(packed[v] >> kCutBits) + static_cast<int64_t>(x[v])) * g.K;
      double* a = acc[v & 3];
      for (int64_t j = 0; j < group_size<KG>(g); ++j) a[j] += p[j];
    }
  } else {
    for (int64_t v = 0; v < cols; ++v)
      if (v != skip) add_cell<Full, T, KG>(x[v], v, g, acc[v & 3]);
  }
  for (int64_t j = 0; j < g.kg; ++j) rest[j] = (acc[0][j] + acc[1][j]) + (acc[2][j] + acc[3][j]);
}

// The same over a sparse row (two accumulators, by the cell's position's
// parity). Where the group's size is known (KG > 0), the tabulated cells'
// loop keeps its accumulators and the tables' addresses in registers (acc
// through a pointer made the compiler reload them around every cell: a
// quarter of a K = 1 likelihood of a text table); Stride is the tables'
// stride K where it is 1.
template <bool Full, class T, int KG, int Stride>
void sparse_row_known(const T* x, const uint32_t* col, int64_t begin, int64_t end, int64_t skip,
                      const Group& g, double* rest) {
  const uint64_t* packed = g.L->packed.data();
  const double* table = g.table;
  const int64_t K = Stride > 0 ? Stride : g.K;
  double a0[KG] = {}, a1[KG] = {};
  const auto cell = [&](int64_t i, double* acc) {
    const int64_t v = static_cast<int64_t>(col[i]);
    if (v == skip) return;
    const T n = x[i];
    const uint64_t word = packed[v];
    if (static_cast<int64_t>(n) < static_cast<int64_t>(word & ((uint64_t{1} << kCutBits) - 1))) {
      const double* p = table + (static_cast<int64_t>(word >> kCutBits) + static_cast<int64_t>(n)) * K;
      for (int j = 0; j < KG; ++j) acc[j] += p[j];
    } else {
      add_cell<Full, T, KG>(n, v, g, acc);
    }
  };
  int64_t i = begin;
  if (i < end && (i & 1) != 0) cell(i++, a1);
  for (; i + 1 < end; i += 2) {
    cell(i, a0);
    cell(i + 1, a1);
  }
  if (i < end) cell(i, a0);
  for (int j = 0; j < KG; ++j) rest[j] = a0[j] + a1[j];
}

template <bool Full, class T, int KG>
void sparse_row_shared(const T* x, const uint32_t* col, int64_t begin, int64_t end, int64_t skip,
                       const Group& g, double* rest) {
  if constexpr (KG > 0 && !std::is_floating_point<T>::value) {
    if (g.K == 1)
      sparse_row_known<Full, T, KG, 1>(x, col, begin, end, skip, g, rest);
    else
      sparse_row_known<Full, T, KG, 0>(x, col, begin, end, skip, g, rest);
    return;
  }
  double acc[2][kGroup] = {};
  for (int64_t i = begin; i < end; ++i) {
    const int64_t v = static_cast<int64_t>(col[i]);
    if (v != skip) add_cell<Full, T, KG>(x[i], v, g, acc[i & 1]);
  }
  for (int64_t j = 0; j < g.kg; ++j) rest[j] = acc[0][j] + acc[1][j];
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

// Row b's cell sums for a group of components (KG as in add_cell).
template <bool Full, class T, int KG>
void row_shared(const HostTable& t, const T* x, int64_t b, int64_t skip, const Group& g,
                double* rest) {
  if (t.sparse)
    sparse_row_shared<Full, T, KG>(x, t.col_idx.data(), t.row_ptr[b], t.row_ptr[b + 1], skip, g,
                                   rest);
  else
    dense_row_shared<Full, T, KG>(x + b * t.cols, t.cols, skip, g, rest);
}

// The term of a row of total n for a component of alpha sum a_sum, which
// the row's cell sum less it is the row's value (unless regrouped:
// finish_row). The full form's is in the cells' deep form where theirs may
// be deep: one cell against its own total (V = 1) is then exactly 0.
template <bool Full>
double total_term(double a_sum, double log_a_sum, double lgamma_a_sum, bool any_deep_sum, double n) {
  if (!Full) return centred_lpoch(a_sum, n, log_a_sum);
  if (any_deep_sum && math::deep_count_applies(n) && math::deep_alpha_applies(a_sum))
    return math::lpoch_lfact_deep(a_sum, lgamma_a_sum, math::deep_count(n));
  return math::lpoch_lfact(a_sum, n);
}

template <bool Full, class T>
BackendResult loglik_typed(const HostTable& t, const TableLayout* plan, const LoglikRequest& req,
                           HostThreads& threads, const Interrupt& interrupt) {
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
  std::unique_ptr<double[]> tables;
  double* table0 = nullptr;  // tables' first entry
  std::vector<double> a_sums, log_a_sums, lgamma_a_sums, a_prefix, a_suffix, lgamma_alpha, total_terms;
  DistinctTotals totals;
  const uint32_t* total_slot = nullptr;  // totals.slot where there are totals
  bool any_deep_sum = false;  // a component whose row totals may take the deep form
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
    const TableLayout& layout = *plan;
    const LogFactors factors(layout);
    // Every entry but entry 0 is written by fill_table: no zeroing pass.
    // On a cache line's start: a cell's K = 8 terms are then one line, not
    // two (the base was 16-byte aligned).
    tables.reset(new double[static_cast<size_t>(layout.size * K + kLineDoubles)]);
    table0 = tables.get() + (kLineDoubles - (reinterpret_cast<uintptr_t>(tables.get()) / sizeof(double)) % kLineDoubles) % kLineDoubles;
    std::fill(table0, table0 + K, 0.0);
    a_sums.resize(static_cast<size_t>(K));
    log_a_sums.resize(static_cast<size_t>(K));
    lgamma_a_sums.resize(static_cast<size_t>(K));
    // Prefix and suffix sums give alpha's sum without any one column to
    // full precision (A - alpha* would cancel when alpha* dominates A),
    // for the rows of one cell (Full) or of a peak to regroup; K x cols
    // of them were most of an E step's cost on a wide table with neither.
    bool need_rest = !Full && !t.row_peak_at.empty();
    for (int64_t b = 0; Full && b < rows && !need_rest; ++b) need_rest = one_cell_row(t, b);
    if (need_rest) {
      a_prefix.resize(static_cast<size_t>(K * (cols + 1)));
      a_suffix.resize(static_cast<size_t>(K * (cols + 1)));
    }
    // lgamma_r: std::lgamma writes the process-wide signgam.
    const auto lgamma_if_deep = [](double a) {
      int sign = 0;
      return math::deep_alpha_applies(a) ? ::lgamma_r(a, &sign) : 0.0;
    };
    for (int64_t j = 0; j < K; ++j) {
      const size_t u = static_cast<size_t>(j);
      a_sums[u] = math::compensated_sum(req.alpha + j * cols, cols);
      log_a_sums[u] = std::log(a_sums[u]);
      lgamma_a_sums[u] = lgamma_if_deep(a_sums[u]);
      any_deep_sum = any_deep_sum || math::deep_alpha_applies(a_sums[u]);
    }
    totals = distinct_totals(t);
    if (!totals.value.empty()) total_slot = totals.slot.data();
    const int64_t n_totals = static_cast<int64_t>(totals.value.size());
    total_terms.resize(static_cast<size_t>(n_totals * K));
    if (n_totals > 0)
      threads.parallel_for(
          n_totals,
          [&](int64_t d) {
            for (int64_t j = 0; j < K; ++j)
              total_terms[static_cast<size_t>(d * K + j)] =
                  total_term<Full>(a_sums[static_cast<size_t>(j)], log_a_sums[static_cast<size_t>(j)],
                                   lgamma_a_sums[static_cast<size_t>(j)], any_deep_sum,
                                   totals.value[static_cast<size_t>(d)]);
          },
          static_cast<double>(K) * 64.0);
    const int64_t D = static_cast<int64_t>(layout.deep.size());
    lgamma_alpha.resize(static_cast<size_t>(K * D));
    const int64_t setup_tasks = (cols + kSetupCols - 1) / kSetupCols;
    threads.parallel_for(
        setup_tasks,
        [&](int64_t q) {
          const int64_t v0 = q * kSetupCols, v1 = std::min(cols, v0 + kSetupCols);
          const auto d0 = std::lower_bound(layout.deep.begin(), layout.deep.end(), v0);
          const auto d1 = std::lower_bound(d0, layout.deep.end(), v1);
          for (int64_t j = 0; j < K; ++j) {
            const double* a = req.alpha + j * cols;
            fill_table<Full>(layout, factors.log_k, a, v0, v1, log_a_sums[static_cast<size_t>(j)],
                             K, j, table0);
            for (auto d = d0; d != d1; ++d)
              lgamma_alpha[static_cast<size_t>(j * D + (d - layout.deep.begin()))] = lgamma_if_deep(a[*d]);
          }
        },
        static_cast<double>(K) * static_cast<double>(layout.size + 8 * D));
    for (int64_t j = 0; need_rest && j < K; ++j) {
      const double* a = req.alpha + j * cols;
      double* pre = a_prefix.data() + j * (cols + 1);
      double* suf = a_suffix.data() + j * (cols + 1);
      pre[0] = 0.0;
      for (int64_t v = 0; v < cols; ++v) pre[v + 1] = pre[v] + a[v];
      suf[cols] = 0.0;
      for (int64_t v = cols - 1; v >= 0; --v) suf[v] = suf[v + 1] + a[v];
    }
    // A row's cells are read once per group of components. Where the row's
    // largest count is large enough to be regrouped (finish_row), its cell
    // is left out of the sum and added back for the components that do not
    // regroup.
    // body runs after this block ends: it reads nothing declared in it
    // (deep_n is D taken again, the layout through plan, the totals' slots as total_slot).
    body = [&](int64_t c) {
      const int64_t deep_n = static_cast<int64_t>(plan->deep.size());
      const int64_t r0 = c * rows_per_chunk, r1 = std::min(rows, r0 + rows_per_chunk);
      double rest[kGroup];
      for (int64_t j0 = 0; j0 < K; j0 += kGroup) {
        const Group g{plan, table0 + j0, K, std::min(kGroup, K - j0), cols,
                      req.alpha + j0 * cols, log_a_sums.data() + j0,
                      deep_n == 0 ? nullptr : lgamma_alpha.data() + j0 * deep_n};
        const auto rest_sum = [&](int64_t j, int64_t skipped) {
          const double* pre = a_prefix.data() + (j0 + j) * (cols + 1);
          const double* suf = a_suffix.data() + (j0 + j) * (cols + 1);
          return pre[skipped] + suf[skipped + 1];
        };
        for (int64_t b = r0; b < r1; ++b) {
          const double n_total = t.row_total[static_cast<size_t>(b)];
          if (Full && one_cell_row(t, b)) {
            const int64_t arg = one_cell_column<T>(t, b);
            for (int64_t j = 0; j < g.kg; ++j)
              store(b, j0 + j,
                    one_cell_full(g.alpha[j * cols + arg], rest_sum(j, arg),
                                  a_sums[static_cast<size_t>(j0 + j)], n_total));
            continue;
          }
          const RowPeak peak = Full ? RowPeak{} : row_peak(t, b);
          const bool big = peak.count >= kRegroupMinCount;
          const int64_t star = big ? peak.column : -1;
          switch (g.kg) {
            case 1: row_shared<Full, T, 1>(t, x, b, star, g, rest); break;
            case 8: row_shared<Full, T, 8>(t, x, b, star, g, rest); break;
            case kGroup: row_shared<Full, T, kGroup>(t, x, b, star, g, rest); break;
            default: row_shared<Full, T, 0>(t, x, b, star, g, rest); break;
          }
          const double* memo =
              total_slot == nullptr
                  ? nullptr
                  : total_terms.data() + total_slot[static_cast<size_t>(n_total)] * K + j0;
          const auto row_term = [&](int64_t j) {
            const size_t u = static_cast<size_t>(j0 + j);
            return memo != nullptr ? memo[j]
                                   : total_term<Full>(a_sums[u], log_a_sums[u], lgamma_a_sums[u],
                                                      any_deep_sum, n_total);
          };
          for (int64_t j = 0; j < g.kg; ++j) {
            if (Full) {
              store(b, j0 + j, rest[j] - row_term(j));
              continue;
            }
            const double a_sum = a_sums[static_cast<size_t>(j0 + j)];
            const double la = g.log_a_sum[j];
            const double a_rest = big ? rest_sum(j, star) : 0.0;
            const bool rg = big && regroup_helps(a_rest, peak.count);
            if (!rg && !big) {
              store(b, j0 + j, rest[j] - row_term(j));
              continue;
            }
            double r = rest[j];
            if (big && !rg) {
              double peak_term = 0.0;
              Group gj = g;
              gj.table += j;
              gj.alpha += j * cols;
              gj.log_a_sum += j;
              if (gj.lgamma_alpha != nullptr) gj.lgamma_alpha += j * deep_n;
              gj.kg = 1;
              add_cell<Full, double, 1>(peak.count, star, gj, &peak_term);
              r += peak_term;
            }
            store(b, j0 + j,
                  finish_row(r, a_sum, la, n_total, rg, rg ? g.alpha[j * cols + star] : 0.0,
                             peak.count, a_rest));
          }
        }
      }
    };
  }
  const bool finished = threads.run(chunks, body, [&] { return interrupt.poll(); });
  if (!finished) return {DIRMN_ERROR_CANCELLED, "", 0};
  return {};
}

}  // namespace

BackendResult loglik(const HostTable& t, const TableLayout* plan, const LoglikRequest& req,
                     HostThreads& threads, const Interrupt& interrupt) {
  return with_value_type(t.vtype, [&](auto tag) {
    return req.full ? loglik_typed<true, decltype(tag)>(t, plan, req, threads, interrupt)
                    : loglik_typed<false, decltype(tag)>(t, plan, req, threads, interrupt);
  });
}

}  // namespace cpu
}  // namespace dirmn
