// test_robust_fit.cpp: what "converged" promises, from any finite positive
// start and at any finite row weights. A fit that says converged = 1 must
// be at the maximum (held to a long-double Minka fixed point) with finite
// values and a gradient (recomputed by dirmn_loglik_sum) below tolerance;
// weights scaled by any constant give the same alpha and a log-likelihood
// scaled by it, or OVERFLOW where that is beyond a double -- never NaN.
#include <catch2/catch.hpp>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "support.hpp"

using namespace dirmn_test;

namespace {

struct Fitted {
  dirmn_status status = DIRMN_ERROR_INTERNAL;
  dirmn_fit_result r{};
  std::vector<double> alpha, se;
  std::string message;
};

Fitted run_fit(dirmn_context* ctx, dirmn_counts* c, int64_t cols, const double* start,
               const double* weights) {
  Fitted f;
  f.alpha.assign(static_cast<size_t>(cols), -1.0);
  f.se.assign(static_cast<size_t>(cols), -1.0);
  f.r.size = sizeof f.r;
  f.r.alpha = f.alpha.data();
  f.r.std_error_alpha = f.se.data();
  dirmn_fit_options o;
  dirmn_fit_options_init(&o);
  o.start = start;
  o.weights = weights;
  f.status = dirmn_fit(ctx, c, &o, &f.r);
  f.message = dirmn_last_error(ctx);
  return f;
}

// The weight of the rows with counts (the gradient's scale), in long double.
long double rows_weight(const std::vector<double>& x, int64_t rows, int64_t cols,
                        const double* w) {
  long double s = 0;
  for (int64_t b = 0; b < rows; ++b) {
    double n = 0;
    for (int64_t v = 0; v < cols; ++v) n += x[static_cast<size_t>(b * cols + v)];
    if (n > 0) s += w ? w[b] : 1.0;
  }
  return s;
}

// What converged = 1 promises: finite values, the stated gradient below
// sqrt(tolerance) x the rows' weight, and the gradient dirmn_loglik_sum
// computes at the returned alpha as small.
void check_converged(dirmn_context* ctx, dirmn_counts* c, const Fitted& f,
                     const std::vector<double>& x, int64_t rows, int64_t cols, const double* w) {
  INFO(f.message);
  REQUIRE(f.status == DIRMN_SUCCESS);
  REQUIRE(f.r.converged == 1);
  CHECK(std::isfinite(f.r.loglik));
  CHECK(std::isfinite(f.r.loglik_kernel));
  for (double a : f.alpha) REQUIRE((std::isfinite(a) && a > 0.0));
  // Rows whose weights differ by hundreds of orders of magnitude leave one
  // row's information: no overdispersion to see, and alpha the proportions.
  if (f.r.multinomial_limit) {
    CHECK(std::isinf(f.r.precision));
    double sum = 0.0;
    for (double a : f.alpha) sum += a;
    CHECK(std::fabs(sum - 1.0) < 1e-12);
    return;
  }
  CHECK(std::isfinite(f.r.precision));
  const double scale = static_cast<double>(rows_weight(x, rows, cols, w));
  const double g_tol = 1e-5 * scale;  // sqrt(1e-10), the default tolerance
  CHECK(f.r.gradient_norm <= g_tol);
  std::vector<double> g(static_cast<size_t>(cols));
  REQUIRE(dirmn_loglik_sum(ctx, c, f.alpha.data(), 1, DIRMN_PARAM_ALPHA, w, DIRMN_KERNEL, nullptr, g.data(),
                           nullptr, nullptr) == DIRMN_SUCCESS);
  for (int64_t v = 0; v < cols; ++v)
    REQUIRE(std::fabs(g[static_cast<size_t>(v)] * f.alpha[static_cast<size_t>(v)]) <= g_tol);
}

}  // namespace

