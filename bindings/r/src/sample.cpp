// sample.cpp: draws from the Dirichlet-multinomial (dirmn_sample,
// dirmn_sample_rowwise), its moments (dirmn_moments), the test of one DM
// against one per group of rows (dirmn_test_groups) and its power by
// simulation (dirmn_power_groups), and the test of the rows against a given
// composition (dirmn_test_proportions) and its power by simulation
// (dirmn_power_proportions).
#include "common.h"

#include <cstring>
#include <new>
#include <vector>

using namespace dirmn_r;

namespace {

// Sizes as R code has checked them (whole numbers in 0 .. 2^31 - 1, as
// doubles or integers) for the library's int64 array.
bool read_sizes(SEXP sizes, std::vector<int64_t>* out) {
  const R_xlen_t n = XLENGTH(sizes);
  out->resize(static_cast<size_t>(n));
  if (TYPEOF(sizes) == INTSXP) {
    for (R_xlen_t i = 0; i < n; ++i) (*out)[i] = INTEGER(sizes)[i];
    return true;
  }
  if (TYPEOF(sizes) != REALSXP) return false;
  for (R_xlen_t i = 0; i < n; ++i) (*out)[i] = static_cast<int64_t>(REAL(sizes)[i]);
  return true;
}

}  // namespace

// Draws a rows x cols table. `shape` is how alpha is laid out (AlphaShape):
// one vector (ALPHA_SHARED), a k x cols matrix of k mixture components
// (ALPHA_VECTORS; `component` 0-based per row or NULL, `mixture_weights` k
// values or NULL), or one row of alpha per row of the table (ALPHA_ROWWISE,
// a rows x cols matrix). `sizes`: one size for every row, or one per row.
// `first_row`: the number of the seed's rows before this block (a whole
// number in 0 .. 2^53, as R code has checked it): row b is drawn as the
// seed's row first_row + b (its stream, and its component where drawn).
// Returns a list of the new table's external pointer (`counts`) and, for
// k > 1, each row's component (`component`, 1-based), or a failure.
// [[Rcpp::export(rng = false)]]
SEXP cpp_sample(SEXP ctx_xp, SEXP alpha, int shape, bool log_param, double rows, SEXP sizes,
                SEXP component, SEXP mixture_weights, SEXP seed, double first_row) {
  dirmn_context* ctx = context_of(ctx_xp);
  SEXP bad = unusable_context(ctx);
  if (bad != R_NilValue) return bad;
  if (TYPEOF(alpha) != REALSXP)
    return failure(DIRMN_ERROR_INVALID_PARAMETER, "alpha must be a double vector or matrix");
  const int64_t n = static_cast<int64_t>(rows);
  AlphaLayout layout;
  int64_t cols = 0;
  SEXP dim = Rf_getAttrib(alpha, R_DimSymbol);
  const bool matrix = TYPEOF(dim) == INTSXP && XLENGTH(dim) == 2;
  if (shape == ALPHA_SHARED) {
    cols = XLENGTH(alpha);
  } else if (!matrix) {
    return failure(DIRMN_ERROR_DIMENSION_MISMATCH, "alpha must be a matrix");
  } else {
    cols = INTEGER(dim)[1];
    layout.shape = static_cast<AlphaShape>(shape);
    layout.k = shape == ALPHA_VECTORS ? INTEGER(dim)[0] : 1;
    if (shape == ALPHA_ROWWISE && INTEGER(dim)[0] != n)
      return failure(DIRMN_ERROR_DIMENSION_MISMATCH,
                     "alpha must have one row per row drawn");
  }
  std::vector<int64_t> size_values;
  if (!read_sizes(sizes, &size_values) || (size_values.size() != 1 &&
                                           static_cast<int64_t>(size_values.size()) != n))
    return failure(DIRMN_ERROR_DIMENSION_MISMATCH, "size must hold one value or one per row");
  std::vector<int64_t> components;
  if (component != R_NilValue) {
    if (TYPEOF(component) != INTSXP || XLENGTH(component) != n)
      return failure(DIRMN_ERROR_DIMENSION_MISMATCH, "component must hold one value per row");
    components.assign(INTEGER(component), INTEGER(component) + n);
  }
  if (mixture_weights != R_NilValue &&
      (TYPEOF(mixture_weights) != REALSXP || XLENGTH(mixture_weights) != layout.k))
    return failure(DIRMN_ERROR_DIMENSION_MISMATCH,
                   "mixture_weights must hold one value per row of alpha");
  std::vector<int64_t> component_out;

  dirmn_sample_options options;
  dirmn_sample_options_init(&options);
  options.seed = seed_of(seed);
  options.first_row = static_cast<int64_t>(first_row);
  if (layout.shape == ALPHA_VECTORS && layout.k > 1) {
    component_out.resize(static_cast<size_t>(n));
    options.component = components.empty() ? nullptr : components.data();
    options.mixture_weights =
        mixture_weights == R_NilValue ? nullptr : REAL(mixture_weights);
    options.component_out = component_out.data();
  }
  const dirmn_param param = log_param ? DIRMN_PARAM_LOG_ALPHA : DIRMN_PARAM_ALPHA;
  const int64_t sizes_stride = size_values.size() == 1 ? 0 : 1;

  SEXP xp = PROTECT(new_counts_xptr(ctx_xp));
  dirmn_counts* counts = nullptr;
  dirmn_status status;
  // R matrices are column-major: (j, v) of a k x cols alpha at j + v * k,
  // (b, v) of a rows x cols one at b + v * rows.
  switch (layout.shape) {
    case ALPHA_ROWWISE:
      status = dirmn_sample_rowwise(ctx, &counts, n, cols, REAL(alpha), 1, n, param,
                                    size_values.data(), sizes_stride, &options);
      break;
    case ALPHA_VECTORS:
      status = dirmn_sample(ctx, &counts, n, cols, layout.k, REAL(alpha), 1, layout.k, param,
                            size_values.data(), sizes_stride, &options);
      break;
    default:
      status = dirmn_sample(ctx, &counts, n, cols, 1, REAL(alpha), cols, 1, param,
                            size_values.data(), sizes_stride, &options);
  }
  if (status != DIRMN_SUCCESS) {
    SEXP res = failure(alpha_error(ctx, status, alpha, n, layout));
    UNPROTECT(1);
    return res;
  }
  adopt_counts(xp, counts);
  SEXP drawn = R_NilValue;
  if (!component_out.empty()) {
    drawn = Rf_allocVector(INTSXP, static_cast<R_xlen_t>(n));
    for (int64_t b = 0; b < n; ++b) INTEGER(drawn)[b] = static_cast<int>(component_out[b] + 1);
  }
  PROTECT(drawn);
  SEXP out = PROTECT(Rf_allocVector(VECSXP, 2));
  SET_VECTOR_ELT(out, 0, xp);
  SET_VECTOR_ELT(out, 1, drawn);
  SEXP names = PROTECT(Rf_allocVector(STRSXP, 2));
  SET_STRING_ELT(names, 0, Rf_mkChar("counts"));
  SET_STRING_ELT(names, 1, Rf_mkChar("component"));
  Rf_setAttrib(out, R_NamesSymbol, names);
  UNPROTECT(4);
  return out;
}

