// cpu_backend.cpp: the multi-threaded host backend.
//
// Shared alpha: per parameter vector, a table T_v[n] = lpoch(alpha_v, n) for
// n below a per-column cut-off turns each nonzero cell into one lookup
// (T_v[0] = 0 makes dense zero cells free of branches). Columns whose counts
// exceed the cut-off, or which are too sparse to amortise a table, go through
// math::lpoch directly. Per-row alpha has no reuse: every nonzero cell costs
// one lpoch.
//
// Every cell term is centred: lpoch(alpha_v, n) - n log A instead of
// lpoch(alpha_v, n), and the row total's term likewise. The n log A parts
// cancel exactly (sum_v n_v = N), and what remains has the size of the
// result, so partial sums never grow to ~N log A (8e8 at alpha = 1e10) where
// each addition would round away more than the 1e-12 the results promise.
#include <algorithm>
#include <cmath>
#include <functional>
#include <new>
#include <system_error>
#include <thread>
#include <type_traits>

#include "../backend.hpp"
#include "../dirmn_math.hpp"
#include "../histogram.hpp"
#include "thread_pool.hpp"

namespace dirmn {
namespace {

// Counts at or above this are never tabulated: a table entry per possible
// value would cost more to build than it saves.
constexpr int64_t kTableMaxCount = 255;
// A column gets a table when it has at least this many nonzeros per table
// entry; below that, evaluating its cells directly is cheaper.
constexpr double kTableMinNnzPerEntry = 0.5;
// Work per chunk handed to one thread, in cells (dense) or nonzeros (sparse):
// large enough to amortise scheduling, small enough to balance and to poll
// the interrupt callback often.
constexpr int64_t kCellsPerChunk = int64_t{1} << 16;

class CpuCounts final : public BackendCounts {
 public:
  explicit CpuCounts(HostTable&& t) : table(std::move(t)) {}
  HostTable table;
};

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
// precision.
void fill_table(const TableLayout& L, const double* alpha, int64_t cols, double log_a_sum,
                double* T) {
  for (int64_t v = 0; v < cols; ++v) {
    double* tv = T + L.offset[static_cast<size_t>(v)];
    const int64_t cut = L.cut[static_cast<size_t>(v)];
    const double a = alpha[v];
    double sum = 0.0, comp = 0.0;
    tv[0] = 0.0;
    for (int64_t n = 1; n < cut; ++n) {
      const double y = (std::log(a + static_cast<double>(n - 1)) - log_a_sum) - comp;
      const double s = sum + y;
      comp = (s - sum) - y;
      sum = s;
      tv[n] = sum;
    }
  }
}

template <class T>
const T* as(const std::vector<unsigned char>& bytes) {
  return reinterpret_cast<const T*>(bytes.data());
}

// lpoch(a, n) - n log A: the centred term of one cell.
inline double centred_lpoch(double a, double n, double log_a_sum) {
  return math::lpoch(a, n) - n * log_a_sum;
}

// The centred term of one stored cell, table first.
template <class T>
inline double cell_term(T n, int64_t v, const TableLayout& L, const double* table,
                        const double* alpha, double log_a_sum) {
  if (static_cast<int64_t>(n) < L.cut[static_cast<size_t>(v)])
    return table[L.offset[static_cast<size_t>(v)] + static_cast<int64_t>(n)];
  return centred_lpoch(alpha[v], static_cast<double>(n), log_a_sum);
}

template <>
inline double cell_term<double>(double n, int64_t v, const TableLayout& L, const double* table,
                                const double* alpha, double log_a_sum) {
  if (n == 0.0) return 0.0;
  if (n < static_cast<double>(L.cut[static_cast<size_t>(v)]) && n == std::floor(n))
    return table[L.offset[static_cast<size_t>(v)] + static_cast<int64_t>(n)];
  return centred_lpoch(alpha[v], n, log_a_sum);
}

// Sum over v in [v0, v1) of lpoch(alpha_v, n_bv) for a dense row. Four
// accumulators break the floating-point dependency chain so the loop runs at
// load throughput.
template <class T>
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
    for (; v < v1; ++v) s[v & 3] += cell_term<T>(x[v], v, L, table, alpha, log_a_sum);
  }
  return (s[0] + s[1]) + (s[2] + s[3]);
}

