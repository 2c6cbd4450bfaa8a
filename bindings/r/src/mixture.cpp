// mixture.cpp: Dirichlet-multinomial mixtures (dirmn_mixture_fit) and the
// assignment of new rows to their components.
#include "common.h"

#include <cstring>

using namespace dirmn_r;

namespace dirmn_r {

long g_live_mixtures = 0;

SEXP sym_mixture() {
  static SEXP s = Rf_install("dirmn_mixture");
  return s;
}

}  // namespace dirmn_r

namespace {

// Run by R's garbage collector, possibly inside a callback of a call on the
// mixture's context (a gc() in a handler of a fit's progress messages): the
// library then frees the handle when that call returns.
void mixture_finalizer(SEXP xp) {
  auto* m = static_cast<dirmn_mixture*>(R_ExternalPtrAddr(xp));
  if (m != nullptr) {
    R_ClearExternalPtr(xp);
    dirmn_mixture_destroy(m);
    --g_live_mixtures;
  }
}

// Owns a mixture handle until an external pointer takes it.
struct MixtureGuard {
  dirmn_mixture* mixture = nullptr;
  MixtureGuard() = default;
  MixtureGuard(const MixtureGuard&) = delete;
  MixtureGuard& operator=(const MixtureGuard&) = delete;
  ~MixtureGuard() { dirmn_mixture_destroy(mixture); }
};

}  // namespace

// ---------------------------------------------------------------------------
// Entry points

// One fitted mixture as a plain list, its components in the library's
// order: `alpha` (k x V), `weights` (k), `responsibilities` (rows x k),
// the fields of dirmn_mixture_info (`start` 0-based) and `ptr`, an
// external pointer that owns the handle (for dirmn_mixture_assign).
// Components come in the library's order (decreasing weight); R/mixture.R
// makes the dirmn_mixture_fit object without reordering them. `progress`
// is NULL or an R function(iteration, loglik, change); TRUE from it cancels.
// `grow_from` is NULL or the external pointer of a fitted mixture with
// k - 1 components on the same table, which seeds one more start.
// `m_step_iterations`: Newton steps per component per M step once warm
// (the library checks it is >= 1).
// [[Rcpp::export(rng = false)]]
SEXP cpp_mixture_fit(SEXP xp, int k, int objective, int init, int starts, SEXP seed,
                     double tolerance, int max_iterations, int m_step_iterations,
                     SEXP weights, SEXP progress, SEXP grow_from) {
  PreparedCounts p = prepared_counts(xp);
  if (p.failed != R_NilValue) return p.failed;
  SEXP bad = check_weights(weights, p.info.rows);
  if (bad != R_NilValue) return bad;
  if (k < 1) return failure(DIRMN_ERROR_INVALID_ARGUMENT, "k must be at least 1");
  const dirmn_mixture* previous = nullptr;
  if (grow_from != R_NilValue) {
    if (!is_xptr(grow_from, sym_mixture()) || R_ExternalPtrAddr(grow_from) == nullptr)
      return failure(DIRMN_ERROR_NULL_POINTER, "the mixture to grow from is not available");
    previous = static_cast<const dirmn_mixture*>(R_ExternalPtrAddr(grow_from));
  }
  const R_xlen_t V = static_cast<R_xlen_t>(p.info.cols);
  const R_xlen_t rows = static_cast<R_xlen_t>(p.info.rows);
  // Outputs and the owning pointer exist before the handle does.
  Rcpp::NumericMatrix alpha(k, V);
  Rcpp::NumericVector mix_weights(k);
  Rcpp::NumericMatrix resp(rows, k);
  // The mixture's pointer protects its context's pointer, as a table's does:
  // dirmn_mixture_assign holds the mixture's context too, so that context
  // must not be finalized during a call (where the library would keep it).
  Rcpp::Shield<SEXP> mix_xp(
      R_MakeExternalPtr(nullptr, sym_mixture(), R_ExternalPtrProtected(xp)));
  R_RegisterCFinalizerEx(mix_xp, mixture_finalizer, TRUE);
  Rcpp::Shield<SEXP> token(R_MakeUnwindCont());
  ProgressBridge bridge;
  bridge.fn = progress;
  bridge.token = token;

  dirmn_mixture_options options;
  dirmn_mixture_options_init(&options);
  options.objective = static_cast<dirmn_mixture_objective>(objective);
  options.init = static_cast<dirmn_mixture_init>(init);
  options.starts = starts;
  options.seed = seed_of(seed);
  options.max_iterations = max_iterations;
  options.tolerance = tolerance;
  options.weights = weights_ptr(weights);
  options.grow_from = previous;
  options.m_step_iterations = m_step_iterations;
  if (progress != R_NilValue) {
    options.progress = progress_callback;
    options.progress_data = &bridge;
  }
  dirmn_mixture_info mi;
  std::memset(&mi, 0, sizeof mi);
  mi.size = sizeof mi;
  Failure failed;
  {
    MixtureGuard guard;
    dirmn_status status;
    {
      const bool reports = progress != R_NilValue;
      BusyScope busy(reports ? p.ctx : g_busy_context, reports ? p.counts : g_busy_counts);
      status = dirmn_mixture_fit(p.ctx, p.counts, k, &options, &guard.mixture);
    }
    if (bridge.jumped) resume_jump(token);
    if (status != DIRMN_SUCCESS) {
      failed = library_error(p.ctx, status);
    } else {
      // R matrices are column-major: (j, v) of the k x V alpha sits at
      // j + v * k, (b, j) of the responsibilities at b + j * rows.
      status = dirmn_mixture_get_info(guard.mixture, &mi);
      if (status == DIRMN_SUCCESS)
        status = dirmn_mixture_get_params(guard.mixture, alpha.begin(), 1, k, mix_weights.begin());
      if (status == DIRMN_SUCCESS)
        status = dirmn_mixture_get_responsibilities(guard.mixture, resp.begin(), 1, rows);
      if (status != DIRMN_SUCCESS) {
        failed = library_error(nullptr, status);
      } else {
        R_SetExternalPtrAddr(mix_xp, guard.mixture);
        guard.mixture = nullptr;
        ++g_live_mixtures;
      }
    }
  }
  if (failed.status != DIRMN_SUCCESS) return failure(failed);
  return Rcpp::List::create(
      Rcpp::Named("alpha") = alpha, Rcpp::Named("weights") = mix_weights,
      Rcpp::Named("responsibilities") = resp, Rcpp::Named("loglik") = mi.loglik,
      Rcpp::Named("objective") = mi.objective, Rcpp::Named("aic") = mi.aic,
      Rcpp::Named("bic") = mi.bic, Rcpp::Named("laplace") = mi.laplace,
      Rcpp::Named("parameters") = static_cast<double>(mi.parameters),
      Rcpp::Named("observations") = mi.observations,
      Rcpp::Named("iterations") = mi.iterations, Rcpp::Named("converged") = mi.converged != 0,
      Rcpp::Named("k") = mi.k, Rcpp::Named("start") = mi.start,
      Rcpp::Named("ptr") = static_cast<SEXP>(mix_xp));
}

