// histogram.cpp: histogram construction: the builder and the dense forms.
#include "histogram.hpp"

#include <algorithm>
#include <cmath>
#include <limits>


namespace dirmn {
namespace {

// One (value, weight) pair appended to a pairs-form histogram, by
// increasing value.
void append_pair(double v, double w, Histogram* h) {
  h->value.push_back(v);
  h->weight.push_back(w);
  h->first_moment += w * v;
  h->second_factorial += w * v * (v - 1.0);
}

}  // namespace

const Histogram& ColumnHistograms::empty() {
  static const Histogram none;
  return none;
}

void ColumnHistograms::assign_all(int64_t cols) {
  store_.assign(static_cast<size_t>(cols), Histogram());
  std::vector<int64_t>().swap(listed_);
  std::vector<uint32_t>().swap(slot_);
  cols_ = cols;
  all_ = true;
}

void ColumnHistograms::clear(int64_t cols) {
  if (all_ || cols != cols_) {
    // The new slots first: a failed allocation leaves the object as it was.
    std::vector<uint32_t> slot(static_cast<size_t>(cols), kNone);
    slot_.swap(slot);
    std::vector<int64_t>().swap(listed_);
  } else {
    for (int64_t v : listed_) slot_[static_cast<size_t>(v)] = kNone;
    listed_.clear();
  }
  store_.clear();
  cols_ = cols;
  all_ = false;
}

void ColumnHistograms::append(int64_t v, Histogram&& h) {
  listed_.push_back(v);
  try {
    store_.push_back(std::move(h));
  } catch (...) {
    listed_.pop_back();
    throw;
  }
  slot_[static_cast<size_t>(v)] = static_cast<uint32_t>(store_.size() - 1);
}

void HistogramBuilder::add_slow(double n, double w) {
  if (n == 0.0 || w == 0.0) return;
  if (!use_pairs_ && (n > index_max_ || n != std::floor(n))) {
    use_pairs_ = true;
    for (size_t k = 1; k < indexed_.size(); ++k)
      if (indexed_[k] != 0.0) pairs_.emplace_back(static_cast<double>(k), indexed_[k]);
    indexed_.clear();
  }
  if (use_pairs_) {
    pairs_.emplace_back(n, w);
  } else {
    const size_t k = static_cast<size_t>(n);
    if (indexed_.size() <= k) indexed_.resize(k + 1, 0.0);
    indexed_[k] += w;
  }
}

Histogram HistogramBuilder::finish() {
  Histogram h;
  if (!use_pairs_) {
    histogram_from_indexed(indexed_.data(), indexed_.empty() ? 0 : indexed_.size() - 1, &h);
  } else {
    // By value, equal values in the order they came: each value's weight
    // is its observations' sum in that order (the indexed weights taken
    // over at the switch came first), and the moments are summed over
    // the values, as the indexed forms and the pass by column sum them.
    h.dense = false;
    std::stable_sort(pairs_.begin(), pairs_.end(),
                     [](const std::pair<double, double>& a, const std::pair<double, double>& b) {
                       return a.first < b.first;
                     });
    size_t m = 0;
    for (size_t i = 0; i < pairs_.size(); ++i) {
      if (m > 0 && pairs_[m - 1].first == pairs_[i].first)
        pairs_[m - 1].second += pairs_[i].second;
      else
        pairs_[m++] = pairs_[i];
    }
    for (size_t i = 0; i < m; ++i) append_pair(pairs_[i].first, pairs_[i].second, &h);
  }
  indexed_.clear();
  pairs_.clear();
  use_pairs_ = false;
  return h;
}

namespace {

// The form HistogramBuilder::finish chooses for whole values low..top
// (distinct of them with weight, by_value[n] the weight of n): dense up to
// kHistDenseMax, a band where they are dense enough, else pairs, which
// each_pair(append) lists by increasing value.
enum class Form { kDense, kBand, kPairs };

Form form_of(size_t low, size_t top, size_t distinct) {
  if (static_cast<double>(top) <= kHistDenseMax) return Form::kDense;
  if (static_cast<double>(top - low) <= kHistBandFactor * static_cast<double>(distinct) + kHistBandSlack)
    return Form::kBand;
  return Form::kPairs;
}

template <class EachPair>
void histogram_in_form(const double* by_value, size_t low, size_t top, size_t distinct,
                       Histogram* h, const EachPair& each_pair) {
  const Form form = form_of(low, top, distinct);
  if (form == Form::kDense) {
    histogram_from_value_weights(by_value, static_cast<int>(top + 1), h);
  } else if (form == Form::kBand) {
    *h = histogram_from_band(by_value + low, static_cast<int64_t>(low),
                             static_cast<int64_t>(top - low + 1));
  } else {
    *h = Histogram();
    h->dense = false;
    each_pair([&](double v, double w) { append_pair(v, w, h); });
  }
}

}  // namespace

void histogram_from_indexed(const double* by_value, size_t top, Histogram* h) {
  size_t low = 1, distinct = 0;
  if (static_cast<double>(top) > kHistDenseMax) {
    while (low < top && by_value[low] == 0.0) ++low;
    for (size_t n = low; n <= top; ++n) distinct += by_value[n] != 0.0;
  }
  // Indexed values come out in order: no sort needed.
  histogram_in_form(by_value, low, top, distinct, h, [&](const auto& append) {
    for (size_t n = 1; n <= top; ++n)
      if (by_value[n] != 0.0) append(static_cast<double>(n), by_value[n]);
  });
}

void histogram_from_sorted(const uint32_t* values, const double* weights, size_t n,
                           double index_max, std::vector<double>* scratch, Histogram* h) {
  size_t low = 0, top = 0, distinct = 0;
  for (size_t i = 0; i < n; ++i) {
    if (weights[i] == 0.0) continue;
    if (distinct++ == 0) low = values[i];
    top = values[i];
  }
  // Past its indexed range a builder keeps pairs, whatever their spread.
  const Form form = static_cast<double>(top) > index_max ? Form::kPairs : form_of(low, top, distinct);
  if (form == Form::kPairs) {
    *h = Histogram();
    h->dense = false;
    for (size_t i = 0; i < n; ++i)
      if (weights[i] != 0.0) append_pair(static_cast<double>(values[i]), weights[i], h);
    return;
  }
  // The indexed forms read weights by value, from `low` (band) or 0 (dense).
  const size_t from = form == Form::kBand ? low : 0;
  scratch->assign(top - from + 1, 0.0);
  for (size_t i = 0; i < n; ++i)
    if (weights[i] != 0.0) (*scratch)[values[i] - from] = weights[i];
  if (form == Form::kDense)
    histogram_from_value_weights(scratch->data(), static_cast<int>(top + 1), h);
  else
    *h = histogram_from_band(scratch->data(), static_cast<int64_t>(low), static_cast<int64_t>(top - low + 1));
}

void histogram_from_value_weights(const double* by_value, int bins, Histogram* h) {
  int top = 0;  // the largest value with weight (bins may be 0: an empty histogram)
  for (int n = 1; n < bins; ++n)
    if (by_value[n] != 0.0) top = n;
  h->dense = true;
  h->base = 0.0;
  h->base_weight = 0.0;
  h->value.clear();
  h->weight.clear();
  h->cum.assign(static_cast<size_t>(top), 0.0);
  double* cum = h->cum.data();
  double above = 0.0, first = 0.0, second = 0.0;
  for (int k = top; k-- > 0;) {
    const double w = by_value[k + 1], v = static_cast<double>(k + 1);
    above += w;
    cum[k] = above;
    first += w * v;
    second += w * v * (v - 1.0);
  }
  h->first_moment = first;
  h->second_factorial = second;
}

Histogram histogram_from_band(const double* by_value, int64_t base, int64_t len) {
  int64_t lo = 0, hi = -1;  // first and last index with weight
  for (int64_t i = 0; i < len; ++i)
    if (by_value[i] != 0.0) {
      if (hi < 0) lo = i;
      hi = i;
    }
  Histogram h;
  h.dense = true;
  if (hi < 0) return h;
  h.base = static_cast<double>(base + lo);
  h.cum.assign(static_cast<size_t>(hi - lo), 0.0);
  double above = 0.0;
  for (int64_t k = hi - lo; k-- > 0;) {
    above += by_value[lo + k + 1];
    h.cum[static_cast<size_t>(k)] = above;
  }
  h.base_weight = above + by_value[lo];
  for (int64_t i = lo; i <= hi; ++i) {
    const double v = static_cast<double>(base + i);
    h.first_moment += by_value[i] * v;
    h.second_factorial += by_value[i] * v * (v - 1.0);
  }
  return h;
}

}  // namespace dirmn
