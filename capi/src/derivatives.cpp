// derivatives.cpp: the header's Derivatives section.
#include <cinttypes>
#include <new>
#include <vector>

#include "../../kernels/models/fit.hpp"
#include "guard.hpp"
#include "handles.hpp"

using namespace dirmn::capi;
using dirmn::BackendResult;

namespace {

// What both derivative entry points check first.
dirmn_status check_derivative_call(dirmn_context* ctx, const char* fn, const dirmn_counts* counts,
                                   const double* params, dirmn_param param, uint32_t flags,
                                   bool* full) {
  using namespace dirmn::capi;
  if (dirmn_status s = check_counts_use(ctx, fn, counts)) return s;
  if (params == nullptr) return fail(ctx, DIRMN_ERROR_NULL_POINTER, fn, "params is NULL");
  if (dirmn_status s = check_param_kind(ctx, fn, param)) return s;
  return likelihood_flags(ctx, fn, "flag", flags, 0, full);
}

}  // namespace

extern "C" {

dirmn_status dirmn_loglik_sum(dirmn_context* ctx, dirmn_counts* counts, const double* params,
                              int64_t params_stride, dirmn_param param, const double* weights,
                              uint32_t flags, double* value, double* gradient,
                              double* hessian_diag, double* hessian_scalar) {
  static const char* fn = "dirmn_loglik_sum";
  return with_context(ctx, fn, [&] {
    using namespace dirmn::capi;
    bool full = true;
    if (dirmn_status s = check_derivative_call(ctx, fn, counts, params, param, flags, &full))
      return s;
    const int64_t V = counts->info.cols;
    if (dirmn_status s = check_extent(ctx, fn, "params",
                                      Strided{params, 1, V, 1, params_stride, sizeof(double)}, false))
      return s;
    for (double* outv : {gradient, hessian_diag})
      if (dirmn_status s = check_extent(ctx, fn, outv == gradient ? "gradient" : "hessian_diag",
                                        contiguous(outv, outv ? V : 0, sizeof(double)), true))
        return s;
    std::vector<double> alpha;
    try {
      alpha.resize(static_cast<size_t>(V));
    } catch (const std::bad_alloc&) {
      return fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, fn, "out of host memory for the %" PRId64 " alphas",
                  V);
    }
    if (dirmn_status s = convert_params(ctx, fn, false, params, 1, V, 0, V > 1 ? params_stride : 0,
                                        param, alpha.data()))
      return s;
    if (dirmn_status s = check_weights(ctx, fn, weights, counts->info.rows)) return s;
    BackendResult r;
    try {
      r = dirmn::loglik_sums(counts->stored(ctx), counts->histograms, alpha.data(), weights,
                             param == DIRMN_PARAM_LOG_ALPHA, full,
                             ctx->interrupt, value, gradient, hessian_diag, hessian_scalar);
    } catch (const std::bad_alloc&) {
      return fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, fn,
                  "out of host memory for the count histograms of %" PRId64 " columns", V);
    }
    if (r.status == DIRMN_ERROR_OVERFLOW)
      return fail_weighted_overflow(ctx, fn, "log-likelihood, gradient or Hessian");
    return r.ok() ? DIRMN_SUCCESS : fail_backend(ctx, fn, r);
  });
}

dirmn_status dirmn_loglik_rowwise_derivatives(dirmn_context* ctx, const dirmn_counts* counts,
                                              const double* params, int64_t params_stride_row,
                                              int64_t params_stride_v, dirmn_param param,
                                              uint32_t flags, double* loglik, double* gradient,
                                              double* hessian_diag, double* hessian_scalar,
                                              int64_t out_stride_row, int64_t out_stride_v) {
  static const char* fn = "dirmn_loglik_rowwise_derivatives";
  return with_context(ctx, fn, [&] {
    using namespace dirmn::capi;
    bool full = true;
    if (dirmn_status s = check_derivative_call(ctx, fn, counts, params, param, flags, &full))
      return s;
    const int64_t rows = counts->info.rows, V = counts->info.cols;
    if (dirmn_status s = check_extent(
            ctx, fn, "params",
            Strided{params, rows, V, params_stride_row, params_stride_v, sizeof(double)}, false))
      return s;
    for (double* m : {gradient, hessian_diag})
      if (m != nullptr)
        if (dirmn_status s = check_extent(
                ctx, fn, m == gradient ? "gradient" : "hessian_diag",
                Strided{m, rows, V, out_stride_row, out_stride_v, sizeof(double)}, true))
          return s;
    for (double* r : {loglik, hessian_scalar})
      if (dirmn_status s = check_extent(ctx, fn, r == loglik ? "loglik" : "hessian_scalar",
                                        contiguous(r, r ? rows : 0, sizeof(double)), true))
        return s;
    int64_t cells = 0;
    if (__builtin_mul_overflow(rows, V, &cells))
      return fail(ctx, DIRMN_ERROR_OVERFLOW, fn, "rows x cols overflows");
    std::vector<double> ll, g, d, c;
    struct Trim {
      dirmn_context* cx;
      ~Trim() { cx->trim(); }
    } trim{ctx};
    try {
      ctx->rowwise_alpha.resize(static_cast<size_t>(cells));
      ll.resize(static_cast<size_t>(rows));
      c.resize(static_cast<size_t>(rows));
      g.resize(static_cast<size_t>(cells));
      if (hessian_diag) d.resize(static_cast<size_t>(cells));
    } catch (const std::bad_alloc&) {
      return fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, fn,
                  "out of host memory for the %" PRId64 " x %" PRId64
                  " alphas and derivatives' scratch (%" PRId64 " bytes)",
                  rows, V,
                  ((hessian_diag ? 3 : 2) * cells + 2 * rows) * static_cast<int64_t>(sizeof(double)));
    }
    if (dirmn_status s = convert_params(ctx, fn, true, params, rows, V,
                                        rows > 1 ? params_stride_row : 0,
                                        V > 1 ? params_stride_v : 0, param, ctx->rowwise_alpha.data()))
      return s;
    dirmn::RowwiseDerivRequest req;
    req.alpha = ctx->rowwise_alpha.data();
    req.full = full;
    req.log_param = param == DIRMN_PARAM_LOG_ALPHA;
    req.loglik = ll.data();
    req.gradient = g.data();
    req.hessian_diag = hessian_diag ? d.data() : nullptr;
    req.hessian_scalar = c.data();
    const BackendResult r = counts->stored(ctx).run(
        dirmn::Step::kDerivativesRowwise, [&](dirmn::Backend& be, const dirmn::BackendCounts& data) {
          return be.rowwise_derivatives(data, req, ctx->interrupt);
        });
    if (!r.ok()) return fail_backend(ctx, fn, r);
    for (int64_t b = 0; b < rows; ++b) {
      if (loglik) loglik[b] = ll[static_cast<size_t>(b)];
      if (hessian_scalar) hessian_scalar[b] = c[static_cast<size_t>(b)];
      for (int64_t v = 0; v < V; ++v) {
        if (gradient) gradient[b * out_stride_row + v * out_stride_v] = g[static_cast<size_t>(b * V + v)];
        if (hessian_diag)
          hessian_diag[b * out_stride_row + v * out_stride_v] = d[static_cast<size_t>(b * V + v)];
      }
    }
    return DIRMN_SUCCESS;
  });
}

}  // extern "C"
