// counts.cpp: the header's Counts section -- argument checks of caller
// tables, the counts handle, and its description.
#include <cinttypes>
#include <cstring>
#include <memory>
#include <new>

#include "../../kernels/table/build.hpp"
#include "guard.hpp"
#include "handles.hpp"
#include "tables.hpp"

using namespace dirmn::capi;
using dirmn::BackendResult;
using dirmn::CountsProblem;

namespace dirmn {
namespace capi {
namespace {


dirmn_status check_dense_shape(dirmn_context* ctx, const char* fn, int64_t rows, int64_t cols,
                               dirmn_dtype dtype, const void* data, int64_t row_stride,
                               int64_t col_stride) {
  if (rows <= 0 || cols <= 0)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                "rows (%" PRId64 ") and cols (%" PRId64 ") must be positive", rows, cols);
  if (cols > static_cast<int64_t>(UINT32_MAX))
    return fail(ctx, DIRMN_ERROR_OVERFLOW, fn, "cols (%" PRId64 ") exceeds 2^32 - 1", cols);
  int64_t cells = 0;
  if (__builtin_mul_overflow(rows, cols, &cells) || cells > PTRDIFF_MAX / 8)
    return fail(ctx, DIRMN_ERROR_OVERFLOW, fn, "rows x cols (%" PRId64 " x %" PRId64 ") overflows",
                rows, cols);
  if (!valid_dtype(dtype))
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn, "unknown dtype %d", static_cast<int>(dtype));
  return check_extent(ctx, fn, "data",
                      Strided{data, rows, cols, row_stride, col_stride, dtype_bytes(dtype)}, false);
}

// ptr, indices and values of a compressed table (after its shape's checks).
dirmn_status check_sparse_arrays(dirmn_context* ctx, const char* fn, dirmn_sparse_format format,
                                 int64_t rows, int64_t cols, int64_t nnz,
                                 dirmn_index_type index_type, const void* ptr,
                                 const void* indices, dirmn_dtype value_dtype,
                                 const void* values) {
  const int64_t outer = format == DIRMN_CSR ? rows : cols;
  if (dirmn_status s = check_extent(ctx, fn, "ptr", contiguous(ptr, outer + 1, index_bytes(index_type)), false))
    return s;
  if (nnz == 0) return DIRMN_SUCCESS;
  if (dirmn_status s = check_extent(ctx, fn, "indices", contiguous(indices, nnz, index_bytes(index_type)), false))
    return s;
  return check_extent(ctx, fn, "values", contiguous(values, nnz, dtype_bytes(value_dtype)), false);
}

dirmn_status check_sparse_shape(dirmn_context* ctx, const char* fn, int64_t rows, int64_t cols,
                                int64_t nnz, dirmn_index_type index_type, dirmn_dtype value_dtype) {
  if (rows <= 0 || cols <= 0)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                "rows (%" PRId64 ") and cols (%" PRId64 ") must be positive", rows, cols);
  if (cols > static_cast<int64_t>(UINT32_MAX))
    return fail(ctx, DIRMN_ERROR_OVERFLOW, fn, "cols (%" PRId64 ") exceeds 2^32 - 1", cols);
  if (nnz < 0) return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn, "nnz (%" PRId64 ") is negative", nnz);
  int64_t cells = 0;
  if (__builtin_mul_overflow(rows, cols, &cells))
    return fail(ctx, DIRMN_ERROR_OVERFLOW, fn, "rows x cols (%" PRId64 " x %" PRId64 ") overflows",
                rows, cols);
  if (nnz > cells)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                "nnz (%" PRId64 ") exceeds rows x cols (%" PRId64 ")", nnz, cells);
  if (index_type != DIRMN_INDEX_INT32 && index_type != DIRMN_INDEX_INT64)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn, "unknown index type %d",
                static_cast<int>(index_type));
  if (!valid_dtype(value_dtype))
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn, "unknown value dtype %d",
                static_cast<int>(value_dtype));
  return DIRMN_SUCCESS;
}

