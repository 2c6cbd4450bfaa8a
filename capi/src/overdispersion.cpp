// overdispersion.cpp: the header's Overdispersion section.
#include <cinttypes>
#include <cstring>
#include <new>

#include "../../kernels/models/overdispersion.hpp"
#include "fit_options.hpp"
#include "collective.hpp"
#include "guard.hpp"
#include "handles.hpp"
#include "tables.hpp"

using namespace dirmn::capi;
using dirmn::BackendResult;

extern "C" {

dirmn_status dirmn_overdispersion_test(dirmn_context* ctx, dirmn_counts* counts,
                                       const dirmn_fit_options* options,
                                       dirmn_overdispersion_result* result) {
  static const char* fn = "dirmn_overdispersion_test";
  return with_context(ctx, fn, [&] {
    return dirmn::capi::collective(counts, [&] {
      if (dirmn_status s = check_counts_use(ctx, fn, counts)) return s;
      if (result == nullptr) return fail(ctx, DIRMN_ERROR_NULL_POINTER, fn, "result is NULL");
      if (result->size < offsetof(dirmn_overdispersion_result, lrt_p_value) + sizeof(double))
        return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                    "result->size (%zu) is too small; set it to sizeof(dirmn_overdispersion_result)",
                    result->size);
      dirmn_fit_options o;
      dirmn::FitSettings settings;
      if (dirmn_status s = fit_settings(ctx, fn, counts, options, false, &o, &settings)) return s;
      dirmn::OverdispersionOutcome t;
      BackendResult r;
      try {
        if (dirmn_status hs = ensure_host_copy(ctx, fn, counts)) return hs;
        r = dirmn::overdispersion_test(counts->stored(ctx), counts->histograms, o.weights, settings, &t);
      } catch (const std::bad_alloc&) {
        return fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, fn,
                    "out of host memory for the count histograms and the fit (%" PRId64 " columns)",
                    counts->info.cols);
      }
      if (r.status == DIRMN_ERROR_CANCELLED && t.fit.cancelled)
        return fail(ctx, DIRMN_ERROR_CANCELLED, fn, "cancelled after %d iterations of the DM fit",
                    t.fit.iterations);
      if (r.status == DIRMN_ERROR_INVALID_ARGUMENT)
        return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn, "the table (with these weights) has no counts");
      if (r.status == DIRMN_ERROR_OVERFLOW) return fail_weighted_overflow(ctx, fn, "test statistic");
      if (!r.ok()) return fail_backend(ctx, fn, r);
      dirmn_overdispersion_result full;
      full.size = result->size;
      full.lrt_statistic = t.lrt_statistic;
      full.lrt_p_value = t.lrt_p_value;
      full.score_statistic = t.score_statistic;
      full.score_df = t.score_df;
      full.score_scale = t.score_scale;
      full.score_p_value = t.score_p_value;
      full.loglik_dm = t.loglik_dm;
      full.loglik_multinomial = t.loglik_multinomial;
      full.precision = t.precision;
      full.categories = t.categories;
      full.observations = t.observations;
      full.converged = t.converged ? 1 : 0;
      std::memcpy(result, &full, std::min(result->size, sizeof full));
      return DIRMN_SUCCESS;
    });
  });
}

}  // extern "C"
