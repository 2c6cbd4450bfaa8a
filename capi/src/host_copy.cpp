// host_copy.cpp: tables a device draws itself (dirmn_sample on a CUDA
// context) made into counts handles, and their host copies, made only when
// a call needs the rows on the host (tables.hpp).
#include <cinttypes>
#include <new>
#include <utility>

#include "../../kernels/table/build.hpp"
#include "errors.hpp"
#include "handles.hpp"
#include "tables.hpp"

namespace dirmn {
namespace capi {

dirmn_status draw_on_backend(dirmn_context* ctx, const char* fn, const SampleRequest& req,
                             dirmn_counts** out, bool* drawn) {
  *drawn = false;
  // Only a device context keeps a CPU backend for host steps; on the CPU
  // the host draws and builds the table itself.
  if (!ctx->host_backend) return DIRMN_SUCCESS;
  std::unique_ptr<dirmn_counts> c;
  try {
    c = new_counts(ctx, 0);
  } catch (const std::bad_alloc&) {
    return fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, fn, "out of host memory for the counts handle");
  }
  const BackendResult r = ctx->backend->sample(req, &c->data, &c->info, ctx->interrupt);
  if (r.status == DIRMN_ERROR_NOT_SUPPORTED) return DIRMN_SUCCESS;
  if (r.status == DIRMN_ERROR_CANCELLED)
    return fail(ctx, DIRMN_ERROR_CANCELLED, fn, "cancelled by the interrupt callback while drawing");
  if (r.status == DIRMN_ERROR_OUT_OF_MEMORY)
    return fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, fn,
                "out of memory for a sampled %" PRId64 " x %" PRId64 " table (%s)", req.rows,
                req.cols, r.what);
  if (!r.ok()) return fail_backend(ctx, fn, r);
  c->host_on_demand = true;
  *out = c.release();
  *drawn = true;
  return DIRMN_SUCCESS;
}

dirmn_status ensure_host_copy(dirmn_context* ctx, const char* fn, const dirmn_counts* counts) {
  if (!counts->host_on_demand || counts->host_data || !ctx->host_backend) return DIRMN_SUCCESS;
  CsrRows rows;
  HostTable table;
  try {
    const BackendResult r = counts->backend->download_rows(*counts->data, &rows);
    if (r.status == DIRMN_ERROR_OUT_OF_MEMORY)
      return fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, fn,
                  "out of host memory for the host copy of a %" PRId64 " x %" PRId64 " drawn table",
                  counts->info.rows, counts->info.cols);
    if (!r.ok()) return fail_backend(ctx, fn, r);
    // The host copy takes the device's form, so that both describe one table.
    const SparseInput in = drawn_rows_input(rows, counts->info.rows, counts->info.cols,
                                            counts->info.sparse ? DIRMN_STORAGE_SPARSE : DIRMN_STORAGE_DENSE);
    CountsProblem problem;
    if (dirmn_status s = build_sparse_table(in, *ctx->threads, ctx->interrupt, &table, &problem)) {
      if (s == DIRMN_ERROR_CANCELLED)
        return fail(ctx, DIRMN_ERROR_CANCELLED, fn,
                    "cancelled by the interrupt callback while the drawn table was copied to the host");
      return fail(ctx, DIRMN_ERROR_INTERNAL, fn, "a drawn table's host copy failed its validation");
    }
  } catch (const std::bad_alloc&) {
    return fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, fn,
                "out of host memory for the host copy of a %" PRId64 " x %" PRId64 " drawn table",
                counts->info.rows, counts->info.cols);
  }
  std::unique_ptr<BackendCounts> host_data;
  TableInfo host_info;
  const BackendResult rh = ctx->host_backend->adopt(std::move(table), &host_data, &host_info);
  if (!rh.ok()) return fail_backend(ctx, fn, rh);
  counts->host_backend = ctx->host_backend;
  counts->host_data = std::move(host_data);
  return DIRMN_SUCCESS;
}

}  // namespace capi
}  // namespace dirmn
