// fit.hpp: the single-alpha Dirichlet-multinomial fit -- maximum likelihood,
// or MAP under a Gamma prior (the M step of DirichletMultinomial::dmn's
// mixtures) -- from the count histograms of a weighted table.
#pragma once

#include <cstdint>
#include <vector>

#include "../backend.hpp"
#include "../stored_table.hpp"
#include "../table/cache.hpp"
#include "../table/histogram.hpp"
#include "../thread_pool.hpp"

namespace dirmn {

struct FitSettings {
  double tolerance = 1e-10;
  int max_iterations = 1000;
  const double* start = nullptr;  // cols alphas or null
  // Called after each iteration (1, 2, ...) with the objective (the
  // kernel, plus the prior's terms under a prior; with progress_full, plus
  // the multinomial coefficients: the log pmf) and the gradient's max-norm.
  dirmn_progress_fn progress = nullptr;
  void* progress_data = nullptr;
  bool progress_full = false;
  Interrupt interrupt;
  // A Gamma(prior_shape, prior_rate) prior on every alpha, as a density on
  // log alpha (prior_rate > 0 turns it on): the fit then maximises
  // loglik + sum_v [shape log alpha_v - rate alpha_v + shape log rate - lgamma(shape)],
  // which is the MAP objective of DirichletMultinomial::dmn. Every column is
  // then fitted (the prior keeps alpha finite and positive).
  double prior_shape = 0.0;
  double prior_rate = 0.0;
  // The histograms' weights are the caller's times 2^-weight_exponent
  // (models/weights.hpp): the prior then enters times that too, so that
  // the objective is the caller's times 2^-weight_exponent, and the
  // progress callback is given the caller's values. FitOutcome's values
  // stay on the histograms' scale.
  int weight_exponent = 0;
  // A caller's start that stops without converging is followed by a fit
  // from the method of moments' start (the better of the two is kept).
  bool restart = true;
  // Host threads for the sums over columns (null: the calling thread).
  HostThreads* threads = nullptr;
  // Also the Hessian with respect to alpha at the fit (FitOutcome's
  // hessian_diag and hessian_scalar); not made in the multinomial limit.
  bool want_hessian = false;
  // FitOutcome::loglik in the log-beta form (one more evaluation over the
  // histograms at the end); false leaves it the kernel plus the stored
  // coefficients, as the mixture's M steps, which never read it, ask.
  bool want_loglik = true;
};

struct FitOutcome {
  std::vector<double> alpha, se_alpha, se_log_alpha;
  double loglik_kernel = 0.0, loglik = 0.0, gradient_norm = 0.0, precision = 0.0;
  double log_prior = 0.0;   // the prior term at alpha (0 without a prior)
  double log_det = 0.0;     // log det of minus the objective's Hessian in log alpha
  int iterations = 0;
  bool converged = false, multinomial_limit = false, cancelled = false;
  int64_t zero_columns = 0;
  // The criteria's P (the fitted alphas: every column under a prior) and n
  // (the weight of the rows with counts, on the caller's scale from
  // fit_table).
  int64_t parameters = 0;
  double observations = 0.0;
  // With want_hessian: diag(hessian_diag) + hessian_scalar 11^T (0 on the
  // diagonal for columns without counts).
  std::vector<double> hessian_diag;
  double hessian_scalar = 0.0;
};

// Maximum-likelihood alpha from histograms. Returns false when the table
// (under the histograms' weights) has no counts at all.
bool fit_from_histograms(const Histograms& h, const FitSettings& s, FitOutcome* out);

// The histograms of `table` for these row weights (validated; null for 1):
// the cached ones, or built in one pass by the table's histogram step and
// cached. Throws std::bad_alloc.
BackendResult table_histograms(const StoredTable& table, HistogramCache& cache,
                               const double* weights, const Interrupt& interrupt,
                               const Histograms** out);

// The shared-alpha sums of dirmn_loglik_sum: the weighted log-likelihood
// (with `full`, the log pmf), its gradient and Hessian (diagonal and
// rank-one scalar), with respect to alpha or (log_param) log alpha. alpha:
// cols validated values. The outputs (any may be null) are written only on
// success. Throws std::bad_alloc.
BackendResult loglik_sums(const StoredTable& table, HistogramCache& cache, const double* alpha,
                          const double* weights, bool log_param, bool full,
                          const Interrupt& interrupt, double* value, double* gradient,
                          double* hessian_diag, double* hessian_scalar);

// dirmn_fit: the fit of the table with these row weights (validated),
// with s.threads set to the table's host threads. INVALID_ARGUMENT when the
// table has no counts under these weights; CANCELLED when the histogram
// pass was interrupted, or (out->cancelled, out->iterations) when the
// progress callback or the interrupt stopped the fit. Throws std::bad_alloc.
BackendResult fit_table(const StoredTable& table, HistogramCache& cache, const double* weights,
                        FitSettings s, FitOutcome* out);

}  // namespace dirmn
