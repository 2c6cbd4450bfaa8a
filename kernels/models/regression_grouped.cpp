// regression_grouped.cpp: the groups' tables, fits and tests.
#include "regression_grouped.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>

#include "../math/distributions.hpp"
#include "../table/build.hpp"
#include "../table/cache.hpp"
#include "../table/extract.hpp"

namespace dirmn {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// Groups per task of the context's threads: enough tasks to even out
// groups of unequal cost; the caller's interrupt is polled between them.
constexpr int64_t kGroupsPerTask = 16;

// One thread's tools: a one-thread pool and a CPU backend over it, which
// every group's table of the task lives on in turn.
struct Worker {
  std::shared_ptr<HostThreads> threads;
  std::unique_ptr<Backend> backend;
};

// The status a group's failed fit leaves it (a whole-call failure where
// the cause is not the group's: cancelled, out of memory, a bug).
bool group_failure(dirmn_status s) {
  return s == DIRMN_ERROR_INVALID_ARGUMENT || s == DIRMN_ERROR_OVERFLOW || s == DIRMN_ERROR_INVALID_COUNTS;
}

// Fits and tests group g, whose columns (with counts) are the n_cols
// columns of `cells` (rows x ld, row-major, their values). Whole-call
// failures are returned; the group's own are left in *o.
BackendResult test_one(Worker& w, const GroupedSettings& s, const std::vector<double>& x_null, const double* cells,
                       int64_t rows, int64_t ld, int64_t n_cols, const Interrupt& interrupt, GroupOutcome* o) {
  o->categories = n_cols;
  if (n_cols < 2) {
    o->status = DIRMN_ERROR_INVALID_ARGUMENT;
    return {};
  }
  DenseInput in;
  in.rows = rows;
  in.cols = n_cols;
  in.dtype = DIRMN_FLOAT64;
  in.data = cells;
  in.row_stride = ld;
  in.col_stride = 1;
  HostTable host;
  CountsProblem problem;
  const dirmn_status built = build_dense_table(in, *w.threads, interrupt, &host, &problem);
  if (built == DIRMN_ERROR_CANCELLED) return {DIRMN_ERROR_CANCELLED, "", 0};
  if (built != DIRMN_SUCCESS) {
    o->status = built;
    return {};
  }
  std::unique_ptr<BackendCounts> data;
  TableInfo info;
  BackendResult r = w.backend->adopt(std::move(host), &data, &info);
  if (!r.ok()) return r;
  StoredTable t;
  t.backend = w.backend.get();
  t.data = data.get();
  t.threads = w.threads.get();
  t.info = &info;
  double loglik[2] = {0.0, 0.0}, held = 0.0;
  bool converged = true;
  for (int k = 0; k < 2; ++k) {
    RegressionSettings fs = s.fit;
    fs.interrupt = interrupt;
    fs.progress = nullptr;
    fs.check_limit = false;
    if (k == 1) {
      fs.x = x_null.data();
      fs.p = s.p_null;
      if (s.hold_precision) fs.log_precision = held;
    }
    HistogramCache cache;
    RegressionOutcome out;
    r = fit_regression(t, cache, fs, &out);
    if (!r.ok()) {
      if (!group_failure(r.status)) return r;
      o->status = r.status;
      return {};
    }
    loglik[k] = out.loglik;
    converged = converged && out.converged;
    if (k == 0 && s.fit.mean_precision) held = out.gamma[0];
  }
  const int64_t free_per_covariate = s.fit.mean_precision ? n_cols - 1 : n_cols;
  o->loglik_full = loglik[0];
  o->loglik_null = loglik[1];
  o->statistic = std::max(0.0, 2.0 * (loglik[0] - loglik[1]));
  o->df = static_cast<double>((s.fit.p - s.p_null) * free_per_covariate);
  o->p_value = math::chisq_upper(o->statistic, o->df);
  o->converged = converged;
  o->status = DIRMN_SUCCESS;
  return {};
}

}  // namespace

void benjamini_hochberg(const double* p, int64_t n, double* adjusted) {
  std::vector<int64_t> order;
  for (int64_t i = 0; i < n; ++i) {
    adjusted[i] = kNaN;
    if (!std::isnan(p[i])) order.push_back(i);
  }
  // Largest p first: adjusted = min over the larger ones of p m / rank.
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return p[a] > p[b] || (p[a] == p[b] && a < b); });
  const double m = static_cast<double>(order.size());
  double running = 1.0;
  for (size_t k = 0; k < order.size(); ++k) {
    const double rank = m - static_cast<double>(k);
    running = std::min(running, p[order[k]] * m / rank);
    adjusted[order[k]] = std::min(1.0, running);
  }
}