dirmn_status check_counts_options(dirmn_context* ctx, const char* fn, const dirmn_counts_options* o,
                                  uint32_t* flags, dirmn_storage* storage) {
  *flags = 0;
  *storage = DIRMN_STORAGE_AUTO;
  if (o == nullptr) return DIRMN_SUCCESS;
  if (o->size < offsetof(dirmn_counts_options, flags) + sizeof(uint32_t))
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                "options->size (%zu) is too small; call dirmn_counts_options_init", o->size);
  constexpr uint32_t known = DIRMN_COUNTS_REAL_VALUED | DIRMN_COUNTS_ONE_BASED;
  if (o->flags & ~known)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn, "unknown options->flags bits 0x%x",
                o->flags & ~known);
  *flags = o->flags;
  if (o->size >= offsetof(dirmn_counts_options, storage) + sizeof(dirmn_storage)) {
    if (o->storage != DIRMN_STORAGE_AUTO && o->storage != DIRMN_STORAGE_DENSE &&
        o->storage != DIRMN_STORAGE_SPARSE)
      return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn, "unknown options->storage %d",
                  static_cast<int>(o->storage));
    *storage = o->storage;
  }
  return DIRMN_SUCCESS;
}

dirmn_status fail_cancelled(dirmn_context* ctx, const char* fn) {
  return fail(ctx, DIRMN_ERROR_CANCELLED, fn,
              "cancelled by the interrupt callback while the table was loaded (nothing was kept)");
}

// The caller's table as table building and device ingestion take it
// (strides of dimensions of 1 ignored).
DenseInput dense_input(int64_t rows, int64_t cols, dirmn_dtype dtype, const void* data,
                       int64_t row_stride, int64_t col_stride, uint32_t flags,
                       dirmn_storage storage) {
  DenseInput in;
  in.rows = rows;
  in.cols = cols;
  in.dtype = dtype;
  in.data = data;
  in.row_stride = rows == 1 ? 0 : row_stride;
  in.col_stride = cols == 1 ? 0 : col_stride;
  in.real_valued = (flags & DIRMN_COUNTS_REAL_VALUED) != 0;
  in.storage = storage;
  return in;
}

SparseInput sparse_input(dirmn_sparse_format format, int64_t rows, int64_t cols, int64_t nnz,
                         dirmn_index_type index_type, const void* ptr, const void* indices,
                         dirmn_dtype value_dtype, const void* values, uint32_t flags,
                         dirmn_storage storage) {
  SparseInput in;
  in.format = format;
  in.rows = rows;
  in.cols = cols;
  in.nnz = nnz;
  in.index_type = index_type;
  in.ptr = ptr;
  in.indices = indices;
  in.value_dtype = value_dtype;
  in.values = values;
  in.real_valued = (flags & DIRMN_COUNTS_REAL_VALUED) != 0;
  in.storage = storage;
  in.index_base = (flags & DIRMN_COUNTS_ONE_BASED) != 0 ? 1 : 0;
  return in;
}

dirmn_status refuse_on_cpu(dirmn_context* ctx, const char* fn) {
  return fail(ctx, DIRMN_ERROR_NOT_SUPPORTED, fn,
              "device arrays can only be wrapped by a CUDA context; this one is on the CPU");
}

}  // namespace

// A counts handle for ctx's backend, before its table is set.
std::unique_ptr<dirmn_counts> new_counts(dirmn_context* ctx, uint32_t flags) {
  auto c = std::make_unique<dirmn_counts>();
  c->context_id = ctx->id;
  c->use = ctx->use;
  c->backend = ctx->backend;
  c->flags = flags & ~DIRMN_COUNTS_ONE_BASED;  // how the input counted is not the table's
  return c;
}

dirmn_status adopt_table(dirmn_context* ctx, const char* fn, HostTable&& table, uint32_t flags,
                         dirmn_counts** out) {
  // Between the host's build and the copy to the device.
  if (ctx->interrupt.poll()) return fail_cancelled(ctx, fn);
  std::unique_ptr<dirmn_counts> c;
  try {
    c = new_counts(ctx, flags);
  } catch (const std::bad_alloc&) {
    return fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, fn, "out of host memory for the counts handle");
  }
  if (ctx->host_backend) {
    // The device copies the table, then the host backend takes it over:
    // no second host copy of a table that may be gigabytes.
    const BackendResult r = ctx->backend->adopt_copy(table, &c->data, &c->info);
    if (!r.ok()) return fail_backend(ctx, fn, r);
    TableInfo host_info;
    const BackendResult rh = ctx->host_backend->adopt(std::move(table), &c->host_data, &host_info);
    if (!rh.ok()) return fail_backend(ctx, fn, rh);
    c->host_backend = ctx->host_backend;
  } else {
    const BackendResult r = ctx->backend->adopt(std::move(table), &c->data, &c->info);
    if (!r.ok()) return fail_backend(ctx, fn, r);
  }
  *out = c.release();
  return DIRMN_SUCCESS;
}

}  // namespace capi
}  // namespace dirmn

