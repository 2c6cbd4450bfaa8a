// loglik.cpp: densities of the rows (dirmn_loglik, dirmn_loglik_rowwise)
// and the weighted sum with its derivatives (dirmn_loglik_sum).
#include "common.h"

#include <chrono>
#include <cmath>
#include <vector>

using namespace dirmn_r;

namespace dirmn_r {

SEXP check_alpha(SEXP alpha, int64_t rows, int64_t cols, bool* per_row) {
  if (TYPEOF(alpha) != REALSXP)
    return failure(DIRMN_ERROR_INVALID_PARAMETER, "alpha must be a double vector or matrix");
  SEXP dim = Rf_getAttrib(alpha, R_DimSymbol);
  if (TYPEOF(dim) == INTSXP && XLENGTH(dim) == 2) {
    const int64_t ar = INTEGER(dim)[0], ac = INTEGER(dim)[1];
    if (ar != rows || ac != cols)
      return failure(DIRMN_ERROR_DIMENSION_MISMATCH,
                     "alpha is a " + std::to_string(ar) + " x " + std::to_string(ac) +
                         " matrix but the counts are " + std::to_string(rows) + " x " +
                         std::to_string(cols) +
                         " (a matrix alpha needs one row per row of counts and one column per "
                         "column)");
    *per_row = true;
    return R_NilValue;
  }
  if (XLENGTH(alpha) != cols)
    return failure(DIRMN_ERROR_DIMENSION_MISMATCH,
                   "alpha has length " + std::to_string(XLENGTH(alpha)) +
                       " but the counts have " + std::to_string(cols) + " columns");
  *per_row = false;
  return R_NilValue;
}

Failure alpha_error(dirmn_context* ctx, dirmn_status status, SEXP alpha, int64_t rows,
                    bool per_row) {
  if (status == DIRMN_ERROR_INVALID_PARAMETER) {
    // The library sees R's NA as a NaN; say NA, at the same position.
    const double* a = REAL(alpha);
    const R_xlen_t n = XLENGTH(alpha);
    for (R_xlen_t k = 0; k < n; ++k) {
      if (!ISNA(a[k])) continue;
      Failure f;
      f.status = status;
      f.argument = "params";
      if (per_row) {
        f.row = k % rows;
        f.index = k / rows;
      } else {
        f.vector = 0;
        f.index = k;
      }
      f.message = f.detail = "alpha is NA";
      return f;
    }
  }
  return library_error(ctx, status);
}

SEXP check_weights(SEXP weights, int64_t rows) {
  if (weights == R_NilValue) return R_NilValue;
  if (TYPEOF(weights) != REALSXP)
    return failure(DIRMN_ERROR_INVALID_PARAMETER, "weights must be a double vector");
  if (XLENGTH(weights) != rows)
    return failure(DIRMN_ERROR_DIMENSION_MISMATCH,
                   "weights has length " + std::to_string(XLENGTH(weights)) +
                       " but the counts have " + std::to_string(rows) + " rows");
  return R_NilValue;
}

}  // namespace dirmn_r

namespace {

dirmn_status run_loglik(dirmn_context* ctx, const dirmn_counts* counts, int64_t rows,
                        int64_t cols, SEXP alpha, bool per_row, bool full, double* out) {
  const uint32_t flags = full ? DIRMN_FULL : 0u;
  if (per_row)
    return dirmn_loglik_rowwise(ctx, counts, REAL(alpha), 1, rows, DIRMN_PARAM_ALPHA, flags, out,
                                1);
  return dirmn_loglik(ctx, counts, 1, REAL(alpha), cols, 1, DIRMN_PARAM_ALPHA, flags, out, 1, 1);
}

void exponentiate(double* out, R_xlen_t n) {
  for (R_xlen_t i = 0; i < n; ++i) out[i] = std::exp(out[i]);
}

}  // namespace

// ---------------------------------------------------------------------------
// Entry points

// The density (log density; with or without the multinomial coefficient)
// of every row of a prepared table.
// [[Rcpp::export(rng = false)]]
SEXP cpp_ddirmn_counts(SEXP xp, SEXP alpha, bool full, bool log) {
  PreparedCounts p = prepared_counts(xp);
  if (p.failed != R_NilValue) return p.failed;
  bool per_row = false;
  SEXP bad = check_alpha(alpha, p.info.rows, p.info.cols, &per_row);
  if (bad != R_NilValue) return bad;

  SEXP out = PROTECT(Rf_allocVector(REALSXP, p.info.rows));
  const dirmn_status status =
      run_loglik(p.ctx, p.counts, p.info.rows, p.info.cols, alpha, per_row, full, REAL(out));
  if (status != DIRMN_SUCCESS) {
    SEXP res = failure(alpha_error(p.ctx, status, alpha, p.info.rows, per_row));
    UNPROTECT(1);
    return res;
  }
  if (!log) exponentiate(REAL(out), XLENGTH(out));
  UNPROTECT(1);
  return out;
}

