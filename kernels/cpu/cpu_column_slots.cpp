// cpu_column_slots.cpp: the count histograms of k weightings from the
// table's nonzeros by column (ColumnSlots, cpu_rows.hpp).
//
// The row-ordered pass (cpu_histograms.cpp) feeds k x cols builders, each
// a growing array of its own, and reads the table once per weighting. By
// column, a column's k histograms are summed together in one small array
// (its distinct counts x k) over its cells, each cell reading the k weights
// of its row as one contiguous run, and the table is read once whatever k.
// Each column's cells are in row order, as a builder sees them, so every
// histogram is the builder's bit for bit, at any thread count.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <new>
#include <type_traits>

#include "../table/histogram.hpp"
#include "cpu_rows.hpp"

namespace dirmn {
namespace cpu {
namespace {

// Blocks per thread of the passes by row and by column: enough to balance
// columns of very different sizes.
constexpr int64_t kBlocksPerThread = 8;
constexpr int64_t kMaxBlockColumns = int64_t{1} << 24;

// Splits [0, n) into at most `blocks` ranges of about equal weight, given
// the cumulative weights ptr[0..n] (ptr[0] = 0): boundaries b[0..m].
std::vector<int64_t> split_by(const int64_t* ptr, int64_t n, int64_t blocks) {
  std::vector<int64_t> at{0};
  const int64_t total = ptr[n];
  for (int64_t i = 1; i < blocks; ++i) {
    const int64_t target = total / blocks * i + (total % blocks) * i / blocks;
    const int64_t b = std::lower_bound(ptr, ptr + n + 1, target) - ptr;
    if (b > at.back() && b < n) at.push_back(b);
  }
  at.push_back(n);
  return at;
}

// ColumnSlots' ranks of the row totals, where they are whole and small
// enough for a builder's indexed form (which the ranks' sums reproduce).
void rank_totals(const HostTable& t, ColumnSlots* s) {
  for (double n : t.row_total)
    if (!(n <= kHistTotalIndexMax) || n != std::floor(n)) return;
  std::vector<uint32_t>& value = s->total_value;
  value.clear();
  for (double n : t.row_total)
    if (n != 0.0) value.push_back(static_cast<uint32_t>(n));
  std::sort(value.begin(), value.end());
  value.erase(std::unique(value.begin(), value.end()), value.end());
  s->total_rank.assign(t.row_total.size(), 0);
  for (size_t b = 0; b < t.row_total.size(); ++b)
    if (t.row_total[b] != 0.0)
      s->total_rank[b] = static_cast<uint32_t>(
          std::lower_bound(value.begin(), value.end(), static_cast<uint32_t>(t.row_total[b])) - value.begin());
  s->totals_ranked = true;
}

template <class T>
std::unique_ptr<ColumnSlots> build_typed(const HostTable& t, HostThreads& threads,
                                         const Interrupt& interrupt) {
  const int64_t rows = t.rows, V = t.cols;
  const T* x = as<T>(t.values);
  auto s = std::make_unique<ColumnSlots>();
  // Row blocks by their cells (sparse) or rows (dense).
  std::vector<int64_t> cells(static_cast<size_t>(rows + 1));
  for (int64_t b = 0; b <= rows; ++b)
    cells[static_cast<size_t>(b)] = t.sparse ? t.row_ptr[static_cast<size_t>(b)] : b * V;
  // Each row block keeps a position per column while it scatters: at most
  // kMaxBlockColumns of them in all (128 MB), whatever the threads.
  const int64_t max_blocks = std::max<int64_t>(1, kMaxBlockColumns / std::max<int64_t>(V, 1));
  const std::vector<int64_t> rb =
      split_by(cells.data(), rows, std::min<int64_t>(threads.size() * kBlocksPerThread, max_blocks));
  const int64_t P = static_cast<int64_t>(rb.size()) - 1;
  const auto each_cell = [&](int64_t p, auto&& f) {
    for (int64_t b = rb[static_cast<size_t>(p)]; b < rb[static_cast<size_t>(p) + 1]; ++b) {
      if (t.sparse) {
        for (int64_t i = t.row_ptr[static_cast<size_t>(b)]; i < t.row_ptr[static_cast<size_t>(b) + 1]; ++i)
          if (x[i] != 0) f(b, static_cast<int64_t>(t.col_idx[static_cast<size_t>(i)]), x[i]);
      } else {
        const T* row = x + b * V;
        for (int64_t v = 0; v < V; ++v)
          if (row[v] != 0) f(b, v, row[v]);
      }
    }
  };
  // Each block's cells per column, then each block's first position in
  // every column.
  std::vector<int64_t> at(static_cast<size_t>(P * V), 0);
  const auto poll = [&] { return interrupt.poll(); };
  if (!threads.run(P, [&](int64_t p) {
        int64_t* n = at.data() + p * V;
        each_cell(p, [&](int64_t, int64_t v, T) { ++n[v]; });
      }, poll))
    return nullptr;
  s->col_ptr.assign(static_cast<size_t>(V + 1), 0);
  int64_t pos = 0;
  for (int64_t v = 0; v < V; ++v) {
    s->col_ptr[static_cast<size_t>(v)] = pos;
    for (int64_t p = 0; p < P; ++p) {
      const int64_t n = at[static_cast<size_t>(p * V + v)];
      at[static_cast<size_t>(p * V + v)] = pos;
      pos += n;
    }
  }
  s->col_ptr[static_cast<size_t>(V)] = pos;
  s->row.resize(static_cast<size_t>(pos));
  s->slot.resize(static_cast<size_t>(pos));
  uint32_t* const row = s->row.data();
  uint32_t* const slot = s->slot.data();
  if (!threads.run(P, [&](int64_t p) {
        int64_t* next = at.data() + p * V;
        each_cell(p, [&](int64_t b, int64_t v, T n) {
          const int64_t q = next[v]++;
          row[q] = static_cast<uint32_t>(b);
          slot[q] = static_cast<uint32_t>(n);
        });
      }, poll))
    return nullptr;
  std::vector<int64_t>().swap(at);
  // Per column: whether its counts index the histogram directly, and its
  // distinct counts (counted, then written, the slots renumbered): marked
  // in an array by value where they are indexed, sorted where they are not.
  std::vector<int64_t> distinct(static_cast<size_t>(V + 1), 0);
  const std::vector<int64_t> cb = split_by(s->col_ptr.data(), V, threads.size() * kBlocksPerThread);
  const int64_t C = static_cast<int64_t>(cb.size()) - 1;
  const size_t marks = static_cast<size_t>(kHistIndexMax) + 1;
  std::atomic<bool> no_memory{false};
  const auto by_column = [&](bool write) {
    return threads.run(C, [&](int64_t c) {
      try {
        std::vector<uint32_t> rank(marks, 0);  // value -> rank + 1
        std::vector<uint32_t> sorted;
        for (int64_t v = cb[static_cast<size_t>(c)]; v < cb[static_cast<size_t>(c) + 1]; ++v) {
          const bool indexed = t.col_max[static_cast<size_t>(v)] <= kHistIndexMax;
          const int64_t e0 = s->col_ptr[static_cast<size_t>(v)], e1 = s->col_ptr[static_cast<size_t>(v) + 1];
          uint32_t* const out = write ? s->value.data() + s->value_ptr[static_cast<size_t>(v)] : nullptr;
          if (!indexed) {
            sorted.assign(slot + e0, slot + e1);
            std::sort(sorted.begin(), sorted.end());
            sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
            if (write) {
              std::copy(sorted.begin(), sorted.end(), out);
              for (int64_t e = e0; e < e1; ++e)
                slot[e] = static_cast<uint32_t>(std::lower_bound(sorted.begin(), sorted.end(), slot[e]) -
                                                sorted.begin());
            } else {
              distinct[static_cast<size_t>(v) + 1] = static_cast<int64_t>(sorted.size());
            }
            continue;
          }
          const size_t top = static_cast<size_t>(t.col_max[static_cast<size_t>(v)]);
          for (int64_t e = e0; e < e1; ++e) rank[slot[e]] = 1;
          uint32_t d = 0;
          for (size_t n = 1; n <= top; ++n) {
            if (rank[n] == 0) continue;
            rank[n] = ++d;
            if (write) out[d - 1] = static_cast<uint32_t>(n);
          }
          if (write)
            for (int64_t e = e0; e < e1; ++e) slot[e] = rank[slot[e]] - 1;
          else
            distinct[static_cast<size_t>(v) + 1] = d;
          std::fill(rank.begin(), rank.begin() + static_cast<std::ptrdiff_t>(top + 1), 0u);
        }
      } catch (...) {  // nothing may leave a worker thread
        no_memory = true;
      }
    }, poll);
  };
  if (!by_column(false)) return nullptr;
  if (no_memory) throw std::bad_alloc();
  for (int64_t v = 0; v < V; ++v) distinct[static_cast<size_t>(v) + 1] += distinct[static_cast<size_t>(v)];
  s->value_ptr = std::move(distinct);
  s->value.resize(static_cast<size_t>(s->value_ptr[static_cast<size_t>(V)]));
  if (!by_column(true)) return nullptr;
  if (no_memory) throw std::bad_alloc();
  rank_totals(t, s.get());
  return s;
}

}  // namespace

BackendResult build_column_slots(const HostTable& t, HostThreads& threads,
                                 const Interrupt& interrupt, std::unique_ptr<ColumnSlots>* out) {
  // Real values (and whole counts past 32 bits) keep the row-ordered pass;
  // so do row indices past 32 bits.
  if (t.vtype == ValueType::F64 || t.rows > int64_t{0xFFFFFFFF}) return {};
  std::unique_ptr<ColumnSlots> s;
  bool cancelled = false;
  with_value_type(t.vtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_floating_point<T>::value) {
      s = build_typed<T>(t, threads, interrupt);
      cancelled = s == nullptr;
    }
  });
  if (cancelled) return {DIRMN_ERROR_CANCELLED, "", 0};
  *out = std::move(s);
  return {};
}

