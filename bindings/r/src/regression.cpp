// regression.cpp: Dirichlet-multinomial regression (dirmn_reg_fit), its
// covariance, Wald tests and predictions; the per-group likelihood-ratio
// tests (dirmn_reg_test_groups).
#include "common.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

using namespace dirmn_r;

namespace dirmn_r {

long g_live_regressions = 0;

SEXP sym_regression() {
  static SEXP s = Rf_install("dirmn_reg");
  return s;
}

}  // namespace dirmn_r

namespace {

// Run by R's garbage collector, possibly inside a callback of a call on the
// regression's context: the library then frees the handle when that call
// returns.
void regression_finalizer(SEXP xp) {
  auto* reg = static_cast<dirmn_reg*>(R_ExternalPtrAddr(xp));
  if (reg != nullptr) {
    R_ClearExternalPtr(xp);
    dirmn_reg_destroy(reg);
    --g_live_regressions;
  }
}

// Owns a regression handle until an external pointer takes it.
struct RegressionGuard {
  dirmn_reg* reg = nullptr;
  RegressionGuard() = default;
  RegressionGuard(const RegressionGuard&) = delete;
  RegressionGuard& operator=(const RegressionGuard&) = delete;
  ~RegressionGuard() { dirmn_reg_destroy(reg); }
};

// The rows and columns of a design matrix (a double matrix), or a failure
// naming `what`.
SEXP check_design(SEXP x, int64_t* rows, int64_t* p, const char* what = "the design") {
  SEXP dim = Rf_getAttrib(x, R_DimSymbol);
  if (TYPEOF(x) != REALSXP || TYPEOF(dim) != INTSXP || XLENGTH(dim) != 2)
    return failure(DIRMN_ERROR_INVALID_ARGUMENT, std::string(what) + " must be a double matrix");
  *rows = INTEGER(dim)[0];
  *p = INTEGER(dim)[1];
  return R_NilValue;
}

// The precision's design `z` (NULL, or a double matrix of `rows` rows) as
// the library takes it: its pointer and q, nullptr and 0 for NULL; or a
// failure.
SEXP check_precision_design(SEXP z, int64_t rows, const double** data, int64_t* q) {
  *data = nullptr;
  *q = 0;
  if (z == R_NilValue) return R_NilValue;
  int64_t z_rows = 0;
  SEXP bad = check_design(z, &z_rows, q, "the precision design");
  if (bad != R_NilValue) return bad;
  if (z_rows != rows)
    return failure(DIRMN_ERROR_DIMENSION_MISMATCH,
                   "the precision design has " + std::to_string(z_rows) + " rows; the design has " +
                       std::to_string(rows));
  // A zero-length R vector's data pointer is a sentinel, not memory: with
  // no rows there is nothing to read, and a NULL design would mean none.
  *data = rows > 0 ? REAL(z) : nullptr;
  return R_NilValue;
}

}  // namespace

// ---------------------------------------------------------------------------
// Entry points

