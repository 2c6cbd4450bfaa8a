// regression.hpp: Dirichlet-multinomial regression, log-linear -- row b's
// alpha_bv = exp(x_b . beta_v), beta p x V -- by Newton's method in
// vec(beta) over the table's per-row derivatives step.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "../backend.hpp"
#include "../stored_table.hpp"
#include "../table/cache.hpp"
#include "../thread_pool.hpp"
#include "regression_system.hpp"

namespace dirmn {

struct RegressionSettings {
  const double* x = nullptr;        // rows x p, row-major, finite (validated)
  int64_t p = 0;
  const double* weights = nullptr;  // rows (validated), or null for all 1
  double tolerance = 1e-10;
  int max_iterations = 200;
  dirmn_progress_fn progress = nullptr;
  void* progress_data = nullptr;
  Interrupt interrupt;
};

struct RegressionOutcome {
  std::vector<double> beta;  // p x V, row-major
  std::unique_ptr<RegressionCovariance> covariance;  // null unless hessian_definite
  double loglik = 0.0, gradient_norm = 0.0, observations = 0.0;
  int iterations = 0;
  bool converged = false, hessian_definite = false, cancelled = false;
  // What an INVALID_ARGUMENT or OVERFLOW names (-1: nothing): the first
  // covariate that is a combination of those before it, a category
  // without counts, or (with `too_few_rows`) too few rows with counts.
  int64_t bad_covariate = -1, bad_category = -1;
  bool too_few_rows = false;
  // The rows that take part (counts and a positive weight), and whether
  // the Newton system in min(p V, those rows) unknowns exceeds
  // kRegMaxSystem (an INVALID_ARGUMENT).
  int64_t rows_taking_part = 0;
  bool system_too_large = false;
};

// The fit of the table on the design. INVALID_ARGUMENT (out names why),
// OVERFLOW (an alpha beyond the double range at the start), CANCELLED
// (out->cancelled where the progress callback stopped it), or the table's
// steps' failures. Throws std::bad_alloc.
BackendResult fit_regression(const StoredTable& table, HistogramCache& cache,
                             const RegressionSettings& s, RegressionOutcome* out);

// alpha_bv = exp(x_b . beta_v) for `rows` rows of covariates (row-major,
// rows x p) into alpha (rows x V); rows whose row_weight is 0 (row_weight
// may be null) take no part and get alpha 1. False (with *bad_row,
// *bad_category) where one is not a positive finite double.
bool regression_alpha(const double* x, int64_t rows, int64_t p, const double* beta, int64_t V,
                      const double* row_weight, double* alpha, int64_t* bad_row,
                      int64_t* bad_category);

// The Wald test of covariate i: the statistic b' S^-1 b, b its V
// coefficients of beta (p x V, row-major) and S their block of the
// covariance, and its chi-square(V) tail. False where S is not positive
// definite. Throws std::bad_alloc.
bool regression_wald(const RegressionCovariance& cov, const double* beta, int64_t V, int64_t i,
                     double* statistic, double* p_value);

}  // namespace dirmn