extern "C" {

void dirmn_counts_options_init_sized(dirmn_counts_options* options, size_t size) {
  dirmn_counts_options d;
  std::memset(&d, 0, sizeof d);
  d.flags = 0;
  d.storage = DIRMN_STORAGE_AUTO;
  fill_defaults(options, size, d);
}

void(dirmn_counts_options_init)(dirmn_counts_options* options) {
  // The struct of the first release ended with `storage`.
  dirmn_counts_options_init_sized(options, offsetof(dirmn_counts_options, storage) + sizeof(dirmn_storage));
}

dirmn_status dirmn_counts_create_dense(dirmn_context* ctx, dirmn_counts** counts, int64_t rows,
                                       int64_t cols, dirmn_dtype dtype, const void* data,
                                       int64_t row_stride, int64_t col_stride,
                                       const dirmn_counts_options* options) {
  static const char* fn = "dirmn_counts_create_dense";
  return with_context(ctx, fn, [&] {
    using namespace dirmn::capi;
    if (counts == nullptr) return fail(ctx, DIRMN_ERROR_NULL_POINTER, fn, "counts is NULL");
    if (data == nullptr) return fail(ctx, DIRMN_ERROR_NULL_POINTER, fn, "data is NULL");
    uint32_t flags = 0;
    dirmn_storage storage = DIRMN_STORAGE_AUTO;
    if (dirmn_status s = check_counts_options(ctx, fn, options, &flags, &storage)) return s;
    if (dirmn_status s = check_dense_shape(ctx, fn, rows, cols, dtype, data, row_stride, col_stride))
      return s;
    const dirmn::DenseInput in =
        dense_input(rows, cols, dtype, data, row_stride, col_stride, flags, storage);
    dirmn::HostTable table;
    CountsProblem problem;
    try {
      if (dirmn_status s = dirmn::build_dense_table(in, *ctx->threads, ctx->interrupt, &table, &problem))
        return s == DIRMN_ERROR_CANCELLED ? fail_cancelled(ctx, fn)
                                          : fail_counts(ctx, fn, s, problem, rows, cols);
    } catch (const std::bad_alloc&) {
      return fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, fn,
                  "out of host memory for a %" PRId64 " x %" PRId64 " table", rows, cols);
    }
    return adopt_table(ctx, fn, std::move(table), flags, counts);
  });
}

dirmn_status dirmn_counts_create_sparse(dirmn_context* ctx, dirmn_counts** counts,
                                        dirmn_sparse_format format, int64_t rows, int64_t cols,
                                        int64_t nnz, dirmn_index_type index_type,
                                        const void* ptr, const void* indices,
                                        dirmn_dtype value_dtype, const void* values,
                                        const dirmn_counts_options* options) {
  static const char* fn = "dirmn_counts_create_sparse";
  return with_context(ctx, fn, [&] {
    using namespace dirmn::capi;
    if (counts == nullptr) return fail(ctx, DIRMN_ERROR_NULL_POINTER, fn, "counts is NULL");
    uint32_t flags = 0;
    dirmn_storage storage = DIRMN_STORAGE_AUTO;
    if (dirmn_status s = check_counts_options(ctx, fn, options, &flags, &storage)) return s;
    if (dirmn_status s = check_sparse_shape(ctx, fn, rows, cols, nnz, index_type, value_dtype))
      return s;
    if (format != DIRMN_CSR && format != DIRMN_CSC)
      return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn, "unknown sparse format %d",
                  static_cast<int>(format));
    if (ptr == nullptr) return fail(ctx, DIRMN_ERROR_NULL_POINTER, fn, "ptr is NULL");
    if (nnz > 0 && (indices == nullptr || values == nullptr))
      return fail(ctx, DIRMN_ERROR_NULL_POINTER, fn, "indices or values is NULL with nnz = %" PRId64,
                  nnz);
    if (dirmn_status s = check_sparse_arrays(ctx, fn, format, rows, cols, nnz, index_type, ptr,
                                             indices, value_dtype, values))
      return s;
    const dirmn::SparseInput in = sparse_input(format, rows, cols, nnz, index_type, ptr, indices,
                                               value_dtype, values, flags, storage);
    dirmn::HostTable table;
    CountsProblem problem;
    try {
      if (dirmn_status s = dirmn::build_sparse_table(in, *ctx->threads, ctx->interrupt, &table, &problem))
        return s == DIRMN_ERROR_CANCELLED ? fail_cancelled(ctx, fn)
                                          : fail_counts(ctx, fn, s, problem, rows, cols);
    } catch (const std::bad_alloc&) {
      return fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, fn,
                  "out of host memory for a %" PRId64 " x %" PRId64 " table with %" PRId64
                  " nonzeros",
                  rows, cols, nnz);
    }
    return adopt_table(ctx, fn, std::move(table), flags, counts);
  });
}