TEST_CASE("fit: every finite positive start reaches the maximum", "[fit][robust]") {
  const int64_t rows = 40, cols = 6;
  const std::vector<double> truth = {0.9, 0.5, 1.4, 0.3, 0.7, 1.2};
  const auto x = simulate_dm(rows, truth, 30, 5);
  const auto want = minka_ref(x, rows, cols, std::vector<double>(cols, 1.0));
  const double want_ll = table_loglik_ref(x, rows, cols, want);
  const double dmax = std::numeric_limits<double>::max();
  const double tiny = std::numeric_limits<double>::denorm_min();
  // Uniform starts across the whole range, and uneven ones: the issue's
  // (1e308: an infinite sum; 5e-324: an infinite trigamma; 1e-200 and 1e4:
  // a "converged" far from the maximum, or stuck at 1000 iterations).
  std::vector<std::vector<double>> starts;
  for (double s : {dmax, 1e308, 1e307, 1e300, 1e100, 1e10, 1e4, 1e-10, 1e-100, 1e-200, 1e-300,
                   DBL_MIN, tiny})
    starts.push_back(std::vector<double>(cols, s));
  starts.push_back({1e-300, 1.0, 1.0, 1.0, 1.0, 1.0});
  starts.push_back({dmax, 1e-300, 1.0, tiny, 1e200, 3.0});
  starts.push_back({1e300, 1e300, 1e300, 1e300, 1e300, 1e-300});
  for (dirmn_backend be : backends_under_test()) {
    Context ctx = make_context(be);
    REQUIRE(ctx);
    Counts c = counts_of(ctx.get(), x, rows, cols);
    for (const auto& start : starts) {
      INFO(backend_name(be) << ", start[0] " << start[0] << ", start[1] " << start[1]);
      const Fitted f = run_fit(ctx.get(), c.get(), cols, start.data(), nullptr);
      check_converged(ctx.get(), c.get(), f, x, rows, cols, nullptr);
      CHECK(close_to(f.r.loglik_kernel, want_ll, 1e-10));
      for (int64_t v = 0; v < cols; ++v)
        CHECK(close_to(f.alpha[static_cast<size_t>(v)], want[static_cast<size_t>(v)], 1e-5));
    }
  }
}