// dirmn_reg_fit of the prepared table `xp` on the design `x` (a rows x p
// double matrix, read through strides: R stores (b, i) at b + i * rows), as
// a plain list (R/regression.R makes the dirmn_reg object):
// `coefficients` and `std_errors` (p x V), `vcov` (P x P over the P =
// info.parameters free coefficients: vec(beta), without the reference
// category's column and with the q gammas of the log precision last for the
// mean/precision model; only where P <= vcov_max, else NULL: it is P^2
// doubles) and
// the Wald tests of every covariate (`wald_statistic`, `wald_df`,
// `wald_p_value`); the standard errors and the Wald tests are the
// library's (dirmn_reg_get_std_errors, dirmn_reg_wald_test), for any P;
// NULL and NA where the fit has no covariance. `log_precision` and
// `std_error_log_precision` (dirmn_reg_get_precision: gamma and its
// standard errors, q entries, one without a precision design; NULL for a
// log-linear fit), and dirmn_reg_info's `model`, `contrast`, `reference`
// (its codes, the reference 0-based) and `precision_covariates`, all in the
// list `model`. Then the other fields of dirmn_reg_info, and `ptr`, an
// external pointer that owns the handle (for dirmn_reg_predict). `model`,
// `contrast` and `reference` (0-based) go to the options as they are (the
// library checks them), and so does `z`, the precision's design (NULL, or a
// rows x q double matrix: options.precision_design). `progress` is NULL or
// an R function(iteration, loglik, gradient_norm); TRUE from it cancels.
// [[Rcpp::export(rng = false)]]
SEXP cpp_reg_fit(SEXP xp, SEXP x, SEXP weights, double tolerance, int max_iterations,
                 SEXP progress, double vcov_max, int model, int contrast, double reference,
                 SEXP z) {
  PreparedCounts p = prepared_counts(xp);
  if (p.failed != R_NilValue) return p.failed;
  int64_t rows = 0, np = 0;
  SEXP bad = check_design(x, &rows, &np);
  if (bad != R_NilValue) return bad;
  const double* z_data = nullptr;
  int64_t q = 0;
  bad = check_precision_design(z, rows, &z_data, &q);
  if (bad != R_NilValue) return bad;
  bad = check_weights(weights, p.info.rows);
  if (bad != R_NilValue) return bad;
  Rcpp::Shield<SEXP> token(R_MakeUnwindCont());
  ProgressBridge bridge;
  bridge.fn = progress;
  bridge.token = token;
  // The regression's pointer protects its context's pointer, as a
  // mixture's does.
  Rcpp::Shield<SEXP> reg_xp(
      R_MakeExternalPtr(nullptr, sym_regression(), R_ExternalPtrProtected(xp)));
  R_RegisterCFinalizerEx(reg_xp, regression_finalizer, TRUE);

  dirmn_reg_options options;
  dirmn_reg_options_init(&options);
  options.tolerance = tolerance;
  options.max_iterations = max_iterations;
  options.weights = weights_ptr(weights);
  options.model = static_cast<dirmn_reg_model>(model);
  options.contrast = static_cast<dirmn_reg_contrast>(contrast);
  options.reference = static_cast<int64_t>(reference);
  if (z != R_NilValue) {
    // R stores (b, j) at b + j * rows
    options.precision_design = z_data;
    options.precision_covariates = q;
    options.precision_stride_row = 1;
    options.precision_stride_col = rows;
  }
  if (progress != R_NilValue) {
    options.progress = progress_callback;
    options.progress_data = &bridge;
  }
  dirmn_reg_info info;
  std::memset(&info, 0, sizeof info);
  info.size = sizeof info;
  Failure failed;
  {
    RegressionGuard guard;
    dirmn_status status;
    {
      const bool reports = progress != R_NilValue;
      BusyScope busy(reports ? p.ctx : g_busy_context, reports ? p.counts : g_busy_counts);
      status = dirmn_reg_fit(p.ctx, p.counts, rows > 0 ? REAL(x) : nullptr, rows, np, 1, rows,
                             &options, &guard.reg);
    }
    if (bridge.jumped) resume_jump(token);
    if (status != DIRMN_SUCCESS) {
      failed = library_error(p.ctx, status);
    } else {
      status = dirmn_reg_get_info(guard.reg, &info);
      if (status != DIRMN_SUCCESS) {
        failed = library_error(nullptr, status);
      } else {
        R_SetExternalPtrAddr(reg_xp, guard.reg);
        guard.reg = nullptr;
        ++g_live_regressions;
      }
    }
  }
  if (failed.status != DIRMN_SUCCESS) return failure(failed);
  const auto* reg = static_cast<const dirmn_reg*>(R_ExternalPtrAddr(reg_xp));
  const R_xlen_t P = static_cast<R_xlen_t>(info.covariates);
  const R_xlen_t V = static_cast<R_xlen_t>(info.categories);
  // The free coefficients: p V (log-linear), p (V - 1) + q (mean/precision).
  const R_xlen_t PV = static_cast<R_xlen_t>(info.parameters);
  // R matrices are column-major: (i, v) of the p x V coefficients sits at
  // i + v * p.
  Rcpp::NumericMatrix coef(P, V);
  dirmn_status status = dirmn_reg_get_coef(reg, coef.begin(), 1, P);
  if (status != DIRMN_SUCCESS) return library_failure(nullptr, status);
  Rcpp::RObject vcov;  // NULL without a covariance, or above vcov_max coefficients
  Rcpp::NumericMatrix se(P, V);
  std::fill(se.begin(), se.end(), NA_REAL);
  Rcpp::NumericVector wald_statistic(P, NA_REAL), wald_df(P, NA_REAL), wald_p(P, NA_REAL);
  if (info.hessian_definite) {
    status = dirmn_reg_get_std_errors(reg, se.begin(), 1, P);
    if (status != DIRMN_SUCCESS) return library_failure(nullptr, status);
    if (static_cast<double>(PV) <= vcov_max) {
      Rcpp::NumericMatrix cov(PV, PV);
      // The library writes (r, c) at r * ld + c, R reads (r, c) at r + c * ld:
      // transpose in place (the covariance is symmetric up to rounding).
      status = dirmn_reg_get_vcov(reg, cov.begin(), PV);
      if (status != DIRMN_SUCCESS) return library_failure(nullptr, status);
      double* a = cov.begin();
      for (R_xlen_t r = 0; r < PV; ++r)
        for (R_xlen_t c = r + 1; c < PV; ++c) std::swap(a[r * PV + c], a[c * PV + r]);
      vcov = cov;
    }
    for (R_xlen_t i = 0; i < P; ++i) {
      double stat = 0.0, df = 0.0, pv = 0.0;
      // NOT_SUPPORTED where a covariate's block is not positive definite
      // (rounding): that test stays NA.
      status = dirmn_reg_wald_test(reg, i, &stat, &df, &pv);
      if (status == DIRMN_SUCCESS) {
        wald_statistic[i] = stat;
        wald_df[i] = df;
        wald_p[i] = pv;
      } else if (status != DIRMN_ERROR_NOT_SUPPORTED) {
        return library_failure(nullptr, status);
      }
    }
  }
  Rcpp::RObject log_precision, std_error_log_precision;  // NULL for a log-linear fit
  if (info.model == DIRMN_REG_MEAN_PRECISION) {
    const R_xlen_t q = std::max<R_xlen_t>(static_cast<R_xlen_t>(info.precision_covariates), 1);
    Rcpp::NumericVector gamma(q), gamma_se(q);
    status = dirmn_reg_get_precision(reg, gamma.begin(), gamma_se.begin());
    if (status != DIRMN_SUCCESS) return library_failure(nullptr, status);
    if (!info.hessian_definite) std::fill(gamma_se.begin(), gamma_se.end(), NA_REAL);
    log_precision = gamma;
    std_error_log_precision = gamma_se;
  }
  Rcpp::List out = Rcpp::List::create(
      Rcpp::Named("coefficients") = coef, Rcpp::Named("std_errors") = se,
      Rcpp::Named("vcov") = vcov,
      Rcpp::Named("wald_statistic") = wald_statistic, Rcpp::Named("wald_df") = wald_df,
      Rcpp::Named("wald_p_value") = wald_p, Rcpp::Named("loglik") = info.loglik,
      Rcpp::Named("aic") = info.aic, Rcpp::Named("bic") = info.bic,
      Rcpp::Named("parameters") = static_cast<double>(info.parameters),
      Rcpp::Named("observations") = info.observations,
      Rcpp::Named("gradient_norm") = info.gradient_norm,
      Rcpp::Named("iterations") = info.iterations,
      Rcpp::Named("converged") = info.converged != 0,
      Rcpp::Named("hessian_definite") = info.hessian_definite != 0,
      Rcpp::Named("ptr") = static_cast<SEXP>(reg_xp),
      // (Rcpp::List::create takes at most 20 elements: the model's in a list)
      Rcpp::Named("model") = Rcpp::List::create(
          Rcpp::Named("model") = static_cast<int>(info.model),
          Rcpp::Named("contrast") = static_cast<int>(info.contrast),
          Rcpp::Named("reference") = static_cast<double>(info.reference),
          Rcpp::Named("precision_covariates") = static_cast<double>(info.precision_covariates),
          Rcpp::Named("multinomial_limit") = info.multinomial_limit != 0,
          Rcpp::Named("log_precision") = log_precision,
          Rcpp::Named("std_error_log_precision") = std_error_log_precision));
  return out;
}

