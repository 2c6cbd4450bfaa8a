// host_fit.hpp: Newton fits of one alpha from count histograms in host
// memory -- maximum likelihood, or MAP under a Gamma prior (the M step of
// DirichletMultinomial::dmn's mixtures). fit_from_histograms is one fit
// (dirmn_fit's engine); fit_components_on_host is the EM's batched
// component-fits step as the host runs it, for every EmState.
#pragma once

#include <cstdint>
#include <vector>

#include "backend.hpp"
#include "table/histogram.hpp"
#include "thread_pool.hpp"

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
  // FitOutcome's standard errors (two arrays of cols entries); false leaves
  // them empty, as the mixture's M steps, which read only alpha and the
  // log-determinant, ask: at 27000 columns and k = 20 their allocation
  // alone was some 9 MB of zeroing per EM iteration.
  bool want_se = true;
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

// The EM's component fits on the host (EmState::fit_components): for each
// j with fit[j], the fit of hist[j] from alpha + j * cols where warm[j]
// (else the method of moments' start), at most s.warm_iterations Newton
// steps from a warm start and s.full_iterations from a cold one, on the
// host threads. A fitted component's alpha replaces alpha + j * cols, each
// entry at least s.alpha_floor (under ML, the multinomial limit's
// proportions times s.limit_precision); its outcome entries are written.
// Entries of components without fit[j] are left as they are.
// OUT_OF_MEMORY when a fit has no room (alpha and out then partly written).
BackendResult fit_components_on_host(const std::vector<Histograms>& hist, const EmFitSettings& s,
                                     const char* fit, const char* warm, int64_t cols,
                                     HostThreads& threads, double* alpha, EmFitOutcome* out);

}  // namespace dirmn
