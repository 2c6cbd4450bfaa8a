// cpu_histograms.cpp: the count histograms of k weightings of a table in
// one pass over it, on the host threads.
#include <algorithm>
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
constexpr int64_t kU8HistogramMaxEntries = int64_t{1} << 23;

template <class T>
BackendResult histograms_typed(const HostTable& t, const double* weights, int64_t k,
                               std::vector<Histograms>* out, HostThreads& threads,
                               const Interrupt& interrupt) {
  if (std::is_same<T, uint8_t>::value &&
      k * t.cols * (static_cast<int64_t>(t.max_count) + 1) <= kU8HistogramMaxEntries)
    return histograms_u8(t, weights, k, out, threads, interrupt);
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

}  // namespace

BackendResult histograms(const HostTable& t, const double* weights, int64_t k,
                         std::vector<Histograms>* out, HostThreads& threads,
                         const Interrupt& interrupt) {
  return with_value_type(t.vtype, [&](auto tag) {
    return histograms_typed<decltype(tag)>(t, weights, k, out, threads, interrupt);
  });
}

}  // namespace cpu
}  // namespace dirmn
