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

struct Entry {
  double column, value, weight;
  size_t order;  // part order, then position: ties keep it
};

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
  size_t total = 0;
  for (size_t p = 0; p < n; ++p) total += parts[p].size();
  std::vector<Entry> all;
  all.reserve(total);
  for (size_t p = 0; p < n; ++p)
    for (size_t i = 0; i < parts[p].size(); ++i) {
      const double* x = parts[p].entries.data() + 3 * i;
      all.push_back({x[0], x[1], x[2], all.size()});
    }
  std::sort(all.begin(), all.end(), [](const Entry& a, const Entry& b) {
    if (a.column != b.column) return a.column < b.column;
    if (a.value != b.value) return a.value < b.value;
    return a.order < b.order;
  });
  Histograms h;
  h.cols = cols;
  h.column.clear(cols);
  size_t listed = 0;
  for (size_t i = 0; i < all.size(); ++i) listed += i == 0 || all[i].column != all[i - 1].column;
  h.column.reserve(listed);
  // One builder for the columns and one for the totals, reused: finish()
  // leaves a builder empty, its arrays kept.
  HistogramBuilder by_column(kHistIndexMax), by_total(kHistTotalIndexMax);
  size_t i = 0;
  while (i < all.size()) {
    const double column = all[i].column;
    const bool totals = column == static_cast<double>(cols);
    HistogramBuilder& b = totals ? by_total : by_column;
    for (; i < all.size() && all[i].column == column;) {
      const double value = all[i].value;
      double w = 0.0;
      for (; i < all.size() && all[i].column == column && all[i].value == value; ++i) w += all[i].weight;
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
