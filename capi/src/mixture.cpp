// mixture.cpp: the header's Dirichlet-multinomial mixtures section.
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <vector>

#include "../../kernels/models/mixture.hpp"
#include "collective.hpp"
#include "guard.hpp"
#include "handles.hpp"
#include "tables.hpp"

using namespace dirmn::capi;
using dirmn::BackendResult;

namespace dirmn {
namespace capi {
namespace {

dirmn_status check_mixture_options(dirmn_context* ctx, const char* fn,
                                   const dirmn_mixture_options& o) {
  if (o.objective != DIRMN_MIXTURE_ML && o.objective != DIRMN_MIXTURE_DMN)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn, "unknown objective %d",
                static_cast<int>(o.objective));
  if (o.init != DIRMN_INIT_KMEANS && o.init != DIRMN_INIT_KMEANSPP &&
      o.init != DIRMN_INIT_SOFT_KMEANS && o.init != DIRMN_INIT_MIXED)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn, "unknown init %d", static_cast<int>(o.init));
  if (o.starts < 1 || o.max_iterations < 1 || !(o.tolerance > 0.0) || !std::isfinite(o.tolerance))
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                "starts (%d) and max_iterations (%d) must be >= 1 and tolerance (%.17g) positive",
                o.starts, o.max_iterations, o.tolerance);
  if (o.m_step_iterations < 1)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn, "m_step_iterations (%d) must be >= 1",
                o.m_step_iterations);
  return DIRMN_SUCCESS;
}

// The rows a mixture can be fitted to: those with counts and, under row
// weights, a positive weight. k components need at least k of them, and
// rows of weight 0 alone leave every component's share 0 / 0.
int64_t usable_rows(const HostTable& host, const double* weights) {
  int64_t n = 0;
  for (size_t b = 0; b < host.row_total.size(); ++b)
    n += host.row_total[b] > 0.0 && (weights == nullptr || weights[b] > 0.0);
  return n;
}

// options->grow_from, where given, is a fit of k - 1 components to a
// table of these rows and columns.
dirmn_status check_grow_from(dirmn_context* ctx, const char* fn, const dirmn_counts* counts,
                             int k, const dirmn_mixture* g) {
  if (g == nullptr) return DIRMN_SUCCESS;
  if (g->k != k - 1 || g->rows != counts->info.rows || g->cols != counts->info.cols)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                "options->grow_from has %d components on %" PRId64 " x %" PRId64
                " rows and columns; a fit of k = %d needs one of %d on this %" PRId64 " x %" PRId64
                " table",
                g->k, g->rows, g->cols, k, k - 1, counts->info.rows, counts->info.cols);
  return DIRMN_SUCCESS;
}

// The checks of check_fit on this rank's rows alone; *usable its usable
// rows.
dirmn_status check_fit_here(dirmn_context* ctx, const char* fn, dirmn_counts* counts, int k_min,
                            const dirmn_mixture_options* options, const dirmn_mixture* grow,
                            dirmn_mixture_options* o, int64_t* usable) {
  if (counts == nullptr) return fail(ctx, DIRMN_ERROR_NULL_POINTER, fn, "counts is NULL");
  if (dirmn_status s = check_counts_use(ctx, fn, counts)) return s;
  dirmn_mixture_options_init(o);
  if (dirmn_status s = copy_options(ctx, fn, options, "dirmn_mixture_options_init", o)) return s;
  if (dirmn_status s = check_mixture_options(ctx, fn, *o)) return s;
  if (dirmn_status s = check_weights(ctx, fn, o->weights, counts->info.rows)) return s;
  if (dirmn_status s = check_grow_from(ctx, fn, counts, k_min, grow ? grow : o->grow_from)) return s;
  if (dirmn_status hs = ensure_host_copy(ctx, fn, counts)) return hs;
  const StoredTable table = counts->stored(ctx);
  const HostTable* host = table.host_rows();
  if (host == nullptr)
    return fail(ctx, DIRMN_ERROR_NOT_SUPPORTED, fn,
                "mixtures need the table in host memory for their initialisation; create the "
                "counts from host arrays rather than wrapping device memory");
  *usable = usable_rows(*host, o->weights);
  return DIRMN_SUCCESS;
}

