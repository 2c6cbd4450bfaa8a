// ranks.cpp: sums over a communicator's ranks for the estimators of a
// table split by rows.
#include "ranks.hpp"

#include <algorithm>
#include <cstddef>
#include <new>
#include <vector>

#include "../table/histogram_merge.hpp"
#include "weights.hpp"

namespace dirmn {
namespace {

constexpr BackendResult kNoMemory{DIRMN_ERROR_OUT_OF_MEMORY, "host memory for the sums over ranks", 0};

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

}  // namespace

BackendResult merge_over_ranks(Collective& c, BackendResult r, std::vector<Histograms>* h,
                               int64_t cols, const char* owned) {
  Communicator& comm = c.comm();
  const size_t R = static_cast<size_t>(comm.ranks()), me = static_cast<size_t>(comm.rank());
  // One rank's histograms are the sum already (rebuilt from lists they
  // would differ in their last bits where the weights are fractions).
  if (R == 1) return c.agree(r);
  const size_t n = r.ok() ? h->size() : 0;
  // Each rank's n histograms as lists, one after another in one buffer;
  // their sizes and coefficient sums in slots of n per rank.
  std::vector<HistogramLists> lists;
  std::vector<int64_t> sizes;
  std::vector<double> lcoef;
  try {
    if (r.ok()) {
      lists.resize(R);
      std::vector<double>& mine = lists[me].entries;
      HistogramLists one;
      sizes.assign(R * n, 0);
      lcoef.assign(R * n, 0.0);
      for (size_t j = 0; j < n; ++j) {
        histogram_lists((*h)[j], &one);
        mine.insert(mine.end(), one.entries.begin(), one.entries.end());
        sizes[me * n + j] = static_cast<int64_t>(one.size());
        lcoef[me * n + j] = (*h)[j].lcoef_sum;
      }
    }
  } catch (const std::bad_alloc&) {
    r = kNoMemory;
  }
  if (!(r = c.agree(r)).ok()) return r;
  if (!(r = comm.allreduce(sizes.data(), sizes.size())).ok()) return r;
  if (!(r = comm.allreduce(lcoef.data(), lcoef.size())).ok()) return r;
  try {
    for (size_t q = 0; q < R; ++q) {
      if (q == me) continue;
      int64_t entries = 0;
      for (size_t j = 0; j < n; ++j) entries += sizes[q * n + j];
      lists[q].entries.resize(3 * static_cast<size_t>(entries));
    }
  } catch (const std::bad_alloc&) {
    r = kNoMemory;
  }
  if (!(r = c.agree(r)).ok()) return r;
  for (size_t q = 0; q < R; ++q)
    if (!lists[q].entries.empty() &&
        !(r = comm.broadcast(lists[q].entries.data(), lists[q].entries.size() * sizeof(double),
                             static_cast<int>(q)))
             .ok())
      return r;
  try {
    // Component j's part of every rank's buffer, in rank order.
    std::vector<HistogramLists> parts(R);
    std::vector<size_t> at(R, 0);
    for (size_t j = 0; j < n; ++j) {
      double sum = 0.0;
      for (size_t q = 0; q < R; ++q) {
        const size_t len = 3 * static_cast<size_t>(sizes[q * n + j]);
        const double* from = lists[q].entries.data() + at[q];
        if (owned == nullptr || owned[j]) parts[q].entries.assign(from, from + len);
        at[q] += len;
        sum += lcoef[q * n + j];  // in rank order: the same on every rank
      }
      if (owned != nullptr && !owned[j]) continue;
      histograms_from_lists(parts.data(), R, cols, &(*h)[j]);
      (*h)[j].lcoef_sum = sum;
    }
  } catch (const std::bad_alloc&) {
    r = kNoMemory;
  }
  return c.agree(r);
}

BackendResult gather_over_ranks(Collective& c, BackendResult r, const double* x, size_t n,
                                std::vector<double>* slots) {
  Communicator& comm = c.comm();
  const size_t R = static_cast<size_t>(comm.ranks());
  try {
    if (r.ok()) {
      slots->assign(R * n, 0.0);
      std::copy(x, x + n, slots->begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(comm.rank()) * n));
    }
  } catch (const std::bad_alloc&) {
    r = kNoMemory;
  }
  if (!(r = c.agree(r)).ok()) return r;
  return comm.allreduce(slots->data(), slots->size());
}

BackendResult sum_over_ranks(Collective& c, BackendResult r, double* x, size_t n) {
  std::vector<double> slots;
  if (!(r = gather_over_ranks(c, r, x, n, &slots)).ok()) return r;
  const size_t R = static_cast<size_t>(c.comm().ranks());
  for (size_t i = 0; i < n; ++i) {
    double s = 0.0;
    for (size_t q = 0; q < R; ++q) s += slots[q * n + i];  // rank order
    x[i] = s;
  }
  return {};
}

BackendResult sum_by_broadcast(Collective& c, BackendResult r, double* x, size_t n) {
  Communicator& comm = c.comm();
  const int R = comm.ranks();
  std::vector<double> part, sum;
  try {
    if (r.ok() && R > 1) {
      part.resize(n);
      sum.assign(n, 0.0);
    }
  } catch (const std::bad_alloc&) {
    r = kNoMemory;
  }
  if (!(r = c.agree(r)).ok() || R == 1) return r;
  for (int q = 0; q < R; ++q) {
    if (q == comm.rank()) std::copy(x, x + n, part.begin());
    if (!(r = comm.broadcast(part.data(), n * sizeof(double), q)).ok()) return r;
    for (size_t i = 0; i < n; ++i) sum[i] += part[i];  // rank order
  }
  std::copy(sum.begin(), sum.end(), x);
  return {};
}

BackendResult sum_over_ranks(Collective& c, BackendResult r, int64_t* x, size_t n) {
  if (!(r = c.agree(r)).ok()) return r;
  return c.comm().allreduce(x, n);
}


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

BackendResult vote_out_of_memory(const StoredTable& table, const char* what) {
  const BackendResult no_memory{DIRMN_ERROR_OUT_OF_MEMORY, what, 0};
  try {
    ranks_agree(table, no_memory);
  } catch (const std::bad_alloc&) {  // beyond Collective::kInlineRanks: nothing more to be done
  }
  return no_memory;
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
  if (!(r = merge_over_ranks(c, r, &one, table.info->cols)).ok()) return r;
  Histograms merged = std::move(one[0]);
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
