// sample.cpp: the header's Sampling and moments section.
#include <cinttypes>
#include <cmath>
#include <cstring>
#include <new>
#include <vector>

#include "../../kernels/models/sample.hpp"
#include "../../kernels/table/build.hpp"
#include "args.hpp"
#include "guard.hpp"
#include "handles.hpp"
#include "sample_args.hpp"
#include "tables.hpp"

using namespace dirmn::capi;
using dirmn::BackendResult;

namespace dirmn {
namespace capi {
namespace {

dirmn_sample_options sample_defaults() {
  dirmn_sample_options o;
  std::memset(&o, 0, sizeof o);
  o.size = sizeof o;
  o.storage = DIRMN_STORAGE_AUTO;
  return o;
}

// The table drawn on the host threads, then stored as a caller's CSR
// would be (its validation costs a small part of the drawing). The alphas
// (req.alpha's vector) go once the rows are drawn.
dirmn_status sample_on_host(dirmn_context* ctx, const char* fn, const SampleRequest& req,
                            std::vector<double>* alpha, dirmn_counts** out) {
  CsrRows drawn;
  BackendResult r;
  try {
    r = sample_rows(req, ctx->threads.get(), ctx->interrupt, &drawn);
  } catch (const std::bad_alloc&) {
    r = {DIRMN_ERROR_OUT_OF_MEMORY, "host memory for the sampled rows", 0};
  }
  if (r.status == DIRMN_ERROR_CANCELLED)
    return fail(ctx, DIRMN_ERROR_CANCELLED, fn, "cancelled by the interrupt callback while drawing");
  if (!r.ok())
    return fail(ctx, r.status, fn, "out of host memory for a sampled %" PRId64 " x %" PRId64 " table",
                req.rows, req.cols);
  std::vector<double>().swap(*alpha);
  const SparseInput in = drawn_rows_input(drawn, req.rows, req.cols, req.storage);
  HostTable table;
  CountsProblem problem;
  try {
    if (dirmn_status s = build_sparse_table(in, *ctx->threads, ctx->interrupt, &table, &problem)) {
      if (s == DIRMN_ERROR_CANCELLED)
        return fail(ctx, DIRMN_ERROR_CANCELLED, fn, "cancelled by the interrupt callback while storing");
      return fail(ctx, DIRMN_ERROR_INTERNAL, fn, "a sampled table failed its own validation");
    }
  } catch (const std::bad_alloc&) {
    return fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, fn,
                "out of host memory for a sampled %" PRId64 " x %" PRId64 " table with %" PRId64 " nonzeros",
                req.rows, req.cols, in.nnz);
  }
  return adopt_table(ctx, fn, std::move(table), 0, out);
}

// The shared part of dirmn_sample and dirmn_sample_rowwise.
dirmn_status sample(dirmn_context* ctx, const char* fn, dirmn_counts** counts, int64_t rows,
                    int64_t cols, int64_t k, bool rowwise, const double* params, int64_t sj,
                    int64_t si, dirmn_param param, const int64_t* sizes, int64_t sizes_stride,
                    const dirmn_sample_options* options) {
  if (counts == nullptr) return fail(ctx, DIRMN_ERROR_NULL_POINTER, fn, "counts is NULL");
  if (params == nullptr) return fail(ctx, DIRMN_ERROR_NULL_POINTER, fn, "params is NULL");
  if (sizes == nullptr) return fail(ctx, DIRMN_ERROR_NULL_POINTER, fn, "sizes is NULL");
  if (rows <= 0 || cols <= 0)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                "rows (%" PRId64 ") and cols (%" PRId64 ") must be positive", rows, cols);
  if (cols >= (int64_t{1} << 32))
    return fail(ctx, DIRMN_ERROR_OVERFLOW, fn, "cols (%" PRId64 ") must be below 2^32", cols);
  if (!rowwise && k <= 0)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn, "k (%" PRId64 ") must be positive", k);
  if (dirmn_status s = check_param_kind(ctx, fn, param)) return s;
  dirmn_sample_options o = sample_defaults();
  if (dirmn_status s = copy_options(ctx, fn, options, "dirmn_sample_options_init", &o)) return s;
  if (o.storage != DIRMN_STORAGE_AUTO && o.storage != DIRMN_STORAGE_DENSE &&
      o.storage != DIRMN_STORAGE_SPARSE)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn, "options->storage %d is not a dirmn_storage",
                static_cast<int>(o.storage));
  if (o.first_row < 0 || o.first_row > INT64_MAX - rows)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                "options->first_row (%" PRId64 ") must be >= 0 and leave room for %" PRId64
                " rows below 2^63",
                o.first_row, rows);
  if (rowwise && (o.component || o.mixture_weights || o.component_out))
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                "options->component, mixture_weights and component_out are for dirmn_sample's k "
                "vectors; with one vector per row they must be NULL");
  const int64_t n_vec = rowwise ? rows : k;
  if (dirmn_status s = check_extent(ctx, fn, "params", Strided{params, n_vec, cols, sj, si, sizeof(double)}, false))
    return s;
  if (sizes_stride < 0)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn, "sizes_stride (%" PRId64 ") must be >= 0",
                sizes_stride);
  if (sizes_stride > 0)
    if (dirmn_status s = check_extent(ctx, fn, "sizes", Strided{sizes, 1, rows, 1, sizes_stride, sizeof(int64_t)}, false))
      return s;
  int64_t cells = 0;
  if (__builtin_mul_overflow(n_vec, cols, &cells) || cells > (int64_t{1} << 50))
    return fail(ctx, DIRMN_ERROR_OVERFLOW, fn, "%" PRId64 " x %" PRId64 " parameters overflow",
                n_vec, cols);
  if (dirmn_status s = check_sample_sizes(ctx, fn, sizes, rows, sizes_stride)) return s;
  // The options' arrays: their extents (in bytes, as every array's).
  if (o.component != nullptr && !rowwise && k > 1)
    if (dirmn_status s = check_extent(ctx, fn, "options->component", contiguous(o.component, rows, sizeof(int64_t)), false))
      return s;
  if (o.mixture_weights != nullptr && o.component == nullptr && !rowwise && k > 1)
    if (dirmn_status s = check_extent(ctx, fn, "options->mixture_weights", contiguous(o.mixture_weights, k, sizeof(double)), false))
      return s;
  if (o.component_out != nullptr)
    if (dirmn_status s = check_extent(ctx, fn, "options->component_out", contiguous(o.component_out, rows, sizeof(int64_t)), true))
      return s;
  std::vector<double> cum;
  if (!rowwise && k > 1) {
    if (o.component != nullptr) {
      for (int64_t b = 0; b < rows; ++b)
        if (o.component[b] < 0 || o.component[b] >= k)
          return fail_at(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                         Where::row_of("options->component", b).with_integer(o.component[b]),
                         "component %" PRId64 " is outside 0 .. %" PRId64, o.component[b], k - 1);
    } else if (o.mixture_weights != nullptr) {
      char text[kValueChars];
      double total = 0.0;
      for (int64_t j = 0; j < k; ++j) {
        const double w = o.mixture_weights[j];
        if (!std::isfinite(w) || w < 0.0)
          return fail_at(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                         Where::named_index("options->mixture_weights", j).with_value(w),
                         "mixture weight %s must be finite and >= 0", value_text(w, text));
        total += w;
      }
      if (!(total > 0.0) || !std::isfinite(total))
        return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                    "options->mixture_weights must have a positive, finite sum");
      try {
        cum.resize(static_cast<size_t>(k));
      } catch (const std::bad_alloc&) {
        return fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, fn, "out of host memory for the mixture weights");
      }
      double s = 0.0;
      for (int64_t j = 0; j < k; ++j) cum[static_cast<size_t>(j)] = (s += o.mixture_weights[j]) / total;
      cum[static_cast<size_t>(k - 1)] = 1.0;
    }
  }
  std::vector<double> alpha;
  std::vector<int64_t> drawn_component;
  try {
    alpha.resize(static_cast<size_t>(cells));
    // Each row's vector, where the caller gave weights instead: drawn on
    // the host for every backend (a few bits per row).
    if (!rowwise && k > 1 && o.component == nullptr)
      drawn_component =
          resolve_components(rows, k, cum.empty() ? nullptr : cum.data(), o.seed, o.first_row);
  } catch (const std::bad_alloc&) {
    return fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, fn, "out of host memory for %" PRId64 " alphas", cells);
  }
  if (dirmn_status s = convert_params(ctx, fn, rowwise, params, n_vec, cols, n_vec > 1 ? sj : 0,
                                      cols > 1 ? si : 0, param, alpha.data()))
    return s;
  if (dirmn_status s = check_sample_range(ctx, fn, rowwise, alpha, cols)) return s;
  SampleRequest req;
  req.rows = rows;
  req.cols = cols;
  req.alpha = alpha.data();
  req.k = n_vec;
  req.rowwise = rowwise;
  req.sizes = sizes;
  req.sizes_stride = sizes_stride;
  req.component = !rowwise && k > 1 ? (o.component != nullptr ? o.component : drawn_component.data()) : nullptr;
  req.seed = o.seed;
  req.first_row = static_cast<uint64_t>(o.first_row);
  req.storage = o.storage;
  dirmn_counts* made = nullptr;
  bool on_backend = false;
  if (dirmn_status s = draw_on_backend(ctx, fn, req, &made, &on_backend)) return s;
  if (!on_backend)
    if (dirmn_status s = sample_on_host(ctx, fn, req, &alpha, &made)) return s;
  if (o.component_out != nullptr) {
    if (req.component != nullptr)
      std::memcpy(o.component_out, req.component, static_cast<size_t>(rows) * sizeof(int64_t));
    else
      std::memset(o.component_out, 0, static_cast<size_t>(rows) * sizeof(int64_t));
  }
  *counts = made;
  return DIRMN_SUCCESS;
}

}  // namespace

