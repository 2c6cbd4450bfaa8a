// histogram_merge.hpp: a weighting's histograms as flat lists, and the
// histograms of several parts' lists -- how the histograms of a table split
// by rows over ranks are summed (models/ranks.cpp sends the lists).
//
// A histogram's forms (dense cumulative, band, pairs) depend on its values
// and weights alone, so the histograms rebuilt from the summed lists are
// the ones a single pass over the whole table builds: the same form, the
// same sums, bit for bit where the weights are whole numbers (counts
// without row weights: every sum is exact).
#pragma once

#include <cstdint>
#include <vector>

#include "histogram.hpp"

namespace dirmn {

// Every (column, value, weight) of a weighting's histograms with weight,
// columns ascending and each column's values ascending; column `cols`
// stands for the row totals' histogram. Three doubles per entry (a column
// index is exact in a double), the form in which ranks send them.
struct HistogramLists {
  std::vector<double> entries;  // column, value, weight; ...
  size_t size() const { return entries.size() / 3; }
};

// h's lists (h.cols columns). Throws std::bad_alloc.
void histogram_lists(const Histograms& h, HistogramLists* out);

// The histograms of the parts' lists together (n parts, in order): each
// (column, value)'s weights summed in part order, each column built as
// HistogramBuilder builds it. lcoef_sum is left to the caller. Throws
// std::bad_alloc.
void histograms_from_lists(const HistogramLists* parts, size_t n, int64_t cols, Histograms* out);

}  // namespace dirmn
