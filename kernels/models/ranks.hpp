// ranks.hpp: the estimators' sums over a table split by rows over a
// communicator's ranks (comm.hpp): the row weights' scale, the count
// histograms and the sums over rows, summed so that every rank holds what
// one pass over the whole table would have built (double sums in rank
// order, the same on every rank).
//
// Each function below is one phase of a collective call: it opens with a
// vote on `local` (this rank's outcome so far), so a rank that failed
// before it releases the others there; it allocates nothing after that
// vote but what it votes on again.
#pragma once

#include <vector>

#include "../comm.hpp"
#include "../stored_table.hpp"
#include "../table/cache.hpp"
#include "../table/histogram.hpp"

namespace dirmn {

// The largest row weight over every rank's rows (null weights count as 1
// where the rank has rows): what ScaledWeights scales by, agreed, so that
// every rank's histograms are on one scale. *top: this rank's own without
// a communicator. Opens the collective call (its first vote).
BackendResult agreed_weight_top(const StoredTable& table, const double* weights, double* top);

// The histograms of every rank's rows under these (scaled) weights, built
// locally by the table's histogram step and summed over the ranks, or the
// cached ones where every rank holds the same cached merge. Throws nothing
// (a local std::bad_alloc is voted as OUT_OF_MEMORY).
BackendResult rank_histograms(const StoredTable& table, HistogramCache& cache, const double* weights,
                              const Interrupt& interrupt, const Histograms** out);

// A vote on this rank's outcome so far (comm.hpp's agree); `local` as it
// is without a communicator. A call's closing vote comes before any
// caller's array is written: every rank then writes or none does.
inline BackendResult ranks_agree(const StoredTable& table, const BackendResult& local) {
  return table.collective == nullptr ? local : table.collective->agree(local);
}

// After an allocation failure thrown between two phases of a collective
// call (the other ranks wait at the next one's opening vote): that vote,
// cast as OUT_OF_MEMORY (what), and the result to return. Throws nothing.
BackendResult vote_out_of_memory(const StoredTable& table, const char* what);

// Replaces each of *h (the same number on every rank, of `cols` columns)
// by its sum over the ranks, as histogram_merge.hpp rebuilds it; with
// `owned`, only those j with owned[j] (the others are left as they were).
BackendResult merge_over_ranks(Collective& c, BackendResult local, std::vector<Histograms>* h,
                               int64_t cols, const char* owned = nullptr);

// Every rank's x (n values each) into *slots, ranks x n, rank-major.
BackendResult gather_over_ranks(Collective& c, BackendResult local, const double* x, size_t n,
                                std::vector<double>* slots);

// x (n values) replaced by its sums over the ranks: doubles added in rank
// order, integers exactly.
BackendResult sum_over_ranks(Collective& c, BackendResult local, double* x, size_t n);
BackendResult sum_over_ranks(Collective& c, BackendResult local, int64_t* x, size_t n);

// The same sum for arrays too large for a slot per rank (a regression's
// Newton matrix): each rank's x broadcast in turn and added in rank order
// (the same sums as sum_over_ranks), n more doubles of memory.
BackendResult sum_by_broadcast(Collective& c, BackendResult local, double* x, size_t n);

}  // namespace dirmn