dirmn_status check_sample_range(dirmn_context* ctx, const char* fn, bool rowwise,
                                const std::vector<double>& alpha, int64_t cols) {
  char text[kValueChars];
  for (size_t i = 0; i < alpha.size(); ++i) {
    const double a = alpha[i];
    if (a >= kSampleAlphaMin && a <= kSampleAlphaMax) continue;
    const int64_t j = static_cast<int64_t>(i) / cols, v = static_cast<int64_t>(i) % cols;
    return fail_at(ctx, DIRMN_ERROR_INVALID_PARAMETER, fn,
                   (rowwise ? Where::row_param(j, v) : Where::param(j, v)).with_value(a),
                   "alpha %s is outside the sampler's range [1e-306, 1e306]", value_text(a, text));
  }
  return DIRMN_SUCCESS;
}

dirmn_status check_sample_sizes(dirmn_context* ctx, const char* fn, const int64_t* sizes,
                                int64_t rows, int64_t stride) {
  for (int64_t b = 0; b < rows; ++b) {
    const int64_t n = sizes[b * stride];
    if (n < 0 || n >= kSampleSizeLimit)
      return fail_at(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn, Where::row_of("sizes", b).with_integer(n),
                     "size %" PRId64 " is outside 0 .. 2^31 - 1", n);
    if (stride == 0) break;
  }
  return DIRMN_SUCCESS;
}

}  // namespace capi
}  // namespace dirmn

