// newton.hpp: the step rule of Newton's method on log alpha for one alpha
// vector, written once for the host's fits (host_fit.cpp) and the
// device's M-step fits (cuda/device/mstep_kernels.cuh), so that both take
// the same steps: the safeguards, the prior's terms in log alpha, the
// rank-one solve and what follows from it (the predicted gain, the standard
// errors, the log determinant), and Minka's fixed point.
//
// In log alpha the Hessian of the log-likelihood is diag(h) + c u u^T with
// u = alpha (special.hpp's to_log_alpha). Its solve, inverse diagonal and
// determinant need two sums over the fitted columns; the host forms them
// in column order, the device over a block in a fixed order, so each
// piece here is one column's term or the scalar that the sums give.
#pragma once

#include <cmath>

#include "special.hpp"  // DIRMN_HD

namespace dirmn {
namespace math {

// The largest change of one log alpha in one step: a step beyond it is
// scaled down to it (far from the optimum a full Newton step can jump many
// orders of magnitude, past where the quadratic model means anything).
constexpr double kMaxLogStep = 5.0;
// Step halvings tried before the fit falls back to Minka's fixed point.
constexpr int kMaxHalvings = 40;

// ---- Gamma(shape, rate) prior on alpha, as a density on log alpha ----------

// Its log density's gradient and Hessian in log alpha at a, times weight
// (the objective's scale), added to one column's g and h.
DIRMN_HD void add_prior_derivatives(double a, double shape, double rate, double weight, double* g,
                                    double* h) {
  *g += weight * (shape - rate * a);
  *h -= weight * rate * a;
}

// ---- The rank-one solve: (diag(h) + c u u^T) x = b ---------------------------

// A column's terms of the two sums (u^T D^-1 u and u^T D^-1 b, D = diag(h)).
struct RankOneSums {
  double uDu = 0.0, uDb = 0.0;
  bool definite = true;  // every h < 0 (checked before any sum is used)
};
DIRMN_HD void add_rank_one_terms(double h, double u, double b, RankOneSums* s) {
  if (!(h < 0.0)) s->definite = false;
  s->uDu += u * u / h;
  s->uDb += u * b / h;
}

// 1 + c u^T D^-1 u: with every h < 0, the matrix is negative definite (and
// Newton's direction an ascent direction) exactly where it is positive.
DIRMN_HD double rank_one_denominator(double c, double uDu) { return 1.0 + c * uDu; }
DIRMN_HD bool rank_one_usable(bool definite, double denom) { return definite && denom > 0.0; }

// Entry i of the solution, by Sherman-Morrison.
DIRMN_HD double rank_one_solution(double h, double u, double b, double c, double uDb,
                                  double denom) {
  return (b - c * u * uDb / denom) / h;
}

// Entry i of minus the inverse's diagonal, the variance of log alpha_i:
// -[1/h_i - c (u_i/h_i)^2 / denom]; 0 where rounding leaves it not
// positive.
DIRMN_HD double rank_one_variance(double h, double u, double c, double denom) {
  const double r = u / h;
  const double var = -(1.0 / h - c * r * r / denom);
  return var > 0.0 ? var : 0.0;
}

// log det of minus the matrix from the sum of log(-h_i) over the columns:
// det(-(D + c u u^T)) = prod(-h) (1 + c u^T D^-1 u).
DIRMN_HD double rank_one_log_det(double sum_log_minus_h, double denom) {
  return sum_log_minus_h + std::log(denom);
}

// ---- Newton's step -----------------------------------------------------------

// A column's share of the predicted gain of step s (half the Newton
// decrement squared): 1/2 g_i s_i.
DIRMN_HD double gain_term(double g, double s) { return 0.5 * g * s; }

// The gain test of convergence: a predicted gain, non-negative, below the
// tolerance relative to the objective.
DIRMN_HD bool gain_converged(double gain, double f, double tolerance) {
  return gain >= 0.0 && gain <= tolerance * std::fabs(f);
}

// The first trial's length: the full step, or the one whose largest change
// of a log alpha is kMaxLogStep. Each rejected trial halves it.
DIRMN_HD double first_step_length(double largest_step) {
  return largest_step > kMaxLogStep ? kMaxLogStep / largest_step : 1.0;
}

// ---- Minka's fixed point -----------------------------------------------------

// alpha_v <- alpha_v (numer + shape/alpha_v) / (denom + rate) with numer =
// sum_b w dpoch(alpha_v, n_bv) and denom = sum_b w dpoch(A, N_b): a
// minorise-maximise step, so it never lowers the objective (a Gamma prior
// is concave in alpha on this scale and separable; rate 0: no prior).
// weight is the prior's scale, as in add_prior_derivatives. The caller
// keeps the result in its range.
DIRMN_HD double minka_step(double a, double numer, double denom, double shape, double rate,
                           double weight) {
  const bool prior = rate > 0.0;
  return a * (numer + (prior ? weight * shape / a : 0.0)) / (denom + (prior ? weight * rate : 0.0));
}

}  // namespace math
}  // namespace dirmn
