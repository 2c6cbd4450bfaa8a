// sampling.hpp: draws from the gamma, binomial and Dirichlet-multinomial
// distributions, the same bits on the host and on the device.
//
// A seed must give the same table on every backend. Rejection samplers
// compare a uniform with a function of other draws; one ulp of difference
// between two platforms' log flips an accept now and then, and every later
// draw of the row moves. So every value an accept/reject test or a
// returned draw depends on is computed here from + - * / and sqrt alone
// (correctly rounded by IEEE 754 on both), with the products kept apart
// from the sums (the device's compiler would fuse a * b + c into one
// rounding; `mul` and `add` forbid it there, and the host file that
// includes this is built with -ffp-contract=off). portable_log and
// portable_exp are accurate to a few ulp, which is all a sampler needs;
// their worth is that they are the same function everywhere.
//
// Exactness at the extremes: a gamma variate is drawn as its logarithm
// (alpha < 1 by Marsaglia & Tsang's boost G(a) = G(a + 1) U^(1/a), whose
// log is finite even at a = 1e-300), so Dirichlet proportions of tiny and
// huge alphas come out right up to the double range: a proportion below
// e^-745 of the largest is 0, as it would round to 0 in any double sum.
#pragma once

#include <cstdint>
#include <cstring>

#include "random.hpp"
#include "special.hpp"  // DIRMN_HD
#include "ziggurat_table.hpp"

