// test_sampling_math.cpp: the sampler's own arithmetic (math/sampling.hpp)
// -- its log, log1p and exp against the platform's to a few ulp over the
// whole double range, its ziggurat's layers and normal draws, and its gamma
// and binomial draws against their distributions (moments; the normal's cdf
// and the binomial's pmf by chi-square) on both of the binomial's methods
// and at the switches between them.
#include <cmath>
#include <vector>

#include "../kernels/math/distributions.hpp"
#include "../kernels/math/sampling.hpp"
#include "support.hpp"

using namespace dirmn::math;

TEST_CASE("sampling math: log, log1p and exp within 4 ulp of libm", "[sample][math]") {
  double worst = 0.0;
  for (double x = 1e-320; x < 1e308; x *= 1.0123) {
    const double want = std::log(x);
    if (want == 0.0) continue;
    worst = std::max(worst, std::fabs(portable_log(x) - want) / std::fabs(want));
  }
  for (double x = 0.5; x < 2.0; x += 1e-5) {
    const double want = std::log(x);
    if (want == 0.0) continue;
    worst = std::max(worst, std::fabs(portable_log(x) - want) / std::fabs(want));
  }
  CHECK(worst < 4 * 0x1.0p-52);
  double worst1p = 0.0;
  for (double x = 1e-300; x < 1e5; x *= 1.031)
    for (double s : {1.0, -1.0}) {
      if (s * x <= -1.0) continue;
      const double want = std::log1p(s * x);
      worst1p = std::max(worst1p, std::fabs(portable_log1p(s * x) - want) / std::fabs(want));
    }
  CHECK(worst1p < 4 * 0x1.0p-52);
  double worst_exp = 0.0;
  for (double x = -708.0; x < 709.0; x += 0.00731) {
    const double want = std::exp(x);
    worst_exp = std::max(worst_exp, std::fabs(portable_exp(x) - want) / want);
  }
  CHECK(worst_exp < 4 * 0x1.0p-52);
  // Subnormal results, and 0 below them.
  CHECK(std::fabs(portable_exp(-740.0) - std::exp(-740.0)) <= 0x1.0p-1074 * 2);
  CHECK(portable_exp(-800.0) == 0.0);
  CHECK(std::fabs(portable_log(4.9e-324) - std::log(4.9e-324)) < 1e-12);
}

TEST_CASE("sampling math: the ziggurat's layers and its normal draws", "[sample][math]") {
  // Every layer has the base's area V = r f(r) + the tail beyond r (erfc,
  // independent of the table's generator), and the top layer closes at 0.
  const double r = kZigguratR;
  const double v = r * std::exp(-r * r / 2) + std::sqrt(M_PI / 2) * std::erfc(r / std::sqrt(2.0));
  CHECK(std::fabs(kZigguratX[0] * std::exp(-r * r / 2) - v) < 1e-15);
  for (int i = 1; i < kZigguratLayers; ++i) {
    const double area = kZigguratX[i] * (kZigguratF[i + 1] - kZigguratF[i]);
    INFO("layer " << i);
    CHECK(std::fabs(area - v) < 1e-13 * v);
    // exp's argument carries x^2 / 2 ulp of relative error from the rounded x.
    const double x2 = kZigguratX[i] * kZigguratX[i];
    CHECK(std::fabs(kZigguratF[i] - std::exp(-x2 / 2)) < (2.0 + x2) * 0x1.0p-52 * kZigguratF[i]);
  }
  CHECK(kZigguratX[kZigguratLayers] == 0.0);
  // 2 * 10^6 draws against the normal's cdf: 200 bins over [-4.5, 4.5] and
  // the two tails beyond (the layers' edges and the tail method included).
  RandomStream rng{0x2199, 0};
  const int draws = 2000000, bins = 200;
  const double lo = -4.5, width = 9.0 / bins;
  std::vector<double> observed(bins + 2, 0.0), expected(bins + 2, 0.0);
  double beyond_r = 0.0;
  for (int i = 0; i < draws; ++i) {
    const double z = draw_normal(rng);
    REQUIRE(std::isfinite(z));
    if (std::fabs(z) > r) beyond_r += 1.0;
    const int b = z < lo ? 0 : z >= -lo ? bins + 1 : 1 + std::min(bins - 1, static_cast<int>((z - lo) / width));
    observed[static_cast<size_t>(b)] += 1.0;
  }
  const auto cdf = [](double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); };
  expected[0] = draws * cdf(lo);
  expected[bins + 1] = draws * cdf(lo);
  for (int b = 0; b < bins; ++b)
    expected[static_cast<size_t>(b) + 1] = draws * (cdf(lo + (b + 1) * width) - cdf(lo + b * width));
  CHECK(dirmn_test::chi_square_p(observed, expected) > 1e-4);
  // P(|Z| > r) = 2.58e-4: about 516 of the draws, sd 23.
  CHECK(std::fabs(beyond_r - draws * 2 * cdf(-r)) < 5 * std::sqrt(draws * 2 * cdf(-r)));
}