// The checks dirmn_mixture_fit makes before fitting, k's included; sets
// *o to the options to fit with. dirmn_mixture_fit_range makes them once,
// for k_min .. k_max, before it reserves anything for the range; *blamed is
// the k a failure is reported for (the first, unless k_max is the one).
// grow: the fit k_min grows from, where not options->grow_from. Over ranks
// every rank's checks are voted on and k is checked against the rows of
// all of them.
dirmn_status check_fit(dirmn_context* ctx, const char* fn, dirmn_counts* counts, int k_min,
                       int k_max, const dirmn_mixture_options* options, const dirmn_mixture* grow,
                       dirmn_mixture_options* o, int* blamed) {
  *blamed = k_min;
  int64_t usable = 0;
  if (dirmn_status s = vote(ctx, fn, counts, check_fit_here(ctx, fn, counts, k_min, options, grow, o, &usable)))
    return s;
  if (counts->call != nullptr) {
    if (const BackendResult r = counts->call->comm().allreduce(&usable, 1); !r.ok())
      return fail_backend(ctx, fn, r);
    // Every rank takes the same starts and iterations.
    if (dirmn_status s = agree_on_arguments(
            ctx, fn, counts,
            {{"k_min", k_min}, {"k_max", k_max}, {"options->objective", o->objective}, {"options->init", o->init},
             {"options->starts", o->starts}, {"options->seed (high half)", o->seed >> 32},
             {"options->seed (low half)", o->seed & 0xffffffffu}, {"options->max_iterations", o->max_iterations},
             {"options->tolerance", o->tolerance},
             {"options->m_step_iterations", o->m_step_iterations},
             {"grow_from (given)", (grow ? grow : o->grow_from) != nullptr}}))
      return s;
  }
  if (usable == 0)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                o->weights ? "no row has both counts and a positive weight (of %" PRId64 " rows)"
                           : "no row has counts (of %" PRId64 " rows)",
                counts->info.rows);
  const char* what = o->weights ? "rows with counts and a positive weight" : "rows with counts";
  if (k_min >= 1) *blamed = k_max;
  if (k_min < 1 || k_max > usable)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                "k (%d) must be between 1 and the number of %s (%" PRId64 "), of %" PRId64 " rows",
                k_min < 1 ? k_min : k_max, what, usable, counts->info.rows);
  return DIRMN_SUCCESS;
}