// The mean, variance and covariance (a cols x cols matrix, symmetric, so
// the library's row-major block reads the same column-major) of DM(alpha,
// size), alpha one vector.
// [[Rcpp::export(rng = false)]]
SEXP cpp_moments(SEXP ctx_xp, SEXP alpha, bool log_param, double size) {
  dirmn_context* ctx = context_of(ctx_xp);
  SEXP bad = unusable_context(ctx);
  if (bad != R_NilValue) return bad;
  if (TYPEOF(alpha) != REALSXP)
    return failure(DIRMN_ERROR_INVALID_PARAMETER, "alpha must be a double vector");
  const R_xlen_t cols = XLENGTH(alpha);
  if (static_cast<double>(cols) * static_cast<double>(cols) > static_cast<double>(R_XLEN_T_MAX))
    return failure(DIRMN_ERROR_OVERFLOW, "alpha is too long for a covariance matrix in R");
  Rcpp::NumericVector mean(cols), variance(cols);
  Rcpp::NumericMatrix covariance(static_cast<int>(cols), static_cast<int>(cols));
  const dirmn_status status =
      dirmn_moments(ctx, cols, REAL(alpha), 1, log_param ? DIRMN_PARAM_LOG_ALPHA : DIRMN_PARAM_ALPHA,
                    size, mean.begin(), variance.begin(), covariance.begin(), cols);
  if (status != DIRMN_SUCCESS) {
    AlphaLayout layout;
    return failure(alpha_error(ctx, status, alpha, 1, layout));
  }
  return Rcpp::List::create(Rcpp::Named("mean") = mean, Rcpp::Named("variance") = variance,
                            Rcpp::Named("covariance") = covariance);
}