// The same over a sparse row, leaving out column `skip` (-1: none).
template <class T>
double sparse_row_shared(const T* x, const uint32_t* col, int64_t begin, int64_t end,
                         int64_t skip, const TableLayout& L, const double* table,
                         const double* alpha, double log_a_sum) {
  double s[2] = {0.0, 0.0};
  for (int64_t i = begin; i < end; ++i) {
    const int64_t v = static_cast<int64_t>(col[i]);
    if (v != skip) s[i & 1] += cell_term<T>(x[i], v, L, table, alpha, log_a_sum);
  }
  return s[0] + s[1];
}

// Per-row alpha: sum over nonzero cells of lpoch(alpha_v, n_bv), leaving out
// column `skip` (-1: none).
template <class T>
double dense_row_rowwise(const T* x, int64_t cols, int64_t skip, const double* alpha,
                         double log_a_sum) {
  double s = 0.0;
  for (int64_t v = 0; v < cols; ++v) {
    const double n = static_cast<double>(x[v]);
    if (n != 0.0 && v != skip) s += centred_lpoch(alpha[v], n, log_a_sum);
  }
  return s;
}

template <class T>
double sparse_row_rowwise(const T* x, const uint32_t* col, int64_t begin, int64_t end,
                          int64_t skip, const double* alpha, double log_a_sum) {
  double s = 0.0;
  for (int64_t i = begin; i < end; ++i)
    if (static_cast<int64_t>(col[i]) != skip)
      s += centred_lpoch(alpha[col[i]], static_cast<double>(x[i]), log_a_sum);
  return s;
}

// Regrouping trades terms of size ~N log N for terms of size ~(A - alpha*)
// log(...): it helps only where the rest of alpha is small beside the
// dominant count.
inline bool regroup_helps(double a_rest, double n_star) { return a_rest < n_star; }

// The row's log-likelihood from its centred partial sum. `rest` excludes
// column `star` exactly when the row is regrouped (see kRegroupMinCount), and
// then a_rest is the sum of alpha without that column.
inline double finish_row(double rest, double a_sum, double log_a_sum, double n_total,
                         bool regroup, double a_star, double n_star, double a_rest) {
  if (!regroup) return rest - centred_lpoch(a_sum, n_total, log_a_sum);
  return rest + (n_total - n_star) * log_a_sum + math::lpoch(a_star, a_rest) -
         math::lpoch(a_star + n_star, a_rest + (n_total - n_star));
}

