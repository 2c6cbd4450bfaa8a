// overdispersion.cpp: the test of the Dirichlet-multinomial against the
// multinomial (dirmn_overdispersion_test).
#include "common.h"

#include <cstring>

using namespace dirmn_r;

// dirmn_overdispersion_test as a plain list of its result's fields
// (R/overdispersion.R makes the htest).
// [[Rcpp::export(rng = false)]]
SEXP cpp_overdispersion_test(SEXP xp, SEXP weights, double tolerance, int max_iterations) {
  PreparedCounts p = prepared_counts(xp);
  if (p.failed != R_NilValue) return p.failed;
  SEXP bad = check_weights(weights, p.info.rows);
  if (bad != R_NilValue) return bad;
  dirmn_fit_options options;
  dirmn_fit_options_init(&options);
  options.tolerance = tolerance;
  options.max_iterations = max_iterations;
  options.weights = weights_ptr(weights);
  dirmn_overdispersion_result result;
  std::memset(&result, 0, sizeof result);
  result.size = sizeof result;
  const dirmn_status status = dirmn_overdispersion_test(p.ctx, p.counts, &options, &result);
  if (status != DIRMN_SUCCESS) return library_failure(p.ctx, status);
  return Rcpp::List::create(
      Rcpp::Named("lrt_statistic") = result.lrt_statistic,
      Rcpp::Named("lrt_p_value") = result.lrt_p_value,
      Rcpp::Named("score_statistic") = result.score_statistic,
      Rcpp::Named("score_df") = result.score_df,
      Rcpp::Named("score_scale") = result.score_scale,
      Rcpp::Named("score_p_value") = result.score_p_value,
      Rcpp::Named("loglik_dm") = result.loglik_dm,
      Rcpp::Named("loglik_multinomial") = result.loglik_multinomial,
      Rcpp::Named("precision") = result.precision,
      Rcpp::Named("categories") = static_cast<double>(result.categories),
      Rcpp::Named("observations") = result.observations,
      Rcpp::Named("converged") = result.converged != 0);
}