namespace {

// alpha (rows x V) of the fitted regression `reg_xp` for the design `x`
// (rows x p, a double matrix): by dirmn_reg_predict, or with the
// precision's design `z` (rows x q; NULL for a fit without one) by
// dirmn_reg_predict_with_precision.
SEXP predict_alpha(SEXP reg_xp, SEXP x, SEXP z, bool with_precision) {
  if (!is_xptr(reg_xp, sym_regression()) || R_ExternalPtrAddr(reg_xp) == nullptr)
    return failure(DIRMN_ERROR_NULL_POINTER, "the regression handle is not available");
  // The library refuses a call while the regression's context serves a fit
  // whose progress callback is in R (a message handler calling predict()).
  SEXP bad = unusable_context(context_of(R_ExternalPtrProtected(reg_xp)));
  if (bad != R_NilValue) return bad;
  const auto* reg = static_cast<const dirmn_reg*>(R_ExternalPtrAddr(reg_xp));
  int64_t rows = 0, np = 0;
  bad = check_design(x, &rows, &np);
  if (bad != R_NilValue) return bad;
  const double* z_data = nullptr;
  int64_t q = 0;
  if (with_precision) {
    bad = check_precision_design(z, rows, &z_data, &q);
    if (bad != R_NilValue) return bad;
  }
  dirmn_reg_info info;
  std::memset(&info, 0, sizeof info);
  info.size = sizeof info;
  dirmn_status status = dirmn_reg_get_info(reg, &info);
  if (status != DIRMN_SUCCESS) return library_failure(nullptr, status);
  Rcpp::NumericMatrix alpha(static_cast<R_xlen_t>(rows), static_cast<R_xlen_t>(info.categories));
  if (rows == 0) return alpha;
  status = with_precision ? dirmn_reg_predict_with_precision(reg, REAL(x), rows, np, 1, rows, z_data, q, 1, rows,
                                                             alpha.begin(), 1, rows)
                          : dirmn_reg_predict(reg, REAL(x), rows, np, 1, rows, alpha.begin(), 1, rows);
  if (status != DIRMN_SUCCESS) return library_failure(nullptr, status);
  return alpha;
}

}  // namespace

