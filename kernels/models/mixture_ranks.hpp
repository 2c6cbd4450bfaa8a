// mixture_ranks.hpp: what a mixture's EM sums over the rows, for a table
// split by rows over a communicator's ranks (comm.hpp) as for one in one
// process: the totals, the E step's sums and the row a component that
// emptied restarts at. Each collective function is a phase (ranks.hpp): it
// opens with a vote on `local`.
#pragma once

#include <cstdint>

#include "../comm.hpp"
#include "../stored_table.hpp"

namespace dirmn {

// The whole table's rows and row weight (weights: this rank's, or null for
// 1), and the first rank that has rows (0 in one process).
struct EmTotals {
  int64_t rows = 0;
  double weight = 0.0;
  int first_rank_with_rows = 0;
};
BackendResult em_totals(const StoredTable& table, BackendResult local, const double* weights,
                        EmTotals* out);

// An E step's sums over every rank's rows: loglik, z_sum and w_sum added
// in rank order, max_change the largest.
BackendResult reduce_e_step(Collective& c, BackendResult local, EmStep* st);

// The M step over ranks: component j is merged and fitted by rank
// j % ranks alone (its owner), which sends the fit to the others.
inline bool owns_component(const Collective& c, int j) { return j % c.comm().ranks() == c.comm().rank(); }

// Every component's fit from its owner: alpha (k x cols) and *out's
// entries of the components this rank does not own replaced by the
// owner's. `local` is this rank's fits' outcome.
BackendResult share_component_fits(Collective& c, BackendResult local, int k, int64_t cols, double* alpha,
                                   EmFitOutcome* out);

// The row an emptied component restarts at: of the rows with counts, the
// one with the smallest log-sum-exp (the first of equals), where the
// table's first row starts the search whether it has counts or not. *row:
// this rank's row, or -1 where another rank holds it. lse: this rank's
// rows' (rows of them).
BackendResult worst_row(const StoredTable& table, BackendResult local, const EmTotals& totals,
                        const double* lse, int64_t* row);

}  // namespace dirmn
