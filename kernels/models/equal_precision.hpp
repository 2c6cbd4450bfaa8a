// equal_precision.hpp: one Dirichlet-multinomial per group of rows, all of
// one precision -- the null hypothesis of HMP's Xoc (the groups'
// overdispersions theta_g = 1 / (1 + A_g) equal), each group's proportions
// free.
//
// With alpha_g = A pi_g, a group's log-likelihood is sum_v f_gv(alpha_gv)
// - T_g(A) (f_gv: its column v's sum of lpoch(alpha, n), concave and
// increasing in alpha; T_g: its totals' lpoch(A, N)). For a fixed A each
// group's best proportions maximise a separable concave function on
// sum_v alpha_gv = A: f'_gv(alpha_gv) equal to a multiplier lambda_g for
// every column with counts (0 for a column without). That is solved by
// Newton's method with the multiplier eliminated, and A by Newton's method
// on the profile log-likelihood in log A, whose slope is sum_g (lambda_g -
// T'_g(A)) (the envelope theorem) and whose curvature takes d lambda_g / dA
// = 1 / sum_v (1 / f''_gv).
#pragma once

#include <cstdint>
#include <vector>

#include "../host_fit.hpp"
#include "../table/histogram.hpp"

namespace dirmn {

struct EqualPrecisionFit {
  double loglik = 0.0;             // with the multinomial coefficients
  double precision = 0.0;          // A (infinity at the multinomial limit)
  std::vector<double> alpha;       // groups x cols (0 for a group's columns without counts)
  bool converged = false, multinomial_limit = false;
  int iterations = 0;
};

// h[0 .. groups - 1]: the groups' histograms (one cols for all); own[g]:
// group g's own fit, the start. tolerance: on the step in log A. Throws
// std::bad_alloc.
void fit_equal_precision(const Histograms* h, size_t groups, const std::vector<FitOutcome>& own,
                         double tolerance, int max_iterations, EqualPrecisionFit* out);

}  // namespace dirmn
