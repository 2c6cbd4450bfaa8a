// build.hpp: a caller's host table validated and encoded into the compact
// HostTable form (narrowest integer type, dense or CSR, per the storage
// policy), with its row and column statistics.
#pragma once

#include "../thread_pool.hpp"
#include "dirmn.h"
#include "input.hpp"
#include "table.hpp"

namespace dirmn {

// Validates and encodes a dense strided table on the host threads.
// Returns SUCCESS, or INVALID_COUNTS with *problem saying which cell and
// why. Throws std::bad_alloc when host memory runs out.
dirmn_status build_dense_table(const DenseInput& in, HostThreads& threads, HostTable* out,
                               CountsProblem* problem);

// Validates a compressed sparse table (CSR or CSC) and encodes it. Returns
// SUCCESS; INVALID_ARGUMENT for malformed ptr or indices and INVALID_COUNTS
// for a bad value, with *problem saying where. Throws std::bad_alloc.
dirmn_status build_sparse_table(const SparseInput& in, HostThreads& threads, HostTable* out,
                                CountsProblem* problem);

// Row totals, multinomial coefficients, row maxima and column statistics
// of an encoded table (its values, shape and form set), over row blocks on
// `parts` of the host threads. Throws std::bad_alloc.
void compute_row_stats(HostTable* t, HostThreads& threads, int parts);

// The same for a dense 8-bit table, vectorised: every cell branch-free. Its
// multinomial coefficients sum in another order than compute_row_stats'
// (they agree to rounding).
void compute_row_stats_dense_u8(HostTable* t, HostThreads& threads, int parts);

}  // namespace dirmn
