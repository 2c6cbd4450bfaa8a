// special.hpp: the special-function differences every dirmn computation
// rests on, shared by the host code and the CUDA kernels.
//
//   lpoch(a, n) = lgamma(a + n) - lgamma(a)      (log rising factorial)
//   dpoch(a, n) = digamma(a + n) - digamma(a)
//   tpoch(a, n) = trigamma(a + n) - trigamma(a)
//   lpoch_lfact(a, n) = lpoch(a, n) - lgamma(n + 1)   (via lbeta, log-beta)
//   lpoch_shift_diff(a, r, s, n) = lpoch(a, n) - lpoch(a + r, n), s = a + r
//
// Why not lgamma(a + n) - lgamma(a): for a >> n both terms are ~a log a and
// their difference keeps none of its digits (at a = 1e10, n = 1 the double
// difference is off in the third digit). Instead:
//   * integer n up to kDirectMax: the finite product/sum over k < n, exact up
//     to rounding of each factor;
//   * otherwise a is shifted up to at least kAsymptoticMin by the recurrence
//     and the Stirling/asymptotic series are subtracted term by term, with the
//     leading logarithms combined through log1p(n / a), so nothing large is
//     ever subtracted from anything large.
// Accurate (a few ulp of the result's scale) for a in [1e-8, 1e12] and n in
// [0, 2^24] or beyond; n may be any finite non-negative real.
#pragma once

#include <cmath>

#if defined(__CUDACC__)
#define DIRMN_HD __host__ __device__ __forceinline__
#else
#define DIRMN_HD inline
#endif

