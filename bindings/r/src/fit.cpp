// fit.cpp: the maximum-likelihood fit of alpha (dirmn_fit).
#include "common.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace dirmn_r;

// dirmn_fit, as a plain list (R/fit.R makes the dirmn_fit object).
// `progress` is NULL or an R function(iteration, loglik, gradient_norm)
// called after each iteration (1, 2, ...), with the log-likelihood (the log
// pmf, the library's default); TRUE from it cancels. The Hessian with respect to alpha at
// the fit comes with the result (`hessian_diag`, `hessian_scalar`; NULL
// where the library gives none: in the multinomial limit, or when a single
// column has counts).
// [[Rcpp::export(rng = false)]]
SEXP cpp_fit(SEXP xp, SEXP weights, SEXP start, double tolerance, int max_iterations,
             SEXP progress) {
  PreparedCounts p = prepared_counts(xp);
  if (p.failed != R_NilValue) return p.failed;
  SEXP bad = check_weights(weights, p.info.rows);
  if (bad != R_NilValue) return bad;
  if (start != R_NilValue) {
    bad = check_shared_alpha(start, p.info.cols, "start");
    if (bad != R_NilValue) return bad;
  }
  const R_xlen_t V = static_cast<R_xlen_t>(p.info.cols);
  Rcpp::NumericVector alpha(V), se_alpha(V), se_log_alpha(V), hessian_diag(V);
  Rcpp::Shield<SEXP> token(R_MakeUnwindCont());
  ProgressBridge bridge;
  bridge.fn = progress;
  bridge.token = token;

  dirmn_fit_options options;
  dirmn_fit_options_init(&options);
  options.tolerance = tolerance;
  options.max_iterations = max_iterations;
  options.weights = weights_ptr(weights);
  options.start = start == R_NilValue ? nullptr : REAL(start);
  if (progress != R_NilValue) {
    options.progress = progress_callback;
    options.progress_data = &bridge;
    // (the default: the callback receives the log pmf)
  }
  options.hessian_diag = hessian_diag.begin();
  dirmn_fit_result result;
  std::memset(&result, 0, sizeof result);
  result.size = sizeof result;
  result.alpha = alpha.begin();
  result.std_error_alpha = se_alpha.begin();
  result.std_error_log_alpha = se_log_alpha.begin();
  // Stays NaN where the library writes no Hessian.
  result.hessian_scalar = std::numeric_limits<double>::quiet_NaN();
  dirmn_status status;
  {
    const bool reports = progress != R_NilValue;
    BusyScope busy(reports ? p.ctx : g_busy_context, reports ? p.counts : g_busy_counts);
    status = dirmn_fit(p.ctx, p.counts, &options, &result);
  }
  if (bridge.jumped) resume_jump(token);
  if (status != DIRMN_SUCCESS) return library_failure(p.ctx, status);
  const bool has_hessian = !std::isnan(result.hessian_scalar);
  Rcpp::RObject h_diag, h_scalar;  // NULL unless written
  if (has_hessian) {
    h_diag = hessian_diag;
    h_scalar = Rcpp::NumericVector::create(result.hessian_scalar);
  }
  Rcpp::List out = Rcpp::List::create(
      Rcpp::Named("alpha") = alpha, Rcpp::Named("std_error_alpha") = se_alpha,
      Rcpp::Named("std_error_log_alpha") = se_log_alpha, Rcpp::Named("loglik") = result.loglik,
      Rcpp::Named("loglik_kernel") = result.loglik_kernel,
      Rcpp::Named("gradient_norm") = result.gradient_norm,
      Rcpp::Named("precision") = result.precision, Rcpp::Named("iterations") = result.iterations,
      Rcpp::Named("converged") = result.converged != 0,
      Rcpp::Named("multinomial_limit") = result.multinomial_limit != 0,
      Rcpp::Named("zero_columns") = static_cast<double>(result.zero_columns),
      Rcpp::Named("parameters") = static_cast<double>(result.parameters),
      Rcpp::Named("observations") = result.observations,
      Rcpp::Named("hessian_diag") = h_diag, Rcpp::Named("hessian_scalar") = h_scalar);
  return out;
}
