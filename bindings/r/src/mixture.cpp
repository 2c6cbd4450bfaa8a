// mixture.cpp: Dirichlet-multinomial mixtures (dirmn_mixture_fit) and the
// assignment of new rows to their components.
#include "common.h"

#include <algorithm>
#include <cstring>
#include <vector>

using namespace dirmn_r;

namespace dirmn_r {

SEXP sym_mixture() {
  static SEXP s = Rf_install("dirmn_mixture");
  return s;
}

}  // namespace dirmn_r

namespace {

void mixture_finalizer(SEXP xp) {
  auto* m = static_cast<dirmn_mixture*>(R_ExternalPtrAddr(xp));
  if (m != nullptr) {
    R_ClearExternalPtr(xp);
    dirmn_mixture_destroy(m);
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

// One fitted model of class dirmn_mixture_fit (see R/mixture.R): everything
// a fitted mixture holds, copied into R objects with its components ordered
// by decreasing weight (as dmn() orders them; ties keep the library's order,
// as R's order(decreasing = TRUE)), plus an external pointer that owns the
// handle (for dirmn_mixture_assign). Built here rather than in R because on
// small tables building it in R costs about as much as the fit. `dimnames`
// is the table's list(rows, columns); `row_totals`, `nobs`,
// `objective_type`, `backend` and `device` are stored as given.
// [[Rcpp::export(rng = false)]]
SEXP cpp_mixture_fit(SEXP xp, int k, int objective, int init, int starts, double seed,
                     double tolerance, int max_iterations, SEXP weights, SEXP progress,
                     SEXP dimnames, SEXP row_totals, SEXP nobs, SEXP objective_type,
                     SEXP backend, SEXP device) {
  PreparedCounts p = prepared_counts(xp);
  if (p.failed != R_NilValue) return p.failed;
  const dirmn_counts_info& info = p.info;
  SEXP bad = check_weights(weights, info.rows);
  if (bad != R_NilValue) return bad;
  if (k < 1) return failure(DIRMN_ERROR_INVALID_ARGUMENT, "k must be at least 1");
  const R_xlen_t V = static_cast<R_xlen_t>(info.cols);
  const R_xlen_t rows = static_cast<R_xlen_t>(info.rows);
  // Outputs and the owning pointer exist before the handle does.
  Rcpp::NumericMatrix alpha(k, V);
  Rcpp::NumericVector mix_weights(k);
  Rcpp::NumericMatrix resp(rows, k);
  Rcpp::Shield<SEXP> mix_xp(R_MakeExternalPtr(nullptr, sym_mixture(), R_NilValue));
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
  options.seed = static_cast<uint64_t>(seed);
  options.max_iterations = max_iterations;
  options.tolerance = tolerance;
  options.weights = weights_ptr(weights);
  if (progress != R_NilValue) {
    options.progress = progress_callback;
    options.progress_data = &bridge;
  }
  dirmn_mixture_info mi;
  std::memset(&mi, 0, sizeof mi);
  mi.size = sizeof mi;
  {
    MixtureGuard guard;
    dirmn_status status;
    {
      BusyScope busy(progress != R_NilValue ? p.ctx : g_busy_context);
      status = dirmn_mixture_fit(p.ctx, p.counts, k, &options, &guard.mixture);
    }
    if (bridge.jumped) resume_jump(token);
    if (status != DIRMN_SUCCESS) return failure(library_error(p.ctx, status));
    // R matrices are column-major: (j, v) of the k x V alpha sits at
    // j + v * k, (b, j) of the responsibilities at b + j * rows.
    status = dirmn_mixture_get_info(guard.mixture, &mi);
    if (status == DIRMN_SUCCESS)
      status = dirmn_mixture_get_params(guard.mixture, alpha.begin(), 1, k, mix_weights.begin());
    if (status == DIRMN_SUCCESS)
      status = dirmn_mixture_get_responsibilities(guard.mixture, resp.begin(), 1, rows);
    if (status != DIRMN_SUCCESS) return failure(library_error(nullptr, status));
    R_SetExternalPtrAddr(mix_xp, guard.mixture);
    guard.mixture = nullptr;
  }
  // Components by decreasing weight (a stable sort: ties keep their order).
  std::vector<int> o(static_cast<size_t>(k));
  for (int j = 0; j < k; ++j) o[static_cast<size_t>(j)] = j;
  const double* wt = mix_weights.begin();
  std::stable_sort(o.begin(), o.end(), [wt](int a, int b) { return wt[a] > wt[b]; });
  Rcpp::IntegerVector order(k);
  Rcpp::CharacterVector comp(k);
  Rcpp::NumericVector weights_out(k);
  Rcpp::NumericMatrix alpha_out(k, V);
  Rcpp::NumericMatrix resp_out(rows, k);
  for (int j = 0; j < k; ++j) {
    const int src = o[static_cast<size_t>(j)];
    order[j] = src + 1;
    comp[j] = "comp" + std::to_string(j + 1);
    weights_out[j] = mix_weights[src];
    const double* a_in = alpha.begin() + src;
    double* a_out = alpha_out.begin() + j;
    for (R_xlen_t v = 0; v < V; ++v) a_out[v * k] = a_in[v * k];
    std::memcpy(resp_out.begin() + static_cast<R_xlen_t>(j) * rows,
                resp.begin() + static_cast<R_xlen_t>(src) * rows, sizeof(double) * rows);
  }
  weights_out.attr("names") = comp;
  SEXP row_names = R_NilValue, col_names = R_NilValue;
  if (TYPEOF(dimnames) == VECSXP && XLENGTH(dimnames) == 2) {
    row_names = VECTOR_ELT(dimnames, 0);
    col_names = VECTOR_ELT(dimnames, 1);
  }
  {
    Rcpp::List dn(2);
    dn[0] = comp;
    dn[1] = col_names;
    Rf_setAttrib(alpha_out, R_DimNamesSymbol, dn);
  }
  {
    Rcpp::List dn(2);
    dn[0] = row_names;
    dn[1] = comp;
    Rf_setAttrib(resp_out, R_DimNamesSymbol, dn);
  }
  // Rcpp::List::create takes at most 20 elements.
  static const char* names[] = {"alpha", "weights", "responsibilities", "loglik", "objective",
                                "aic", "bic", "laplace", "parameters", "iterations",
                                "converged", "k", "start", "nobs", "objective_type", "ptr",
                                "order", "row_totals", "backend", "device"};
  const int n_el = static_cast<int>(sizeof names / sizeof names[0]);
  Rcpp::List out(n_el);
  Rcpp::CharacterVector out_names(n_el);
  for (int i = 0; i < n_el; ++i) out_names[i] = names[i];
  out[0] = alpha_out;
  out[1] = weights_out;
  out[2] = resp_out;
  out[3] = mi.loglik;
  out[4] = mi.objective;
  out[5] = mi.aic;
  out[6] = mi.bic;
  out[7] = mi.laplace;
  out[8] = static_cast<double>(mi.parameters);
  out[9] = mi.iterations;
  out[10] = mi.converged != 0;
  out[11] = mi.k;
  out[12] = mi.start + 1;
  out[13] = nobs;
  out[14] = objective_type;
  out[15] = static_cast<SEXP>(mix_xp);
  out[16] = order;
  out[17] = row_totals;
  out[18] = backend;
  out[19] = device;
  out.attr("names") = out_names;
  out.attr("class") = "dirmn_mixture_fit";
  return out;
}

// The criteria data frame of dirmn_mixture() from its fitted models (a list
// of dirmn_mixture_fit objects) and their k (an integer vector): one row
// per model, unnamed columns, as R/mixture.R documents.
// [[Rcpp::export(rng = false)]]
SEXP cpp_mixture_criteria(SEXP models, SEXP k) {
  const R_xlen_t n = XLENGTH(models);
  auto element = [](SEXP model, const char* name) -> SEXP {
    SEXP nm = Rf_getAttrib(model, R_NamesSymbol);
    for (R_xlen_t i = 0; i < XLENGTH(model); ++i)
      if (std::strcmp(CHAR(STRING_ELT(nm, i)), name) == 0) return VECTOR_ELT(model, i);
    return R_NilValue;
  };
  static const char* names[] = {"k",   "loglik",  "objective",  "aic",      "bic",
                                "laplace", "parameters", "iterations", "converged"};
  Rcpp::List df(9);
  Rcpp::CharacterVector df_names(9);
  for (int c = 0; c < 9; ++c) df_names[c] = names[c];
  Rcpp::IntegerVector kk(n);
  for (R_xlen_t i = 0; i < n; ++i) kk[i] = INTEGER(k)[i];
  df[0] = kk;
  for (int c = 1; c <= 6; ++c) {
    Rcpp::NumericVector col(n);
    for (R_xlen_t i = 0; i < n; ++i) col[i] = Rf_asReal(element(VECTOR_ELT(models, i), names[c]));
    df[c] = col;
  }
  Rcpp::IntegerVector iterations(n);
  Rcpp::LogicalVector converged(n);
  for (R_xlen_t i = 0; i < n; ++i) {
    iterations[i] = Rf_asInteger(element(VECTOR_ELT(models, i), "iterations"));
    converged[i] = Rf_asLogical(element(VECTOR_ELT(models, i), "converged"));
  }
  df[7] = iterations;
  df[8] = converged;
  df.attr("names") = df_names;
  df.attr("class") = "data.frame";
  df.attr("row.names") = Rcpp::IntegerVector::create(NA_INTEGER, -static_cast<int>(n));
  return df;
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