// dirmn_test_groups as a plain list of its result's fields (R/test-groups.R
// makes the htest). `group`: one integer per row, 0 .. groups - 1 or -1
// (left out); `statistic`: a dirmn_group_statistic (R code has checked it).
// [[Rcpp::export(rng = false)]]
SEXP cpp_test_groups(SEXP xp, SEXP group, int groups, double bootstrap, SEXP seed,
                     double tolerance, int max_iterations, int statistic) {
  PreparedCounts p = prepared_counts(xp);
  if (p.failed != R_NilValue) return p.failed;
  if (TYPEOF(group) != INTSXP || XLENGTH(group) != p.info.rows)
    return failure(DIRMN_ERROR_DIMENSION_MISMATCH, "groups must hold one value per row");
  std::vector<int64_t> group_of(INTEGER(group), INTEGER(group) + p.info.rows);
  dirmn_group_test_options options;
  dirmn_group_test_options_init(&options);
  options.bootstrap = static_cast<int64_t>(bootstrap);
  options.seed = seed_of(seed);
  options.tolerance = tolerance;
  options.max_iterations = max_iterations;
  options.statistic = static_cast<dirmn_group_statistic>(statistic);
  dirmn_group_test_result result;
  std::memset(&result, 0, sizeof result);
  result.size = sizeof result;
  const dirmn_status status =
      dirmn_test_groups(p.ctx, p.counts, group_of.data(), groups, &options, &result);
  if (status != DIRMN_SUCCESS) return library_failure(p.ctx, status);
  return Rcpp::List::create(
      Rcpp::Named("statistic") = result.statistic, Rcpp::Named("df") = result.df,
      Rcpp::Named("p_value") = result.p_value,
      Rcpp::Named("p_value_bootstrap") = result.p_value_bootstrap,
      Rcpp::Named("bootstrap") = static_cast<double>(result.bootstrap),
      Rcpp::Named("loglik_null") = result.loglik_null,
      Rcpp::Named("loglik_groups") = result.loglik_groups,
      Rcpp::Named("groups") = static_cast<double>(result.groups),
      Rcpp::Named("categories") = static_cast<double>(result.categories),
      Rcpp::Named("converged") = result.converged != 0);
}

// dirmn_test_proportions as a plain list of its result's fields
// (R/test-groups.R makes the htest). `proportions`: a double vector of
// one entry per column of the table (R code has checked its type, length
// and NAs; the library checks the values).
// [[Rcpp::export(rng = false)]]
SEXP cpp_test_proportions(SEXP xp, SEXP proportions) {
  PreparedCounts p = prepared_counts(xp);
  if (p.failed != R_NilValue) return p.failed;
  if (TYPEOF(proportions) != REALSXP || XLENGTH(proportions) != p.info.cols)
    return failure(DIRMN_ERROR_DIMENSION_MISMATCH, "p must hold one value per column");
  dirmn_proportion_test_result result;
  std::memset(&result, 0, sizeof result);
  result.size = sizeof result;
  const dirmn_status status =
      dirmn_test_proportions(p.ctx, p.counts, REAL(proportions), 1, &result);
  if (status != DIRMN_SUCCESS) return library_failure(p.ctx, status);
  return Rcpp::List::create(
      Rcpp::Named("statistic") = result.statistic, Rcpp::Named("df") = result.df,
      Rcpp::Named("p_value") = result.p_value, Rcpp::Named("theta") = result.theta,
      Rcpp::Named("rows") = static_cast<double>(result.rows),
      Rcpp::Named("categories") = static_cast<double>(result.categories));
}

