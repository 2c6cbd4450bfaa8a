// ranks.cpp: sums over a communicator's ranks for the shared-alpha fit.
#include "ranks.hpp"

#include <algorithm>
#include <new>
#include <vector>

#include "../table/histogram_merge.hpp"
#include "weights.hpp"

namespace dirmn {
namespace {

constexpr BackendResult kNoMemory{DIRMN_ERROR_OUT_OF_MEMORY, "host memory for the ranks' histograms", 0};

// Null weights are 1s here: a rank without weights beside one with them.
double local_top(const double* w, int64_t rows) {
  return w != nullptr ? ScaledWeights::top_of(w, rows) : rows > 0 ? 1.0 : 0.0;
}

// Every vector a phase's gathers write, sized before the phase's first
// vote: a rank that cannot have them votes so, and after the vote the
// gathers allocate nothing (a rank that threw there would leave the others
// waiting).
template <class... V>
BackendResult size_for_gathers(size_t ranks, V*... v) {
  try {
    (v->assign(ranks, 0), ...);
  } catch (const std::bad_alloc&) {
    return kNoMemory;
  }
  return {};
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
      r = size_for_gathers(R, &sizes, &lcoef);
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
  std::vector<double> tops;
  BackendResult r = size_for_gathers(static_cast<size_t>(c.comm().ranks()), &tops);
  if (!(r = c.agree(r)).ok()) return r;
  if (!(r = c.gather(*top, &tops)).ok()) return r;
  *top = *std::max_element(tops.begin(), tops.end());
  return {};
}

BackendResult close_collective(const StoredTable& table, const BackendResult& local) {
  return table.collective == nullptr ? local : table.collective->agree(local);
}

BackendResult rank_histograms(const StoredTable& table, HistogramCache& cache, const double* weights,
                              const Interrupt& interrupt, const Histograms** out) {
  Collective& c = *table.collective;
  Communicator& comm = c.comm();
  // Cached only where every rank holds the same merge.
  const Histograms* cached = cache.find(weights);
  std::vector<int64_t> serials;
  BackendResult r = size_for_gathers(static_cast<size_t>(comm.ranks()), &serials);
  if (!(r = c.agree(r)).ok()) return r;
  if (!(r = c.gather(cached ? cache.serial() : 0, &serials)).ok()) return r;
  if (cached && std::all_of(serials.begin(), serials.end(), [&](int64_t s) { return s == serials[0]; })) {
    *out = cached;
    return {};
  }
  std::vector<Histograms> one;
  try {
    one.resize(1);
    r = table.run(Step::kHistograms, [&](Backend& b, const BackendCounts& d) {
      return b.histograms(d, weights, 1, &one, interrupt);
    });
  } catch (const std::bad_alloc&) {
    r = kNoMemory;
  }
  Histograms merged;
  if (!(r = merge(c, r.ok() ? &one[0] : nullptr, r, table.info->cols, &merged)).ok()) return r;
  std::vector<Histograms>().swap(one);
  const int64_t serial = comm.next_serial();
  try {
    *out = cache.store(std::move(merged), weights, table.info->rows, serial);
  } catch (const std::bad_alloc&) {
    r = kNoMemory;
  }
  // Agreed: a rank that could not keep the merge fails every rank's call.
  return c.agree(r);
}

}  // namespace dirmn
