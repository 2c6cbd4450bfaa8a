// counts_copy.cpp: the Counts section's copies out of a counts object
// (dirmn_counts_copy_dense, dirmn_counts_copy_sparse), from its host form.
#include <cinttypes>
#include <cstring>
#include <limits>
#include <vector>

#include "args.hpp"
#include "guard.hpp"
#include "handles.hpp"
#include "tables.hpp"

using namespace dirmn::capi;
using dirmn::HostTable;

namespace dirmn {
namespace capi {
namespace {


// The host form of the table, or a failure naming why there is none.
dirmn_status host_table(dirmn_context* ctx, const char* fn, const dirmn_counts* counts,
                        const HostTable** t) {
  if (dirmn_status hs = ensure_host_copy(ctx, fn, counts)) return hs;
  *t = counts->stored(ctx).host_rows();
  if (*t == nullptr)
    return fail(ctx, DIRMN_ERROR_NOT_SUPPORTED, fn,
                "counts wrapped from device memory keep no host copy to copy out");
  return DIRMN_SUCCESS;
}

// The checks of a value type against the table: integer types need
// integer counts in their range (the first cell beyond INT32's named).
dirmn_status check_value_type(dirmn_context* ctx, const char* fn, const dirmn_counts* counts,
                              const HostTable& t, dirmn_dtype dtype) {
  if (!valid_dtype(dtype))
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn, "unknown dtype %d", static_cast<int>(dtype));
  const bool integer = dtype == DIRMN_INT32 || dtype == DIRMN_INT64;
  if (integer && (counts->flags & DIRMN_COUNTS_REAL_VALUED))
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                "the table's counts are real-valued (DIRMN_COUNTS_REAL_VALUED): copy them out as "
                "DIRMN_FLOAT64 or DIRMN_FLOAT32");
  if (dtype != DIRMN_INT32 || t.max_count <= 2147483647.0) return DIRMN_SUCCESS;
  int64_t row = 0, col = 0;
  double value = 0.0;
  with_value_type(t.vtype, [&](auto tag) {
    using T = decltype(tag);
    const T* x = reinterpret_cast<const T*>(t.values.data());
    for (int64_t b = 0; b < t.rows; ++b) {
      const int64_t lo = t.sparse ? t.row_ptr[static_cast<size_t>(b)] : b * t.cols;
      const int64_t hi = t.sparse ? t.row_ptr[static_cast<size_t>(b) + 1] : lo + t.cols;
      for (int64_t i = lo; i < hi; ++i)
        if (static_cast<double>(x[i]) > 2147483647.0) {
          row = b;
          col = t.sparse ? static_cast<int64_t>(t.col_idx[static_cast<size_t>(i)]) : i - lo;
          value = static_cast<double>(x[i]);
          return 0;
        }
    }
    return 0;
  });
  char text[kValueChars];
  return fail_at(ctx, DIRMN_ERROR_OVERFLOW, fn, Where::cell("counts", row, col).with_value(value),
                 "count %s is beyond DIRMN_INT32's range; copy out as DIRMN_INT64 or DIRMN_FLOAT64",
                 value_text(value, text));
}

void put(void* out, int64_t at, dirmn_dtype dtype, double x) {
  switch (dtype) {
    case DIRMN_INT32: static_cast<int32_t*>(out)[at] = static_cast<int32_t>(x); break;
    case DIRMN_INT64: static_cast<int64_t*>(out)[at] = static_cast<int64_t>(x); break;
    case DIRMN_FLOAT32: static_cast<float*>(out)[at] = static_cast<float>(x); break;
    default: static_cast<double*>(out)[at] = x; break;
  }
}

void put_index(void* out, int64_t at, dirmn_index_type type, int64_t x) {
  if (type == DIRMN_INDEX_INT32) static_cast<int32_t*>(out)[at] = static_cast<int32_t>(x);
  else static_cast<int64_t*>(out)[at] = x;
}

}  // namespace
}  // namespace capi
}  // namespace dirmn

