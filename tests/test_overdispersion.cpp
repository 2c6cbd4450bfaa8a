// test_overdispersion.cpp: dirmn_overdispersion_test -- the likelihood
// ratio of the DM against the multinomial and Kim & Margolin's C(alpha)
// statistic -- against HMP's C.alpha.multinomial, an independent
// multinomial log pmf, R's chi-square tails, and their size under the
// multinomial by simulation.
#include <cmath>
#include <random>

#include "../kernels/math/distributions.hpp"
#include "support.hpp"

using namespace dirmn_test;

namespace {

dirmn_overdispersion_result run_test(dirmn_context* ctx, dirmn_counts* c,
                                     const dirmn_fit_options* o = nullptr) {
  dirmn_overdispersion_result r;
  std::memset(&r, 0, sizeof r);
  r.size = sizeof r;
  const dirmn_status s = dirmn_overdispersion_test(ctx, c, o, &r);
  INFO(dirmn_last_error(ctx));
  REQUIRE(s == DIRMN_SUCCESS);
  return r;
}

// The multinomial log pmf at the pooled proportions, in long double.
double multinomial_loglik_ref(const std::vector<double>& x, int64_t rows, int64_t cols) {
  std::vector<long double> X(static_cast<size_t>(cols), 0.0L);
  long double total = 0.0L, ll = 0.0L;
  for (int64_t b = 0; b < rows; ++b) {
    long double N = 0.0L;
    for (int64_t v = 0; v < cols; ++v) {
      const long double n = x[static_cast<size_t>(b * cols + v)];
      X[static_cast<size_t>(v)] += n;
      N += n;
      ll -= lgammal(n + 1.0L);
    }
    ll += lgammal(N + 1.0L);
    total += N;
  }
  for (long double xv : X)
    if (xv > 0) ll += xv * logl(xv / total);
  return static_cast<double>(ll);
}

// rows multinomial draws of totals in [n_lo, n_hi] at proportions p.
std::vector<double> simulate_multinomial(std::mt19937_64& rng, int64_t rows,
                                         const std::vector<double>& p, int n_lo, int n_hi) {
  const int64_t V = static_cast<int64_t>(p.size());
  std::vector<double> x(static_cast<size_t>(rows * V), 0.0);
  std::uniform_int_distribution<int> nd(n_lo, n_hi);
  for (int64_t b = 0; b < rows; ++b) {
    int left_n = nd(rng);
    double left_p = 1.0;
    for (int64_t v = 0; v < V && left_n > 0; ++v) {
      int k = left_n;
      if (v < V - 1) {
        std::binomial_distribution<int> bin(left_n, std::min(1.0, p[static_cast<size_t>(v)] / left_p));
        k = bin(rng);
      }
      x[static_cast<size_t>(b * V + v)] = k;
      left_n -= k;
      left_p -= p[static_cast<size_t>(v)];
    }
  }
  return x;
}

}  // namespace

TEST_CASE("overdispersion: chi-square tails match R's pchisq", "[overdispersion]") {
  // R 4.2.2: pchisq(q, df, lower.tail = FALSE).
  CHECK(close_to(dirmn::math::chisq_upper(10.0, 3.0), 0.018566135463043233, 1e-13));
  CHECK(close_to(dirmn::math::chisq_upper(0.5, 0.7), 0.35097529703158326, 1e-13));
  CHECK(close_to(dirmn::math::chisq_upper(150.0, 123.4), 0.05191048050901817, 1e-12));
  CHECK(close_to(dirmn::math::chisq_upper(3000.0, 2500.5), 1.461103497239629e-11, 1e-9));
  CHECK(close_to(0.5 * dirmn::math::chisq_upper(2.7, 1.0), 0.050174123231145222, 1e-13));
  CHECK(dirmn::math::chisq_upper(1e-3, 40.0) == 1.0);
  CHECK(dirmn::math::chisq_upper(0.0, 2.0) == 1.0);
}