// 2 * 10^5 Gamma(a) draws from draw() against their mean a and variance a.
template <class Draw>
void check_gamma_moments(double a, Draw draw) {
  const int n = 200000;
  double m = 0.0, m2 = 0.0;
  for (int i = 0; i < n; ++i) {
    const double x = draw() / a;  // mean 1, variance 1 / a
    REQUIRE((std::isfinite(x) && x >= 0.0));
    m += x;
    m2 += x * x;
  }
  m /= n;
  const double var = m2 / n - m * m;
  CHECK(std::fabs(m - 1.0) < 5 * std::sqrt(1.0 / a / n));
  // The variance's own standard error is about sqrt((6 / a + 2) / n) / a.
  CHECK(std::fabs(var - 1.0 / a) < 6 * std::sqrt((6.0 / a + 2.0) / n) / a);
}

TEST_CASE("sampling math: gamma draws by value match their moments", "[sample][math]") {
  CHECK_FALSE(gamma_by_value(0.06));
  CHECK(gamma_by_value(kGammaValueMinShape));
  CHECK(gamma_by_value(1e290));
  CHECK_FALSE(gamma_by_value(1e291));
  for (double a : {0.0625, 0.3, 1.0, 1.8, 40.0, 1e6}) {
    const GammaShape g = gamma_shape(a);
    RandomStream r{0xbead + static_cast<uint64_t>(a * 1000), 0};
    INFO("shape " << a);
    check_gamma_moments(a, [&] {
      const double x = draw_gamma(g, r);
      REQUIRE(x > 0.0);  // a normal double: no underflow in this range
      return x;
    });
  }
  // At 1e200 a draw is a (1 + z / sqrt(a)): a to within 1e-90.
  const GammaShape huge = gamma_shape(1e200);
  RandomStream r{11, 0};
  for (int i = 0; i < 1000; ++i) CHECK(std::fabs(draw_gamma(huge, r) / 1e200 - 1.0) < 1e-90 + 1e-15);
}

TEST_CASE("sampling math: gamma draws, tiny to huge shapes", "[sample][math]") {
  for (double a : {1e-3, 0.3, 1.0, 2.5, 40.0, 1e6}) {
    const GammaShape g = gamma_shape(a);
    RandomStream r{0x5eed + static_cast<uint64_t>(a * 1000), 0};
    INFO("shape " << a);
    check_gamma_moments(a, [&] {
      const double lg = draw_log_gamma(g, r);
      REQUIRE(std::isfinite(lg));
      return std::exp(lg);
    });
  }
  // log G at a = 1e-300 is finite and hugely negative.
  const GammaShape tiny = gamma_shape(1e-300);
  RandomStream r{3, 0};
  for (int i = 0; i < 1000; ++i) {
    const double lg = draw_log_gamma(tiny, r);
    REQUIRE(std::isfinite(lg));
    CHECK(lg < -1e290);
  }
}

TEST_CASE("sampling math: binomial draws follow the pmf, both methods", "[sample][math]") {
  struct Case {
    int64_t n;
    double p;
  };
  for (const Case c : {Case{20, 0.3}, Case{1000, 0.0099}, Case{1000, 0.0101}, Case{1000, 0.0239},
                       Case{1000, 0.0241}, Case{400, 0.5}, Case{30, 0.9},
                       Case{100000, 0.37}, Case{2000000000, 3e-9}}) {
    RandomStream r{77 + static_cast<uint64_t>(c.n), 0};
    const int draws = 400000;
    const double mean = static_cast<double>(c.n) * c.p, sd = std::sqrt(mean * (1 - c.p));
    const int64_t lo = std::max<int64_t>(0, static_cast<int64_t>(mean - 6 * sd - 1));
    const int64_t hi = std::min<int64_t>(c.n, static_cast<int64_t>(mean + 6 * sd + 2));
    std::vector<double> observed(static_cast<size_t>(hi - lo + 1), 0.0), expected(observed.size());
    double outside = 0.0;
    for (int i = 0; i < draws; ++i) {
      const int64_t x = draw_binomial(c.n, c.p, r);
      REQUIRE((x >= 0 && x <= c.n));
      if (x < lo || x > hi) outside += 1.0;
      else observed[static_cast<size_t>(x - lo)] += 1.0;
    }
    for (int64_t x = lo; x <= hi; ++x) {
      const long double N = static_cast<long double>(c.n), X = static_cast<long double>(x);
      const long double lp = lgammal(N + 1) - lgammal(X + 1) - lgammal(N - X + 1) + X * logl(c.p) +
                             (N - X) * log1pl(-static_cast<long double>(c.p));
      expected[static_cast<size_t>(x - lo)] = draws * static_cast<double>(expl(lp));
    }
    INFO("n " << c.n << ", p " << c.p);
    CHECK(outside < 3.0);
    CHECK(dirmn_test::chi_square_p(observed, expected) > 1e-4);
  }
}
