// group_power.cpp: the power of the groups' likelihood-ratio test by
// simulation (HMP's MC.Xdc.statistics, for the full-likelihood test):
// tables drawn from the groups' DMs, each tested as dirmn_test_groups
// tests a table (group_test_parts.hpp).
#include <atomic>
#include <cmath>
#include <new>
#include <vector>

#include "../math/distributions.hpp"
#include "../math/random.hpp"
#include "group_test.hpp"
#include "group_test_parts.hpp"
#include "sample.hpp"

namespace dirmn {
namespace {

using namespace group_parts;

// Table t's statistic and p-value; p 1 where fewer than two groups have counts.
void test_drawn(const CsrRows& drawn, const std::vector<int64_t>& row_group, int64_t groups, int64_t cols,
                const GroupTestSettings& gs, double* statistic, double* p_value) {
  Layout l;
  std::vector<int64_t> renumber(static_cast<size_t>(groups), -1);
  l.slot.assign(static_cast<size_t>(cols), -1);
  const int64_t rows = static_cast<int64_t>(row_group.size());
  std::vector<int64_t> at;  // each row in the test's first entry in drawn
  for (int64_t b = 0; b < rows; ++b) {
    const int64_t lo = drawn.ptr[static_cast<size_t>(b)], hi = drawn.ptr[static_cast<size_t>(b) + 1];
    if (lo == hi) continue;
    int64_t& g = renumber[static_cast<size_t>(row_group[static_cast<size_t>(b)])];
    if (g < 0) g = l.groups++;
    l.row.push_back(b);
    l.group.push_back(g);
    for (int64_t i = lo; i < hi; ++i) l.slot[static_cast<size_t>(drawn.col[static_cast<size_t>(i)])] = 0;
  }
  *statistic = 0.0;
  *p_value = 1.0;
  if (l.groups < 2) return;
  for (int64_t v = 0; v < cols; ++v)
    if (l.slot[static_cast<size_t>(v)] == 0) l.slot[static_cast<size_t>(v)] = l.cols++;
  const auto each_row = [&](size_t i, auto&& f) {
    const int64_t b = l.row[i];
    for (int64_t c = drawn.ptr[static_cast<size_t>(b)]; c < drawn.ptr[static_cast<size_t>(b) + 1]; ++c)
      f(l.slot[static_cast<size_t>(drawn.col[static_cast<size_t>(c)])],
        static_cast<double>(drawn.count[static_cast<size_t>(c)]));
  };
  if (gs.statistic == kStatisticXmcupo) {
    *statistic = xmcupo(l, each_row);
  } else {
    std::vector<Histograms> h;
    group_histograms(l, each_row, &h);
    Fitted f;
    fit_all(h, gs, false, &f);
    *statistic = f.statistic;
  }
  const double df = statistic_df(gs.statistic, l.groups, l.cols);
  *p_value = df > 0.0 ? math::gamma_q(0.5 * df, 0.5 * *statistic) : 1.0;
}


// Table t's statistic and p-value for the proportions' test against pi0;
// p 1 where no row has counts.
void test_drawn_proportions(const CsrRows& drawn, int64_t cols, const double* pi0, double df,
                            double* statistic, double* p_value) {
  Layout l;
  l.slot.resize(static_cast<size_t>(cols));
  for (int64_t v = 0; v < cols; ++v) l.slot[static_cast<size_t>(v)] = v;
  l.cols = cols;
  for (size_t b = 0; b + 1 < drawn.ptr.size(); ++b) {
    if (drawn.ptr[b] == drawn.ptr[b + 1]) continue;
    l.row.push_back(static_cast<int64_t>(b));
    l.group.push_back(0);
  }
  *statistic = 0.0;
  *p_value = 1.0;
  if (l.row.empty()) return;
  l.groups = 1;
  const auto each_row = [&](size_t i, auto&& f) {
    const size_t b = static_cast<size_t>(l.row[i]);
    for (int64_t c = drawn.ptr[b]; c < drawn.ptr[b + 1]; ++c)
      f(drawn.col[static_cast<size_t>(c)], static_cast<double>(drawn.count[static_cast<size_t>(c)]));
  };
  *statistic = xsc(group_moments(l, each_row), pi0, cols);
  *p_value = std::isinf(*statistic) ? 0.0 : math::gamma_q(0.5 * df, 0.5 * *statistic);
}

// Draws s.tables tables of `rows` rows (table t from the seed's stream t) on
// the threads and tests each by test(drawn, &statistic, &p_value).
template <class Test>
BackendResult simulate_power(SampleRequest req, const PowerSettings& s, HostThreads& threads, Test test,
                             PowerOutcome* out) {
  std::vector<uint8_t> reject(static_cast<size_t>(s.tables), 0);
  std::vector<double> stat(static_cast<size_t>(s.tables), 0.0);
  std::atomic<bool> no_memory{false};
  DrawnTables tables(threads.size());
  const auto body = [&](int64_t t) {
    try {
      DrawnTables::Lease lease(tables);
      CsrRows& drawn = lease.table();
      SampleRequest r = req;
      r.seed = math::derived_key(s.seed, math::kFamilyPower, static_cast<uint64_t>(t));
      if (!sample_rows(r, nullptr, Interrupt{}, &drawn).ok()) {
        no_memory = true;
        return;
      }
      double p = 1.0;
      test(drawn, &stat[static_cast<size_t>(t)], &p);
      reject[static_cast<size_t>(t)] = p < s.level ? 1 : 0;
    } catch (const std::bad_alloc&) {
      no_memory = true;
    }
  };
  const double cost = static_cast<double>(req.rows) * static_cast<double>(req.cols) * 100.0 *
                      static_cast<double>(s.tables);
  if (!threads.run(s.tables, body, [&] { return s.interrupt.poll(); }, cost))
    return {DIRMN_ERROR_CANCELLED, "", 0};
  if (no_memory) return {DIRMN_ERROR_OUT_OF_MEMORY, "host memory for the simulated tables", 0};
  out->tables = s.tables;
  out->rejected = 0;
  double stat_sum = 0.0;
  for (int64_t t = 0; t < s.tables; ++t) {
    out->rejected += reject[static_cast<size_t>(t)];
    stat_sum += stat[static_cast<size_t>(t)];
  }
  out->power = static_cast<double>(out->rejected) / static_cast<double>(s.tables);
  out->std_error = std::sqrt(out->power * (1.0 - out->power) / static_cast<double>(s.tables));
  out->mean_statistic = stat_sum / static_cast<double>(s.tables);
  return {};
}

}  // namespace

BackendResult group_power(const double* alpha, int64_t groups, int64_t cols, const int64_t* rows_of,
                          const int64_t* sizes, const PowerSettings& s, HostThreads& threads,
                          PowerOutcome* out) {
  std::vector<int64_t> row_group;
  for (int64_t g = 0; g < groups; ++g) row_group.insert(row_group.end(), static_cast<size_t>(rows_of[g]), g);
  GroupTestSettings gs;
  gs.statistic = s.statistic;
  gs.tolerance = s.tolerance;
  gs.max_iterations = s.max_iterations;
  SampleRequest req;
  req.rows = static_cast<int64_t>(row_group.size());
  req.cols = cols;
  req.alpha = alpha;
  req.k = groups;
  req.sizes = sizes;
  req.sizes_stride = 1;
  req.component = row_group.data();
  return simulate_power(
      req, s, threads,
      [&](const CsrRows& drawn, double* statistic, double* p) {
        test_drawn(drawn, row_group, groups, cols, gs, statistic, p);
      },
      out);
}

BackendResult proportion_power(const double* alpha, int64_t cols, int64_t rows, const int64_t* sizes,
                               const double* pi0, const PowerSettings& s, HostThreads& threads,
                               PowerOutcome* out) {
  const double df = static_cast<double>(xsc_categories(pi0, cols) - 1);
  SampleRequest req;
  req.rows = rows;
  req.cols = cols;
  req.alpha = alpha;
  req.sizes = sizes;
  req.sizes_stride = 1;
  return simulate_power(
      req, s, threads,
      [&](const CsrRows& drawn, double* statistic, double* p) {
        test_drawn_proportions(drawn, cols, pi0, df, statistic, p);
      },
      out);
}

}  // namespace dirmn