// Posterior component probabilities (rows x k, the library's component
// order) of the rows of a prepared table under a fitted mixture.
// [[Rcpp::export(rng = false)]]
SEXP cpp_mixture_assign(SEXP mix_xp, SEXP xp) {
  if (!is_xptr(mix_xp, sym_mixture()) || R_ExternalPtrAddr(mix_xp) == nullptr)
    return failure(DIRMN_ERROR_NULL_POINTER, "the mixture handle is not available");
  const auto* m = static_cast<const dirmn_mixture*>(R_ExternalPtrAddr(mix_xp));
  PreparedCounts p = prepared_counts(xp);
  if (p.failed != R_NilValue) return p.failed;
  dirmn_mixture_info mi;
  mi.size = sizeof mi;
  dirmn_status status = dirmn_mixture_get_info(m, &mi);
  if (status != DIRMN_SUCCESS) return library_failure(nullptr, status);
  const R_xlen_t rows = static_cast<R_xlen_t>(p.info.rows);
  Rcpp::NumericMatrix out(rows, mi.k);
  status = dirmn_mixture_assign(p.ctx, m, p.counts, out.begin(), 1, rows);
  if (status != DIRMN_SUCCESS) return library_failure(p.ctx, status);
  return out;
}

// The library's defaults of the mixture options R exposes (dirmn_mixture()
// takes `starts = NULL` as the library's default).
// [[Rcpp::export(rng = false)]]
SEXP cpp_mixture_defaults() {
  dirmn_mixture_options options;
  dirmn_mixture_options_init(&options);
  return Rcpp::List::create(Rcpp::Named("starts") = options.starts,
                            Rcpp::Named("init") = static_cast<int>(options.init),
                            Rcpp::Named("max_iterations") = options.max_iterations,
                            Rcpp::Named("tolerance") = options.tolerance,
                            Rcpp::Named("m_step_iterations") = options.m_step_iterations);
}

// [[Rcpp::export(rng = false)]]
SEXP cpp_live_mixtures() { return Rf_ScalarReal(static_cast<double>(g_live_mixtures)); }