BackendResult histograms_by_column(const HostTable& t, const ColumnSlots& s,
                                   const double* weights, int64_t k,
                                   std::vector<Histograms>* out, HostThreads& threads,
                                   const Interrupt& interrupt) {
  const int64_t V = t.cols;
  const size_t K = static_cast<size_t>(k);
  out->resize(K);
  const std::vector<int64_t> cb = split_by(s.col_ptr.data(), V, threads.size() * kBlocksPerThread);
  const int64_t C = static_cast<int64_t>(cb.size()) - 1;
  // Each column block's histograms per weighting, of the columns that
  // may hold weight, joined in block order: the listed form of
  // ColumnHistograms, which stores nothing for the others.
  struct Built {
    std::vector<int64_t> column;
    std::vector<Histogram> hist;
  };
  std::vector<Built> built(static_cast<size_t>(C) * K);
  const uint32_t* const row = s.row.data();
  const uint32_t* const slot = s.slot.data();
  std::atomic<bool> no_memory{false};
  // Tasks: the column blocks, then each weighting's row totals.
  const std::function<void(int64_t)> task = [&](int64_t q) {
    try {
      if (q >= C) {
        const int64_t j = q - C;
        Histograms& h = (*out)[static_cast<size_t>(j)];
        double lcoef = 0.0;
        if (s.totals_ranked) {
          // By rank, in row order: a builder's sums by value, without its
          // array as long as the largest total.
          std::vector<double> by_rank(s.total_value.size(), 0.0), scratch;
          for (int64_t b = 0; b < t.rows; ++b) {
            if (t.row_total[static_cast<size_t>(b)] == 0.0) continue;
            const double w = weights ? weights[b * k + j] : 1.0;
            if (w == 0.0) continue;
            by_rank[s.total_rank[static_cast<size_t>(b)]] += w;
            lcoef += w * t.row_lcoef[static_cast<size_t>(b)];
          }
          histogram_from_sorted(s.total_value.data(), by_rank.data(), by_rank.size(), kHistTotalIndexMax,
                                &scratch, &h.total);
        } else {
          HistogramBuilder tot(kHistTotalIndexMax);
          for (int64_t b = 0; b < t.rows; ++b) {
            if (t.row_total[static_cast<size_t>(b)] == 0.0) continue;
            const double w = weights ? weights[b * k + j] : 1.0;
            if (w == 0.0) continue;
            tot.add(t.row_total[static_cast<size_t>(b)], w);
            lcoef += w * t.row_lcoef[static_cast<size_t>(b)];
          }
          h.total = tot.finish();
        }
        h.lcoef_sum = lcoef;
        return;
      }
      std::vector<double> acc, wj, scratch;
      Built* mine = built.data() + static_cast<size_t>(q) * K;
      for (int64_t v = cb[static_cast<size_t>(q)]; v < cb[static_cast<size_t>(q) + 1]; ++v) {
        const int64_t e0 = s.col_ptr[static_cast<size_t>(v)], e1 = s.col_ptr[static_cast<size_t>(v) + 1];
        if (e0 == e1) continue;
        const int64_t d0 = s.value_ptr[static_cast<size_t>(v)];
        const size_t nd = static_cast<size_t>(s.value_ptr[static_cast<size_t>(v) + 1] - d0);
        const uint32_t* value = s.value.data() + d0;
        acc.assign(nd * K, 0.0);
        if (weights == nullptr) {
          for (int64_t e = e0; e < e1; ++e) acc[slot[e]] += 1.0;
        } else {
          for (int64_t e = e0; e < e1; ++e) {
            double* a = acc.data() + static_cast<size_t>(slot[e]) * K;
            const double* w = weights + static_cast<int64_t>(row[e]) * k;
            for (size_t j = 0; j < K; ++j) a[j] += w[j];
          }
        }
        for (size_t j = 0; j < K; ++j) {
          // The values up to the largest j weighs (none: no histogram).
          size_t upto = nd;
          while (upto > 0 && acc[(upto - 1) * K + j] == 0.0) --upto;
          if (upto == 0) continue;
          mine[j].hist.emplace_back();
          mine[j].column.push_back(v);
          wj.resize(upto);
          for (size_t i = 0; i < upto; ++i) wj[i] = acc[i * K + j];
          histogram_from_sorted(value, wj.data(), upto, kHistIndexMax, &scratch, &mine[j].hist.back());
        }
      }
    } catch (...) {  // nothing may leave a worker thread
      no_memory = true;
    }
  };
  const double work = static_cast<double>(k) *
                     (static_cast<double>(s.col_ptr[static_cast<size_t>(V)]) + static_cast<double>(V + t.rows));
  if (!threads.run(C + k, task, [&] { return interrupt.poll(); }, work))
    return {DIRMN_ERROR_CANCELLED, "", 0};
  if (no_memory) throw std::bad_alloc();
  for (size_t j = 0; j < K; ++j) {
    Histograms& h = (*out)[j];
    size_t n = 0;
    for (int64_t q = 0; q < C; ++q) n += built[static_cast<size_t>(q) * K + j].column.size();
    h.column.clear(V);
    h.cols = V;
    h.column.reserve(n);
    for (int64_t q = 0; q < C; ++q) {
      Built& b = built[static_cast<size_t>(q) * K + j];
      for (size_t i = 0; i < b.column.size(); ++i) h.column.append(b.column[i], std::move(b.hist[i]));
    }
  }
  return {};
}

}  // namespace cpu
}  // namespace dirmn