TEST_CASE("overdispersion: mite and bci against HMP and the multinomial", "[overdispersion][data]") {
  // HMP 2.0.1's C.alpha.multinomial (its R code sourced in R 4.2.2), and
  // its g and df recomputed from the same M = diag(p) - p p^T.
  struct Ref {
    const char* file;
    double T, g, df;
  } refs[] = {{"mite.csv", 368.33307431404535, 0.019980655362180733, 1666.4972245387437},
              {"bci.csv", 594.781132377017, 0.020184006356350443, 10873.799147832253}};
  for (dirmn_backend be : backends_under_test()) {
    for (const Ref& ref : refs) {
      INFO(backend_name(be) << " " << ref.file);
      int64_t rows = 0, cols = 0;
      const auto x = read_csv(std::string(DIRMN_TEST_DATA_DIR "/../../examples/data/") + ref.file,
                              &rows, &cols);
      Context ctx = make_context(be);
      REQUIRE(ctx);
      Counts c = counts_of(ctx.get(), x, rows, cols);
      const dirmn_overdispersion_result r = run_test(ctx.get(), c.get());
      CHECK(close_to(r.score_statistic, ref.T, 1e-11));
      CHECK(close_to(r.score_scale, ref.g, 1e-12));
      CHECK(close_to(r.score_df, ref.df, 1e-12));
      // HMP reports p = 0 for both (far beyond chi2_df's upper tail).
      CHECK(r.score_p_value < 1e-100);
      CHECK(close_to(r.loglik_multinomial, multinomial_loglik_ref(x, rows, cols), 1e-12));
      // The DM side is dirmn_fit's, whose log pmf the accuracy suite checks.
      std::vector<double> a(static_cast<size_t>(cols));
      dirmn_fit_result f;
      std::memset(&f, 0, sizeof f);
      f.size = sizeof f;
      f.alpha = a.data();
      REQUIRE(dirmn_fit(ctx.get(), c.get(), nullptr, &f) == DIRMN_SUCCESS);
      CHECK(r.loglik_dm == f.loglik);
      CHECK(close_to(r.lrt_statistic, 2.0 * (f.loglik - r.loglik_multinomial), 1e-9));
      CHECK(r.lrt_statistic > 1000.0);
      CHECK(r.lrt_p_value < 1e-100);
      CHECK(r.categories == cols);
      CHECK(r.observations == static_cast<double>(rows));
      CHECK(r.converged == 1);
      CHECK(r.precision == f.precision);
    }
  }
}

TEST_CASE("overdispersion: empty columns are left out, weights are frequencies", "[overdispersion]") {
  std::mt19937_64 rng(11);
  const int64_t rows = 30, cols = 5;
  const auto x = simulate_dm(rows, {0.5, 1.0, 2.0, 0.7, 1.5}, 80, 3);
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  Counts c = counts_of(ctx.get(), x, rows, cols);
  const dirmn_overdispersion_result r = run_test(ctx.get(), c.get());
  // A column of zeros inserted (HMP's statistic is NaN there).
  std::vector<double> wide;
  for (int64_t b = 0; b < rows; ++b) {
    for (int64_t v = 0; v < cols; ++v) {
      wide.push_back(x[static_cast<size_t>(b * cols + v)]);
      if (v == 1) wide.push_back(0.0);
    }
  }
  Counts cw = counts_of(ctx.get(), wide, rows, cols + 1);
  const dirmn_overdispersion_result rw = run_test(ctx.get(), cw.get());
  CHECK(std::isfinite(rw.score_statistic));
  CHECK(close_to(rw.score_statistic, r.score_statistic, 1e-13));
  CHECK(close_to(rw.lrt_statistic, r.lrt_statistic, 1e-9));
  CHECK(rw.categories == cols);
  // Row 0 with weight 3 is the table with row 0 three times.
  std::vector<double> w(static_cast<size_t>(rows), 1.0);
  w[0] = 3.0;
  dirmn_fit_options o;
  dirmn_fit_options_init(&o);
  o.weights = w.data();
  const dirmn_overdispersion_result rwt = run_test(ctx.get(), c.get(), &o);
  std::vector<double> rep(x);
  rep.insert(rep.end(), x.begin(), x.begin() + cols);
  rep.insert(rep.end(), x.begin(), x.begin() + cols);
  Counts cr = counts_of(ctx.get(), rep, rows + 2, cols);
  const dirmn_overdispersion_result rr = run_test(ctx.get(), cr.get());
  CHECK(close_to(rwt.score_statistic, rr.score_statistic, 1e-12));
  CHECK(close_to(rwt.score_df, rr.score_df, 1e-12));
  CHECK(close_to(rwt.lrt_statistic, rr.lrt_statistic, 1e-7));
  CHECK(rwt.observations == static_cast<double>(rows + 2));
}