TEST_CASE("fit: weights times any constant give the same alpha, or OVERFLOW", "[fit][robust]") {
  const int64_t rows = 40, cols = 6;
  const auto x = simulate_dm(rows, {0.9, 0.5, 1.4, 0.3, 0.7, 1.2}, 30, 6);
  std::vector<double> base(static_cast<size_t>(rows));
  for (int64_t b = 0; b < rows; ++b) base[static_cast<size_t>(b)] = 1.0 + static_cast<double>(b % 5);
  for (dirmn_backend be : backends_under_test()) {
    Context ctx = make_context(be);
    REQUIRE(ctx);
    Counts c = counts_of(ctx.get(), x, rows, cols);
    const Fitted ref = run_fit(ctx.get(), c.get(), cols, nullptr, base.data());
    REQUIRE(ref.status == DIRMN_SUCCESS);
    // Exactly representable scales (powers of two) keep every digit; the
    // decimal ones round each weight once.
    for (double k : {0x1p-1000, 0x1p-1070, 0x1p1000, 1e-300, 1e-310, 1e300, 1e-200, 1e200}) {
      INFO(backend_name(be) << ", weights times " << k);
      std::vector<double> w(base);
      for (double& v : w) v *= k;
      const Fitted f = run_fit(ctx.get(), c.get(), cols, nullptr, w.data());
      check_converged(ctx.get(), c.get(), f, x, rows, cols, w.data());
      CHECK(f.r.multinomial_limit == 0);
      // Powers of two scale every sum exactly, so the iterations repeat
      // to the bit; a decimal scale rounds each weight once, and alpha is
      // then as close as the tolerance places the optimum. A subnormal
      // log-likelihood has the digits a subnormal holds.
      int e = 0;
      const double rel = std::frexp(k, &e) == 0.5 ? 1e-12 : 1e-6;
      const double tiny = std::numeric_limits<double>::denorm_min();
      CHECK(std::fabs(f.r.loglik - ref.r.loglik * k) <=
            std::max(rel * std::fabs(ref.r.loglik * k), 4 * tiny));
      for (int64_t v = 0; v < cols; ++v) {
        CHECK(close_to(f.alpha[static_cast<size_t>(v)], ref.alpha[static_cast<size_t>(v)], rel));
        // Standard errors scale as 1 / sqrt(k).
        CHECK(close_to(f.se[static_cast<size_t>(v)] * std::sqrt(k), ref.se[static_cast<size_t>(v)], 1e-6));
      }
    }
    // Weights whose weighted log-likelihood is beyond a double: OVERFLOW,
    // named, nothing written.
    for (double k : {1e305, 1e308, std::numeric_limits<double>::max()}) {
      INFO(backend_name(be) << ", weights times " << k);
      std::vector<double> w(base);
      for (double& v : w) v = std::min(v * k, std::numeric_limits<double>::max());
      const Fitted f = run_fit(ctx.get(), c.get(), cols, nullptr, w.data());
      CHECK(f.status == DIRMN_ERROR_OVERFLOW);
      CHECK(f.message.find("weighted log-likelihood is beyond the largest double") != std::string::npos);
      for (double a : f.alpha) CHECK(a == -1.0);
      double value = 7.0;
      CHECK(dirmn_loglik_sum(ctx.get(), c.get(), ref.alpha.data(), 1, DIRMN_PARAM_ALPHA, w.data(), DIRMN_KERNEL,
                             &value, nullptr, nullptr, nullptr) == DIRMN_ERROR_OVERFLOW);
      CHECK(value == 7.0);
    }
    // One huge weight among ordinary ones: the fit follows that row.
    std::vector<double> w(base);
    w[3] = 1e300;
    const Fitted f = run_fit(ctx.get(), c.get(), cols, nullptr, w.data());
    check_converged(ctx.get(), c.get(), f, x, rows, cols, w.data());
  }
}

TEST_CASE("fit and mixtures: random starts and weights from 1e-300 to 1e300", "[fit][mixture][robust]") {
  // The property: every SUCCESS with converged = 1 is at a stationary point
  // with finite values; anything else is a status or converged = 0, never
  // NaN under SUCCESS.
  const int64_t rows = 30, cols = 5;
  const auto sim = simulate_mixture(rows, cols, 2, 17, 40, 30);
  const auto& x = sim.x;
  std::mt19937_64 rng(2024);
  std::uniform_real_distribution<double> expo(-300.0, 300.0);
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  Counts c = counts_of(ctx.get(), x, rows, cols);
  int converged = 0, overflow = 0;
  for (int trial = 0; trial < 120; ++trial) {
    std::vector<double> start(static_cast<size_t>(cols)), w(static_cast<size_t>(rows));
    for (double& s : start) s = std::pow(10.0, expo(rng));
    // Half the trials: one scale for every row; the rest: each row its own.
    const double common = std::pow(10.0, expo(rng));
    for (double& v : w) v = trial % 2 ? common * (1.0 + 0.1 * expo(rng) / 300.0) : std::pow(10.0, expo(rng));
    INFO("trial " << trial << ", start[0] " << start[0] << ", w[0] " << w[0]);
    const Fitted f = run_fit(ctx.get(), c.get(), cols, start.data(), w.data());
    if (f.status == DIRMN_ERROR_OVERFLOW) {
      ++overflow;
      continue;
    }
    INFO(f.message);
    REQUIRE(f.status == DIRMN_SUCCESS);
    REQUIRE(std::isfinite(f.r.loglik));
    if (f.r.converged) {
      check_converged(ctx.get(), c.get(), f, x, rows, cols, w.data());
      ++converged;
    }

    dirmn_mixture_options o;
    dirmn_mixture_options_init(&o);
    o.weights = w.data();
    o.objective = trial % 3 == 0 ? DIRMN_MIXTURE_DMN : DIRMN_MIXTURE_ML;
    o.starts = 1;
    dirmn_mixture* m = nullptr;
    const dirmn_status s = dirmn_mixture_fit(ctx.get(), c.get(), 2, &o, &m);
    Mixture owned(m);
    INFO(dirmn_last_error(ctx.get()));
    REQUIRE((s == DIRMN_SUCCESS || s == DIRMN_ERROR_OVERFLOW));
    if (s != DIRMN_SUCCESS) continue;
    dirmn_mixture_info info;
    info.size = sizeof info;
    REQUIRE(dirmn_mixture_get_info(m, &info) == DIRMN_SUCCESS);
    CHECK(std::isfinite(info.loglik));
    CHECK(std::isfinite(info.objective));
    CHECK(std::isfinite(info.aic));
    CHECK(std::isfinite(info.bic));
    CHECK(std::isfinite(info.laplace));
    std::vector<double> alpha(static_cast<size_t>(2 * cols)), pi(2);
    REQUIRE(dirmn_mixture_get_params(m, alpha.data(), cols, 1, pi.data()) == DIRMN_SUCCESS);
    for (double a : alpha) CHECK((std::isfinite(a) && a > 0.0));
    CHECK(std::fabs(pi[0] + pi[1] - 1.0) < 1e-12);
  }
  // Most trials are representable and converge.
  CHECK(converged > 60);
  CHECK(converged + overflow <= 120);
}