// The same for a table that is not prepared: validated and uploaded for
// this call only.
// [[Rcpp::export(rng = false)]]
SEXP cpp_ddirmn_table(SEXP ctx_xp, SEXP x, int kind, SEXP alpha, bool full, bool log) {
  dirmn_context* ctx = context_of(ctx_xp);
  SEXP bad = unusable_context(ctx);
  if (bad != R_NilValue) return bad;
  Table t;
  std::string message;
  if (!describe_table(x, kind, &t, &message)) return failure(DIRMN_ERROR_INVALID_ARGUMENT, message);
  bool per_row = false;
  bad = check_alpha(alpha, t.rows, t.cols, &per_row);
  if (bad != R_NilValue) return bad;

  // The library has no empty tables; an empty set of rows has an empty answer.
  if (t.rows == 0 && t.cols > 0) return Rf_allocVector(REALSXP, 0);

  // Allocated before the temporary table exists, so that an allocation
  // error cannot skip the table's destructor; a failure is taken in C++
  // and made an R object once the table is gone.
  SEXP out = PROTECT(Rf_allocVector(REALSXP, t.rows > 0 ? t.rows : 0));
  Failure failed;
  {
    CountsGuard counts;
    dirmn_status status = create_counts(ctx, t, &counts.counts);
    if (status != DIRMN_SUCCESS) {
      failed = counts_error(ctx, status, t);
    } else {
      status = run_loglik(ctx, counts.counts, t.rows, t.cols, alpha, per_row, full, REAL(out));
      if (status != DIRMN_SUCCESS) failed = alpha_error(ctx, status, alpha, t.rows, per_row);
    }
  }
  if (failed.status != DIRMN_SUCCESS) {
    SEXP res = failure(failed);
    UNPROTECT(1);
    return res;
  }
  if (!log) exponentiate(REAL(out), XLENGTH(out));
  UNPROTECT(1);
  return out;
}

// Log-likelihood (full log pmf) of every row under each row of a k x V
// alpha matrix: a rows x k matrix.
// [[Rcpp::export(rng = false)]]
SEXP cpp_loglik_k(SEXP xp, SEXP alpha) {
  PreparedCounts p = prepared_counts(xp);
  if (p.failed != R_NilValue) return p.failed;
  SEXP dim = Rf_getAttrib(alpha, R_DimSymbol);
  if (TYPEOF(alpha) != REALSXP || TYPEOF(dim) != INTSXP || XLENGTH(dim) != 2 ||
      INTEGER(dim)[1] != p.info.cols || INTEGER(dim)[0] < 1)
    return failure(DIRMN_ERROR_DIMENSION_MISMATCH,
                   "alpha must be a double matrix with one column per column of the counts (" +
                       std::to_string(p.info.cols) + ")");
  const int k = INTEGER(dim)[0];
  const R_xlen_t rows = static_cast<R_xlen_t>(p.info.rows);
  Rcpp::NumericMatrix out(rows, k);
  const dirmn_status status = dirmn_loglik(p.ctx, p.counts, k, REAL(alpha), 1, k,
                                           DIRMN_PARAM_ALPHA, DIRMN_FULL, out.begin(), 1, rows);
  if (status != DIRMN_SUCCESS) return library_failure(p.ctx, status);
  return out;
}

// dirmn_loglik_sum: the weighted sum of the rows' log-likelihoods under one
// shared parameter vector, with its gradient and diagonal-plus-rank-one
// Hessian, with respect to alpha or (log_param) log alpha.
// [[Rcpp::export(rng = false)]]
SEXP cpp_loglik_sum(SEXP xp, SEXP params, SEXP weights, bool log_param, bool full) {
  PreparedCounts p = prepared_counts(xp);
  if (p.failed != R_NilValue) return p.failed;
  bool per_row = false;
  SEXP bad = check_alpha(params, p.info.rows, p.info.cols, &per_row);
  if (bad != R_NilValue) return bad;
  if (per_row)
    return failure(DIRMN_ERROR_DIMENSION_MISMATCH,
                   "alpha must be a vector with one value per column (one alpha shared by all rows)");
  bad = check_weights(weights, p.info.rows);
  if (bad != R_NilValue) return bad;
  Rcpp::NumericVector gradient(static_cast<R_xlen_t>(p.info.cols));
  Rcpp::NumericVector hessian_diag(static_cast<R_xlen_t>(p.info.cols));
  double value = 0.0, hessian_scalar = 0.0;
  const dirmn_status status = dirmn_loglik_sum(
      p.ctx, p.counts, REAL(params), 1, log_param ? DIRMN_PARAM_LOG_ALPHA : DIRMN_PARAM_ALPHA,
      weights_ptr(weights), full ? DIRMN_FULL : 0u, &value, gradient.begin(),
      hessian_diag.begin(), &hessian_scalar);
  if (status != DIRMN_SUCCESS) return failure(alpha_error(p.ctx, status, params, p.info.rows, false));
  return Rcpp::List::create(Rcpp::Named("value") = value, Rcpp::Named("gradient") = gradient,
                            Rcpp::Named("hessian_diag") = hessian_diag,
                            Rcpp::Named("hessian_scalar") = hessian_scalar);
}

// Benchmark support: seconds spent in `reps` back-to-back dirmn_loglik calls
// on a prepared table with one shared alpha, timed from C++, so that the R
// overhead of ddirmn() can be measured by difference.
// [[Rcpp::export(rng = false)]]
SEXP cpp_bench_loglik(SEXP xp, SEXP alpha, int reps, bool full) {
  PreparedCounts p = prepared_counts(xp);
  if (p.failed != R_NilValue) return p.failed;
  bool per_row = false;
  SEXP bad = check_alpha(alpha, p.info.rows, p.info.cols, &per_row);
  if (bad != R_NilValue) return bad;
  if (reps < 1) return failure(DIRMN_ERROR_INVALID_ARGUMENT, "reps must be positive");
  std::vector<double> out(static_cast<size_t>(p.info.rows));
  dirmn_status status = DIRMN_SUCCESS;
  const auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < reps && status == DIRMN_SUCCESS; ++r)
    status = run_loglik(p.ctx, p.counts, p.info.rows, p.info.cols, alpha, per_row, full,
                        out.data());
  const auto stop = std::chrono::steady_clock::now();
  if (status != DIRMN_SUCCESS) return library_failure(p.ctx, status);
  return Rf_ScalarReal(std::chrono::duration<double>(stop - start).count());
}
