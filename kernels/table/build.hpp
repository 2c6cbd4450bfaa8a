// build.hpp: a caller's host table validated and encoded into the compact
// HostTable form (narrowest integer type, dense or CSR, per the storage
// policy), with its row and column statistics.
#pragma once

#include "../thread_pool.hpp"
#include "dirmn.h"
#include "input.hpp"
#include "table.hpp"

namespace dirmn {

// Validates and encodes a dense strided table on the host threads,
// polling `interrupt` at once and between row blocks. Returns SUCCESS;
// INVALID_COUNTS with *problem saying which cell and why; CANCELLED. Throws
// std::bad_alloc when host memory runs out.
dirmn_status build_dense_table(const DenseInput& in, HostThreads& threads,
                               const Interrupt& interrupt, HostTable* out, CountsProblem* problem);

// Validates a compressed sparse table (CSR or CSC) and encodes it, on the
// host threads when every outer slice's indices increase and every entry is
// valid, else as build_sparse_table_serial does (which it then calls), so
// the result and any message never depend on the thread count. Polls
// `interrupt` at once and between blocks of entries. Returns SUCCESS;
// INVALID_ARGUMENT for malformed ptr or indices and INVALID_COUNTS for a bad
// value, with *problem saying where; CANCELLED. Throws std::bad_alloc.
dirmn_status build_sparse_table(const SparseInput& in, HostThreads& threads,
                                const Interrupt& interrupt, HostTable* out, CountsProblem* problem);

// The same on the calling thread, for any input (indices in any order),
// polling `interrupt` every WorkPoller::kPollWork entries: the first
// malformed pointer entry, else the first bad index or count in input order,
// else the first repeat in row-major order.
dirmn_status build_sparse_table_serial(const SparseInput& in, HostThreads& threads,
                                       const Interrupt& interrupt, HostTable* out,
                                       CountsProblem* problem);

// Row totals, multinomial coefficients, row maxima and column statistics
// of an encoded table (its values, shape and form set), over `parts` row
// blocks on the host threads. False when `interrupt` stopped it. Throws
// std::bad_alloc.
bool compute_row_stats(HostTable* t, HostThreads& threads, int parts, const Interrupt& interrupt);

// The same for a dense 8-bit table, vectorised: every cell branch-free. Its
// multinomial coefficients sum in another order than compute_row_stats'
// (they agree to rounding).
bool compute_row_stats_dense_u8(HostTable* t, HostThreads& threads, int parts,
                                const Interrupt& interrupt);

}  // namespace dirmn
