// histogram_merge.cpp: histograms to lists and back.
#include "histogram_merge.hpp"

#include <algorithm>

namespace dirmn {
namespace {

// One histogram's (value, weight) pairs with weight, values ascending. A
// dense histogram's weights are differences of its cumulative array, exact
// for whole weights.
template <class Put>
void each_value(const Histogram& h, const Put& put) {
  if (!h.dense) {
    for (size_t i = 0; i < h.value.size(); ++i)
      if (h.weight[i] != 0.0) put(h.value[i], h.weight[i]);
    return;
  }
  const size_t n = h.cum.size();
  // cum[k]: the weight of values > base + k; base's own weight is
  // base_weight less everything above it (base 0 holds no value).
  if (h.base > 0.0) {
    const double w = h.base_weight - (n > 0 ? h.cum[0] : 0.0);
    if (w != 0.0) put(h.base, w);
  }
  for (size_t k = 0; k < n; ++k) {
    const double w = h.cum[k] - (k + 1 < n ? h.cum[k + 1] : 0.0);
    if (w != 0.0) put(h.base + static_cast<double>(k + 1), w);
  }
}

}  // namespace

void histogram_lists(const Histograms& h, HistogramLists* out) {
  std::vector<double> e;
  const auto add = [&](double column) {
    return [&e, column](double v, double w) {
      e.push_back(column);
      e.push_back(v);
      e.push_back(w);
    };
  };
  if (h.column.all_stored()) {
    for (int64_t v = 0; v < h.cols; ++v) each_value(h.column[static_cast<size_t>(v)], add(static_cast<double>(v)));
  } else {
    for (int64_t v : h.column.listed()) each_value(h.column[static_cast<size_t>(v)], add(static_cast<double>(v)));
  }
  each_value(h.total, add(static_cast<double>(h.cols)));
  out->entries.swap(e);
}

void histograms_from_lists(const HistogramLists* parts, size_t n, int64_t cols, Histograms* out) {
  // Each part's entries are ascending by (column, value): a merge of the n
  // lists, the smallest (column, value, part) first, so that equal
  // (column, value)s are added in part order.
  struct Cursor {
    double column, value;
    size_t part;
  };
  const auto later = [](const Cursor& a, const Cursor& b) {
    if (a.column != b.column) return a.column > b.column;
    if (a.value != b.value) return a.value > b.value;
    return a.part > b.part;
  };
  std::vector<size_t> at(n, 0);
  std::vector<Cursor> heap;
  heap.reserve(n);
  size_t listed = 0;
  for (size_t p = 0; p < n; ++p) {
    const std::vector<double>& e = parts[p].entries;
    if (!e.empty()) heap.push_back({e[0], e[1], p});
    // An upper bound on the columns listed: each part's own count.
    for (size_t i = 0; i < parts[p].size(); ++i) listed += i == 0 || e[3 * i] != e[3 * (i - 1)];
  }
  std::make_heap(heap.begin(), heap.end(), later);
  // The next entry in merge order, its weight, and its part advanced.
  const auto pop = [&](double* w) {
    std::pop_heap(heap.begin(), heap.end(), later);
    Cursor c = heap.back();
    heap.pop_back();
    const std::vector<double>& e = parts[c.part].entries;
    *w = e[3 * at[c.part] + 2];
    if (++at[c.part] < parts[c.part].size()) {
      heap.push_back({e[3 * at[c.part]], e[3 * at[c.part] + 1], c.part});
      std::push_heap(heap.begin(), heap.end(), later);
    }
    return c;
  };
  Histograms h;
  h.cols = cols;
  h.column.clear(cols);
  h.column.reserve(std::min(listed, static_cast<size_t>(cols)));
  // One builder for the columns and one for the totals, reused: finish()
  // leaves a builder empty, its arrays kept.
  HistogramBuilder by_column(kHistIndexMax), by_total(kHistTotalIndexMax);
  while (!heap.empty()) {
    const double column = heap.front().column;
    const bool totals = column == static_cast<double>(cols);
    HistogramBuilder& b = totals ? by_total : by_column;
    while (!heap.empty() && heap.front().column == column) {
      const double value = heap.front().value;
      double w = 0.0, x = 0.0;
      while (!heap.empty() && heap.front().column == column && heap.front().value == value) {
        pop(&x);
        w += x;
      }
      b.add(value, w);
    }
    if (totals)
      h.total = b.finish();
    else
      h.column.append(static_cast<int64_t>(column), b.finish());
  }
  *out = std::move(h);
}

}  // namespace dirmn