TEST_CASE("overdispersion: size at 5% under the multinomial, power under the DM",
          "[overdispersion]") {
  // 600 multinomial tables of 40 rows x 6 categories, totals 60-140: each
  // test rejects at 5% within 3 Monte Carlo standard errors (0.027) of 0.05.
  std::mt19937_64 rng(2026);
  const std::vector<double> p = {0.05, 0.1, 0.15, 0.2, 0.2, 0.3};
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  const int reps = 600;
  int lrt_reject = 0, score_reject = 0, at_limit = 0;
  for (int i = 0; i < reps; ++i) {
    const auto x = simulate_multinomial(rng, 40, p, 60, 140);
    Counts c = counts_of(ctx.get(), x, 40, 6);
    const dirmn_overdispersion_result r = run_test(ctx.get(), c.get());
    lrt_reject += r.lrt_p_value < 0.05;
    score_reject += r.score_p_value < 0.05;
    at_limit += r.lrt_statistic == 0.0;
    REQUIRE(r.lrt_p_value >= 0.0);
    REQUIRE(r.lrt_p_value <= 1.0);
  }
  const double se3 = 3.0 * std::sqrt(0.05 * 0.95 / reps);
  CHECK(std::fabs(lrt_reject / static_cast<double>(reps) - 0.05) <= se3);
  CHECK(std::fabs(score_reject / static_cast<double>(reps) - 0.05) <= se3);
  // The boundary: about half the null fits reach the multinomial limit
  // (asymptotically half; a little more in samples of this size: 0.585).
  CHECK(at_limit / static_cast<double>(reps) > 0.4);
  CHECK(at_limit / static_cast<double>(reps) < 0.7);
  // Overdispersed data (precision 20) are found by both.
  const auto x = simulate_dm(40, {1.0, 2.0, 3.0, 4.0, 4.0, 6.0}, 100, 9);
  Counts c = counts_of(ctx.get(), x, 40, 6);
  const dirmn_overdispersion_result r = run_test(ctx.get(), c.get());
  CHECK(r.lrt_p_value < 1e-6);
  CHECK(r.score_p_value < 1e-6);
}

TEST_CASE("overdispersion: arguments", "[overdispersion]") {
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  const std::vector<double> x = {1, 2, 3, 4, 0, 1};
  Counts c = counts_of(ctx.get(), x, 2, 3);
  dirmn_overdispersion_result r;
  r.size = 4;
  r.lrt_statistic = -1.0;
  CHECK(dirmn_overdispersion_test(ctx.get(), c.get(), nullptr, &r) == DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(last_error(ctx).find("result->size") != std::string::npos);
  CHECK(dirmn_overdispersion_test(ctx.get(), c.get(), nullptr, nullptr) == DIRMN_ERROR_NULL_POINTER);
  CHECK(dirmn_overdispersion_test(ctx.get(), nullptr, nullptr, &r) == DIRMN_ERROR_NULL_POINTER);
  const std::vector<double> zeros(6, 0.0);
  Counts z = counts_of(ctx.get(), zeros, 2, 3);
  r.size = sizeof r;
  CHECK(dirmn_overdispersion_test(ctx.get(), z.get(), nullptr, &r) == DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(r.lrt_statistic == -1.0);
  std::vector<double> w = {1.0, -2.0};
  dirmn_fit_options o;
  dirmn_fit_options_init(&o);
  o.weights = w.data();
  CHECK(dirmn_overdispersion_test(ctx.get(), c.get(), &o, &r) == DIRMN_ERROR_INVALID_PARAMETER);
  CHECK(last_error(ctx).find("row 1") != std::string::npos);
  // A size that ends after lrt_p_value: only the fields it holds are written.
  dirmn_overdispersion_result part;
  std::memset(&part, 0, sizeof part);
  part.size = offsetof(dirmn_overdispersion_result, score_statistic);
  part.score_statistic = -5.0;
  REQUIRE(dirmn_overdispersion_test(ctx.get(), c.get(), nullptr, &part) == DIRMN_SUCCESS);
  CHECK(part.score_statistic == -5.0);
  CHECK(part.lrt_p_value > 0.0);
}
