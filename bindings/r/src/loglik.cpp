// loglik.cpp: densities of the rows under one or k shared parameter vectors
// (dirmn_loglik) or one per row (dirmn_loglik_rowwise)
// and the weighted sum with its derivatives (dirmn_loglik_sum).
#include "common.h"

#include <chrono>
#include <cmath>
#include <vector>

using namespace dirmn_r;

namespace dirmn_r {

namespace {

std::string dims_text(int64_t r, int64_t c) { return std::to_string(r) + " x " + std::to_string(c); }

}  // namespace

SEXP check_alpha(SEXP alpha, int64_t rows, int64_t cols, bool rowwise, AlphaLayout* layout) {
  if (TYPEOF(alpha) != REALSXP)
    return failure(DIRMN_ERROR_INVALID_PARAMETER, "alpha must be a double vector or matrix");
  SEXP dim = Rf_getAttrib(alpha, R_DimSymbol);
  const bool matrix = TYPEOF(dim) == INTSXP && XLENGTH(dim) == 2;
  if (rowwise) {
    if (!matrix || INTEGER(dim)[0] != rows || INTEGER(dim)[1] != cols)
      return failure(DIRMN_ERROR_DIMENSION_MISMATCH,
                     "with rowwise = TRUE, alpha must be a " + dims_text(rows, cols) +
                         " matrix (one row of parameters per row of the counts), not " +
                         (matrix ? "a " + dims_text(INTEGER(dim)[0], INTEGER(dim)[1]) + " matrix"
                                 : "a vector"));
    layout->shape = ALPHA_ROWWISE;
    layout->k = 1;
    return R_NilValue;
  }
  if (matrix) {
    if (INTEGER(dim)[1] != cols)
      return failure(DIRMN_ERROR_DIMENSION_MISMATCH,
                     "alpha is a " + dims_text(INTEGER(dim)[0], INTEGER(dim)[1]) +
                         " matrix but the counts have " + std::to_string(cols) +
                         " columns (a matrix alpha holds one parameter vector per row; for one "
                         "per row of the counts use rowwise = TRUE)");
    layout->shape = ALPHA_VECTORS;
    layout->k = INTEGER(dim)[0];
    return R_NilValue;
  }
  if (XLENGTH(alpha) != cols)
    return failure(DIRMN_ERROR_DIMENSION_MISMATCH,
                   "alpha has length " + std::to_string(XLENGTH(alpha)) +
                       " but the counts have " + std::to_string(cols) + " columns");
  layout->shape = ALPHA_SHARED;
  layout->k = 1;
  return R_NilValue;
}

SEXP check_shared_alpha(SEXP alpha, int64_t cols, const char* what) {
  AlphaLayout layout;
  SEXP bad = check_alpha(alpha, 0, cols, false, &layout);
  if (bad != R_NilValue) return bad;
  if (layout.shape != ALPHA_SHARED)
    return failure(DIRMN_ERROR_DIMENSION_MISMATCH,
                   std::string(what) + " must be a vector with one value per column (" +
                       std::to_string(cols) + "), shared by all rows");
  return R_NilValue;
}

Failure alpha_error(dirmn_context* ctx, dirmn_status status, SEXP alpha, int64_t rows,
                    const AlphaLayout& layout) {
  if (status == DIRMN_ERROR_INVALID_PARAMETER) {
    // The library sees R's NA as a NaN; say NA, at the same position.
    const double* a = REAL(alpha);
    const R_xlen_t n = XLENGTH(alpha);
    for (R_xlen_t i = 0; i < n; ++i) {
      if (!ISNA(a[i])) continue;
      Failure f;
      f.status = status;
      f.argument = "params";
      // R matrices are column-major: element i is (i % nrow, i / nrow).
      if (layout.shape == ALPHA_ROWWISE) {
        f.row = i % rows;
        f.index = i / rows;
      } else if (layout.shape == ALPHA_VECTORS) {
        f.vector = i % layout.k;
        f.index = i / layout.k;
      } else {
        f.vector = 0;
        f.index = i;
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

// Writes the rows' log-likelihoods under alpha to out: `rows` values, or a
// rows x k column-major matrix for k vectors.
dirmn_status run_loglik(dirmn_context* ctx, const dirmn_counts* counts, int64_t rows,
                        int64_t cols, SEXP alpha, const AlphaLayout& layout, bool full,
                        double* out) {
  // The library's default is the log pmf; DIRMN_KERNEL leaves out the
  // multinomial coefficients.
  const uint32_t flags = full ? 0u : DIRMN_KERNEL;
  // Column-major: (b, v) of a rows x V alpha sits at b + v * rows, (j, v)
  // of a k x V alpha at j + v * k, (b, j) of the output at b + j * rows.
  switch (layout.shape) {
    case ALPHA_ROWWISE:
      return dirmn_loglik_rowwise(ctx, counts, REAL(alpha), 1, rows, DIRMN_PARAM_ALPHA, flags,
                                  out, 1);
    case ALPHA_VECTORS:
      return dirmn_loglik(ctx, counts, layout.k, REAL(alpha), 1, layout.k, DIRMN_PARAM_ALPHA,
                          flags, out, 1, rows);
    case ALPHA_SHARED: break;
  }
  return dirmn_loglik(ctx, counts, 1, REAL(alpha), cols, 1, DIRMN_PARAM_ALPHA, flags, out, 1, 1);
}

// The result of ddirmn: a vector of `rows` values, or a rows x k matrix.
SEXP alloc_result(int64_t rows, const AlphaLayout& layout) {
  if (layout.shape == ALPHA_VECTORS)
    return Rf_allocMatrix(REALSXP, static_cast<int>(rows), static_cast<int>(layout.k));
  return Rf_allocVector(REALSXP, static_cast<R_xlen_t>(rows));
}

void exponentiate(double* out, R_xlen_t n) {
  for (R_xlen_t i = 0; i < n; ++i) out[i] = std::exp(out[i]);
}

}  // namespace

// ---------------------------------------------------------------------------
// Entry points

// The density (log density; with or without the multinomial coefficient)
// of every row of a prepared table, under alpha as check_alpha reads it: a
// vector of rows values, or a rows x k matrix for k vectors.
// [[Rcpp::export(rng = false)]]
SEXP cpp_ddirmn_counts(SEXP xp, SEXP alpha, bool rowwise, bool full, bool log) {
  PreparedCounts p = prepared_counts(xp);
  if (p.failed != R_NilValue) return p.failed;
  AlphaLayout layout;
  SEXP bad = check_alpha(alpha, p.info.rows, p.info.cols, rowwise, &layout);
  if (bad != R_NilValue) return bad;

  SEXP out = PROTECT(alloc_result(p.info.rows, layout));
  // The library takes at least one vector; none has an empty answer.
  if (layout.k == 0) {
    UNPROTECT(1);
    return out;
  }
  const dirmn_status status =
      run_loglik(p.ctx, p.counts, p.info.rows, p.info.cols, alpha, layout, full, REAL(out));
  if (status != DIRMN_SUCCESS) {
    SEXP res = failure(alpha_error(p.ctx, status, alpha, p.info.rows, layout));
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
SEXP cpp_ddirmn_table(SEXP ctx_xp, SEXP x, int kind, SEXP alpha, bool rowwise, bool full,
                      bool log) {
  dirmn_context* ctx = context_of(ctx_xp);
  SEXP bad = unusable_context(ctx);
  if (bad != R_NilValue) return bad;
  Table t;
  std::string message;
  if (!describe_table(x, kind, &t, &message)) return failure(DIRMN_ERROR_INVALID_ARGUMENT, message);
  AlphaLayout layout;
  bad = check_alpha(alpha, t.rows, t.cols, rowwise, &layout);
  if (bad != R_NilValue) return bad;

  // The library has no empty tables, and takes at least one vector; an
  // empty set of rows or of vectors has an empty answer.
  if ((t.rows == 0 && t.cols > 0) || layout.k == 0) return alloc_result(t.rows, layout);

  // Allocated before the temporary table exists, so that an allocation
  // error cannot skip the table's destructor; a failure is taken in C++
  // and made an R object once the table is gone.
  SEXP out = PROTECT(alloc_result(t.rows > 0 ? t.rows : 0, layout));
  Failure failed;
  {
    CountsGuard counts;
    dirmn_status status = create_counts(ctx, t, &counts.counts);
    if (status != DIRMN_SUCCESS) {
      failed = counts_error(ctx, status, t);
    } else {
      status = run_loglik(ctx, counts.counts, t.rows, t.cols, alpha, layout, full, REAL(out));
      if (status != DIRMN_SUCCESS) failed = alpha_error(ctx, status, alpha, t.rows, layout);
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

// dirmn_loglik_sum: the weighted sum of the rows' log-likelihoods under one
// shared parameter vector, with its gradient and diagonal-plus-rank-one
// Hessian, with respect to alpha or (log_param) log alpha.
// [[Rcpp::export(rng = false)]]
SEXP cpp_loglik_sum(SEXP xp, SEXP params, SEXP weights, bool log_param, bool full) {
  PreparedCounts p = prepared_counts(xp);
  if (p.failed != R_NilValue) return p.failed;
  SEXP bad = check_shared_alpha(params, p.info.cols, "alpha");
  if (bad != R_NilValue) return bad;
  bad = check_weights(weights, p.info.rows);
  if (bad != R_NilValue) return bad;
  Rcpp::NumericVector gradient(static_cast<R_xlen_t>(p.info.cols));
  Rcpp::NumericVector hessian_diag(static_cast<R_xlen_t>(p.info.cols));
  double value = 0.0, hessian_scalar = 0.0;
  const dirmn_status status = dirmn_loglik_sum(
      p.ctx, p.counts, REAL(params), 1, log_param ? DIRMN_PARAM_LOG_ALPHA : DIRMN_PARAM_ALPHA,
      weights_ptr(weights), full ? 0u : DIRMN_KERNEL, &value, gradient.begin(),
      hessian_diag.begin(), &hessian_scalar);
  if (status != DIRMN_SUCCESS)
    return failure(alpha_error(p.ctx, status, params, p.info.rows, AlphaLayout()));
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
  SEXP bad = check_shared_alpha(alpha, p.info.cols, "alpha");
  if (bad != R_NilValue) return bad;
  if (reps < 1) return failure(DIRMN_ERROR_INVALID_ARGUMENT, "reps must be positive");
  std::vector<double> out(static_cast<size_t>(p.info.rows));
  dirmn_status status = DIRMN_SUCCESS;
  const auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < reps && status == DIRMN_SUCCESS; ++r)
    status = run_loglik(p.ctx, p.counts, p.info.rows, p.info.cols, alpha, AlphaLayout(), full,
                        out.data());
  const auto stop = std::chrono::steady_clock::now();
  if (status != DIRMN_SUCCESS) return library_failure(p.ctx, status);
  return Rf_ScalarReal(std::chrono::duration<double>(stop - start).count());
}