extern "C" {

void dirmn_sample_options_init_sized(dirmn_sample_options* options, size_t size) {
  fill_defaults(options, size, sample_defaults());
}

dirmn_status dirmn_sample(dirmn_context* ctx, dirmn_counts** counts, int64_t rows, int64_t cols,
                          int64_t k, const double* params, int64_t params_stride_k,
                          int64_t params_stride_v, dirmn_param param, const int64_t* sizes,
                          int64_t sizes_stride, const dirmn_sample_options* options) {
  static const char* fn = "dirmn_sample";
  return with_context(ctx, fn, [&] {
    return sample(ctx, fn, counts, rows, cols, k, false, params, params_stride_k, params_stride_v,
                  param, sizes, sizes_stride, options);
  });
}

dirmn_status dirmn_sample_rowwise(dirmn_context* ctx, dirmn_counts** counts, int64_t rows,
                                  int64_t cols, const double* params, int64_t params_stride_row,
                                  int64_t params_stride_v, dirmn_param param, const int64_t* sizes,
                                  int64_t sizes_stride, const dirmn_sample_options* options) {
  static const char* fn = "dirmn_sample_rowwise";
  return with_context(ctx, fn, [&] {
    return sample(ctx, fn, counts, rows, cols, rows, true, params, params_stride_row,
                  params_stride_v, param, sizes, sizes_stride, options);
  });
}

dirmn_status dirmn_moments(dirmn_context* ctx, int64_t cols, const double* params,
                           int64_t params_stride, dirmn_param param, double size, double* mean,
                           double* variance, double* covariance, int64_t ld) {
  static const char* fn = "dirmn_moments";
  return with_context(ctx, fn, [&] {
    if (params == nullptr) return fail(ctx, DIRMN_ERROR_NULL_POINTER, fn, "params is NULL");
    if (cols <= 0)
      return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn, "cols (%" PRId64 ") must be positive", cols);
    if (dirmn_status s = check_param_kind(ctx, fn, param)) return s;
    if (!std::isfinite(size) || size < 0.0) {
      char text[kValueChars];
      return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn, "size %s must be finite and >= 0",
                  value_text(size, text));
    }
    if (dirmn_status s = check_extent(ctx, fn, "params", Strided{params, 1, cols, 1, params_stride, sizeof(double)}, false))
      return s;
    if (mean != nullptr)
      if (dirmn_status s = check_extent(ctx, fn, "mean", contiguous(mean, cols, sizeof(double)), true)) return s;
    if (variance != nullptr)
      if (dirmn_status s = check_extent(ctx, fn, "variance", contiguous(variance, cols, sizeof(double)), true))
        return s;
    if (covariance != nullptr) {
      if (ld < cols)
        return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                    "ld (%" PRId64 ") must be at least cols (%" PRId64 ")", ld, cols);
      if (dirmn_status s = check_extent(ctx, fn, "covariance", Strided{covariance, cols, cols, ld, 1, sizeof(double)}, true))
        return s;
    }
    std::vector<double> alpha;
    try {
      alpha.resize(static_cast<size_t>(cols));
      if (dirmn_status s = convert_params(ctx, fn, false, params, 1, cols, 0, cols > 1 ? params_stride : 0,
                                          param, alpha.data()))
        return s;
      dirmn::dm_moments(alpha.data(), cols, size, mean, variance, covariance, ld);
    } catch (const std::bad_alloc&) {
      return fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, fn, "out of host memory for %" PRId64 " alphas", cols);
    }
    return DIRMN_SUCCESS;
  });
}

}  // extern "C"
