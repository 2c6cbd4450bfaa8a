// ranks.cpp: sums over a communicator's ranks for the shared-alpha fit.
#include "ranks.hpp"

#include <algorithm>
#include <new>
#include <vector>

#include "../table/histogram_merge.hpp"

namespace dirmn {
namespace {

constexpr BackendResult kNoMemory{DIRMN_ERROR_OUT_OF_MEMORY, "host memory for the ranks' histograms", 0};

double local_top(const double* w, int64_t rows) {
  if (w == nullptr) return rows > 0 ? 1.0 : 0.0;
  double top = 0.0;
  for (int64_t b = 0; b < rows; ++b) top = std::max(top, w[b]);
  return top;
}

// This rank's histograms as lists, then every rank's lists on every rank
// (each rank's broadcast in turn), then their sum.
BackendResult merge(Collective& c, const Histograms* local, BackendResult r, int64_t cols,
                    Histograms* out) {
  Communicator& comm = c.comm();
  const size_t R = static_cast<size_t>(comm.ranks());
  std::vector<HistogramLists> lists;
  std::vector<int64_t> sizes;
  std::vector<double> lcoef;
  try {
    if (r.ok()) {
      lists.resize(R);
      histogram_lists(*local, &lists[static_cast<size_t>(comm.rank())]);
    }
  } catch (const std::bad_alloc&) {
    r = kNoMemory;
  }
  if (!(r = c.agree(r)).ok()) return r;
  const HistogramLists& mine = lists[static_cast<size_t>(comm.rank())];
  if (!(r = c.gather(static_cast<int64_t>(mine.size()), &sizes)).ok()) return r;
  if (!(r = c.gather(local->lcoef_sum, &lcoef)).ok()) return r;
  try {
    for (size_t q = 0; q < R; ++q)
      if (q != static_cast<size_t>(comm.rank())) lists[q].entries.resize(3 * static_cast<size_t>(sizes[q]));
  } catch (const std::bad_alloc&) {
    r = kNoMemory;
  }
  if (!(r = c.agree(r)).ok()) return r;
  for (size_t q = 0; q < R; ++q)
    if (sizes[q] > 0 &&
        !(r = comm.broadcast(lists[q].entries.data(), lists[q].entries.size() * sizeof(double),
                             static_cast<int>(q)))
             .ok())
      return r;
  try {
    histograms_from_lists(lists.data(), R, cols, out);
    double sum = 0.0;
    for (double x : lcoef) sum += x;  // in rank order: the same on every rank
    out->lcoef_sum = sum;
  } catch (const std::bad_alloc&) {
    r = kNoMemory;
  }
  return c.agree(r);
}

}  // namespace

BackendResult agreed_weight_top(const StoredTable& table, const double* weights, double* top) {
  *top = local_top(weights, table.info->rows);
  if (table.collective == nullptr) return {};
  Collective& c = *table.collective;
  try {
    BackendResult r = c.agree({});
    if (!r.ok()) return r;
    std::vector<double> tops;
    if (!(r = c.gather(*top, &tops)).ok()) return r;
    *top = *std::max_element(tops.begin(), tops.end());
  } catch (const std::bad_alloc&) {
    return kNoMemory;
  }
  return {};
}

BackendResult close_collective(const StoredTable& table, const BackendResult& local) {
  if (table.collective == nullptr) return local;
  try {
    return table.collective->agree(local);
  } catch (const std::bad_alloc&) {
    return kNoMemory;
  }
}

BackendResult rank_histograms(const StoredTable& table, HistogramCache& cache, const double* weights,
                              const Interrupt& interrupt, const Histograms** out) {
  Collective& c = *table.collective;
  Communicator& comm = c.comm();
  try {
    // Cached only where every rank holds the same merge.
    const Histograms* cached = cache.find(weights);
    std::vector<int64_t> serials;
    BackendResult r = c.agree({});
    if (!r.ok()) return r;
    r = c.gather(cached ? cache.serial() : 0, &serials);
    if (!r.ok()) return r;
    if (cached && std::all_of(serials.begin(), serials.end(), [&](int64_t s) { return s == serials[0]; })) {
      *out = cached;
      return {};
    }
    std::vector<Histograms> one(1);
    try {
      r = table.run(Step::kHistograms, [&](Backend& b, const BackendCounts& d) {
        return b.histograms(d, weights, 1, &one, interrupt);
      });
    } catch (const std::bad_alloc&) {
      r = kNoMemory;
    }
    Histograms merged;
    if (!(r = merge(c, &one[0], r, table.info->cols, &merged)).ok()) return r;
    std::vector<Histograms>().swap(one);
    const int64_t serial = comm.next_serial();
    try {
      *out = cache.store(std::move(merged), weights, table.info->rows, serial);
    } catch (const std::bad_alloc&) {
      // The merge stands; only the cache is lost, and each rank decides that
      // alone: the next call's serials tell.
      return kNoMemory;
    }
  } catch (const std::bad_alloc&) {
    return kNoMemory;
  }
  return {};
}

}  // namespace dirmn