dirmn_status dirmn_counts_wrap_device(dirmn_context* ctx, dirmn_counts** counts, int64_t rows,
                                      int64_t cols, dirmn_dtype dtype, const void* device_data,
                                      int64_t row_stride, int64_t col_stride,
                                      const dirmn_counts_options* options) {
  static const char* fn = "dirmn_counts_wrap_device";
  return with_context(ctx, fn, [&] {
    using namespace dirmn::capi;
    if (counts == nullptr) return fail(ctx, DIRMN_ERROR_NULL_POINTER, fn, "counts is NULL");
    if (device_data == nullptr) return fail(ctx, DIRMN_ERROR_NULL_POINTER, fn, "device_data is NULL");
    if (ctx->backend->kind() != DIRMN_BACKEND_CUDA) return refuse_on_cpu(ctx, fn);
    uint32_t flags = 0;
    dirmn_storage storage = DIRMN_STORAGE_AUTO;
    if (dirmn_status s = check_counts_options(ctx, fn, options, &flags, &storage)) return s;
    if (dirmn_status s = check_dense_shape(ctx, fn, rows, cols, dtype, device_data, row_stride, col_stride))
      return s;
    if (dtype == DIRMN_INT64)
      return fail(ctx, DIRMN_ERROR_NOT_SUPPORTED, fn,
                  "int64 device arrays are not supported (use int32, float32 or float64)");
    std::unique_ptr<dirmn_counts> c = new_counts(ctx, flags);
    const dirmn::DenseInput in =
        dense_input(rows, cols, dtype, device_data, row_stride, col_stride, flags, storage);
    CountsProblem problem;
    if (ctx->interrupt.poll()) return fail_cancelled(ctx, fn);
    const BackendResult r = ctx->backend->wrap_device_dense(in, &c->data, &c->info, &problem);
    if (!r.ok()) {
      if (problem.kind != CountsProblem::kNone)
        return fail_counts(ctx, fn, r.status, problem, rows, cols);
      return fail_backend(ctx, fn, r);
    }
    *counts = c.release();
    return DIRMN_SUCCESS;
  });
}

dirmn_status dirmn_counts_wrap_device_sparse(dirmn_context* ctx, dirmn_counts** counts,
                                             int64_t rows, int64_t cols, int64_t nnz,
                                             dirmn_index_type index_type, const void* device_ptr,
                                             const void* device_indices, dirmn_dtype value_dtype,
                                             const void* device_values,
                                             const dirmn_counts_options* options) {
  static const char* fn = "dirmn_counts_wrap_device_sparse";
  return with_context(ctx, fn, [&] {
    using namespace dirmn::capi;
    if (counts == nullptr) return fail(ctx, DIRMN_ERROR_NULL_POINTER, fn, "counts is NULL");
    if (ctx->backend->kind() != DIRMN_BACKEND_CUDA) return refuse_on_cpu(ctx, fn);
    uint32_t flags = 0;
    dirmn_storage storage = DIRMN_STORAGE_AUTO;
    if (dirmn_status s = check_counts_options(ctx, fn, options, &flags, &storage)) return s;
    if (flags & DIRMN_COUNTS_ONE_BASED)
      return fail(ctx, DIRMN_ERROR_NOT_SUPPORTED, fn,
                  "DIRMN_COUNTS_ONE_BASED is for host arrays (dirmn_counts_create_sparse); device "
                  "arrays count from 0");
    if (dirmn_status s = check_sparse_shape(ctx, fn, rows, cols, nnz, index_type, value_dtype))
      return s;
    if (value_dtype == DIRMN_INT64)
      return fail(ctx, DIRMN_ERROR_NOT_SUPPORTED, fn,
                  "int64 device values are not supported (use int32, float32 or float64)");
    if (device_ptr == nullptr) return fail(ctx, DIRMN_ERROR_NULL_POINTER, fn, "device_ptr is NULL");
    if (nnz > 0 && (device_indices == nullptr || device_values == nullptr))
      return fail(ctx, DIRMN_ERROR_NULL_POINTER, fn,
                  "device_indices or device_values is NULL with nnz = %" PRId64, nnz);
    if (dirmn_status s = check_sparse_arrays(ctx, fn, DIRMN_CSR, rows, cols, nnz, index_type,
                                             device_ptr, device_indices, value_dtype, device_values))
      return s;
    std::unique_ptr<dirmn_counts> c = new_counts(ctx, flags);
    const dirmn::SparseInput in =
        sparse_input(DIRMN_CSR, rows, cols, nnz, index_type, device_ptr, device_indices, value_dtype,
                     device_values, flags, storage);
    CountsProblem problem;
    if (ctx->interrupt.poll()) return fail_cancelled(ctx, fn);
    const BackendResult r = ctx->backend->wrap_device_sparse(in, &c->data, &c->info, &problem);
    if (!r.ok()) {
      problem.nnz = nnz;
      if (problem.kind != CountsProblem::kNone)
        return fail_counts(ctx, fn, r.status, problem, rows, cols);
      return fail_backend(ctx, fn, r);
    }
    *counts = c.release();
    return DIRMN_SUCCESS;
  });
}

