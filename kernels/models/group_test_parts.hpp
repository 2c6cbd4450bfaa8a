// group_test_parts.hpp: what the groups' likelihood-ratio test
// (group_test.cpp) and its power by simulation (group_power.cpp) share: the
// rows in a test, their count histograms by group, and the fits of them.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <mutex>
#include <vector>

#include "../host_fit.hpp"
#include "../table/histogram.hpp"
#include "../table/table.hpp"
#include "equal_precision.hpp"
#include "group_test.hpp"

namespace dirmn {
namespace group_parts {

// The drawn tables of the replicates running at once (at most one per
// thread), each reused from one replicate to the next: a table's arrays
// are large enough that fresh ones cost a page fault per page, and on many
// threads the faults contend for the process's memory map.
class DrawnTables {
 public:
  explicit DrawnTables(int slots) : tables_(static_cast<size_t>(slots)) {
    for (int i = slots - 1; i >= 0; --i) free_.push_back(i);
  }
  // A table for one replicate, given back when the Lease goes.
  class Lease {
   public:
    explicit Lease(DrawnTables& d) : d_(d) {
      std::lock_guard<std::mutex> lock(d_.mutex_);
      slot_ = d_.free_.back();
      d_.free_.pop_back();
    }
    ~Lease() {
      std::lock_guard<std::mutex> lock(d_.mutex_);
      d_.free_.push_back(slot_);
    }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    CsrRows& table() { return d_.tables_[static_cast<size_t>(slot_)]; }

   private:
    DrawnTables& d_;
    int slot_ = 0;
  };

 private:
  std::vector<CsrRows> tables_;
  std::vector<int> free_;  // reserved for every slot up front: push_back never allocates
  std::mutex mutex_;
};

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
  FitOutcome null_fit;             // the one DM's (the likelihood ratio, Xmcupo)
  std::vector<double> group_alpha; // Xoc's null: groups x cols
  bool group_limit = false;        // ... at the multinomial limit: proportions
};

// The fits of one set of histograms (the groups', then all rows') and the
// likelihood ratio: of one DM against one per group, or for Xoc of one
// precision for all groups against one per group.
inline void fit_all(const std::vector<Histograms>& h, const GroupTestSettings& s, bool keep_null, Fitted* f) {
  FitSettings fs;
  fs.tolerance = s.tolerance;
  fs.max_iterations = s.max_iterations;
  fs.want_se = false;
  const int64_t g_all = static_cast<int64_t>(h.size()) - 1;
  const bool xoc = s.statistic == kStatisticXoc;
  std::vector<FitOutcome> own(xoc ? static_cast<size_t>(g_all) : 0);
  f->loglik_groups = 0.0;
  f->converged = true;
  for (int64_t g = 0; g < (xoc ? g_all : g_all + 1); ++g) {
    FitOutcome o;
    fit_from_histograms(h[static_cast<size_t>(g)], fs, &o);
    f->converged = f->converged && (o.converged || o.multinomial_limit);
    if (g < g_all) {
      f->loglik_groups += o.loglik;
      if (xoc) own[static_cast<size_t>(g)] = std::move(o);
    } else {
      f->loglik_null = o.loglik;
      if (keep_null) f->null_fit = std::move(o);
    }
  }
  if (xoc) {
    EqualPrecisionFit e;
    fit_equal_precision(h.data(), static_cast<size_t>(g_all), own, s.tolerance, s.max_iterations, &e);
    f->converged = f->converged && e.converged;
    f->loglik_null = e.loglik;
    f->group_limit = e.multinomial_limit;
    if (keep_null) f->group_alpha = std::move(e.alpha);
  }
  f->statistic = std::max(0.0, 2.0 * (f->loglik_groups - f->loglik_null));
}

// Each group's method-of-moments summary, as HMP's DM.MoM gives it: the
// pooled proportions pi_g (groups x cols: column sums over the group's
// total), Weir's (1996) overdispersion theta_g (0 for a group of one row)
// and the variance factor c_g = (theta_g (sum N^2 - sum N) + sum N) /
// (sum N)^2 of pi_g's entries. Two passes over the rows (each_row as for
// group_histograms): the proportions, then the squared deviations.
struct GroupMoments {
  std::vector<double> pi, theta, c;
};

template <class EachRow>
GroupMoments group_moments(const Layout& l, EachRow each_row) {
  const int64_t groups = l.groups, cols = l.cols;
  GroupMoments m;
  std::vector<double>& x = m.pi;
  x.assign(static_cast<size_t>(groups * cols), 0.0);
  std::vector<double> total(static_cast<size_t>(groups), 0.0), total2(static_cast<size_t>(groups), 0.0),
      rows(static_cast<size_t>(groups), 0.0), within(static_cast<size_t>(groups), 0.0),
      between(static_cast<size_t>(groups), 0.0);
  std::vector<double> row_total(l.row.size(), 0.0);
  for (size_t i = 0; i < l.row.size(); ++i) {
    const int64_t g = l.group[i];
    each_row(i, [&](int64_t v, double n) {
      x[static_cast<size_t>(g * cols + v)] += n;
      row_total[i] += n;
    });
    total[static_cast<size_t>(g)] += row_total[i];
    total2[static_cast<size_t>(g)] += row_total[i] * row_total[i];
    rows[static_cast<size_t>(g)] += 1.0;
  }
  std::vector<double> pi_sq(static_cast<size_t>(groups), 0.0);
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t v = 0; v < cols; ++v) {
      double& p = x[static_cast<size_t>(g * cols + v)];
      p /= total[static_cast<size_t>(g)];
      pi_sq[static_cast<size_t>(g)] += p * p;
    }
  // Per row: sum_v (n/N - pi_v)^2 = sum over its nonzeros of (n/N)^2 - 2 (n/N) pi_v,
  // plus sum_v pi_v^2; and sum_v (n/N)(1 - n/N) = 1 - sum (n/N)^2.
  for (size_t i = 0; i < l.row.size(); ++i) {
    const int64_t g = l.group[i];
    const double n_row = row_total[i];
    double sq = 0.0, cross = 0.0;
    each_row(i, [&](int64_t v, double n) {
      const double f = n / n_row;
      sq += f * f;
      cross += f * x[static_cast<size_t>(g * cols + v)];
    });
    between[static_cast<size_t>(g)] += n_row * (sq - 2.0 * cross + pi_sq[static_cast<size_t>(g)]);
    within[static_cast<size_t>(g)] += n_row * (1.0 - sq);
  }
  m.theta.assign(static_cast<size_t>(groups), 0.0);
  m.c.resize(static_cast<size_t>(groups));
  for (int64_t g = 0; g < groups; ++g) {
    const double s = rows[static_cast<size_t>(g)], n_sum = total[static_cast<size_t>(g)];
    double theta = 0.0;
    if (s >= 2.0) {
      const double msp = between[static_cast<size_t>(g)] / (s - 1.0);
      const double msg = within[static_cast<size_t>(g)] / (n_sum - s);
      const double nc = (n_sum - total2[static_cast<size_t>(g)] / n_sum) / (s - 1.0);
      theta = (msp - msg) / (msp + (nc - 1.0) * msg);
    }
    m.theta[static_cast<size_t>(g)] = theta;
    m.c[static_cast<size_t>(g)] = (theta * (total2[static_cast<size_t>(g)] - n_sum) + n_sum) / (n_sum * n_sum);
  }
  return m;
}

