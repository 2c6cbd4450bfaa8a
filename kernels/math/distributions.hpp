// distributions.hpp: the tail probabilities the tests of this library
// report -- chi-square with any positive degrees of freedom, and the
// standard normal -- in double precision on the host.
//
// The chi-square tail is the regularised upper incomplete gamma function
// Q(a, x) = Gamma(a, x) / Gamma(a) at a = df / 2, x = stat / 2, evaluated
// by its power series where x < a + 1 (as P = 1 - Q, which converges
// fast there) and by its continued fraction elsewhere (modified Lentz),
// the split that keeps both to a few dozen terms at full precision
// (Numerical Recipes, 3rd ed., section 6.2, for the choice; the series and
// fraction are Abramowitz & Stegun 6.5.29 and 6.5.31).
#pragma once

#include <cmath>
#include <limits>

namespace dirmn {
namespace math {

constexpr int kGammaTerms = 1000;        // enough for a, x up to ~1e5 at 1e-16
constexpr double kGammaEpsilon = 1e-16;  // relative size of the last term kept
constexpr double kLentzTiny = 1e-300;    // keeps Lentz's ratios away from 0

// Q(a, x) for a > 0, x >= 0.
inline double gamma_q(double a, double x) {
  if (!(a > 0.0) || !(x >= 0.0)) return std::numeric_limits<double>::quiet_NaN();
  if (x == 0.0) return 1.0;
  if (std::isinf(x)) return 0.0;
  const double log_front = a * std::log(x) - x - std::lgamma(a);
  if (x < a + 1.0) {
    // P(a, x) = x^a e^-x / Gamma(a + 1) sum_n x^n / ((a + 1) ... (a + n)).
    double term = 1.0 / a, sum = term;
    for (int n = 1; n < kGammaTerms; ++n) {
      term *= x / (a + n);
      sum += term;
      if (std::fabs(term) < std::fabs(sum) * kGammaEpsilon) break;
    }
    return 1.0 - sum * std::exp(log_front);
  }
  // Q(a, x) = x^a e^-x / Gamma(a) * 1 / (x + 1 - a - 1 (1 - a) / (x + 3 - a - ...)).
  double b = x + 1.0 - a, c = 1.0 / kLentzTiny, d = 1.0 / b, h = d;
  for (int n = 1; n < kGammaTerms; ++n) {
    const double an = -n * (n - a);
    b += 2.0;
    d = an * d + b;
    if (std::fabs(d) < kLentzTiny) d = kLentzTiny;
    c = b + an / c;
    if (std::fabs(c) < kLentzTiny) c = kLentzTiny;
    d = 1.0 / d;
    const double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1.0) < kGammaEpsilon) break;
  }
  return std::exp(log_front) * h;
}

// P(chi2_df >= stat), df > 0.
inline double chisq_upper(double stat, double df) {
  return stat <= 0.0 ? 1.0 : gamma_q(0.5 * df, 0.5 * stat);
}

}  // namespace math
}  // namespace dirmn