void dirmn_counts_destroy(dirmn_counts* counts) {
  if (counts == nullptr) return;
  const std::shared_ptr<dirmn::capi::UseFlag> use = counts->use;  // outlives counts
  if (dirmn::capi::take_for_destroy(*use) == dirmn::capi::Take::kReentered) {
    counts->deferred_free = [](dirmn::capi::Deferrable* d) { delete static_cast<dirmn_counts*>(d); };
    dirmn::capi::defer_free(*use, counts);
    return;
  }
  delete counts;
  dirmn::capi::release(*use);
}

dirmn_status dirmn_counts_get_info(const dirmn_counts* counts, dirmn_counts_info* info) {
  static const char* fn = "dirmn_counts_get_info";
  return dirmn::capi::with_owner(counts ? counts->use.get() : nullptr, fn, [&] {
    if (counts == nullptr) return fail(nullptr, DIRMN_ERROR_NULL_POINTER, fn, "counts is NULL");
    if (info == nullptr) return fail(nullptr, DIRMN_ERROR_NULL_POINTER, fn, "info is NULL");
    if (info->size < offsetof(dirmn_counts_info, rows) + sizeof(int64_t))
      return fail(nullptr, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                  "info->size (%zu) is too small; set it to sizeof(dirmn_counts_info)", info->size);
    dirmn_counts_info full;
    std::memset(&full, 0, sizeof full);
    const dirmn::TableInfo& t = counts->info;
    full.size = info->size;
    full.rows = t.rows;
    full.cols = t.cols;
    full.nnz = t.nnz;
    full.max_count = t.max_count;
    full.total = t.total;
    full.flags = counts->flags;
    full.storage = t.sparse ? DIRMN_STORAGE_SPARSE : DIRMN_STORAGE_DENSE;
    full.value_bits = t.stored_bits();
    full.backend = counts->backend->kind();
    full.device = counts->backend->device();
    const dirmn::StoredTable stored = counts->stored(nullptr);
    full.host_steps = stored.host_steps();
    full.unavailable_steps = stored.unavailable_steps();
    std::memcpy(info, &full, info->size < sizeof full ? info->size : sizeof full);
    return DIRMN_SUCCESS;
  });
}

dirmn_status dirmn_counts_row_totals(dirmn_context* ctx, const dirmn_counts* counts,
                                     double* totals) {
  static const char* fn = "dirmn_counts_row_totals";
  return with_context(ctx, fn, [&] {
    if (dirmn_status s = dirmn::capi::check_counts_use(ctx, fn, counts)) return s;
    if (totals == nullptr) return fail(ctx, DIRMN_ERROR_NULL_POINTER, fn, "totals is NULL");
    if (dirmn_status s = check_extent(ctx, fn, "totals",
                                      contiguous(totals, counts->info.rows, sizeof(double)), true))
      return s;
    const BackendResult r = ctx->backend->row_totals(*counts->data, totals);
    return r.ok() ? DIRMN_SUCCESS : fail_backend(ctx, fn, r);
  });
}

}  // extern "C"
