// group_test_parts.hpp: what the groups' likelihood-ratio test
// (group_test.cpp) and its power by simulation (group_power.cpp) share: the
// rows in a test, their count histograms by group, and the fits of them.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "../host_fit.hpp"
#include "../table/histogram.hpp"
#include "group_test.hpp"

namespace dirmn {
namespace group_parts {

// Under the multinomial limit the null fit reports proportions; its
// bootstrap tables are drawn from the DM of this precision instead, which
// no test of this size tells from the multinomial.
constexpr double kLimitPrecision = 1e10;

// The rows in the test, their groups and totals, and the columns with
// counts (slot[v]: v's compact index, or -1).
struct Layout {
  std::vector<int64_t> row;    // the table's rows in the test
  std::vector<int64_t> group;  // their groups, renumbered 0 .. groups - 1
  std::vector<int64_t> size;   // their totals
  std::vector<int64_t> slot;
  int64_t groups = 0, cols = 0;
};

// Histograms per group and (index groups) for all the rows, over the
// compact columns; each_row(i, f) calls f(column, count) for row i's
// nonzero cells.
template <class EachRow>
void group_histograms(const Layout& l, EachRow each_row, std::vector<Histograms>* out) {
  const int64_t g_all = l.groups, cols = l.cols;
  std::vector<HistogramBuilder> col(static_cast<size_t>((g_all + 1) * cols));
  std::vector<HistogramBuilder> tot(static_cast<size_t>(g_all + 1), HistogramBuilder(kHistTotalIndexMax));
  std::vector<double> lcoef(static_cast<size_t>(g_all + 1), 0.0);
  for (size_t i = 0; i < l.row.size(); ++i) {
    const int64_t g = l.group[i];
    double n_sum = 0.0, lc = 0.0;
    each_row(i, [&](int64_t v, double n) {
      col[static_cast<size_t>(g * cols + v)].add(n, 1.0);
      col[static_cast<size_t>(g_all * cols + v)].add(n, 1.0);
      n_sum += n;
      lc -= std::lgamma(n + 1.0);
    });
    lc += std::lgamma(n_sum + 1.0);
    for (int64_t h : {g, g_all}) {
      tot[static_cast<size_t>(h)].add(n_sum, 1.0);
      lcoef[static_cast<size_t>(h)] += lc;
    }
  }
  out->resize(static_cast<size_t>(g_all + 1));
  for (int64_t h = 0; h <= g_all; ++h) {
    Histograms& hh = (*out)[static_cast<size_t>(h)];
    hh.cols = cols;
    hh.column.assign_all(cols);
    for (int64_t v = 0; v < cols; ++v)
      hh.column.stored(static_cast<size_t>(v)) = col[static_cast<size_t>(h * cols + v)].finish();
    hh.total = tot[static_cast<size_t>(h)].finish();
    hh.lcoef_sum = lcoef[static_cast<size_t>(h)];
  }
}

struct Fitted {
  double statistic = 0.0, loglik_null = 0.0, loglik_groups = 0.0;
  bool converged = true;
  FitOutcome null_fit;
};

// The fits of one set of histograms and their statistic.
inline void fit_all(const std::vector<Histograms>& h, const GroupTestSettings& s, bool keep_null, Fitted* f) {
  FitSettings fs;
  fs.tolerance = s.tolerance;
  fs.max_iterations = s.max_iterations;
  fs.want_se = false;
  const int64_t g_all = static_cast<int64_t>(h.size()) - 1;
  f->loglik_groups = 0.0;
  f->converged = true;
  for (int64_t g = 0; g <= g_all; ++g) {
    FitOutcome o;
    fit_from_histograms(h[static_cast<size_t>(g)], fs, &o);
    f->converged = f->converged && (o.converged || o.multinomial_limit);
    if (g < g_all) {
      f->loglik_groups += o.loglik;
    } else {
      f->loglik_null = o.loglik;
      if (keep_null) f->null_fit = std::move(o);
    }
  }
  f->statistic = std::max(0.0, 2.0 * (f->loglik_groups - f->loglik_null));
}

}  // namespace group_parts
}  // namespace dirmn