BackendResult test_groups(const StoredTable& table, const GroupedSettings& s, std::vector<GroupOutcome>* out) {
  const HostTable* h = table.host_rows();
  if (h == nullptr) return {DIRMN_ERROR_NOT_SUPPORTED, "counts wrapped from device memory", 0};
  const int64_t rows = h->rows, V = h->cols, p = s.fit.p;
  // The groups' columns, in column order within each group, side by side.
  std::vector<int64_t> start(static_cast<size_t>(s.groups + 1), 0), slot(static_cast<size_t>(V), -1);
  for (int64_t v = 0; v < V; ++v)
    if (s.group[v] >= 0) ++start[static_cast<size_t>(s.group[v] + 1)];
  std::partial_sum(start.begin(), start.end(), start.begin());
  const int64_t used = start.back();
  {
    std::vector<int64_t> next(start.begin(), start.end() - 1);
    for (int64_t v = 0; v < V; ++v)
      if (s.group[v] >= 0) slot[static_cast<size_t>(v)] = next[static_cast<size_t>(s.group[v])]++;
  }
  std::vector<double> cells(static_cast<size_t>(rows * std::max<int64_t>(used, 1)), 0.0);
  scatter_columns(*h, slot.data(), used, cells.data());
  std::vector<double> x_null(static_cast<size_t>(rows * s.p_null));
  for (int64_t b = 0; b < rows; ++b)
    std::copy(s.fit.x + b * p, s.fit.x + b * p + s.p_null, x_null.begin() + b * s.p_null);
  out->assign(static_cast<size_t>(s.groups), GroupOutcome{});

  const int64_t tasks = (s.groups + kGroupsPerTask - 1) / kGroupsPerTask;
  std::vector<BackendResult> failed(static_cast<size_t>(tasks));
  std::vector<char> out_of_memory(static_cast<size_t>(tasks), 0);
  const bool finished = table.threads->run(
      tasks,
      [&](int64_t task) {
        try {
          Worker w;
          w.threads = std::make_shared<HostThreads>(1);
          BackendResult made;
          w.backend = make_cpu_backend(w.threads, &made);
          if (!made.ok()) {
            failed[static_cast<size_t>(task)] = made;
            return;
          }
          std::vector<double> kept;
          for (int64_t g = task * kGroupsPerTask; g < std::min(s.groups, (task + 1) * kGroupsPerTask); ++g) {
            // The group's columns with counts (under the weights).
            const int64_t c0 = start[static_cast<size_t>(g)], c1 = start[static_cast<size_t>(g) + 1];
            std::vector<int64_t> cols;
            for (int64_t c = c0; c < c1; ++c) {
              bool any = false;
              for (int64_t b = 0; b < rows && !any; ++b)
                any = cells[static_cast<size_t>(b * used + c)] > 0.0 &&
                      (s.fit.weights == nullptr || s.fit.weights[b] > 0.0);
              if (any) cols.push_back(c);
            }
            const int64_t n = static_cast<int64_t>(cols.size());
            kept.assign(static_cast<size_t>(rows * std::max<int64_t>(n, 1)), 0.0);
            for (int64_t b = 0; b < rows; ++b)
              for (int64_t j = 0; j < n; ++j)
                kept[static_cast<size_t>(b * n + j)] = cells[static_cast<size_t>(b * used + cols[static_cast<size_t>(j)])];
            GroupOutcome& o = (*out)[static_cast<size_t>(g)];
            // Only the calling thread polls the caller's interrupt (between tasks).
            BackendResult r = test_one(w, s, x_null, kept.data(), rows, std::max<int64_t>(n, 1), n, Interrupt{}, &o);
            if (!r.ok()) {
              failed[static_cast<size_t>(task)] = r;
              return;
            }
            if (o.status != DIRMN_SUCCESS) o.loglik_full = o.loglik_null = o.statistic = o.df = o.p_value = kNaN;
          }
        } catch (const std::bad_alloc&) {
          out_of_memory[static_cast<size_t>(task)] = 1;
        }
      },
      [&] { return s.fit.interrupt.poll(); },
      static_cast<double>(rows) * static_cast<double>(used) * 1000.0);
  if (!finished) return {DIRMN_ERROR_CANCELLED, "", 0};
  for (int64_t t = 0; t < tasks; ++t) {
    if (out_of_memory[static_cast<size_t>(t)]) throw std::bad_alloc();
    if (!failed[static_cast<size_t>(t)].ok()) return failed[static_cast<size_t>(t)];
  }
  std::vector<double> pv(static_cast<size_t>(s.groups)), adj(static_cast<size_t>(s.groups));
  for (int64_t g = 0; g < s.groups; ++g) pv[static_cast<size_t>(g)] = (*out)[static_cast<size_t>(g)].p_value;
  benjamini_hochberg(pv.data(), s.groups, adj.data());
  for (int64_t g = 0; g < s.groups; ++g) (*out)[static_cast<size_t>(g)].p_adjusted = adj[static_cast<size_t>(g)];
  return {};
}

}  // namespace dirmn
