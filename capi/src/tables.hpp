// tables.hpp: what the Counts section's files share (counts.cpp, which
// takes tables in, and counts_copy.cpp, which copies them out) and what
// makes a counts handle from a validated host table, which the tables the
// library draws itself (sample.cpp) use too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "../../kernels/backend.hpp"
#include "../../kernels/table/table.hpp"
#include "dirmn.h"

struct dirmn_context;
struct dirmn_counts;

namespace dirmn {
namespace capi {

// A caller's value and index types, and their sizes in bytes.
inline bool valid_dtype(dirmn_dtype d) {
  return d == DIRMN_INT32 || d == DIRMN_INT64 || d == DIRMN_FLOAT32 || d == DIRMN_FLOAT64;
}
inline size_t dtype_bytes(dirmn_dtype d) { return d == DIRMN_INT64 || d == DIRMN_FLOAT64 ? 8 : 4; }
inline size_t index_bytes(dirmn_index_type t) { return t == DIRMN_INDEX_INT64 ? 8 : 4; }

// Hands a validated host table to the context's backend and makes the
// handle (*out, on success only). On a device the device copies the table
// and the context's CPU backend then takes it over. CANCELLED (the
// interrupt, polled first), OUT_OF_MEMORY, DEVICE, each with its message.
dirmn_status adopt_table(dirmn_context* ctx, const char* fn, HostTable&& table, uint32_t flags,
                         dirmn_counts** out);

// Rows the library drew (CsrRows) as table building takes a caller's CSR.
inline SparseInput drawn_rows_input(const CsrRows& rows, int64_t n_rows, int64_t cols,
                                    dirmn_storage storage) {
  SparseInput in;
  in.format = DIRMN_CSR;
  in.rows = n_rows;
  in.cols = cols;
  in.nnz = static_cast<int64_t>(rows.col.size());
  in.index_type = DIRMN_INDEX_INT64;
  in.ptr = rows.ptr.data();
  in.indices = rows.col.data();
  in.value_dtype = DIRMN_INT32;
  in.values = rows.count.data();
  in.storage = storage;
  return in;
}

// A counts handle for ctx's backend, before its table is set. Throws
// std::bad_alloc.
std::unique_ptr<dirmn_counts> new_counts(dirmn_context* ctx, uint32_t flags);

// host_copy.cpp: tables a device draws itself. draw_on_backend asks the
// context's backend to draw req and keep the table (*out, on success
// only); *drawn false (and DIRMN_SUCCESS) where it draws none itself, for
// the host to draw. Such a table has no host copy until a call needs one:
// ensure_host_copy makes it (the rows downloaded, built as the host builds
// a caller's CSR, taken over by the context's CPU backend) and is a no-op
// for every other table. OUT_OF_MEMORY, DEVICE, CANCELLED.
dirmn_status draw_on_backend(dirmn_context* ctx, const char* fn, const SampleRequest& req,
                             dirmn_counts** out, bool* drawn);
dirmn_status ensure_host_copy(dirmn_context* ctx, const char* fn, const dirmn_counts* counts);

}  // namespace capi
}  // namespace dirmn
