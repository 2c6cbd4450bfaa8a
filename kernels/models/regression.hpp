// regression.hpp: Dirichlet-multinomial regression -- log-linear, row b's
// alpha_bv = exp(x_b . beta_v), beta p x V, or mean/precision
// (regression_mp.hpp) -- by Newton's method in the free coefficients over
// the table's per-row derivatives step.
#pragma once

#include <cstdint>
#include <limits>
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
  // The mean/precision model, its identification and reference category;
  // else log-linear.
  bool mean_precision = false;
  // Mean/precision: the log precision's design z (rows x q, row-major,
  // finite: validated), log phi_b = z_b . gamma; null for one precision
  // (q = 1, z_b = 1).
  const double* z = nullptr;
  int64_t q = 0;
  bool sum_to_zero = false;
  int64_t reference = 0;
  // Mean/precision: a finite value holds log phi there (no gamma is fitted).
  double log_precision = std::numeric_limits<double>::quiet_NaN();
  // Mean/precision with one precision: whether a fit that stopped at a phi
  // beyond every row's N^2 is tested for the multinomial limit (one more
  // fit). The grouped tests leave it off: their p-values take the
  // supremum either way, and a gene without overdispersion is common.
  bool check_limit = true;
};

struct RegressionOutcome {
  std::vector<double> beta;   // p x V, row-major (mean/precision: the implied column filled)
  std::vector<double> gamma;  // mean/precision: log phi (fitted, or held)
  // The free coefficients: p x V (log-linear) or p (V - 1) + q, in the
  // order of the covariance (vec(beta) without the reference category's,
  // then gamma).
  int64_t parameters = 0;
  // The covariance of the free coefficients; null unless hessian_definite.
  std::unique_ptr<RegressionCovariance> covariance;
  // Standard errors: p x V, row-major (0 for a reference category's
  // fixed betas), and gamma's (q); empty without a covariance.
  std::vector<double> std_errors, gamma_std_errors;
  // What the Wald tests take: the free betas, p x (their categories),
  // row-major, and the degrees of freedom of a covariate's test.
  std::vector<double> wald_beta;
  int64_t wald_df = 0;
  double loglik = 0.0, gradient_norm = 0.0, observations = 0.0;
  int iterations = 0;
  bool converged = false, hessian_definite = false, cancelled = false;
  // Mean/precision with one precision: the data show no overdispersion,
  // the likelihood rises toward phi -> infinity (converged is false).
  bool multinomial_limit = false;
  // What an INVALID_ARGUMENT or OVERFLOW names (-1: nothing): the first
  // covariate (of x, or of z: bad_precision_covariate) that is a
  // combination of those before it, a category without counts, or (with
  // `too_few_rows`) too few rows with counts.
  int64_t bad_covariate = -1, bad_category = -1, bad_precision_covariate = -1;
  bool too_few_rows = false;
  // The rows that take part (counts and a positive weight), and whether
  // the Newton system (in min(p V, those rows) unknowns for the
  // log-linear model, all the free ones for mean/precision) exceeds
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

// The same for the mean/precision model at beta (p x V, row-major) and
// gamma (q), the precision's design z rows x q (row-major), or null for
// one precision (q = 1).
bool regression_alpha_mp(const double* x, int64_t rows, int64_t p, const double* z, int64_t q,
                         const double* beta, const double* gamma, int64_t V, double* alpha,
                         int64_t* bad_row, int64_t* bad_category);

// The Wald test of covariate i: the statistic b' S^-1 b, b its free
// coefficients (wald_beta: p x blocks, row-major) and S their block of the
// covariance, and its chi-square(blocks) tail. False where S is not positive
// definite. Throws std::bad_alloc.
bool regression_wald(const RegressionCovariance& cov, const double* beta, int64_t V, int64_t i,
                     double* statistic, double* p_value);

}  // namespace dirmn