double sum_of(const double* a, int64_t n) {
  double s = 0.0, comp = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double y = a[i] - comp;
    const double t = s + y;
    comp = (t - s) - y;
    s = t;
  }
  return s;
}

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(std::unique_ptr<ThreadPool> pool) : pool_(std::move(pool)) {}

  dirmn_backend kind() const override { return DIRMN_BACKEND_CPU; }
  int device() const override { return 0; }
  int threads() const override { return pool_->size(); }
  void parallel_for(int64_t n, const std::function<void(int64_t)>& body) override {
    if (n <= 1 || pool_->size() == 1) {
      for (int64_t i = 0; i < n; ++i) body(i);
      return;
    }
    pool_->run(n, body, [] { return false; });
  }

  BackendResult set_threads(int threads) override {
    const int n = resolve_threads(threads);
    if (n == pool_->size()) return {};
    try {
      pool_ = std::make_unique<ThreadPool>(n);
    } catch (...) {
      return {DIRMN_ERROR_OUT_OF_MEMORY, "starting worker threads", 0};
    }
    return {};
  }

  BackendResult adopt(HostTable&& table, std::unique_ptr<BackendCounts>* out) override {
    try {
      *out = std::make_unique<CpuCounts>(std::move(table));
    } catch (const std::bad_alloc&) {
      return {DIRMN_ERROR_OUT_OF_MEMORY, "host counts table", 0};
    }
    return {};
  }

  BackendResult loglik(const BackendCounts& counts, const LoglikRequest& req,
                       const Interrupt& interrupt) override {
    const HostTable& t = static_cast<const CpuCounts&>(counts).table;
    try {
      switch (t.vtype) {
        case ValueType::U8: return loglik_typed<uint8_t>(t, req, interrupt);
        case ValueType::U16: return loglik_typed<uint16_t>(t, req, interrupt);
        case ValueType::U32: return loglik_typed<uint32_t>(t, req, interrupt);
        case ValueType::F64: return loglik_typed<double>(t, req, interrupt);
      }
    } catch (const std::bad_alloc&) {
      return {DIRMN_ERROR_OUT_OF_MEMORY, "likelihood workspace", 0};
    }
    return {DIRMN_ERROR_INTERNAL, "unknown value type", 0};
  }

  BackendResult row_totals(const BackendCounts& counts, double* host_out) override {
    const HostTable& t = static_cast<const CpuCounts&>(counts).table;
    std::copy(t.row_total.begin(), t.row_total.end(), host_out);
    return {};
  }

  BackendResult histograms_multi(const BackendCounts& counts, const double* weights, int64_t k,
                                 std::vector<Histograms>* out,
                                 const Interrupt& interrupt) override {
    const HostTable& t = static_cast<const CpuCounts&>(counts).table;
    try {
      switch (t.vtype) {
        case ValueType::U8: return histograms_typed<uint8_t>(t, weights, k, out, interrupt);
        case ValueType::U16: return histograms_typed<uint16_t>(t, weights, k, out, interrupt);
        case ValueType::U32: return histograms_typed<uint32_t>(t, weights, k, out, interrupt);
        case ValueType::F64: return histograms_typed<double>(t, weights, k, out, interrupt);
      }
    } catch (const std::bad_alloc&) {
      return {DIRMN_ERROR_OUT_OF_MEMORY, "count histograms", 0};
    }
    return {DIRMN_ERROR_INTERNAL, "unknown value type", 0};
  }

  const HostTable* host_table(const BackendCounts& counts) const override {
    return &static_cast<const CpuCounts&>(counts).table;
  }

  BackendResult rowwise_derivatives(const BackendCounts& counts, const RowwiseDerivRequest& req,
                                    const Interrupt& interrupt) override {
    const HostTable& t = static_cast<const CpuCounts&>(counts).table;
    switch (t.vtype) {
      case ValueType::U8: return rowwise_derivatives_typed<uint8_t>(t, req, interrupt);
      case ValueType::U16: return rowwise_derivatives_typed<uint16_t>(t, req, interrupt);
      case ValueType::U32: return rowwise_derivatives_typed<uint32_t>(t, req, interrupt);
      case ValueType::F64: return rowwise_derivatives_typed<double>(t, req, interrupt);
    }
    return {DIRMN_ERROR_INTERNAL, "unknown value type", 0};
  }

  BackendResult set_stream(void*) override { return {DIRMN_ERROR_NOT_SUPPORTED, "", 0}; }
  BackendResult get_stream(void**) const override { return {DIRMN_ERROR_NOT_SUPPORTED, "", 0}; }
  BackendResult synchronize() override { return {}; }

  static int resolve_threads(int threads) {
    if (threads > 0) return threads;
    const unsigned hw = std::thread::hardware_concurrency();
    return hw == 0 ? 1 : static_cast<int>(hw);
  }

 private:
  // Calls f(v, n) for each nonzero cell of row b.
  template <class T, class F>
  static void for_each_nonzero(const HostTable& t, int64_t b, F&& f) {
    const T* x = as<T>(t.values);
    if (t.sparse) {
      for (int64_t i = t.row_ptr[b]; i < t.row_ptr[b + 1]; ++i)
        f(static_cast<int64_t>(t.col_idx[i]), static_cast<double>(x[i]));
    } else {
      const T* row = x + b * t.cols;
      for (int64_t v = 0; v < t.cols; ++v)
        if (row[v] != 0) f(v, static_cast<double>(row[v]));
    }
  }

  // 8-bit tables: counts index per-column accumulators directly, one set
  // per thread over its own rows, merged at the end. No per-cell builder
  // logic, so the pass runs at memory speed.
  BackendResult histograms_u8(const HostTable& t, const double* weights, int64_t k,
                              std::vector<Histograms>* out, const Interrupt& interrupt) {
    const int64_t V = t.cols, bins = static_cast<int64_t>(t.max_count) + 1;
    const int64_t per_part = k * V * bins;
    const int parts = static_cast<int>(std::max<int64_t>(
        1, std::min<int64_t>(pool_->size(), t.rows * V / kCellsPerChunk + 1)));
    std::vector<std::vector<double>> acc(static_cast<size_t>(parts),
                                         std::vector<double>(static_cast<size_t>(per_part), 0.0));
    const int64_t rows_per_part = (t.rows + parts - 1) / parts;
    const uint8_t* x = t.values.data();
    std::function<void(int64_t)> body = [&](int64_t p) {
      double* a = acc[static_cast<size_t>(p)].data();
      const int64_t r1 = std::min(t.rows, (p + 1) * rows_per_part);
      for (int64_t b = p * rows_per_part; b < r1; ++b) {
        for (int64_t j = 0; j < k; ++j) {
          const double w = weights ? weights[b * k + j] : 1.0;
          if (w == 0.0) continue;
          double* aj = a + j * V * bins;
          if (t.sparse) {
            for (int64_t i = t.row_ptr[static_cast<size_t>(b)]; i < t.row_ptr[static_cast<size_t>(b) + 1]; ++i)
              aj[static_cast<int64_t>(t.col_idx[static_cast<size_t>(i)]) * bins + x[i]] += w;
          } else {
            const uint8_t* row = x + b * V;
            for (int64_t v = 0; v < V; ++v) aj[v * bins + row[v]] += w;  // bin 0 is ignored
          }
        }
      }
    };
    if (!pool_->run(parts, body, [&] { return interrupt.poll(); }))
      return {DIRMN_ERROR_CANCELLED, "", 0};
    for (int p = 1; p < parts; ++p)
      for (int64_t i = 0; i < per_part; ++i) acc[0][static_cast<size_t>(i)] += acc[static_cast<size_t>(p)][static_cast<size_t>(i)];
    out->resize(static_cast<size_t>(k));
    for (int64_t j = 0; j < k; ++j) {
      Histograms& h = (*out)[static_cast<size_t>(j)];
      h.cols = V;
      h.column.resize(static_cast<size_t>(V));
      for (int64_t v = 0; v < V; ++v)
        histogram_from_value_weights(acc[0].data() + (j * V + v) * bins, static_cast<int>(bins),
                                     &h.column[static_cast<size_t>(v)]);
      HistogramBuilder tot(kHistTotalIndexMax);
      double lcoef = 0.0;
      for (int64_t b = 0; b < t.rows; ++b) {
        const double w = weights ? weights[b * k + j] : 1.0;
        if (w == 0.0 || t.row_total[static_cast<size_t>(b)] == 0.0) continue;
        tot.add(t.row_total[static_cast<size_t>(b)], w);
        lcoef += w * t.row_lcoef[static_cast<size_t>(b)];
      }
      h.total = tot.finish();
      h.lcoef_sum = lcoef;
    }
    return {};
  }

  // Accumulators of this many entries per thread at most (8 bytes each)
  // take the 8-bit path; beyond, the builders' memory scales better.
  static constexpr int64_t kU8HistogramMaxEntries = int64_t{1} << 23;

  template <class T>
  BackendResult histograms_typed(const HostTable& t, const double* weights, int64_t k,
                                 std::vector<Histograms>* out, const Interrupt& interrupt) {
    if (std::is_same<T, uint8_t>::value &&
        k * t.cols * (static_cast<int64_t>(t.max_count) + 1) <= kU8HistogramMaxEntries)
      return histograms_u8(t, weights, k, out, interrupt);
    // One pass over the rows; each (weighting, column) pair and each
    // weighting's totals accumulate their own builder. Polled every
    // kCellsPerChunk cells.
    const size_t K = static_cast<size_t>(k), V = static_cast<size_t>(t.cols);
    std::vector<HistogramBuilder> col(K * V), tot(K, HistogramBuilder(kHistTotalIndexMax));
    std::vector<double> lcoef(K, 0.0);
    double since_poll = 0.0;
    for (int64_t b = 0; b < t.rows; ++b) {
      if (t.row_total[static_cast<size_t>(b)] == 0.0) continue;
      const double* w = weights ? weights + b * k : nullptr;
      for (size_t j = 0; j < K; ++j) {
        const double wj = w ? w[j] : 1.0;
        if (wj == 0.0) continue;
        HistogramBuilder* cj = col.data() + j * V;
        for_each_nonzero<T>(t, b, [&](int64_t v, double n) { cj[v].add(n, wj); });
        tot[j].add(t.row_total[static_cast<size_t>(b)], wj);
        lcoef[j] += wj * t.row_lcoef[static_cast<size_t>(b)];
      }
      since_poll += static_cast<double>(k) *
                    (t.sparse ? static_cast<double>(t.row_ptr[b + 1] - t.row_ptr[b])
                              : static_cast<double>(t.cols));
      if (since_poll >= static_cast<double>(kCellsPerChunk)) {
        since_poll = 0.0;
        if (interrupt.poll()) return {DIRMN_ERROR_CANCELLED, "", 0};
      }
    }
    out->resize(K);
    for (size_t j = 0; j < K; ++j) {
      Histograms& h = (*out)[j];
      h.cols = t.cols;
      h.column.clear();
      h.column.reserve(V);
      for (size_t v = 0; v < V; ++v) h.column.push_back(col[j * V + v].finish());
      h.total = tot[j].finish();
      h.lcoef_sum = lcoef[j];
    }
    return {};
  }

  template <class T>
  BackendResult rowwise_derivatives_typed(const HostTable& t, const RowwiseDerivRequest& req,
                                          const Interrupt& interrupt) {
    const int64_t rows = t.rows, cols = t.cols;
    const int64_t rows_per_chunk = std::max<int64_t>(1, kCellsPerChunk / std::max<int64_t>(1, cols));
    const int64_t chunks = (rows + rows_per_chunk - 1) / rows_per_chunk;
    std::function<void(int64_t)> body = [&](int64_t c) {
      const int64_t r1 = std::min(rows, (c + 1) * rows_per_chunk);
      for (int64_t b = c * rows_per_chunk; b < r1; ++b) {
        const double* a = req.alpha + b * cols;
        const double n_total = t.row_total[static_cast<size_t>(b)];
        const int64_t arg = t.row_argmax[static_cast<size_t>(b)];
        const bool big = t.row_max[static_cast<size_t>(b)] >= kRegroupMinCount;
        const double a_rest = big ? sum_of(a, arg) + sum_of(a + arg + 1, cols - arg - 1) : 0.0;
        const bool rg = big && regroup_helps(a_rest, t.row_max[static_cast<size_t>(b)]);
        const int64_t star = rg ? arg : -1;
        const double a_sum = sum_of(a, cols);
        const double log_a_sum = std::log(a_sum);
        const double d_tot = math::dpoch(a_sum, n_total);
        const double t_tot = math::tpoch(a_sum, n_total);
        double* g = req.gradient ? req.gradient + b * cols : nullptr;
        double* h = req.hessian_diag ? req.hessian_diag + b * cols : nullptr;
        if (g)
          for (int64_t v = 0; v < cols; ++v) g[v] = -d_tot;
        if (h)
          for (int64_t v = 0; v < cols; ++v) h[v] = 0.0;
        double rest = 0.0;
        for_each_nonzero<T>(t, b, [&](int64_t v, double n) {
          if (v != star) rest += centred_lpoch(a[v], n, log_a_sum);
          if (g) g[v] += math::dpoch(a[v], n);
          if (h) h[v] = math::tpoch(a[v], n);
        });
        if (req.log_param && g) {
          // d/dlog a = a d/da; d2/dlog a2 = a^2 d2/da2 + a d/da (u becomes alpha).
          for (int64_t v = 0; v < cols; ++v) {
            if (h) h[v] = a[v] * a[v] * h[v] + a[v] * g[v];
            g[v] *= a[v];
          }
        }
        if (req.loglik) {
          double ll = finish_row(rest, a_sum, log_a_sum, n_total, rg, rg ? a[star] : 0.0,
                                 t.row_max[static_cast<size_t>(b)], a_rest);
          if (req.full) ll += t.row_lcoef[static_cast<size_t>(b)];
          req.loglik[b] = ll;
        }
        if (req.hessian_scalar) req.hessian_scalar[b] = -t_tot;
      }
    };
    const bool finished = pool_->run(chunks, body, [&] { return interrupt.poll(); });
    if (!finished) return {DIRMN_ERROR_CANCELLED, "", 0};
    return {};
  }

  template <class T>
  BackendResult loglik_typed(const HostTable& t, const LoglikRequest& req,
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
      if (req.full) ll += t.row_lcoef[static_cast<size_t>(b)];
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
          const int64_t arg = t.row_argmax[static_cast<size_t>(b)];
          const bool big = t.row_max[static_cast<size_t>(b)] >= kRegroupMinCount;
          const double a_rest =
              big ? sum_of(a, arg) + sum_of(a + arg + 1, cols - arg - 1) : 0.0;
          const bool rg = big && regroup_helps(a_rest, t.row_max[static_cast<size_t>(b)]);
          const int64_t star = rg ? arg : -1;
          const double a_sum = sum_of(a, cols);
          const double log_a_sum = std::log(a_sum);
          const double rest =
              t.sparse ? sparse_row_rowwise<T>(x, t.col_idx.data(), t.row_ptr[b],
                                               t.row_ptr[b + 1], star, a, log_a_sum)
                       : dense_row_rowwise<T>(x + b * cols, cols, star, a, log_a_sum);
          store(b, 0,
                finish_row(rest, a_sum, log_a_sum, t.row_total[static_cast<size_t>(b)], rg,
                           rg ? a[star] : 0.0, t.row_max[static_cast<size_t>(b)], a_rest));
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
        a_sums[static_cast<size_t>(j)] = sum_of(a, cols);
        log_a_sums[static_cast<size_t>(j)] = std::log(a_sums[static_cast<size_t>(j)]);
        fill_table(layout, a, cols, log_a_sums[static_cast<size_t>(j)],
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
            const int64_t arg = t.row_argmax[static_cast<size_t>(b)];
            const bool big = t.row_max[static_cast<size_t>(b)] >= kRegroupMinCount;
            const double a_rest =
                big ? a_prefix[static_cast<size_t>(j * (cols + 1) + arg)] +
                          a_suffix[static_cast<size_t>(j * (cols + 1) + arg + 1)]
                    : 0.0;
            const bool rg = big && regroup_helps(a_rest, t.row_max[static_cast<size_t>(b)]);
            const int64_t star = rg ? arg : -1;
            double rest;
            if (t.sparse) {
              rest = sparse_row_shared<T>(x, t.col_idx.data(), t.row_ptr[b], t.row_ptr[b + 1],
                                          star, layout, tab, a, la);
            } else if (rg) {
              rest = dense_row_shared<T>(x + b * cols, 0, star, layout, tab, a, la) +
                     dense_row_shared<T>(x + b * cols, star + 1, cols, layout, tab, a, la);
            } else {
              rest = dense_row_shared<T>(x + b * cols, 0, cols, layout, tab, a, la);
            }

            store(b, j,
                  finish_row(rest, a_sums[static_cast<size_t>(j)], la,
                             t.row_total[static_cast<size_t>(b)], rg, rg ? a[star] : 0.0,
                             t.row_max[static_cast<size_t>(b)], a_rest));
          }
        }
      };
    }
    const bool finished = pool_->run(chunks, body, [&] { return interrupt.poll(); });
    if (!finished) return {DIRMN_ERROR_CANCELLED, "", 0};
    return {};
  }

  std::unique_ptr<ThreadPool> pool_;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend(int threads, BackendResult* result) {
  try {
    auto pool = std::make_unique<ThreadPool>(CpuBackend::resolve_threads(threads));
    *result = {};
    return std::make_unique<CpuBackend>(std::move(pool));
  } catch (...) {
    *result = {DIRMN_ERROR_OUT_OF_MEMORY, "starting worker threads", 0};
    return nullptr;
  }
}

}  // namespace dirmn