// HMP's Xmcupo (La Rosa et al. 2012, PLoS ONE 7:e52078; HMP's
// Xmcupo.statistics): the groups' pooled proportions pi_g compared through
// a chi-square of their spread about the precision-weighted mean pi_0,
//   sum_g sum_v (pi_gv - pi_0v)^2 / pi_0v / c_g.
template <class EachRow>
double xmcupo(const Layout& l, EachRow each_row) {
  const int64_t groups = l.groups, cols = l.cols;
  const GroupMoments m = group_moments(l, each_row);
  double inv_sum = 0.0;
  for (double cg : m.c) inv_sum += 1.0 / cg;
  double stat = 0.0;
  for (int64_t v = 0; v < cols; ++v) {
    double pi0 = 0.0;
    for (int64_t g = 0; g < groups; ++g) pi0 += m.pi[static_cast<size_t>(g * cols + v)] / m.c[static_cast<size_t>(g)];
    pi0 /= inv_sum;
    for (int64_t g = 0; g < groups; ++g) {
      const double d = m.pi[static_cast<size_t>(g * cols + v)] - pi0;
      stat += d * d / pi0 / m.c[static_cast<size_t>(g)];
    }
  }
  return stat;
}

// HMP's Xsc of one group's moments (group 0 of m, over every column:
// m.pi has cols entries) against pi0 (summing to 1): sum over pi0_v > 0 of
// (pi_v - pi0_v)^2 / pi0_v / c, +Inf where a column with counts has pi0_v
// = 0 (group_test.hpp's proportion_test says why).
// Its categories, the columns with pi0_v > 0 (its df: one fewer).
inline int64_t xsc_categories(const double* pi0, int64_t cols) {
  int64_t support = 0;
  for (int64_t v = 0; v < cols; ++v) support += pi0[v] > 0.0 ? 1 : 0;
  return support;
}

inline double xsc(const GroupMoments& m, const double* pi0, int64_t cols) {
  double stat = 0.0;
  bool ruled_out = false;
  for (int64_t v = 0; v < cols; ++v) {
    const double p0 = pi0[v], d = m.pi[static_cast<size_t>(v)] - p0;
    if (p0 > 0.0) stat += d * d / p0;
    else if (d != 0.0) ruled_out = true;
  }
  return ruled_out ? std::numeric_limits<double>::infinity() : stat / m.c[0];
}

// Row i of a layout over the table t: f(compact column, count) for each
// of its nonzero cells.
struct TableRows {
  const HostTable& t;
  const Layout& l;
  template <class F>
  void operator()(size_t i, F&& f) const {
    const int64_t b = l.row[i];
    with_value_type(t.vtype, [&](auto tag) {
      using T = decltype(tag);
      const T* x = reinterpret_cast<const T*>(t.values.data());
      const int64_t lo = t.sparse ? t.row_ptr[static_cast<size_t>(b)] : b * t.cols;
      const int64_t hi = t.sparse ? t.row_ptr[static_cast<size_t>(b) + 1] : lo + t.cols;
      for (int64_t c = lo; c < hi; ++c)
        if (x[c] != 0)
          f(l.slot[static_cast<size_t>(t.sparse ? t.col_idx[static_cast<size_t>(c)] : c - lo)],
            static_cast<double>(x[c]));
      return 0;
    });
  }
};

// The degrees of freedom of the test's statistic: the likelihood ratio's
// (G - 1) P, Xmcupo's (G - 1)(P - 1), Xoc's G - 1.
inline double statistic_df(int statistic, int64_t groups, int64_t cols) {
  if (statistic == kStatisticXoc) return static_cast<double>(groups - 1);
  return statistic == kStatisticXmcupo ? static_cast<double>((groups - 1) * (cols - 1))
                                       : static_cast<double>((groups - 1) * cols);
}

}  // namespace group_parts
}  // namespace dirmn