namespace dirmn {
namespace math {

// Below this argument the asymptotic series are not used; the recurrence
// lifts a to it first. At 10 the truncated lgamma series' first omitted term
// is 2e-19, below double rounding.
constexpr double kAsymptoticMin = 10.0;
// Integer n up to this are summed directly: cheaper than two logarithms plus
// a series, and exact up to per-factor rounding.
constexpr int kDirectMax = 16;
// Products of up to kDirectMax factors of size below this cannot overflow
// (1e15^16 = 1e240 < DBL_MAX); beyond it the series path is both safe and
// accurate.
constexpr double kDirectMaxA = 1e15;

// Stirling series remainder of lgamma:
//   lgamma(x) = (x - 1/2) log x - x + log(2 pi)/2 + stirling_tail(x),
//   stirling_tail(x) = sum_k B_2k / (2k (2k - 1) x^(2k-1)), k = 1..8.
// B_2k are the Bernoulli numbers (DLMF 5.11.1).
// stirling_tail_r takes r = 1/x (a caller that has it from a batch of
// reciprocals).
DIRMN_HD double stirling_tail_r(double r) {
  const double r2 = r * r;
  double s = -3617.0 / 122400.0;
  s = s * r2 + 1.0 / 156.0;
  s = s * r2 - 691.0 / 360360.0;
  s = s * r2 + 1.0 / 1188.0;
  s = s * r2 - 1.0 / 1680.0;
  s = s * r2 + 1.0 / 1260.0;
  s = s * r2 - 1.0 / 360.0;
  s = s * r2 + 1.0 / 12.0;
  return s * r;
}
DIRMN_HD double stirling_tail(double x) { return stirling_tail_r(1.0 / x); }

// Asymptotic remainder of digamma (DLMF 5.11.2):
//   digamma(x) = log x - 1/(2x) - digamma_tail(x),
//   digamma_tail(x) = sum_k B_2k / (2k x^(2k)), k = 1..7.
// digamma_tail_r2 takes r2 = 1/x^2.
DIRMN_HD double digamma_tail_r2(double r2) {
  double s = 1.0 / 12.0;
  s = s * r2 - 691.0 / 32760.0;
  s = s * r2 + 1.0 / 132.0;
  s = s * r2 - 1.0 / 240.0;
  s = s * r2 + 1.0 / 252.0;
  s = s * r2 - 1.0 / 120.0;
  s = s * r2 + 1.0 / 12.0;
  return s * r2;
}
DIRMN_HD double digamma_tail(double x) { return digamma_tail_r2(1.0 / (x * x)); }

// sum_k B_2k r2^(k - first) for k = first..10 (first 1 or 2), by Horner's
// rule from the highest term: the series of trigamma's asymptotic
// remainder, with or without its first term. B_2k are the Bernoulli numbers.
DIRMN_HD double trigamma_series(double r2, bool with_first) {
  double s = -174611.0 / 330.0;
  s = s * r2 + 43867.0 / 798.0;
  s = s * r2 - 3617.0 / 510.0;
  s = s * r2 + 7.0 / 6.0;
  s = s * r2 - 691.0 / 2730.0;
  s = s * r2 + 5.0 / 66.0;
  s = s * r2 - 1.0 / 30.0;
  s = s * r2 + 1.0 / 42.0;
  s = s * r2 - 1.0 / 30.0;
  if (with_first) s = s * r2 + 1.0 / 6.0;
  return s;
}

// Asymptotic remainder of trigamma (DLMF 5.15.8):
//   trigamma(x) = 1/x + 1/(2 x^2) + trigamma_tail(x),
//   trigamma_tail(x) = sum_k B_2k / x^(2k+1), k = 1..10.
// Three terms more than digamma's: tpoch(a, n) for small n is essentially the
// derivative of this tail, and with k up to 7 the first omitted term
// (k = 8 at x = 10) left 1e-14 relative error in tpoch(10, 1e-3); with k up
// to 10 its successor is below 1e-15.
DIRMN_HD double trigamma_tail_r(double r) {
  const double r2 = r * r;
  return trigamma_series(r2, true) * r2 * r;
}
DIRMN_HD double trigamma_tail(double x) { return trigamma_tail_r(1.0 / x); }

// sum_k B_2k r^(2k+1), k = 2..10: trigamma_tail(1/r) without its first term.
DIRMN_HD double trigamma_tail_rest(double r) {
  const double r2 = r * r;
  return trigamma_series(r2, false) * r2 * r2 * r;
}

// trigamma_tail(c + n) - trigamma_tail(c). The leading term 1/(6 x^3) is
// differenced exactly as (rb - rc)(rb^2 + rb rc + rc^2) / 6 with
// rb - rc = -n rb rc; subtracting the two whole tails instead left 4.5e-15
// relative error in tpoch for n << c (c = 15.75, n = 1e-3), 7.5e-16 this way.
DIRMN_HD double trigamma_tail_diff(double c, double b, double n) {
  const double rb = 1.0 / b, rc = 1.0 / c;
  const double lead = -n * rb * rc * (rb * rb + rb * rc + rc * rc) / 6.0;
  return lead + (trigamma_tail_rest(rb) - trigamma_tail_rest(rc));
}

// Number of unit steps that lift a to at least kAsymptoticMin.
DIRMN_HD int shift_steps(double a) {
  return a >= kAsymptoticMin ? 0 : static_cast<int>(ceil(kAsymptoticMin - a));
}

DIRMN_HD bool use_direct(double a, double n) {
  return n <= kDirectMax && a < kDirectMaxA && n == floor(n);
}

// lpoch(a, n) for a >= kAsymptoticMin, any real n >= 0. The terms
// (a+n-1/2) log(a+n) - (a-1/2) log a are regrouped as
// (a-1/2) log1p(n/a) + n log(a+n) so no two large values are subtracted.
DIRMN_HD double lpoch_asymptotic(double a, double n) {
  const double b = a + n;
  return (a - 0.5) * log1p(n / a) + n * log(b) - n + (stirling_tail(b) - stirling_tail(a));
}

// log Gamma(a + n) - log Gamma(a): the log rising factorial (a)_n.
DIRMN_HD double lpoch(double a, double n) {
  if (n == 0.0) return 0.0;
  if (use_direct(a, n)) {
    const int m = static_cast<int>(n);
    double prod = a;
    for (int k = 1; k < m; ++k) prod *= a + k;
    return log(prod);
  }
  const int m = shift_steps(a);
  double corr = 0.0;
  // (a)_n = (a + m)_n * prod_{k<m} (a + k) / (a + n + k). For subnormal a
  // (alpha = 5e-324 is valid) n / a overflows to inf, which made lpoch -inf;
  // then log1p(n / a) = log(n) - log(a) to double precision anyway.
  const double r0 = n / a;
  if (m > 0) corr = r0 <= 1.7976931348623157e308 ? -log1p(r0) : -(log(n) - log(a));
  if (n >= 1.0) {
    // Factors k >= 1 are each 1 + n / (a + k) in [1 + 1/(a + k), 1 + n]:
    // their product (at most (1 + n)^9 < 1e144 for n < 2^53) has one log,
    // a few ulp of a value of at least log(1.05) per factor, where m
    // log1p's cost most of a row-total histogram's evaluation.
    double p = 1.0;
    for (int k = 1; k < m; ++k) p *= 1.0 + n / (a + k);
    corr -= log(p);
  } else {
    for (int k = 1; k < m; ++k) corr -= log1p(n / (a + k));
  }
  return lpoch_asymptotic(a + m, n) + corr;
}

// log(2 pi) / 2, the constant of Stirling's series.
constexpr double kHalfLog2Pi = 0.91893853320467274178;

// lgamma, digamma and trigamma at x >= kAsymptoticMin by their asymptotic
// series, from lx = log x, r = 1/x and r2 = 1/x^2 that the caller has (a
// batch of logs and reciprocals, or its own): the pairs' and the split
// tails' terms of histogram_sums.cpp.
DIRMN_HD double lgamma_asymptotic(double x, double lx, double r) {
  return (x - 0.5) * lx - x + kHalfLog2Pi + stirling_tail_r(r);
}
DIRMN_HD double digamma_asymptotic(double lx, double r, double r2) {
  return lx - 0.5 * r - digamma_tail_r2(r2);
}
DIRMN_HD double trigamma_asymptotic(double r) { return r + 0.5 * r * r + trigamma_tail_r(r); }

// log B(a, b) = lgamma(a) + lgamma(b) - lgamma(a + b) for a, b > 0, without
// subtracting large lgammas. With x = min(a, b), y = max(a, b): where y is
// at least kAsymptoticMin, lgamma(y) and lgamma(x + y) are split into
// Stirling's leading terms and their remainders (stirling_tail) and the
// leading terms are combined analytically -- log(y / (x + y)) as
// log1p(-x / (x + y)) --, and likewise lgamma(x) once x is that large too.
// This is the split of Stan Math's lbeta (its lgamma_stirling_diff), written
// from the formulas:
//   x < 10 <= y:  lgamma(x) + (y - 1/2) log1p(-x/s) + x (1 - log s) + d(y) - d(s)
//   10 <= x:      (x - 1/2) log(x/s) + y log1p(-x/s) + log(2 pi)/2 - log(y)/2
//                 + d(x) + d(y) - d(s),
// s = x + y, d = stirling_tail. Both small: the lgammas themselves are small.
DIRMN_HD double lbeta(double a, double b) {
  const double x = a < b ? a : b, y = a < b ? b : a;
  if (y < kAsymptoticMin) return lgamma(x) + lgamma(y) - lgamma(x + y);
  const double s = x + y;
  const double rest_y = stirling_tail(y) - stirling_tail(s);
  const double l1m = log1p(-x / s);  // log(y / s)
  if (x < kAsymptoticMin) return lgamma(x) + (y - 0.5) * l1m + x * (1.0 - log(s)) + rest_y;
  return (x - 0.5) * log(x / s) + y * l1m + kHalfLog2Pi - 0.5 * log(y) + stirling_tail(x) +
         rest_y;
}

// lpoch(a, n) - lgamma(n + 1): one cell's term of the full log pmf (and,
// with the signs turned, the row total's). Formed as -log n - log B(a, n)
// (n > 0), which has the size of the result: lpoch(a, n) and lgamma(n + 1)
// are both ~n log n for n >> a, and their difference kept ~5e-10 relative of
// a row's log pmf at counts ~1e6-1e7 and alpha ~1. Integer n up to
// kDirectMax: the product of (a + j) / (j + 1), exact up to rounding of each
// factor (a itself kept apart where the product would underflow).
DIRMN_HD double lpoch_lfact(double a, double n) {
  if (n == 0.0) return 0.0;
  if (use_direct(a, n)) {
    const int m = static_cast<int>(n);
    double q = 1.0;
    for (int k = 1; k < m; ++k) q *= (a + k) / (k + 1);
    const double p = a * q;
    return p >= 2.2250738585072014e-308 ? log(p) : log(a) + log(q);
  }
  return -log(n) - lbeta(a, n);
}

// Deep counts against small alpha: a table's cells above kDirectMax, each
// met by K parameter vectors. lpoch and lpoch_lfact above pay per call for
// lgamma(a) (or kAsymptoticMin - a shift factors), log n and Stirling's
// tail at n, none of which depends on both arguments. Split once per cell
// (DeepCount: log n, 1 / n, stirling_tail(n)) and once per alpha (the
// caller's lgamma(a)), each further (a, n) costs one log1p, one division
// and the series at s = a + n >= kDirectMax + 1, where Stirling's series
// needs no shift. With L = log1p(a / n) = log(s / n):
//   lgamma(s) = (s - 1/2)(log n + L) - s + log(2 pi)/2 + stirling_tail(s),
//   lpoch_lfact(a, n) = (a - 1) log n - lgamma(a) + ((s - 1/2) L - a)
//                       + (stirling_tail(s) - stirling_tail(n)),
// the second from the first and Stirling's lgamma(n + 1) = log n +
// lgamma(n), their n log n and n terms cancelled analytically. Every term
// there is at most ~(a + 1) log n, so near a = 1, where lpoch_lfact is 0,
// nothing of size log n is left to cancel (-log n - lbeta(a, n) differences
// two such values). For a >= kAsymptoticMin the general forms stay: there
// (s - 1/2) L - a is a difference of large terms.
struct DeepCount {
  double n, log_n, inv_n, tail_n;
};

DIRMN_HD bool deep_count_applies(double n) { return n > static_cast<double>(kDirectMax); }

DIRMN_HD bool deep_alpha_applies(double a) { return a > 0.0 && a < kAsymptoticMin; }

DIRMN_HD DeepCount deep_count(double n) { return {n, log(n), 1.0 / n, stirling_tail(n)}; }

// lpoch(a, n) for deep_count_applies(n), deep_alpha_applies(a), lgamma_a =
// lgamma(a).
DIRMN_HD double lpoch_deep(double a, double lgamma_a, const DeepCount& c) {
  const double s = a + c.n;
  const double l = log1p(a * c.inv_n);
  return (s - 0.5) * (c.log_n + l) - s + kHalfLog2Pi + stirling_tail(s) - lgamma_a;
}

// lpoch_lfact(a, n) likewise.
DIRMN_HD double lpoch_lfact_deep(double a, double lgamma_a, const DeepCount& c) {
  const double s = a + c.n;
  const double l = log1p(a * c.inv_n);
  return ((a - 1.0) * c.log_n - lgamma_a) + ((s - 0.5) * l - a) + (stirling_tail(s) - c.tail_n);
}

// lpoch(a, n) - lpoch(s, n) for s = a + r, r >= 0 (s passed as computed by
// the caller, r the sum it adds to a): the log pmf of a row whose counts are
// all in one cell (there it equals the kernel: the coefficient is 1). Where r
// is small beside a, the two lpochs agree in most digits (at a = 0.81,
// r = 1.4e-4, n = 3 the value -2.9e-4 is the remainder of terms ~0.4, and
// lpoch_lfact's difference kept 1.3e-12 relative). Instead:
//   * integer n up to kDirectMax: sum_{k<n} log((a + k) / (s + k)), each
//     factor near 1 as log1p(-r / (s + k)), without forming 1 - r / (s + k);
//   * r < n: the regrouping lgamma(s) - lgamma(a) - lgamma(s + n) +
//     lgamma(a + n) = lpoch(a, r) - lpoch(a + n, r), two lpochs of the small
//     argument r whose difference is ~r dpoch(a, n): of the result's size
//     unless a >> n;
//   * otherwise the difference of lpoch_lfact (the full form's own terms).
DIRMN_HD double lpoch_shift_diff(double a, double r, double s, double n) {
  if (n == 0.0 || r == 0.0) return 0.0;
  if (use_direct(s, n)) {
    const int m = static_cast<int>(n);
    double sum = 0.0;
    for (int k = 0; k < m; ++k) {
      // Near 1 the factor's log is log1p of its small deficit; at or below
      // 1/2 (a small beside r) 1 - r / (s + k) would cancel, and the log of
      // the quotient itself is exact to rounding.
      // A subnormal a makes the quotient underflow to 0: then the logs apart.
      const double q = r / (s + k);
      const double ratio = (a + k) / (s + k);
      sum += q <= 0.5 ? log1p(-q)
                      : ratio >= 2.2250738585072014e-308 ? log(ratio) : log(a + k) - log(s + k);
    }
    return sum;
  }
  if (r < n) return lpoch(a, r) - lpoch(a + n, r);
  return lpoch_lfact(a, n) - lpoch_lfact(s, n);
}

// digamma(a + n) - digamma(a) = sum_{k<n} 1 / (a + k) for integer n.
DIRMN_HD double dpoch(double a, double n) {
  if (n == 0.0) return 0.0;
  if (use_direct(a, n)) {
    const int m = static_cast<int>(n);
    double s = 0.0;
    for (int k = 0; k < m; ++k) s += 1.0 / (a + k);
    return s;
  }
  const int m = shift_steps(a);
  double corr = 0.0;
  // digamma(a) = digamma(a + m) - sum_{k<m} 1/(a+k), and the same at a + n;
  // each pair 1/(a+k) - 1/(a+n+k) is formed as n / ((a+k)(a+n+k)).
  for (int k = 0; k < m; ++k) corr += n / ((a + k) * (a + n + k));
  const double c = a + m;
  const double b = c + n;
  return log1p(n / c) + n / (2.0 * c * b) - (digamma_tail(b) - digamma_tail(c)) + corr;
}

// trigamma(a + n) - trigamma(a) = -sum_{k<n} 1 / (a + k)^2 for integer n.
DIRMN_HD double tpoch(double a, double n) {
  if (n == 0.0) return 0.0;
  if (use_direct(a, n)) {
    const int m = static_cast<int>(n);
    double s = 0.0;
    for (int k = 0; k < m; ++k) {
      const double r = 1.0 / (a + k);
      s -= r * r;
    }
    return s;
  }
  const int m = shift_steps(a);
  double corr = 0.0;
  // 1/(a+n+k)^2 - 1/(a+k)^2 = -n (2a + 2k + n) / ((a+k)^2 (a+n+k)^2), formed
  // without subtracting the two squares: for small n they agree in most
  // digits (tpoch(1.5, 1e-3) was off by 2.4e-13 relative that way).
  for (int k = 0; k < m; ++k) {
    const double r1 = 1.0 / (a + n + k);
    const double r0 = 1.0 / (a + k);
    corr -= n * r0 * r1 * (r0 + r1);
  }
  const double c = a + m;
  const double b = c + n;
  // 1/b - 1/c and 1/(2b^2) - 1/(2c^2), each in a cancellation-free form.
  const double lead = -n / (c * b) - n * (b + c) / (2.0 * c * c * b * b);
  return lead + trigamma_tail_diff(c, b, n) + corr;
}

// digamma(x) for x > 0: the recurrence lifts x to kAsymptoticMin, then the
// asymptotic series. Used where a single digamma is needed (criteria of a
// fit); differences of two digammas are dpoch, which never subtracts them.
DIRMN_HD double digamma(double x) {
  double s = 0.0;
  while (x < kAsymptoticMin) {
    s -= 1.0 / x;
    x += 1.0;
  }
  return s + log(x) - 0.5 / x - digamma_tail(x);
}

// trigamma(x) for x > 0, as digamma.
DIRMN_HD double trigamma(double x) {
  double s = 0.0;
  while (x < kAsymptoticMin) {
    s += 1.0 / (x * x);
    x += 1.0;
  }
  return s + 1.0 / x + 0.5 / (x * x) + trigamma_tail(x);
}

// The chain rule from alpha to log alpha for one parameter a: the gradient
// entry g becomes a g and the Hessian's diagonal entry d becomes
// a^2 d + a g (the rank-one part's vector u = 1 becomes u = alpha, its
// scalar unchanged). Either pointer may be null; the diagonal needs g.
DIRMN_HD void to_log_alpha(double a, double* g, double* d) {
  if (d != nullptr) *d = a * a * *d + a * *g;
  if (g != nullptr) *g *= a;
}

}  // namespace math
}  // namespace dirmn
