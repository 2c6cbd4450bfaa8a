// cpu_histograms.cpp: the count histograms of k weightings of a table in
// one pass over it, on the host threads.
#include <algorithm>
#include <atomic>
#include <functional>
#include <new>
#include <type_traits>

#include "../table/histogram.hpp"
#include "cpu_rows.hpp"

namespace dirmn {
namespace cpu {
namespace {

// 8-bit tables: counts index per-column accumulators directly, one set
// per thread over its own rows, merged at the end. No per-cell builder
// logic, so the pass runs at memory speed.
BackendResult histograms_u8(const HostTable& t, const double* weights, int64_t k,
                           std::vector<Histograms>* out, HostThreads& threads,
                           const Interrupt& interrupt) {
  const int64_t V = t.cols, bins = static_cast<int64_t>(t.max_count) + 1;
  const int64_t per_part = k * V * bins;
  const int parts = static_cast<int>(std::max<int64_t>(
      1, std::min<int64_t>(threads.size(), t.rows * V / kCellsPerChunk + 1)));
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
  if (!threads.run(parts, body, [&] { return interrupt.poll(); }))
    return {DIRMN_ERROR_CANCELLED, "", 0};
  for (int p = 1; p < parts; ++p)
    for (int64_t i = 0; i < per_part; ++i) acc[0][static_cast<size_t>(i)] += acc[static_cast<size_t>(p)][static_cast<size_t>(i)];
  out->resize(static_cast<size_t>(k));
  for (int64_t j = 0; j < k; ++j) {
    Histograms& h = (*out)[static_cast<size_t>(j)];
    if (!h.column.all_stored() || h.column.size() != V) h.column.assign_all(V);
    h.cols = V;
    for (int64_t v = 0; v < V; ++v)
      histogram_from_value_weights(acc[0].data() + (j * V + v) * bins, static_cast<int>(bins),
                                   &h.column.stored(static_cast<size_t>(v)));
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

// Unweighted whole counts below this are tallied per column in one flat
// array (cols x kTallied integers, split by the tasks' column ranges)
// instead of each column's builder: a cell costs one increment in an array
// that stays in cache, not a builder and its own array (a wide table's
// builders are tens of thousands of small heap arrays). The tallies are
// exact, and so is a builder fed them at the end: the histograms are the
// same bit for bit.
constexpr int64_t kTallied = 16;

template <class T>
BackendResult histograms_typed(const HostTable& t, const double* weights, int64_t k,
                               std::vector<Histograms>* out, HostThreads& threads,
                               const Interrupt& interrupt) {
  if (!histograms_use_builders(t, k)) return histograms_u8(t, weights, k, out, threads, interrupt);
  // Each (weighting, column) pair and each weighting's totals accumulate
  // their own builder. The threads split the builders, not the rows: a task
  // is one weighting's share of the columns, over every row, so each
  // builder sees its counts in row order, as on one thread, and the
  // histograms do not depend on the thread count. The rows go in rounds of
  // about kCellsPerChunk cells per thread, the interrupt polled between.
  const size_t K = static_cast<size_t>(k), V = static_cast<size_t>(t.cols);
  std::vector<HistogramBuilder> col(K * V), tot(K, HistogramBuilder(kHistTotalIndexMax));
  std::vector<double> lcoef(K, 0.0);
  const int64_t nthreads = threads.size();
  const int64_t col_blocks =
      std::max<int64_t>(1, std::min<int64_t>(t.cols, (nthreads + k - 1) / k));
  const int64_t tasks = k * col_blocks;
  const double cells_per_row =
      t.sparse ? std::max(1.0, static_cast<double>(t.nnz) / static_cast<double>(std::max<int64_t>(t.rows, 1)))
               : static_cast<double>(t.cols);
  const int64_t rows_per_round = std::max<int64_t>(
      1, static_cast<int64_t>(static_cast<double>(kCellsPerChunk) * static_cast<double>(nthreads) /
                              (cells_per_row * static_cast<double>(k))));
  const T* x = as<T>(t.values);
  // Not where the tallies would outweigh the cells (a very wide, very
  // sparse table).
  const double cells = t.sparse ? static_cast<double>(t.nnz)
                                : static_cast<double>(t.rows) * static_cast<double>(t.cols);
  const bool tally = weights == nullptr && std::is_integral<T>::value &&
                     t.rows <= int64_t{0xFFFFFFFF} &&
                     static_cast<double>(V) * static_cast<double>(kTallied) <= 4.0 * cells;
  std::vector<uint32_t> tallies(tally ? V * static_cast<size_t>(kTallied) : 0, 0);
  std::atomic<bool> no_memory{false};
  for (int64_t r0 = 0; r0 < t.rows; r0 += rows_per_round) {
    const int64_t r1 = std::min(t.rows, r0 + rows_per_round);
    const std::function<void(int64_t)> task = [&](int64_t q) {
      const int64_t j = q / col_blocks, c = q % col_blocks;
      const int64_t v0 = t.cols * c / col_blocks, v1 = t.cols * (c + 1) / col_blocks;
      HistogramBuilder* cj = col.data() + static_cast<size_t>(j) * V;
      try {
        for (int64_t b = r0; b < r1; ++b) {
          if (t.row_total[static_cast<size_t>(b)] == 0.0) continue;
          const double wj = weights ? weights[b * k + j] : 1.0;
          if (wj == 0.0) continue;
          if (c == 0) {
            tot[static_cast<size_t>(j)].add(t.row_total[static_cast<size_t>(b)], wj);
            lcoef[static_cast<size_t>(j)] += wj * t.row_lcoef[static_cast<size_t>(b)];
          }
          if (t.sparse) {
            const uint32_t* idx = t.col_idx.data();
            const int64_t e = t.row_ptr[static_cast<size_t>(b) + 1];
            int64_t i = t.row_ptr[static_cast<size_t>(b)];
            if (v0 > 0) i = std::lower_bound(idx + i, idx + e, static_cast<uint32_t>(v0)) - idx;
            if (tally) {
              for (; i < e && static_cast<int64_t>(idx[i]) < v1; ++i) {
                const uint32_t v = idx[i];
                if (x[i] < static_cast<T>(kTallied))
                  ++tallies[static_cast<size_t>(v) * kTallied + static_cast<size_t>(x[i])];
                else
                  cj[v].add(static_cast<double>(x[i]), 1.0);
              }
            } else {
              for (; i < e && static_cast<int64_t>(idx[i]) < v1; ++i)
                cj[idx[i]].add(static_cast<double>(x[i]), wj);
            }
          } else {
            const T* row = x + b * t.cols;
            for (int64_t v = v0; v < v1; ++v) {
              if (row[v] == 0) continue;
              if (tally && row[v] < static_cast<T>(kTallied))
                ++tallies[static_cast<size_t>(v) * kTallied + static_cast<size_t>(row[v])];
              else
                cj[v].add(static_cast<double>(row[v]), wj);
            }
          }
        }
      } catch (...) {  // a builder's memory; nothing may leave a worker thread
        no_memory = true;
      }
    };
    const double work = static_cast<double>(k) * cells_per_row * static_cast<double>(r1 - r0);
    if (!threads.run(tasks, task, [&] { return interrupt.poll(); }, work))
      return {DIRMN_ERROR_CANCELLED, "", 0};
    if (no_memory) throw std::bad_alloc();
  }
  out->resize(K);
  for (size_t j = 0; j < K; ++j) {
    Histograms& h = (*out)[j];
    if (!h.column.all_stored() || h.column.size() != t.cols) h.column.assign_all(t.cols);
    h.cols = t.cols;
  }
  // The histograms are formed in column blocks as well (one weighting's
  // 50000 columns were a serial tail of the pass).
  const int64_t finish_blocks = std::max<int64_t>(1, std::min<int64_t>(t.cols, (4 * nthreads + k - 1) / k));
  const std::function<void(int64_t)> finish = [&](int64_t q) {
    const size_t j = static_cast<size_t>(q / finish_blocks);
    const int64_t c = q % finish_blocks;
    const size_t v0 = static_cast<size_t>(t.cols * c / finish_blocks);
    const size_t v1 = static_cast<size_t>(t.cols * (c + 1) / finish_blocks);
    Histograms& h = (*out)[j];
    try {
      for (size_t v = v0; v < v1; ++v) {
        HistogramBuilder& bv = col[j * V + v];
        if (tally)
          for (size_t n = 1; n < static_cast<size_t>(kTallied); ++n)
            if (const uint32_t tv = tallies[v * kTallied + n])
              bv.add(static_cast<double>(n), static_cast<double>(tv));
        h.column.stored(v) = bv.finish();
      }
      if (c == 0) {
        h.total = tot[j].finish();
        h.lcoef_sum = lcoef[j];
      }
    } catch (...) {
      no_memory = true;
    }
  };
  if (!threads.run(k * finish_blocks, finish, [] { return false; },
                   static_cast<double>(k) * static_cast<double>(t.cols + 1) * 16.0))
    return {DIRMN_ERROR_CANCELLED, "", 0};
  if (no_memory) throw std::bad_alloc();
  return {};
}

}  // namespace

bool histograms_use_builders(const HostTable& t, int64_t k) {
  // Accumulators of this many entries per thread at most (8 bytes each)
  // take the 8-bit path; beyond, the builders' memory scales better.
  constexpr int64_t kU8HistogramMaxEntries = int64_t{1} << 23;
  // And only where a weighting's accumulators (cols x bins, zeroed, merged
  // and read whole on every pass) are at most this many times the cells
  // the pass adds: on a wide sparse table they were the whole cost (soilrep,
  // 16825 columns of counts to 96 and 63000 nonzeros: 130 MB zeroed per
  // pass at k = 5, half a second an EM iteration).
  constexpr double kU8EntriesPerCell = 1.0;
  const double entries = static_cast<double>(t.cols) * (static_cast<double>(t.max_count) + 1.0);
  const double cells = t.sparse ? static_cast<double>(t.nnz)
                                : static_cast<double>(t.rows) * static_cast<double>(t.cols);
  return !(t.vtype == ValueType::U8 &&
           static_cast<double>(k) * entries <= static_cast<double>(kU8HistogramMaxEntries) &&
           entries <= kU8EntriesPerCell * cells);
}

BackendResult histograms(const HostTable& t, const double* weights, int64_t k,
                         std::vector<Histograms>* out, HostThreads& threads,
                         const Interrupt& interrupt) {
  return with_value_type(t.vtype, [&](auto tag) {
    return histograms_typed<decltype(tag)>(t, weights, k, out, threads, interrupt);
  });
}

}  // namespace cpu
}  // namespace dirmn