namespace dirmn {
namespace math {

// Products and sums rounded one at a time on every platform.
DIRMN_HD double mul(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
DIRMN_HD double add(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}

// ln 2 split so that k * kLn2Hi is exact for |k| < 2^11 (Cody & Waite).
constexpr double kLn2Hi = 6.93147180369123816490e-01;
constexpr double kLn2Lo = 1.90821492927058770002e-10;
// exp(x) is 0 below this and overflows above the other.
constexpr double kExpUnderflow = -745.2;
constexpr double kExpOverflow = 709.78;

DIRMN_HD uint64_t double_bits(double x) {
  uint64_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}
DIRMN_HD double bits_double(uint64_t u) {
  double x;
  memcpy(&x, &u, sizeof x);
  return x;
}

// log(x) for finite x > 0 (subnormals included): x = 2^e m with m in
// [sqrt(1/2), sqrt(2)), log m = 2 atanh(s), s = (m - 1) / (m + 1), |s| <
// 0.172, by its series to s^23 (the next term is below 2^-56 of the sum).
DIRMN_HD double portable_log(double x) {
  int64_t e = 0;
  if (x < 0x1.0p-1022) {  // subnormal: scale into the normal range first
    x = mul(x, 0x1.0p54);
    e = -54;
  }
  const uint64_t u = double_bits(x);
  e += static_cast<int64_t>((u >> 52) & 0x7ff) - 1023;
  double m = bits_double((u & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL);
  if (m > 1.4142135623730951) {
    m = mul(m, 0.5);
    e += 1;
  }
  const double f = m - 1.0;  // exact (Sterbenz)
  const double s = f / add(2.0, f);
  const double z = mul(s, s);
  // p(z) = 1/3 + z/5 + ... + z^10/23 by Estrin's scheme: a few products
  // deep instead of ten (the sampler's cost is these chains' latency).
  const double z2 = mul(z, z), z4 = mul(z2, z2), z8 = mul(z4, z4);
  const double q0 = add(1.0 / 3.0, mul(1.0 / 5.0, z)), q1 = add(1.0 / 7.0, mul(1.0 / 9.0, z));
  const double q2 = add(1.0 / 11.0, mul(1.0 / 13.0, z)), q3 = add(1.0 / 15.0, mul(1.0 / 17.0, z));
  const double q4 = add(1.0 / 19.0, mul(1.0 / 21.0, z));
  const double t0 = add(add(q0, mul(q1, z2)), mul(add(q2, mul(q3, z2)), z4));
  const double p = add(t0, mul(add(q4, mul(1.0 / 23.0, z2)), z8));
  // log m = 2 s + 2 s z p, f = 2 s + s f: log m = f - s (f - 2 z p) keeps
  // the leading term exact.
  const double log_m = add(f, -mul(s, add(f, -mul(2.0, mul(z, p)))));
  const double de = static_cast<double>(e);
  return add(mul(de, kLn2Hi), add(mul(de, kLn2Lo), log_m));
}

// log(1 + x) for x > -1, accurate for tiny x as well: with u = 1 + x
// rounded, log1p(x) = log(u) x / (u - 1) (Goldberg 1991, theorem 4).
DIRMN_HD double portable_log1p(double x) {
  const double u = add(1.0, x);
  if (u == 1.0) return x;
  return mul(portable_log(u), x / add(u, -1.0));
}

// exp(x): 0 below kExpUnderflow, subnormal results included. x = k ln 2 +
// r, |r| <= ln 2 / 2, exp(r) by its Taylor series to r^13 (the next term
// is below 2^-60 of the sum), scaled by 2^k in two steps.
DIRMN_HD double portable_exp(double x) {
  if (x < kExpUnderflow) return 0.0;
  if (x > kExpOverflow) return bits_double(0x7ff0000000000000ULL);
  const double kd = static_cast<double>(static_cast<int64_t>(add(mul(x, 1.4426950408889634), x < 0 ? -0.5 : 0.5)));
  const double r = add(add(x, -mul(kd, kLn2Hi)), -mul(kd, kLn2Lo));
  // The Taylor polynomial by Estrin's scheme (see portable_log).
  const double r2 = mul(r, r), r4 = mul(r2, r2), r8 = mul(r4, r4);
  const double e0 = add(1.0, r), e1 = add(1.0 / 2.0, mul(1.0 / 6.0, r));
  const double e2 = add(1.0 / 24.0, mul(1.0 / 120.0, r)), e3 = add(1.0 / 720.0, mul(1.0 / 5040.0, r));
  const double e4 = add(1.0 / 40320.0, mul(1.0 / 362880.0, r)), e5 = add(1.0 / 3628800.0, mul(1.0 / 39916800.0, r));
  const double e6 = add(1.0 / 479001600.0, mul(1.0 / 6227020800.0, r));
  const double lo = add(add(e0, mul(e1, r2)), mul(add(e2, mul(e3, r2)), r4));
  const double hi = add(add(e4, mul(e5, r2)), mul(e6, r4));
  const double er = add(lo, mul(hi, r8));
  int64_t k = static_cast<int64_t>(kd);
  // 2^k as one or two factors, each a normal double.
  int64_t k1 = k / 2, k2 = k - k / 2;
  const double s1 = bits_double(static_cast<uint64_t>(k1 + 1023) << 52);
  const double s2 = bits_double(static_cast<uint64_t>(k2 + 1023) << 52);
  return mul(mul(er, s1), s2);
}

// A standard normal draw by the ziggurat (ziggurat_table.hpp): one 64-bit
// draw picks a layer (8 bits), a sign (1) and a point in it (53); about 99 %
// of draws fall inside their layer's sure part and cost a product and a
// comparison. The rest take the wedge's test (one exp) or, from the base,
// Marsaglia's tail beyond r (two logs).
DIRMN_HD double draw_normal(RandomStream& rng) {
  for (;;) {
    const uint64_t b = rng.bits();
    const int i = static_cast<int>(b & 0xff);
    const double sign = (b & 0x100) != 0 ? -1.0 : 1.0;
    const double x = mul(static_cast<double>(b >> 11) * 0x1.0p-53, kZigguratX[i]);
    if (x < kZigguratX[i + 1]) return mul(sign, x);
    if (i == 0) {
      for (;;) {  // the tail: r + a with a exponential at rate r, accepted by a second
        const double a = -portable_log(rng.uniform_open()) / kZigguratR;
        const double e = -portable_log(rng.uniform_open());
        if (add(e, e) > mul(a, a)) return mul(sign, add(kZigguratR, a));
      }
    }
    // The wedge between f(x_i) and f(x_{i+1}), under f by an exp.
    const double y = add(kZigguratF[i], mul(rng.uniform(), add(kZigguratF[i + 1], -kZigguratF[i])));
    if (y < portable_exp(mul(-0.5, mul(x, x)))) return mul(sign, x);
  }
}

// What a gamma draw of one shape needs, computed once per shape.
struct GammaShape {
  double d = 0.0;      // a' - 1/3, a' = a (a >= 1) or a + 1
  double c = 0.0;      // 1 / sqrt(9 d)
  double inv_a = 0.0;  // 1 / a where a < 1 (the boost), else 0
};

DIRMN_HD GammaShape gamma_shape(double a) {
  GammaShape g;
  const double a1 = a < 1.0 ? add(a, 1.0) : a;
  g.d = add(a1, -1.0 / 3.0);
  g.c = 1.0 / sqrt(mul(9.0, g.d));
  g.inv_a = a < 1.0 ? 1.0 / a : 0.0;
  return g;
}

// The shapes whose draws are taken as values rather than logs (draw_gamma):
// every such draw is a normal double, the boost's U^(1/a) included (U >=
// 2^-53, so U^(1/a) >= 2^-848 at a = 1/16), and a row's sum of them stays
// finite. Outside, only logs keep tiny and huge shapes exact.
constexpr double kGammaValueMinShape = 0.0625;
constexpr double kGammaValueMaxShape = 1e290;
DIRMN_HD bool gamma_by_value(double a) { return a >= kGammaValueMinShape && a <= kGammaValueMaxShape; }

// Marsaglia & Tsang's v for a' = d + 1/3 >= 1 (their 2000 paper, "A simple
// method for generating gamma variables", ACM TOMS 26(3), with their
// squeeze): a Gamma(a') draw is d v.
DIRMN_HD double marsaglia_tsang_v(const GammaShape& g, RandomStream& rng) {
  for (;;) {
    const double x = draw_normal(rng);
    double v = add(1.0, mul(g.c, x));
    if (v <= 0.0) continue;
    v = mul(mul(v, v), v);
    const double u = rng.uniform_open();
    const double x2 = mul(x, x);
    if (u < add(1.0, -mul(0.0331, mul(x2, x2)))) return v;
    if (portable_log(u) < add(mul(0.5, x2), mul(g.d, add(add(1.0, -v), portable_log(v))))) return v;
  }
}

// A Gamma(a, 1) draw for gamma_by_value(a); a < 1 by the boost G(a + 1)
// U^(1/a).
DIRMN_HD double draw_gamma(const GammaShape& g, RandomStream& rng) {
  double x = mul(g.d, marsaglia_tsang_v(g, rng));
  if (g.inv_a != 0.0) x = mul(x, portable_exp(mul(portable_log(rng.uniform_open()), g.inv_a)));
  return x;
}

// The log of a Gamma(a, 1) draw, finite for every a in [1e-306, 1e306]:
// log(d v), and for a < 1 the boost's log(U) / a added.
DIRMN_HD double draw_log_gamma(const GammaShape& g, RandomStream& rng) {
  double lg = portable_log(mul(g.d, marsaglia_tsang_v(g, rng)));
  if (g.inv_a != 0.0) lg = add(lg, mul(portable_log(rng.uniform_open()), g.inv_a));
  return lg;
}

// Stirling's tail of log k!: log k! - [(k + 1/2) log(k + 1) - (k + 1) +
// log(2 pi) / 2] (the values for k < 10 from mpmath at 40 digits; beyond,
// the series 1/12x - 1/360x^3 + 1/1260x^5, x = k + 1).
DIRMN_HD double stirling_fc(double k) {
  if (k < 10.0) {
    constexpr double kFc[10] = {0.08106146679532726,  0.0413406959554093,   0.02767792568499834,
                                0.020790672103765093, 0.016644691189821193, 0.013876128823070748,
                                0.01189670994589177,  0.010411265261972096, 0.009255462182712733,
                                0.00833056343336287};
    return kFc[static_cast<int>(k)];
  }
  const double x = add(k, 1.0);
  const double x2 = mul(x, x);
  return add(1.0 / 12.0, -add(1.0 / 360.0, -(1.0 / 1260.0) / x2) / x2) / x;
}

// Below this mean (n min(p, 1 - p)) a binomial draw is by inversion.
constexpr double kBinomialInversionMean = 24.0;
// 1 / (x + 1) for the inversion's first steps (a division costs several
// products; each constant is the correctly rounded quotient on every
// compiler).
constexpr int kReciprocals = 32;
#ifdef __CUDA_ARCH__
__constant__
#endif
constexpr double kReciprocal[kReciprocals] = {
    1.0,        1.0 / 2,  1.0 / 3,  1.0 / 4,  1.0 / 5,  1.0 / 6,  1.0 / 7,  1.0 / 8,
    1.0 / 9,  1.0 / 10, 1.0 / 11, 1.0 / 12, 1.0 / 13, 1.0 / 14, 1.0 / 15, 1.0 / 16,
    1.0 / 17, 1.0 / 18, 1.0 / 19, 1.0 / 20, 1.0 / 21, 1.0 / 22, 1.0 / 23, 1.0 / 24,
    1.0 / 25, 1.0 / 26, 1.0 / 27, 1.0 / 28, 1.0 / 29, 1.0 / 30, 1.0 / 31, 1.0 / 32};

// Binomial(n, p) for n >= 1 and 0 < p <= 1/2 (draw_binomial's body):
// inversion from 0 where the mean is small (Kachitvichyanukul & Schmeiser
// 1988's BINV), else Hormann's BTRS ("The generation of binomial random
// variates", J. Statist. Comput. Simul. 46, 1993: transformed rejection
// with squeeze, its acceptance test in the log-ratio form that keeps every
// term small).
DIRMN_HD int64_t draw_binomial_low(int64_t n, double p, RandomStream& rng) {
  const double dn = static_cast<double>(n);
  const double q = add(1.0, -p);
  if (mul(dn, p) < kBinomialInversionMean) {
    const double s = p / q;
    const double a = mul(add(dn, 1.0), s);
    const double r0 = portable_exp(mul(dn, portable_log1p(-p)));
    for (;;) {
      double r = r0, u = rng.uniform();
      for (int64_t x = 0; x <= n; ++x) {
        if (u < r) return x;
        u = add(u, -r);
        // a / (x + 1), by a product where the reciprocal is a constant.
        const double ax = x < kReciprocals ? mul(a, kReciprocal[x]) : a / static_cast<double>(x + 1);
        r = mul(r, add(ax, -s));
        if (r == 0.0) break;  // past the mean, the rest of the pmf underflows
      }
      // The rounding left u beyond the sum of the pmf: draw again.
    }
  }
  const double spq = sqrt(mul(mul(dn, p), q));
  const double b = add(1.15, mul(2.53, spq));
  const double a = add(add(-0.0873, mul(0.0248, b)), mul(0.01, p));
  const double c = add(mul(dn, p), 0.5);
  const double v_r = add(0.92, -4.2 / b);
  const double alpha = mul(add(2.83, 5.1 / b), spq);
  const double r = p / q;
  const double m = static_cast<double>(static_cast<int64_t>(mul(add(dn, 1.0), p)));
  const double h = add(stirling_fc(m), stirling_fc(add(dn, -m)));
  for (;;) {
    const double u = add(rng.uniform(), -0.5);
    double v = rng.uniform_open();
    const double us = add(0.5, -(u < 0 ? -u : u));
    const double kd = add(mul(add(mul(2.0, a) / us, b), u), c);
    if (kd < 0.0 || kd >= add(dn, 1.0)) continue;
    const double k = static_cast<double>(static_cast<int64_t>(kd));
    if (us >= 0.07 && v <= v_r) return static_cast<int64_t>(k);
    v = portable_log(mul(v, alpha / add(a / mul(us, us), b)));
    // log [f(k) / f(m)] = log (m! (n - m)! / (k! (n - k)!)) + (k - m) log r,
    // each factorial by Stirling, gathered into logs of ratios near 1.
    const double nm1 = add(add(dn, -m), 1.0), nk1 = add(add(dn, -k), 1.0);
    const double bound =
        add(add(add(mul(add(m, 0.5), portable_log(add(m, 1.0) / mul(r, nm1))),
                    mul(add(dn, 1.0), portable_log(nm1 / nk1))),
                mul(add(k, 0.5), portable_log(mul(r, nk1) / add(k, 1.0)))),
            add(h, -add(stirling_fc(k), stirling_fc(add(dn, -k)))));
    if (v <= bound) return static_cast<int64_t>(k);
  }
}

// A Binomial(n, p) draw for any n >= 0 and p in [0, 1]. Above 1/2 it
// draws n - Binomial(n, 1 - p) (1 - p exact there), without recursion (a
// device function is inlined whole).
DIRMN_HD int64_t draw_binomial(int64_t n, double p, RandomStream& rng) {
  if (n <= 0 || p <= 0.0) return 0;
  if (p >= 1.0) return n;
  if (p > 0.5) return n - draw_binomial_low(n, add(1.0, -p), rng);
  return draw_binomial_low(n, p, rng);
}

}  // namespace math
}  // namespace dirmn