// grow: the k - 1 fit one start grows from (options->grow_from, or the
// range's previous fit), or null.
dirmn_status fit_one(dirmn_context* ctx, const char* fn, dirmn_counts* counts, int k,
                     const dirmn_mixture_options* options, const dirmn_mixture* grow,
                     dirmn_mixture** mixture) {
  if (mixture == nullptr) return fail(ctx, DIRMN_ERROR_NULL_POINTER, fn, "mixture is NULL");
  dirmn_mixture_options o;
  int blamed = k;
  if (dirmn_status s = check_fit(ctx, fn, counts, k, k, options, grow, &o, &blamed)) return s;
  if (grow == nullptr) grow = o.grow_from;
  // A grow_from of another context is read under its hold, as
  // dirmn_mixture_assign reads a mixture.
  const std::shared_ptr<UseFlag> keep = grow ? grow->use : nullptr;
  std::optional<InUse> holder;
  dirmn_status held = DIRMN_SUCCESS;
  if (keep && keep != ctx->use) {
    holder.emplace(*keep);
    if (holder->state() == InUse::kBusy) held = refuse_in_use(nullptr, fn, InUse::kBusy);
  }
  dirmn::GrowFrom grow_from;
  if (grow) {
    grow_from.k = grow->k;
    grow_from.alpha = grow->alpha.data();
    grow_from.weights = grow->weights.data();
    grow_from.resp = grow->resp.data();
    grow_from.loglik = grow->info.loglik;
  }
  std::unique_ptr<dirmn_mixture> m;
  if (held == DIRMN_SUCCESS) {
    try {
      m = std::make_unique<dirmn_mixture>();
    } catch (const std::bad_alloc&) {
      held = fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, fn, "out of host memory for the mixture handle");
    }
  }
  if (dirmn_status s = vote(ctx, fn, counts, held)) return s;
  const StoredTable table = counts->stored(ctx);
  m->use = ctx->use;
  MixtureSettings s;
  s.k = k;
  s.objective = o.objective;
  s.init = o.init;
  s.starts = o.starts;
  s.seed = o.seed;
  s.max_iterations = o.max_iterations;
  s.tolerance = o.tolerance;
  s.m_step_iterations = o.m_step_iterations;
  s.weights = o.weights;
  s.progress = o.progress;
  s.progress_data = o.progress_data;
  s.interrupt = ctx->interrupt;
  s.grow_from = grow ? &grow_from : nullptr;
  MixtureFit fit;
  MixtureResult r;
  try {
    r = fit_mixture(table, s, &fit);
  } catch (const std::bad_alloc&) {
    return fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, fn,
                "out of host memory for the EM's starts, responsibilities and histograms (k = %d, "
                "%" PRId64 " x %" PRId64 " table)",
                k, counts->info.rows, counts->info.cols);
  }
  if (r.backend.status == DIRMN_ERROR_CANCELLED && r.iteration >= 0)
    return fail(ctx, DIRMN_ERROR_CANCELLED, fn, "cancelled at EM iteration %d", r.iteration);
  if (r.backend.status == DIRMN_ERROR_OVERFLOW)
    return fail_weighted_overflow(ctx, fn, "mixture log-likelihood");
  if (!r.ok()) return fail_backend(ctx, fn, r.backend);
  m->k = k;
  m->rows = counts->info.rows;
  m->cols = counts->info.cols;
  m->objective = o.objective;
  m->alpha = std::move(fit.alpha);
  m->weights = std::move(fit.weights);
  m->resp = std::move(fit.resp);
  dirmn_mixture_info& in = m->info;
  in.size = sizeof in;
  in.k = k;
  in.rows = m->rows;
  in.cols = m->cols;
  in.parameters = fit.parameters;
  in.loglik = fit.loglik;
  in.objective = fit.objective;
  in.aic = fit.aic;
  in.bic = fit.bic;
  in.laplace = fit.laplace;
  in.iterations = fit.iterations;
  in.converged = fit.converged ? 1 : 0;
  in.start = fit.start;
  in.observations = fit.observations;
  *mixture = m.release();
  return DIRMN_SUCCESS;
}

dirmn_status check_strides(const char* fn, const char* what, const double* out, int64_t n1,
                           int64_t n2, int64_t s1, int64_t s2, dirmn_context* ctx) {
  return check_extent(ctx, fn, what, Strided{out, n1, n2, s1, s2, sizeof(double)}, true);
}

}  // namespace
}  // namespace capi
}  // namespace dirmn

