// group_test.cpp: the groups' likelihood-ratio test and its bootstrap.
//
// The observed table and every bootstrap table take one path: the rows in
// the test, by groups, into count histograms (one set per group and one
// for all rows), then a fit of each from the histograms. The bootstrap's
// tables are drawn over the columns with counts, from the null fit, with
// each row's observed total, on the stream of replicate r of the seed
// (math::derived_key(seed, kFamilyBootstrap, r)).
#include "group_test.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <new>
#include <vector>

#include "../host_fit.hpp"
#include "../math/distributions.hpp"
#include "../math/random.hpp"
#include "../table/histogram.hpp"
#include "group_test_parts.hpp"
#include "sample.hpp"

namespace dirmn {
namespace {

using namespace group_parts;

}  // namespace

BackendResult group_test(const HostTable& t, const int64_t* group, int64_t groups,
                         const GroupTestSettings& s, HostThreads& threads, GroupTestOutcome* out) {
  // The rows in the test (a group, counts) and the groups and columns they hold.
  Layout l;
  // The labels the rows use, sorted: at most one per row, whatever
  // `groups` is (a vector of `groups` entries would not fit for groups near
  // 2^63); renumber[i] is labels[i]'s group in order of first appearance.
  std::vector<int64_t> labels;
  labels.reserve(static_cast<size_t>(std::min(groups, t.rows)));
  for (int64_t b = 0; b < t.rows; ++b)
    if (group[b] >= 0) labels.push_back(group[b]);
  std::sort(labels.begin(), labels.end());
  labels.erase(std::unique(labels.begin(), labels.end()), labels.end());
  std::vector<int64_t> renumber(labels.size(), -1);
  l.slot.assign(static_cast<size_t>(t.cols), -1);
  with_value_type(t.vtype, [&](auto tag) {
    using T = decltype(tag);
    const T* x = reinterpret_cast<const T*>(t.values.data());
    for (int64_t b = 0; b < t.rows; ++b) {
      if (group[b] < 0 || t.row_total[static_cast<size_t>(b)] == 0.0) continue;
      int64_t& g = renumber[static_cast<size_t>(std::lower_bound(labels.begin(), labels.end(), group[b]) - labels.begin())];
      if (g < 0) g = l.groups++;
      l.row.push_back(b);
      l.group.push_back(g);
      l.size.push_back(static_cast<int64_t>(t.row_total[static_cast<size_t>(b)]));
      const int64_t lo = t.sparse ? t.row_ptr[static_cast<size_t>(b)] : b * t.cols;
      const int64_t hi = t.sparse ? t.row_ptr[static_cast<size_t>(b) + 1] : lo + t.cols;
      for (int64_t i = lo; i < hi; ++i)
        if (x[i] != 0) l.slot[static_cast<size_t>(t.sparse ? t.col_idx[static_cast<size_t>(i)] : i - lo)] = 0;
    }
    return 0;
  });
  if (l.groups < 2) return {DIRMN_ERROR_INVALID_ARGUMENT, "fewer than two groups have counts", 0};
  for (int64_t v = 0; v < t.cols; ++v)
    if (l.slot[static_cast<size_t>(v)] == 0) l.slot[static_cast<size_t>(v)] = l.cols++;
  // Group labels renumbered in order of first appearance do not change a
  // group's rows, so neither the fits nor the statistic.
  const TableRows observed_row{t, l};
  std::vector<Histograms> h;
  group_histograms(l, observed_row, &h);
  if (s.interrupt.poll()) return {DIRMN_ERROR_CANCELLED, "", 0};
  Fitted observed;
  fit_all(h, s, true, &observed);
  std::vector<Histograms>().swap(h);
  const bool by_xmcupo = s.statistic == kStatisticXmcupo;
  const double statistic = by_xmcupo ? xmcupo(l, observed_row) : observed.statistic;
  out->statistic = statistic;
  out->loglik_null = observed.loglik_null;
  out->loglik_groups = observed.loglik_groups;
  out->groups = l.groups;
  out->categories = l.cols;
  out->df = statistic_df(s.statistic, l.groups, l.cols);
  out->p_value = out->df > 0.0 ? math::gamma_q(0.5 * out->df, 0.5 * out->statistic) : 1.0;
  out->converged = observed.converged;
  out->bootstrap = s.bootstrap;
  out->p_value_bootstrap = 1.0;
  if (s.bootstrap <= 0) return {};

  // The null the tables are drawn from: the one DM, or for Xoc each
  // group's DM of the shared precision (a group's row drawn from its own).
  const bool by_group = s.statistic == kStatisticXoc;
  std::vector<double> alpha = by_group ? observed.group_alpha : observed.null_fit.alpha;
  if (!by_group && observed.null_fit.multinomial_limit)
    for (double& a : alpha) a *= kLimitPrecision;
  if (by_group && observed.group_limit)
    for (double& a : alpha) a *= kLimitPrecision;
  for (double& a : alpha) a = std::min(std::max(a, kSampleAlphaMin), kSampleAlphaMax);
  std::vector<uint8_t> exceeds(static_cast<size_t>(s.bootstrap), 0);
  std::atomic<bool> no_memory{false};
  DrawnTables tables(threads.size());
  const auto body = [&](int64_t r) {
    try {
      DrawnTables::Lease lease(tables);
      CsrRows& drawn = lease.table();
      SampleRequest req;
      req.rows = static_cast<int64_t>(l.row.size());
      req.cols = l.cols;
      req.alpha = alpha.data();
      if (by_group) {
        req.k = l.groups;
        req.component = l.group.data();
      }
      req.sizes = l.size.data();
      req.sizes_stride = 1;
      req.seed = math::derived_key(s.seed, math::kFamilyBootstrap, static_cast<uint64_t>(r));
      if (!sample_rows(req, nullptr, Interrupt{}, &drawn).ok()) {
        no_memory = true;
        return;
      }
      const auto drawn_row = [&](size_t i, auto&& f) {
        for (int64_t c = drawn.ptr[i]; c < drawn.ptr[i + 1]; ++c)
          f(drawn.col[static_cast<size_t>(c)], static_cast<double>(drawn.count[static_cast<size_t>(c)]));
      };
      double replicate = 0.0;
      if (by_xmcupo) {
        replicate = xmcupo(l, drawn_row);
      } else {
        std::vector<Histograms> hr;
        group_histograms(l, drawn_row, &hr);
        Fitted f;
        fit_all(hr, s, false, &f);
        replicate = f.statistic;
      }
      exceeds[static_cast<size_t>(r)] = replicate >= statistic ? 1 : 0;
    } catch (const std::bad_alloc&) {
      no_memory = true;
    }
  };
  const double cost = static_cast<double>(l.row.size()) * static_cast<double>(l.cols) * 100.0 *
                      static_cast<double>(s.bootstrap);
  if (!threads.run(s.bootstrap, body, [&] { return s.interrupt.poll(); }, cost))
    return {DIRMN_ERROR_CANCELLED, "", 0};
  if (no_memory) return {DIRMN_ERROR_OUT_OF_MEMORY, "host memory for the bootstrap's tables", 0};
  int64_t hits = 0;
  for (uint8_t e : exceeds) hits += e;
  out->p_value_bootstrap = static_cast<double>(1 + hits) / static_cast<double>(1 + s.bootstrap);
  return {};
}

BackendResult proportion_test(const HostTable& t, const double* pi0, ProportionTestOutcome* out) {
  Layout l;
  l.slot.resize(static_cast<size_t>(t.cols));
  for (int64_t v = 0; v < t.cols; ++v) l.slot[static_cast<size_t>(v)] = v;
  l.cols = t.cols;
  for (int64_t b = 0; b < t.rows; ++b) {
    if (t.row_total[static_cast<size_t>(b)] == 0.0) continue;
    l.row.push_back(b);
    l.group.push_back(0);
  }
  if (l.row.empty()) return {DIRMN_ERROR_INVALID_ARGUMENT, "no row has counts", 0};
  l.groups = 1;
  const GroupMoments m = group_moments(l, TableRows{t, l});
  out->statistic = xsc(m, pi0, t.cols);
  out->categories = xsc_categories(pi0, t.cols);
  out->df = static_cast<double>(out->categories - 1);
  out->p_value = std::isinf(out->statistic) ? 0.0 : math::gamma_q(0.5 * out->df, 0.5 * out->statistic);
  out->theta = m.theta[0];
  out->rows = static_cast<int64_t>(l.row.size());
  return {};
}

}  // namespace dirmn