TEST_CASE("mixtures: ML fits do not depend on the weights' scale", "[mixture][robust]") {
  const int64_t rows = 60, cols = 6;
  const auto sim = simulate_mixture(rows, cols, 2, 23, 60, 20);
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  Counts c = counts_of(ctx.get(), sim.x, rows, cols);
  dirmn_mixture_options o;
  dirmn_mixture_options_init(&o);
  Mixture ref = fit(ctx.get(), c.get(), 2, &o);
  dirmn_mixture_info ri;
  ri.size = sizeof ri;
  REQUIRE(dirmn_mixture_get_info(ref.get(), &ri) == DIRMN_SUCCESS);
  std::vector<double> ra(static_cast<size_t>(2 * cols)), rpi(2);
  REQUIRE(dirmn_mixture_get_params(ref.get(), ra.data(), cols, 1, rpi.data()) == DIRMN_SUCCESS);
  for (double k : {0x1p-1000, 0x1p-1070, 0x1p900}) {
    INFO("weights " << k);
    std::vector<double> w(static_cast<size_t>(rows), k);
    o.weights = w.data();
    Mixture m = fit(ctx.get(), c.get(), 2, &o);
    dirmn_mixture_info mi;
    mi.size = sizeof mi;
    REQUIRE(dirmn_mixture_get_info(m.get(), &mi) == DIRMN_SUCCESS);
    std::vector<double> a(static_cast<size_t>(2 * cols)), pi(2);
    REQUIRE(dirmn_mixture_get_params(m.get(), a.data(), cols, 1, pi.data()) == DIRMN_SUCCESS);
    CHECK(mi.iterations == ri.iterations);
    CHECK(std::fabs(mi.loglik - ri.loglik * k) <=
          std::max(1e-12 * std::fabs(ri.loglik * k), 4 * std::numeric_limits<double>::denorm_min()));
    // BIC's penalty: P log n, n the sum of the weights (k per row; its log
    // is found although the sum itself may be no double).
    const double P = static_cast<double>(ri.parameters);
    CHECK(close_to(mi.bic, -2.0 * mi.loglik + P * (std::log(static_cast<double>(rows)) + std::log(k)), 1e-12));
    for (size_t i = 0; i < a.size(); ++i) CHECK(close_to(a[i], ra[i], 1e-12));
    CHECK(close_to(pi[0], rpi[0], 1e-12));
  }
}