extern "C" {

dirmn_status dirmn_counts_copy_dense(dirmn_context* ctx, const dirmn_counts* counts,
                                     dirmn_dtype dtype, void* out, int64_t row_stride,
                                     int64_t col_stride) {
  static const char* fn = "dirmn_counts_copy_dense";
  return with_context(ctx, fn, [&] {
    if (dirmn_status s = check_counts_use(ctx, fn, counts)) return s;
    if (out == nullptr) return fail(ctx, DIRMN_ERROR_NULL_POINTER, fn, "out is NULL");
    const HostTable* t = nullptr;
    if (dirmn_status s = host_table(ctx, fn, counts, &t)) return s;
    if (dirmn_status s = check_value_type(ctx, fn, counts, *t, dtype)) return s;
    const int64_t rs = t->rows == 1 ? 1 : row_stride, cs = t->cols == 1 ? 1 : col_stride;
    if (dirmn_status s = check_extent(ctx, fn, "out", Strided{out, t->rows, t->cols, rs, cs, dtype_bytes(dtype)}, true))
      return s;
    with_value_type(t->vtype, [&](auto tag) {
      using T = decltype(tag);
      const T* x = reinterpret_cast<const T*>(t->values.data());
      for (int64_t b = 0; b < t->rows; ++b) {
        for (int64_t v = 0; v < t->cols; ++v) put(out, b * rs + v * cs, dtype, 0.0);
        if (t->sparse) {
          for (int64_t i = t->row_ptr[static_cast<size_t>(b)]; i < t->row_ptr[static_cast<size_t>(b) + 1]; ++i)
            put(out, b * rs + static_cast<int64_t>(t->col_idx[static_cast<size_t>(i)]) * cs, dtype,
                static_cast<double>(x[i]));
        } else {
          for (int64_t v = 0; v < t->cols; ++v)
            if (x[b * t->cols + v] != 0) put(out, b * rs + v * cs, dtype, static_cast<double>(x[b * t->cols + v]));
        }
      }
      return 0;
    });
    return DIRMN_SUCCESS;
  });
}

dirmn_status dirmn_counts_copy_sparse(dirmn_context* ctx, const dirmn_counts* counts,
                                      dirmn_sparse_format format, dirmn_index_type index_type,
                                      void* ptr, void* indices, dirmn_dtype value_dtype,
                                      void* values) {
  static const char* fn = "dirmn_counts_copy_sparse";
  return with_context(ctx, fn, [&] {
    if (dirmn_status s = check_counts_use(ctx, fn, counts)) return s;
    if (format != DIRMN_CSR && format != DIRMN_CSC)
      return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn, "unknown sparse format %d", static_cast<int>(format));
    if (index_type != DIRMN_INDEX_INT32 && index_type != DIRMN_INDEX_INT64)
      return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn, "unknown index type %d", static_cast<int>(index_type));
    const HostTable* t = nullptr;
    if (dirmn_status s = host_table(ctx, fn, counts, &t)) return s;
    if (dirmn_status s = check_value_type(ctx, fn, counts, *t, value_dtype)) return s;
    const int64_t nnz = t->nnz;
    if (ptr == nullptr) return fail(ctx, DIRMN_ERROR_NULL_POINTER, fn, "ptr is NULL");
    if (nnz > 0 && (indices == nullptr || values == nullptr))
      return fail(ctx, DIRMN_ERROR_NULL_POINTER, fn, "indices or values is NULL with nnz = %" PRId64, nnz);
    const int64_t limit32 = std::numeric_limits<int32_t>::max();
    if (index_type == DIRMN_INDEX_INT32 && (nnz > limit32 || t->rows > limit32 || t->cols > limit32))
      return fail(ctx, DIRMN_ERROR_OVERFLOW, fn,
                  "%" PRId64 " nonzeros of a %" PRId64 " x %" PRId64 " table need DIRMN_INDEX_INT64",
                  nnz, t->rows, t->cols);
    const bool csr = format == DIRMN_CSR;
    const int64_t outer = csr ? t->rows : t->cols;
    const size_t ib = index_bytes(index_type);
    if (dirmn_status s = check_extent(ctx, fn, "ptr", contiguous(ptr, outer + 1, ib), true)) return s;
    if (nnz > 0) {
      if (dirmn_status s = check_extent(ctx, fn, "indices", contiguous(indices, nnz, ib), true)) return s;
      if (dirmn_status s = check_extent(ctx, fn, "values", contiguous(values, nnz, dtype_bytes(value_dtype)), true))
        return s;
    }
    std::vector<int64_t> next;
    try {
      if (!csr) next.assign(static_cast<size_t>(t->cols) + 1, 0);
    } catch (const std::bad_alloc&) {
      return fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, fn, "out of host memory for %" PRId64 " column offsets", t->cols);
    }
    // Visits the nonzeros in row-major order: f(row, column, value).
    const auto each = [&](auto&& f) {
      with_value_type(t->vtype, [&](auto tag) {
        using T = decltype(tag);
        const T* x = reinterpret_cast<const T*>(t->values.data());
        for (int64_t b = 0; b < t->rows; ++b) {
          if (t->sparse) {
            for (int64_t i = t->row_ptr[static_cast<size_t>(b)]; i < t->row_ptr[static_cast<size_t>(b) + 1]; ++i)
              f(b, static_cast<int64_t>(t->col_idx[static_cast<size_t>(i)]), static_cast<double>(x[i]));
          } else {
            for (int64_t v = 0; v < t->cols; ++v)
              if (x[b * t->cols + v] != 0) f(b, v, static_cast<double>(x[b * t->cols + v]));
          }
        }
        return 0;
      });
    };
    if (csr) {
      int64_t at = 0, row = 0;
      put_index(ptr, 0, index_type, 0);
      each([&](int64_t b, int64_t v, double x) {
        for (; row < b; ++row) put_index(ptr, row + 1, index_type, at);
        put_index(indices, at, index_type, v);
        put(values, at, value_dtype, x);
        ++at;
      });
      for (; row < t->rows; ++row) put_index(ptr, row + 1, index_type, at);
    } else {
      // By columns: count, offsets, then rows in ascending order per column.
      each([&](int64_t, int64_t v, double) { ++next[static_cast<size_t>(v) + 1]; });
      for (int64_t v = 0; v < t->cols; ++v) next[static_cast<size_t>(v) + 1] += next[static_cast<size_t>(v)];
      for (int64_t v = 0; v <= t->cols; ++v) put_index(ptr, v, index_type, next[static_cast<size_t>(v)]);
      each([&](int64_t b, int64_t v, double x) {
        const int64_t at = next[static_cast<size_t>(v)]++;
        put_index(indices, at, index_type, b);
        put(values, at, value_dtype, x);
      });
    }
    return DIRMN_SUCCESS;
  });
}

}  // extern "C"