// dirmn_power_groups as a plain list of its result's fields (R/power.R makes
// the power.htest). `alpha`: a k x cols double matrix, group g's alpha in
// row g; `rows_per_group`: k whole numbers; `sizes`: every row's size, the
// groups' rows in order (R code has checked them); `statistic`: a
// dirmn_group_statistic.
// [[Rcpp::export(rng = false)]]
SEXP cpp_power_groups(SEXP ctx_xp, SEXP alpha, bool log_param, SEXP rows_per_group, SEXP sizes,
                      double tables, double level, SEXP seed, double tolerance,
                      int max_iterations, int statistic) {
  dirmn_context* ctx = context_of(ctx_xp);
  SEXP bad = unusable_context(ctx);
  if (bad != R_NilValue) return bad;
  SEXP dim = Rf_getAttrib(alpha, R_DimSymbol);
  if (TYPEOF(alpha) != REALSXP || TYPEOF(dim) != INTSXP || XLENGTH(dim) != 2)
    return failure(DIRMN_ERROR_INVALID_PARAMETER, "alpha must be a double matrix");
  AlphaLayout layout;
  layout.shape = ALPHA_VECTORS;
  layout.k = INTEGER(dim)[0];
  const int64_t cols = INTEGER(dim)[1];
  std::vector<int64_t> rows, size_values;
  if (!read_sizes(rows_per_group, &rows) || static_cast<int64_t>(rows.size()) != layout.k)
    return failure(DIRMN_ERROR_DIMENSION_MISMATCH, "n must hold one value per group");
  if (!read_sizes(sizes, &size_values))
    return failure(DIRMN_ERROR_INVALID_ARGUMENT, "size must be numeric");
  int64_t total = 0;
  for (int64_t r : rows) total += r;
  if (static_cast<int64_t>(size_values.size()) != total)
    return failure(DIRMN_ERROR_DIMENSION_MISMATCH, "size must hold one value per row");
  dirmn_power_options options;
  dirmn_power_options_init(&options);
  options.tables = static_cast<int64_t>(tables);
  options.level = level;
  options.seed = seed_of(seed);
  options.tolerance = tolerance;
  options.max_iterations = max_iterations;
  options.statistic = static_cast<dirmn_group_statistic>(statistic);
  dirmn_power_result result;
  std::memset(&result, 0, sizeof result);
  result.size = sizeof result;
  // R matrices are column-major: (g, v) of the k x cols alpha at g + v * k.
  const dirmn_status status = dirmn_power_groups(
      ctx, layout.k, cols, REAL(alpha), 1, layout.k,
      log_param ? DIRMN_PARAM_LOG_ALPHA : DIRMN_PARAM_ALPHA, rows.data(),
      size_values.empty() ? rows.data() : size_values.data(), &options, &result);
  if (status != DIRMN_SUCCESS) return failure(alpha_error(ctx, status, alpha, 1, layout));
  return Rcpp::List::create(
      Rcpp::Named("power") = result.power, Rcpp::Named("std_error") = result.std_error,
      Rcpp::Named("tables") = static_cast<double>(result.tables),
      Rcpp::Named("rejected") = static_cast<double>(result.rejected),
      Rcpp::Named("mean_statistic") = result.mean_statistic);
}

// dirmn_power_proportions as a plain list of its result's fields (R/power.R
// makes the power.htest). `alpha`: a double vector, one entry per column;
// `rows`: the rows of each table; `sizes`: one size for every row, or one
// per row; `proportions`: a double vector of one entry per column (R code
// has checked the types, lengths, NAs and whole numbers; the library checks
// the values).
// [[Rcpp::export(rng = false)]]
SEXP cpp_power_proportions(SEXP ctx_xp, SEXP alpha, bool log_param, double rows, SEXP sizes,
                           SEXP proportions, double tables, double level, SEXP seed) {
  dirmn_context* ctx = context_of(ctx_xp);
  SEXP bad = unusable_context(ctx);
  if (bad != R_NilValue) return bad;
  if (TYPEOF(alpha) != REALSXP)
    return failure(DIRMN_ERROR_INVALID_PARAMETER, "alpha must be a double vector");
  const int64_t cols = XLENGTH(alpha);
  if (TYPEOF(proportions) != REALSXP || XLENGTH(proportions) != cols)
    return failure(DIRMN_ERROR_DIMENSION_MISMATCH, "p must hold one value per entry of alpha");
  const int64_t n = static_cast<int64_t>(rows);
  std::vector<int64_t> given;
  if (!read_sizes(sizes, &given) ||
      (given.size() != 1 && static_cast<int64_t>(given.size()) != n))
    return failure(DIRMN_ERROR_DIMENSION_MISMATCH, "size must hold one value or one per row");
  // The library takes one size per row: one given for all is repeated.
  std::vector<int64_t> size_values;
  if (given.size() == 1 && n > 1) {
    try {
      size_values.assign(static_cast<size_t>(n), given[0]);
    } catch (const std::bad_alloc&) {
      return failure(DIRMN_ERROR_OUT_OF_MEMORY,
                     "out of memory for the sizes of " + std::to_string(n) + " rows");
    }
  } else {
    size_values.swap(given);
  }
  dirmn_power_options options;
  dirmn_power_options_init(&options);
  options.tables = static_cast<int64_t>(tables);
  options.level = level;
  options.seed = seed_of(seed);
  dirmn_power_result result;
  std::memset(&result, 0, sizeof result);
  result.size = sizeof result;
  const dirmn_status status = dirmn_power_proportions(
      ctx, cols, REAL(alpha), 1, log_param ? DIRMN_PARAM_LOG_ALPHA : DIRMN_PARAM_ALPHA, n,
      size_values.data(), REAL(proportions), 1, &options, &result);
  if (status != DIRMN_SUCCESS) return failure(alpha_error(ctx, status, alpha, 1, AlphaLayout()));
  return Rcpp::List::create(
      Rcpp::Named("power") = result.power, Rcpp::Named("std_error") = result.std_error,
      Rcpp::Named("tables") = static_cast<double>(result.tables),
      Rcpp::Named("rejected") = static_cast<double>(result.rejected),
      Rcpp::Named("mean_statistic") = result.mean_statistic);
}
