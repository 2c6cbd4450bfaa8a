// cpu_backend.cpp: the multi-threaded host backend.
//
// Shared alpha: per parameter vector, a table T_v[n] = lpoch(alpha_v, n) for
// n below a per-column cut-off turns each nonzero cell into one lookup
// (T_v[0] = 0 makes dense zero cells free of branches). Columns whose counts
// exceed the cut-off, or which are too sparse to amortise a table, go through
// math::lpoch directly. Per-row alpha has no reuse: every nonzero cell costs
// one lpoch.
#include <algorithm>
#include <cmath>
#include <functional>
#include <new>
#include <system_error>
#include <thread>

#include "../backend.hpp"
#include "../dirmn_math.hpp"
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

// T_v[n] = sum_{j<n} log(alpha_v + j), accumulated with Kahan compensation so
// entries near the cut-off keep full precision.
void fill_table(const TableLayout& L, const double* alpha, int64_t cols, double* T) {
  for (int64_t v = 0; v < cols; ++v) {
    double* tv = T + L.offset[static_cast<size_t>(v)];
    const int64_t cut = L.cut[static_cast<size_t>(v)];
    const double a = alpha[v];
    double sum = 0.0, comp = 0.0;
    tv[0] = 0.0;
    for (int64_t n = 1; n < cut; ++n) {
      const double y = std::log(a + static_cast<double>(n - 1)) - comp;
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

// Sum over one stored cell of lpoch(alpha_v, n), table first.
template <class T>
inline double cell_term(T n, int64_t v, const TableLayout& L, const double* table,
                        const double* alpha) {
  if (static_cast<int64_t>(n) < L.cut[static_cast<size_t>(v)])
    return table[L.offset[static_cast<size_t>(v)] + static_cast<int64_t>(n)];
  return math::lpoch(alpha[v], static_cast<double>(n));
}

template <>
inline double cell_term<double>(double n, int64_t v, const TableLayout& L, const double* table,
                                const double* alpha) {
  if (n == 0.0) return 0.0;
  if (n < static_cast<double>(L.cut[static_cast<size_t>(v)]) && n == std::floor(n))
    return table[L.offset[static_cast<size_t>(v)] + static_cast<int64_t>(n)];
  return math::lpoch(alpha[v], n);
}

// Sum over v in [v0, v1) of lpoch(alpha_v, n_bv) for a dense row. Four
// accumulators break the floating-point dependency chain so the loop runs at
// load throughput.
template <class T>
double dense_row_shared(const T* x, int64_t v0, int64_t v1, const TableLayout& L,
                        const double* table, const double* alpha) {
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
    for (; v < v1; ++v) s[v & 3] += cell_term<T>(x[v], v, L, table, alpha);
  }
  return (s[0] + s[1]) + (s[2] + s[3]);
}

// The same over a sparse row, leaving out column `skip` (-1: none).
template <class T>
double sparse_row_shared(const T* x, const uint32_t* col, int64_t begin, int64_t end,
                         int64_t skip, const TableLayout& L, const double* table,
                         const double* alpha) {
  double s[2] = {0.0, 0.0};
  for (int64_t i = begin; i < end; ++i) {
    const int64_t v = static_cast<int64_t>(col[i]);
    if (v != skip) s[i & 1] += cell_term<T>(x[i], v, L, table, alpha);
  }
  return s[0] + s[1];
}

// Per-row alpha: sum over nonzero cells of lpoch(alpha_v, n_bv), leaving out
// column `skip` (-1: none).
template <class T>
double dense_row_rowwise(const T* x, int64_t cols, int64_t skip, const double* alpha) {
  double s = 0.0;
  for (int64_t v = 0; v < cols; ++v) {
    const double n = static_cast<double>(x[v]);
    if (n != 0.0 && v != skip) s += math::lpoch(alpha[v], n);
  }
  return s;
}

template <class T>
double sparse_row_rowwise(const T* x, const uint32_t* col, int64_t begin, int64_t end,
                          int64_t skip, const double* alpha) {
  double s = 0.0;
  for (int64_t i = begin; i < end; ++i)
    if (static_cast<int64_t>(col[i]) != skip)
      s += math::lpoch(alpha[col[i]], static_cast<double>(x[i]));
  return s;
}

// The row's log-likelihood from its partial sum. `rest` excludes column
// `star` exactly when the row is regrouped (see kRegroupMinCount), and then
// a_rest is the sum of alpha without that column.
inline double finish_row(double rest, double a_sum, double n_total, bool regroup,
                         double a_star, double n_star, double a_rest) {
  if (!regroup) return rest - math::lpoch(a_sum, n_total);
  return rest + math::lpoch(a_star, a_rest) -
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

  BackendResult set_stream(void*) override { return {DIRMN_ERROR_NOT_SUPPORTED, "", 0}; }
  BackendResult get_stream(void**) const override { return {DIRMN_ERROR_NOT_SUPPORTED, "", 0}; }
  BackendResult synchronize() override { return {}; }

  static int resolve_threads(int threads) {
    if (threads > 0) return threads;
    const unsigned hw = std::thread::hardware_concurrency();
    return hw == 0 ? 1 : static_cast<int>(hw);
  }

 private:
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
    auto regrouped = [&](int64_t b) {
      return t.row_max[static_cast<size_t>(b)] >= kRegroupMinCount;
    };

    std::function<void(int64_t)> body;
    TableLayout layout;
    std::vector<double> tables, a_sums, a_prefix, a_suffix;
    if (req.rowwise) {
      body = [&](int64_t c) {
        const int64_t r1 = std::min(rows, (c + 1) * rows_per_chunk);
        for (int64_t b = c * rows_per_chunk; b < r1; ++b) {
          const double* a = req.alpha + b * cols;
          const bool rg = regrouped(b);
          const int64_t star = rg ? t.row_argmax[static_cast<size_t>(b)] : -1;
          const double rest =
              t.sparse ? sparse_row_rowwise<T>(x, t.col_idx.data(), t.row_ptr[b],
                                               t.row_ptr[b + 1], star, a)
                       : dense_row_rowwise<T>(x + b * cols, cols, star, a);
          double a_rest = 0.0;
          if (rg) a_rest = sum_of(a, star) + sum_of(a + star + 1, cols - star - 1);
          store(b, 0,
                finish_row(rest, rg ? 0.0 : sum_of(a, cols), t.row_total[static_cast<size_t>(b)],
                           rg, rg ? a[star] : 0.0, t.row_max[static_cast<size_t>(b)], a_rest));
        }
      };
    } else {
      layout = plan_tables(t);
      tables.resize(static_cast<size_t>(layout.size * K));
      a_sums.resize(static_cast<size_t>(K));
      // Prefix and suffix sums give alpha's sum without any one column to
      // full precision (A - alpha* would cancel when alpha* dominates A).
      a_prefix.resize(static_cast<size_t>(K * (cols + 1)));
      a_suffix.resize(static_cast<size_t>(K * (cols + 1)));
      for (int64_t j = 0; j < K; ++j) {
        const double* a = req.alpha + j * cols;
        fill_table(layout, a, cols, tables.data() + j * layout.size);
        a_sums[static_cast<size_t>(j)] = sum_of(a, cols);
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
          for (int64_t b = r0; b < r1; ++b) {
            const bool rg = regrouped(b);
            const int64_t star = rg ? t.row_argmax[static_cast<size_t>(b)] : -1;
            double rest;
            if (t.sparse) {
              rest = sparse_row_shared<T>(x, t.col_idx.data(), t.row_ptr[b], t.row_ptr[b + 1],
                                          star, layout, tab, a);
            } else if (rg) {
              rest = dense_row_shared<T>(x + b * cols, 0, star, layout, tab, a) +
                     dense_row_shared<T>(x + b * cols, star + 1, cols, layout, tab, a);
            } else {
              rest = dense_row_shared<T>(x + b * cols, 0, cols, layout, tab, a);
            }
            const double a_rest =
                rg ? a_prefix[static_cast<size_t>(j * (cols + 1) + star)] +
                         a_suffix[static_cast<size_t>(j * (cols + 1) + star + 1)]
                   : 0.0;
            store(b, j,
                  finish_row(rest, a_sums[static_cast<size_t>(j)],
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