extern "C" {

void dirmn_mixture_options_init_sized(dirmn_mixture_options* options, size_t size) {
  dirmn_mixture_options d;
  std::memset(&d, 0, sizeof d);
  d.objective = DIRMN_MIXTURE_ML;
  d.init = DIRMN_INIT_MIXED;
  d.starts = 6;
  d.seed = 1;
  d.max_iterations = 1000;
  d.tolerance = 1e-9;
  d.m_step_iterations = dirmn::kDefaultMStepIterations;
  fill_defaults(options, size, d);
}

void(dirmn_mixture_options_init)(dirmn_mixture_options* options) {
  // The struct of the first release ended with `progress_data`.
  dirmn_mixture_options_init_sized(options,
                                   offsetof(dirmn_mixture_options, progress_data) + sizeof(void*));
}

dirmn_status dirmn_mixture_fit(dirmn_context* ctx, dirmn_counts* counts, int k,
                               const dirmn_mixture_options* options, dirmn_mixture** mixture) {
  static const char* fn = "dirmn_mixture_fit";
  return with_context(ctx, fn, [&] {
    return dirmn::capi::collective(counts, [&] {
      return dirmn::capi::fit_one(ctx, fn, counts, k, options, nullptr, mixture);
    });
  });
}

dirmn_status dirmn_mixture_fit_range(dirmn_context* ctx, dirmn_counts* counts, int k_min,
                                     int k_max, const dirmn_mixture_options* options,
                                     dirmn_mixture** mixtures) {
  static const char* fn = "dirmn_mixture_fit_range";
  return with_context(ctx, fn, [&] {
    return dirmn::capi::collective(counts, [&] {
      if (mixtures == nullptr) return fail(ctx, DIRMN_ERROR_NULL_POINTER, fn, "mixtures is NULL");
      if (k_min < 1 || k_max < k_min)
        return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                    "the range k_min (%d) .. k_max (%d) must have 1 <= k_min <= k_max", k_min, k_max);
      // Not dirmn_mixture_destroy, which defers the free of a handle while
      // its context is in a call -- as it is here: a failure frees at once.
      // Reserved before the checks' vote: over ranks nothing fails after it
      // unvoted.
      std::vector<std::unique_ptr<dirmn_mixture>> fitted;
      try {
        fitted.reserve(static_cast<size_t>(k_max - k_min) + 1);
      } catch (const std::bad_alloc&) {
        return fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, fn, "out of host memory for %d mixture handles",
                    k_max - k_min + 1);
      }
      // k_max is bounded by the rows before the fits; a failure is worded as
      // the fit of the k it concerns would word it.
      dirmn_mixture_options o;
      int blamed = k_min;
      if (dirmn_status st = dirmn::capi::check_fit(ctx, "dirmn_mixture_fit", counts, k_min, k_max,
                                                   options, nullptr, &o, &blamed))
        return dirmn::capi::prefix_failure(ctx, st, fn, "k = %d", blamed);
      for (int k = k_min; k <= k_max; ++k) {
        dirmn_mixture* m = nullptr;
        // As dirmn_mixture_fit would report it, then which k.
        dirmn_status st = DIRMN_SUCCESS;
        try {
          // Every k after the first grows one start from the fit before it.
          st = dirmn::capi::fit_one(ctx, "dirmn_mixture_fit", counts, k, options,
                                    fitted.empty() ? nullptr : fitted.back().get(), &m);
        } catch (const std::bad_alloc&) {
          st = fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, "dirmn_mixture_fit", "out of host memory");
        }
        if (st != DIRMN_SUCCESS) return dirmn::capi::prefix_failure(ctx, st, fn, "k = %d", k);
        fitted.emplace_back(m);
      }
      for (size_t i = 0; i < fitted.size(); ++i) mixtures[i] = fitted[i].release();
      return DIRMN_SUCCESS;
    });
  });
}

void dirmn_mixture_destroy(dirmn_mixture* mixture) {
  if (mixture == nullptr) return;
  const std::shared_ptr<UseFlag> use = mixture->use;  // outlives mixture
  if (take_for_destroy(*use) == dirmn::capi::Take::kReentered) {
    mixture->deferred_free = [](dirmn::capi::Deferrable* d) { delete static_cast<dirmn_mixture*>(d); };
    dirmn::capi::defer_free(*use, mixture);
    return;
  }
  delete mixture;
  release(*use);
}

dirmn_status dirmn_mixture_get_info(const dirmn_mixture* mixture, dirmn_mixture_info* info) {
  static const char* fn = "dirmn_mixture_get_info";
  return with_owner(mixture ? mixture->use.get() : nullptr, fn, [&] {
    if (mixture == nullptr || info == nullptr)
      return fail(nullptr, DIRMN_ERROR_NULL_POINTER, fn, "mixture or info is NULL");
    if (info->size < offsetof(dirmn_mixture_info, k) + sizeof(int))
      return fail(nullptr, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                  "info->size (%zu) is too small; set it to sizeof(dirmn_mixture_info)", info->size);
    const size_t n = std::min(info->size, sizeof(dirmn_mixture_info));
    dirmn_mixture_info full = mixture->info;
    full.size = info->size;
    std::memcpy(info, &full, n);
    return DIRMN_SUCCESS;
  });
}

dirmn_status dirmn_mixture_get_params(const dirmn_mixture* mixture, double* alpha, int64_t stride_k,
                                      int64_t stride_v, double* weights) {
  static const char* fn = "dirmn_mixture_get_params";
  return with_owner(mixture ? mixture->use.get() : nullptr, fn, [&] {
    if (mixture == nullptr) return fail(nullptr, DIRMN_ERROR_NULL_POINTER, fn, "mixture is NULL");
    if (alpha)
      if (dirmn_status s = dirmn::capi::check_strides(fn, "alpha", alpha, mixture->k, mixture->cols,
                                                      stride_k, stride_v, nullptr))
        return s;
    if (dirmn_status s = dirmn::capi::check_extent(nullptr, fn, "weights",
                                                   contiguous(weights, weights ? mixture->k : 0,
                                                              sizeof(double)),
                                                   true))
      return s;
    for (int j = 0; j < mixture->k; ++j) {
      if (weights) weights[j] = mixture->weights[static_cast<size_t>(j)];
      if (alpha)
        for (int64_t v = 0; v < mixture->cols; ++v)
          alpha[j * stride_k + v * stride_v] = mixture->alpha[static_cast<size_t>(j * mixture->cols + v)];
    }
    return DIRMN_SUCCESS;
  });
}

