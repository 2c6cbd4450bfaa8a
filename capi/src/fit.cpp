// fit.cpp: the header's Maximum-likelihood fit section.
#include <algorithm>
#include <cinttypes>
#include <new>
#include <cmath>
#include <cstring>

#include "fit_options.hpp"
#include "collective.hpp"
#include "guard.hpp"
#include "handles.hpp"
#include "tables.hpp"

using namespace dirmn::capi;
using dirmn::BackendResult;

namespace dirmn {
namespace capi {

dirmn_status fit_settings(dirmn_context* ctx, const char* fn, const dirmn_counts* counts,
                          const dirmn_fit_options* options, bool with_start, dirmn_fit_options* o,
                          FitSettings* settings) {
  const int64_t V = counts->info.cols;
  dirmn_fit_options_init(o);
  if (dirmn_status s = copy_options(ctx, fn, options, "dirmn_fit_options_init", o)) return s;
  if (!with_start) {
    o->start = nullptr;
    o->hessian_diag = nullptr;
  }
  if (!(o->tolerance > 0.0) || !std::isfinite(o->tolerance))
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn, "tolerance %.17g must be positive and finite",
                o->tolerance);
  if (o->max_iterations < 0)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn, "max_iterations (%d) is negative",
                o->max_iterations);
  bool progress_full = true;
  if (dirmn_status s = likelihood_flags(ctx, fn, "options->flags", o->flags, 0, &progress_full))
    return s;
  const struct {
    const char* what;
    const double* at;
    bool output;
  } arrays[] = {{"options->hessian_diag", o->hessian_diag, true},
                {"options->start", o->start, false}};
  for (const auto& a : arrays)
    if (dirmn_status s = check_extent(ctx, fn, a.what,
                                      contiguous(a.at, a.at ? V : 0, sizeof(double)), a.output))
      return s;
  char text[kValueChars];
  if (o->start)
    for (int64_t v = 0; v < V; ++v)
      if (!(o->start[v] > 0.0) || !std::isfinite(o->start[v]))
        return fail_at(ctx, DIRMN_ERROR_INVALID_PARAMETER, fn,
                       Where::named_index("start", v).with_value(o->start[v]),
                       "alpha %s is not positive and finite", value_text(o->start[v], text));
  if (dirmn_status s = check_weights(ctx, fn, o->weights, counts->info.rows)) return s;
  settings->tolerance = o->tolerance;
  settings->max_iterations = o->max_iterations;
  settings->start = o->start;
  settings->progress = o->progress;
  settings->progress_data = o->progress_data;
  settings->progress_full = progress_full;
  settings->interrupt = ctx->interrupt;
  settings->want_hessian = o->hessian_diag != nullptr;
  return DIRMN_SUCCESS;
}

}  // namespace capi
}  // namespace dirmn

extern "C" {

void dirmn_fit_options_init_sized(dirmn_fit_options* options, size_t size) {
  dirmn_fit_options d;
  std::memset(&d, 0, sizeof d);
  d.tolerance = 1e-10;
  d.max_iterations = 1000;
  fill_defaults(options, size, d);
}

void(dirmn_fit_options_init)(dirmn_fit_options* options) {
  // The struct of the first release ended with `progress_data`.
  dirmn_fit_options_init_sized(options, offsetof(dirmn_fit_options, progress_data) + sizeof(void*));
}

dirmn_status dirmn_fit(dirmn_context* ctx, dirmn_counts* counts, const dirmn_fit_options* options,
                       dirmn_fit_result* result) {
  static const char* fn = "dirmn_fit";
  return with_context(ctx, fn, [&] {
    return dirmn::capi::collective(counts, [&] {
      using namespace dirmn::capi;
      if (dirmn_status s = check_counts_use(ctx, fn, counts)) return s;
      if (result == nullptr) return fail(ctx, DIRMN_ERROR_NULL_POINTER, fn, "result is NULL");
      if (result->size < offsetof(dirmn_fit_result, zero_columns) + sizeof(int64_t))
        return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                    "result->size (%zu) is too small; set it to sizeof(dirmn_fit_result)",
                    result->size);
      const int64_t V = counts->info.cols;
      if (result->alpha == nullptr)
        return fail(ctx, DIRMN_ERROR_NULL_POINTER, fn, "result->alpha is NULL (it needs %" PRId64
                    " entries)", V);
      // The result's arrays, V entries each (the options': in fit_settings).
      const struct {
        const char* what;
        const double* at;
      } arrays[] = {{"result->alpha", result->alpha},
                    {"result->std_error_alpha", result->std_error_alpha},
                    {"result->std_error_log_alpha", result->std_error_log_alpha}};
      for (const auto& a : arrays)
        if (dirmn_status s = check_extent(ctx, fn, a.what,
                                          contiguous(a.at, a.at ? V : 0, sizeof(double)), true))
          return s;
      dirmn_fit_options o;
      dirmn::FitSettings settings;
      if (dirmn_status s = fit_settings(ctx, fn, counts, options, true, &o, &settings)) return s;
      const bool want_hessian = settings.want_hessian;
      dirmn::FitOutcome fit;
      BackendResult r;
      try {
        if (dirmn_status hs = ensure_host_copy(ctx, fn, counts)) return hs;
        r = dirmn::fit_table(counts->stored(ctx), counts->histograms, o.weights, settings, &fit);
      } catch (const std::bad_alloc&) {
        return fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, fn,
                    "out of host memory for the fit's count histograms and Newton workspace (%" PRId64
                    " columns)",
                    V);
      }
      if (r.status == DIRMN_ERROR_CANCELLED && fit.cancelled)
        return fail(ctx, DIRMN_ERROR_CANCELLED, fn, "cancelled after %d iterations", fit.iterations);
      if (r.status == DIRMN_ERROR_INVALID_ARGUMENT)
        return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn, "the table (with these weights) has no counts");
      if (r.status == DIRMN_ERROR_OVERFLOW)
        return fail_weighted_overflow(ctx, fn, want_hessian ? "log-likelihood or Hessian" : "log-likelihood");
      if (!r.ok()) return fail_backend(ctx, fn, r);
      std::copy(fit.alpha.begin(), fit.alpha.end(), result->alpha);
      if (result->std_error_alpha)
        std::copy(fit.se_alpha.begin(), fit.se_alpha.end(), result->std_error_alpha);
      if (result->std_error_log_alpha)
        std::copy(fit.se_log_alpha.begin(), fit.se_log_alpha.end(), result->std_error_log_alpha);
      result->loglik_kernel = fit.loglik_kernel;
      result->loglik = fit.loglik;
      result->gradient_norm = fit.gradient_norm;
      result->precision = fit.precision;
      result->iterations = fit.iterations;
      result->converged = fit.converged ? 1 : 0;
      result->multinomial_limit = fit.multinomial_limit ? 1 : 0;
      result->zero_columns = fit.zero_columns;
      if (result->size >= offsetof(dirmn_fit_result, parameters) + sizeof(int64_t))
        result->parameters = fit.parameters;
      if (result->size >= offsetof(dirmn_fit_result, observations) + sizeof(double))
        result->observations = fit.observations;
      if (want_hessian && !fit.hessian_diag.empty()) {
        std::copy(fit.hessian_diag.begin(), fit.hessian_diag.end(), o.hessian_diag);
        if (result->size >= offsetof(dirmn_fit_result, hessian_scalar) + sizeof(double))
          result->hessian_scalar = fit.hessian_scalar;
      }
      return DIRMN_SUCCESS;
    });
  });
}

}  // extern "C"