// dirmn_reg_predict: alpha (rows x V) of the fitted regression `reg_xp` for
// the design `x` (rows x p, a double matrix).
// [[Rcpp::export(rng = false)]]
SEXP cpp_reg_predict(SEXP reg_xp, SEXP x) { return predict_alpha(reg_xp, x, R_NilValue, false); }

// dirmn_reg_predict_with_precision: alpha (rows x V) of the mean/precision
// regression `reg_xp` for the design `x` (rows x p) and the precision's
// design `z` (rows x q, double matrices; NULL for a fit without one).
// [[Rcpp::export(rng = false)]]
SEXP cpp_reg_predict_with_precision(SEXP reg_xp, SEXP x, SEXP z) { return predict_alpha(reg_xp, x, z, true); }

// [[Rcpp::export(rng = false)]]
SEXP cpp_live_regressions() { return Rf_ScalarReal(static_cast<double>(g_live_regressions)); }

// dirmn_reg_test_groups of the prepared table `xp`: `group` (a double
// vector, one 0-based group per column of the table, -1 to leave it out),
// `groups` groups, the full design `x` (rows x p, a double matrix) whose
// first `p_null` columns are the null design. Returns the per-group results
// as a plain list of vectors (R/regression-groups.R makes the data frame):
// `loglik_full`, `loglik_null`, `statistic`, `df`, `p_value`, `p_adjusted`,
// `status` (the library's codes), `converged`, `categories`, and `tested`.
// `model` and `hold_precision` go to the options as they are (the library
// checks them).
// [[Rcpp::export(rng = false)]]
SEXP cpp_reg_test_groups(SEXP xp, SEXP group, double groups, SEXP x, double p_null,
                         SEXP weights, double tolerance, int max_iterations, int model,
                         int hold_precision) {
  PreparedCounts p = prepared_counts(xp);
  if (p.failed != R_NilValue) return p.failed;
  int64_t rows = 0, np = 0;
  SEXP bad = check_design(x, &rows, &np);
  if (bad != R_NilValue) return bad;
  bad = check_weights(weights, p.info.rows);
  if (bad != R_NilValue) return bad;
  // The library reads one entry per column of the table.
  if (TYPEOF(group) != REALSXP || XLENGTH(group) != p.info.cols)
    return failure(DIRMN_ERROR_DIMENSION_MISMATCH,
                   "groups must have one entry per column of the response");
  if (!(groups >= 1 && groups <= 9.0e15))
    return failure(DIRMN_ERROR_INVALID_ARGUMENT, "there must be at least one group");
  std::vector<int64_t> codes(static_cast<size_t>(p.info.cols));
  const double* g = REAL(group);
  for (size_t v = 0; v < codes.size(); ++v) codes[v] = static_cast<int64_t>(g[v]);
  const R_xlen_t G = static_cast<R_xlen_t>(groups);
  Rcpp::NumericVector loglik_full(G), loglik_null(G), statistic(G), df(G), p_value(G),
      p_adjusted(G), categories(G);
  Rcpp::IntegerVector status(G), converged(G);
  std::vector<int64_t> cats(static_cast<size_t>(G));

  dirmn_reg_options options;
  dirmn_reg_options_init(&options);
  options.tolerance = tolerance;
  options.max_iterations = max_iterations;
  options.weights = weights_ptr(weights);
  options.model = static_cast<dirmn_reg_model>(model);
  options.hold_precision = hold_precision;
  dirmn_reg_groups_result result;
  std::memset(&result, 0, sizeof result);
  result.size = sizeof result;
  result.loglik_full = loglik_full.begin();
  result.loglik_null = loglik_null.begin();
  result.statistic = statistic.begin();
  result.df = df.begin();
  result.p_value = p_value.begin();
  result.p_adjusted = p_adjusted.begin();
  static_assert(sizeof(int) == sizeof(int32_t), "R's integers are the library's int32_t");
  result.status = reinterpret_cast<int32_t*>(status.begin());
  result.converged = reinterpret_cast<int32_t*>(converged.begin());
  result.categories = cats.data();
  const dirmn_status st =
      dirmn_reg_test_groups(p.ctx, p.counts, codes.data(), static_cast<int64_t>(G),
                            rows > 0 ? REAL(x) : nullptr, rows, np, 1, rows,
                            static_cast<int64_t>(p_null), &options, &result);
  if (st != DIRMN_SUCCESS) return library_failure(p.ctx, st);
  for (R_xlen_t i = 0; i < G; ++i)
    categories[i] = static_cast<double>(cats[static_cast<size_t>(i)]);
  Rcpp::LogicalVector conv(G);
  for (R_xlen_t i = 0; i < G; ++i) conv[i] = converged[i] != 0;
  return Rcpp::List::create(
      Rcpp::Named("loglik_full") = loglik_full, Rcpp::Named("loglik_null") = loglik_null,
      Rcpp::Named("statistic") = statistic, Rcpp::Named("df") = df,
      Rcpp::Named("p_value") = p_value, Rcpp::Named("p_adjusted") = p_adjusted,
      Rcpp::Named("status") = status, Rcpp::Named("converged") = conv,
      Rcpp::Named("categories") = categories,
      Rcpp::Named("tested") = static_cast<double>(result.tested));
}