dirmn_status dirmn_mixture_get_responsibilities(const dirmn_mixture* mixture, double* out,
                                                int64_t stride_row, int64_t stride_k) {
  static const char* fn = "dirmn_mixture_get_responsibilities";
  return with_owner(mixture ? mixture->use.get() : nullptr, fn, [&] {
    if (mixture == nullptr || out == nullptr)
      return fail(nullptr, DIRMN_ERROR_NULL_POINTER, fn, "mixture or out is NULL");
    if (dirmn_status s = dirmn::capi::check_strides(fn, "out", out, mixture->rows, mixture->k,
                                                    stride_row, stride_k, nullptr))
      return s;
    for (int64_t b = 0; b < mixture->rows; ++b)
      for (int j = 0; j < mixture->k; ++j)
        out[b * stride_row + j * stride_k] = mixture->resp[static_cast<size_t>(b * mixture->k + j)];
    return DIRMN_SUCCESS;
  });
}

dirmn_status dirmn_mixture_assign(dirmn_context* ctx, const dirmn_mixture* mixture,
                                  const dirmn_counts* counts, double* out, int64_t stride_row,
                                  int64_t stride_k) {
  static const char* fn = "dirmn_mixture_assign";
  return with_context(ctx, fn, [&] {
    if (mixture == nullptr || counts == nullptr || out == nullptr)
      return fail(ctx, DIRMN_ERROR_NULL_POINTER, fn, "mixture, counts or out is NULL");
    if (dirmn_status s = dirmn::capi::check_counts_use(ctx, fn, counts)) return s;
    // A mixture fitted by another context is that context's: its flag is
    // held too, so that a destroy of the mixture on another thread waits
    // for this call, and one from this call's callback is deferred. `keep`
    // outlives the hold (the mixture may hold the flag's last reference).
    const std::shared_ptr<UseFlag> keep = mixture->use;
    std::optional<InUse> fitter;
    if (keep && keep != ctx->use) {
      fitter.emplace(*keep);
      if (fitter->state() == InUse::kBusy) return refuse_in_use(nullptr, fn, InUse::kBusy);
    }
    if (counts->info.cols != mixture->cols)
      return fail(ctx, DIRMN_ERROR_DIMENSION_MISMATCH, fn,
                  "the table has %" PRId64 " columns, the mixture was fitted to %" PRId64,
                  counts->info.cols, mixture->cols);
    const int k = mixture->k;
    const int64_t rows = counts->info.rows;
    if (dirmn_status s = dirmn::capi::check_strides(fn, "out", out, rows, k, stride_row, stride_k, ctx)) return s;
    // The rows x k probabilities, and assign_mixture's rows x k log terms.
    std::vector<double> z;
    BackendResult r;
    try {
      z.resize(static_cast<size_t>(rows * k));
      if (dirmn_status hs = ensure_host_copy(ctx, fn, counts)) return hs;
      r = dirmn::assign_mixture(counts->stored(ctx), k, mixture->alpha.data(),
                                mixture->weights.data(), ctx->interrupt, z.data());
    } catch (const std::bad_alloc&) {
      return fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, fn,
                  "out of host memory for the %" PRId64 " x %d assignment's scratch (%" PRId64
                  " bytes for the probabilities, as many for the log terms)",
                  rows, k, rows * k * static_cast<int64_t>(sizeof(double)));
    }
    if (!r.ok()) return fail_backend(ctx, fn, r);
    for (int64_t b = 0; b < rows; ++b)
      for (int j = 0; j < k; ++j) out[b * stride_row + j * stride_k] = z[static_cast<size_t>(b * k + j)];
    return DIRMN_SUCCESS;
  });
}

}  // extern "C"
