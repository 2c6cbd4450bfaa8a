// test_derivatives.cpp: the weighted sums (value, gradient and Hessian diagonal
// of sum_b w_b log p(x_b | alpha)) and the per-row derivatives, on every
// backend present. The fits and the mixtures' M steps trust these values to
// find their optimum, so each is held to closed forms that do not share the
// library's code: for integer counts
//   digamma(a + n) - digamma(a) = sum_{k<n} 1/(a + k),
//   trigamma(a + n) - trigamma(a) = -sum_{k<n} 1/(a + k)^2,
// summed in long double, and central finite differences of the long-double
// lgamma log-likelihood (support.hpp).
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "support.hpp"

using namespace dirmn_test;

namespace {

// trigamma(a + n) - trigamma(a) for an integer n: -sum_{k<n} 1/(a + k)^2, in
// long double.
long double tpoch_ref(long double a, long n) {
  long double s = 0;
  for (long k = 0; k < n; ++k) s -= 1.0L / ((a + k) * (a + k));
  return s;
}

}  // namespace

TEST_CASE("weighted sums: value, gradient and Hessian against references", "[fit][derivatives]") {
  const int64_t rows = 60, cols = 12;
  const std::vector<double> alpha_true{0.3, 1.2, 2.5, 0.8, 5.0, 0.1, 0.7, 3.3, 1.0, 0.4, 9.0, 2.0};
  auto x = simulate_dm(rows, alpha_true, 40, 7);
  x[5 * cols + 3] = 300;  // one large count: the pairs form of the histogram
  std::vector<double> w(static_cast<size_t>(rows));
  for (int64_t b = 0; b < rows; ++b) w[static_cast<size_t>(b)] = 0.25 + static_cast<double>(b % 4);
  const std::vector<double> alpha{0.5, 1.0, 2.0, 0.9, 4.0, 0.2, 0.6, 3.0, 1.1, 0.5, 8.0, 1.5};
  for (dirmn_backend be : backends_under_test()) {
    INFO("backend " << backend_name(be));
    Context ctx = make_context(be);
    REQUIRE(ctx);
    Counts c = counts_of(ctx.get(), x, rows, cols);
    for (bool weighted : {false, true}) {
      INFO("weighted " << weighted);
      const double* wp = weighted ? w.data() : nullptr;
      double f = 0, hs = 0;
      std::vector<double> g(cols), hd(cols);
      REQUIRE(dirmn_loglik_sum(ctx.get(), c.get(), alpha.data(), 1, DIRMN_PARAM_ALPHA, wp, DIRMN_KERNEL, &f,
                               g.data(), hd.data(), &hs) == DIRMN_SUCCESS);
      CHECK(close_to(f, table_loglik_ref(x, rows, cols, alpha, weighted ? &w : nullptr), 1e-12));
      // References from digamma / trigamma sums.
      long double A = 0;
      for (double a : alpha) A += a;
      std::vector<long double> g_ref(cols, 0), d_ref(cols, 0);
      long double c_ref = 0;
      for (int64_t b = 0; b < rows; ++b) {
        const long double wb = weighted ? w[static_cast<size_t>(b)] : 1.0;
        long N = 0;
        for (int64_t v = 0; v < cols; ++v) {
          const long n = static_cast<long>(x[static_cast<size_t>(b * cols + v)]);
          N += n;
          g_ref[static_cast<size_t>(v)] += wb * dpoch_ref(alpha[static_cast<size_t>(v)], n);
          d_ref[static_cast<size_t>(v)] += wb * tpoch_ref(alpha[static_cast<size_t>(v)], n);
        }
        for (int64_t v = 0; v < cols; ++v) g_ref[static_cast<size_t>(v)] -= wb * dpoch_ref(A, N);
        c_ref -= wb * tpoch_ref(A, N);
      }
      for (int64_t v = 0; v < cols; ++v) {
        CHECK(close_to(g[static_cast<size_t>(v)], static_cast<double>(g_ref[static_cast<size_t>(v)]), 1e-11, 1e-10));
        CHECK(close_to(hd[static_cast<size_t>(v)], static_cast<double>(d_ref[static_cast<size_t>(v)]), 1e-11, 1e-10));
      }
      CHECK(close_to(hs, static_cast<double>(c_ref), 1e-11));
      // Finite differences of the reference log-likelihood.
      for (int64_t v = 0; v < cols; v += 3) {
        const double h = 1e-5 * alpha[static_cast<size_t>(v)];
        auto ap = alpha, am = alpha;
        ap[static_cast<size_t>(v)] += h;
        am[static_cast<size_t>(v)] -= h;
        const double fd = (table_loglik_ref(x, rows, cols, ap, weighted ? &w : nullptr) -
                           table_loglik_ref(x, rows, cols, am, weighted ? &w : nullptr)) / (2 * h);
        CHECK(close_to(g[static_cast<size_t>(v)], fd, 1e-5, 1e-5));
      }
      // With respect to log alpha: g_theta = alpha g, H_theta = diag(alpha^2 d + alpha g) + c alpha alpha^T.
      std::vector<double> la(cols), gt(cols), ht(cols);
      for (int64_t v = 0; v < cols; ++v) la[static_cast<size_t>(v)] = std::log(alpha[static_cast<size_t>(v)]);
      double ft = 0, hst = 0;
      REQUIRE(dirmn_loglik_sum(ctx.get(), c.get(), la.data(), 1, DIRMN_PARAM_LOG_ALPHA, wp, DIRMN_KERNEL, &ft,
                               gt.data(), ht.data(), &hst) == DIRMN_SUCCESS);
      CHECK(close_to(ft, f, 1e-13));
      CHECK(close_to(hst, hs, 1e-13));
      for (int64_t v = 0; v < cols; ++v) {
        const double a = alpha[static_cast<size_t>(v)];
        CHECK(close_to(gt[static_cast<size_t>(v)], a * g[static_cast<size_t>(v)], 1e-13, 1e-12));
        CHECK(close_to(ht[static_cast<size_t>(v)], a * a * hd[static_cast<size_t>(v)] + a * g[static_cast<size_t>(v)], 1e-12, 1e-10));
      }
      // The full log pmf adds the weighted multinomial coefficients.
      double ff = 0;
      REQUIRE(dirmn_loglik_sum(ctx.get(), c.get(), alpha.data(), 1, DIRMN_PARAM_ALPHA, wp, DIRMN_FULL,
                               &ff, nullptr, nullptr, nullptr) == DIRMN_SUCCESS);
      long double full_ref = 0;
      for (int64_t b = 0; b < rows; ++b)
        full_ref += (weighted ? w[static_cast<size_t>(b)] : 1.0) *
                    static_cast<long double>(reference_loglik(&x[static_cast<size_t>(b * cols)], alpha.data(), cols, true));
      CHECK(close_to(ff, static_cast<double>(full_ref), 1e-12));
    }
    // Bad weights name their row; nothing is written.
    std::vector<double> bad = w;
    bad[17] = -1;
    double f = 123;
    CHECK(dirmn_loglik_sum(ctx.get(), c.get(), alpha.data(), 1, DIRMN_PARAM_ALPHA, bad.data(), DIRMN_KERNEL, &f,
                           nullptr, nullptr, nullptr) == DIRMN_ERROR_INVALID_PARAMETER);
    CHECK(std::string(dirmn_last_error(ctx.get())).find("row 17") != std::string::npos);
    bad[17] = std::nan("");
    CHECK(dirmn_loglik_sum(ctx.get(), c.get(), alpha.data(), 1, DIRMN_PARAM_ALPHA, bad.data(), DIRMN_KERNEL, &f,
                           nullptr, nullptr, nullptr) == DIRMN_ERROR_INVALID_PARAMETER);
    CHECK(f == 123);
  }
}

TEST_CASE("weighted sums with large row totals: banded and paired histograms", "[fit][derivatives]") {
  // Row totals in a narrow band (many distinct values) take the offset
  // dense form of the histogram; few totals spread wide take pairs. With
  // 3000 rows, totals and column counts fill bands of thousands of
  // integers, longer than the host sums take in one batch (2048).
  const std::vector<double> alpha_true{0.7, 2.0, 0.3, 4.0, 1.1};
  const std::vector<double> alpha{0.6, 1.8, 0.4, 3.0, 1.3};
  const int64_t cols = 5;
  struct Case { int64_t rows; int n_mean; uint32_t seed; };
  for (const Case& tc : {Case{300, 1200, 11}, Case{12, 5000, 12}, Case{3000, 3000, 13}}) {
    INFO("rows " << tc.rows << ", mean total " << tc.n_mean);
    const auto x = simulate_dm(tc.rows, alpha_true, tc.n_mean, tc.seed);
    std::vector<double> w(static_cast<size_t>(tc.rows));
    for (int64_t b = 0; b < tc.rows; ++b) w[static_cast<size_t>(b)] = 0.5 + static_cast<double>(b % 3);
    long double A = 0;
    for (double a : alpha) A += a;
    std::vector<long double> g_ref(cols, 0);
    long double c_ref = 0;
    for (int64_t b = 0; b < tc.rows; ++b) {
      long N = 0;
      for (int64_t v = 0; v < cols; ++v) {
        const long n = static_cast<long>(x[static_cast<size_t>(b * cols + v)]);
        N += n;
        g_ref[static_cast<size_t>(v)] += w[static_cast<size_t>(b)] * dpoch_ref(alpha[static_cast<size_t>(v)], n);
      }
      for (int64_t v = 0; v < cols; ++v) g_ref[static_cast<size_t>(v)] -= w[static_cast<size_t>(b)] * dpoch_ref(A, N);
      c_ref -= w[static_cast<size_t>(b)] * tpoch_ref(A, N);
    }
    for (dirmn_backend be : backends_under_test()) {
      INFO("backend " << backend_name(be));
      Context ctx = make_context(be);
      REQUIRE(ctx);
      Counts c = counts_of(ctx.get(), x, tc.rows, cols);
      double f = 0, hs = 0;
      std::vector<double> g(cols), hd(cols);
      REQUIRE(dirmn_loglik_sum(ctx.get(), c.get(), alpha.data(), 1, DIRMN_PARAM_ALPHA, w.data(), DIRMN_KERNEL, &f,
                               g.data(), hd.data(), &hs) == DIRMN_SUCCESS);
      CHECK(close_to(f, table_loglik_ref(x, tc.rows, cols, alpha, &w), 1e-12));
      for (int64_t v = 0; v < cols; ++v)
        CHECK(close_to(g[static_cast<size_t>(v)], static_cast<double>(g_ref[static_cast<size_t>(v)]), 1e-11, 1e-9));
      CHECK(close_to(hs, static_cast<double>(c_ref), 1e-11));
    }
  }
}

TEST_CASE("weighted sums of deep scattered counts over alpha's range", "[fit][derivatives]") {
  // Counts from 20 to 90000 scattered over a few rows: the pairs form, whose
  // sums take lgamma, digamma and trigamma at alpha once per column where a
  // count is at least alpha (and alpha + n at least 10), and the
  // per-value functions elsewhere. Each column meets alpha from 1e-6 to
  // 2e6 across the rotations: both paths, and the switch between them.
  const int64_t rows = 40, cols = 6;
  std::vector<double> x(static_cast<size_t>(rows * cols));
  for (int64_t b = 0; b < rows; ++b)
    for (int64_t v = 0; v < cols; ++v)
      x[static_cast<size_t>(b * cols + v)] =
          v < 3 ? std::floor(20.0 * std::pow(4500.0, static_cast<double>((b * 7 + v * 13) % 41) / 40.0))
                : static_cast<double>((b + v) % 5);
  std::vector<double> w(static_cast<size_t>(rows));
  for (int64_t b = 0; b < rows; ++b) w[static_cast<size_t>(b)] = 0.5 + static_cast<double>(b % 3);
  const double levels[cols] = {1e-6, 0.03, 1.0, 60.0, 4000.0, 2e6};
  for (dirmn_backend be : backends_under_test()) {
    INFO("backend " << backend_name(be));
    Context ctx = make_context(be);
    REQUIRE(ctx);
    Counts c = counts_of(ctx.get(), x, rows, cols);
    for (int64_t turn = 0; turn < cols; ++turn) {
      std::vector<double> alpha(cols);
      for (int64_t v = 0; v < cols; ++v) alpha[static_cast<size_t>(v)] = levels[(v + turn) % cols];
      INFO("alpha of column 0: " << alpha[0]);
      long double A = 0;
      for (double a : alpha) A += a;
      std::vector<long double> g_ref(cols, 0), d_ref(cols, 0);
      long double c_ref = 0;
      for (int64_t b = 0; b < rows; ++b) {
        long N = 0;
        for (int64_t v = 0; v < cols; ++v) {
          const long n = static_cast<long>(x[static_cast<size_t>(b * cols + v)]);
          N += n;
          g_ref[static_cast<size_t>(v)] += w[static_cast<size_t>(b)] * dpoch_ref(alpha[static_cast<size_t>(v)], n);
          d_ref[static_cast<size_t>(v)] += w[static_cast<size_t>(b)] * tpoch_ref(alpha[static_cast<size_t>(v)], n);
        }
        for (int64_t v = 0; v < cols; ++v) g_ref[static_cast<size_t>(v)] -= w[static_cast<size_t>(b)] * dpoch_ref(A, N);
        c_ref -= w[static_cast<size_t>(b)] * tpoch_ref(A, N);
      }
      double f = 0, hs = 0;
      std::vector<double> g(cols), hd(cols);
      REQUIRE(dirmn_loglik_sum(ctx.get(), c.get(), alpha.data(), 1, DIRMN_PARAM_ALPHA, w.data(),
                               DIRMN_KERNEL, &f, g.data(), hd.data(), &hs) == DIRMN_SUCCESS);
      CHECK(close_to(f, table_loglik_ref(x, rows, cols, alpha, &w), 1e-12));
      for (int64_t v = 0; v < cols; ++v) {
        INFO("column " << v);
        CHECK(close_to(g[static_cast<size_t>(v)], static_cast<double>(g_ref[static_cast<size_t>(v)]), 1e-12, 1e-9));
        CHECK(close_to(hd[static_cast<size_t>(v)], static_cast<double>(d_ref[static_cast<size_t>(v)]), 1e-12));
      }
      CHECK(close_to(hs, static_cast<double>(c_ref), 1e-12));
    }
  }
}

TEST_CASE("per-row derivatives against references", "[fit][derivatives]") {
  const int64_t rows = 25, cols = 9;
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(0.05, 6.0);
  std::vector<double> alpha(static_cast<size_t>(rows * cols));
  for (auto& a : alpha) a = u(rng);
  const auto x = simulate_dm(rows, std::vector<double>(cols, 1.0), 30, 8);
  for (dirmn_backend be : backends_under_test()) {
    INFO("backend " << backend_name(be));
    Context ctx = make_context(be);
    REQUIRE(ctx);
    Counts c = counts_of(ctx.get(), x, rows, cols);
    std::vector<double> ll(rows), g(rows * cols), hd(rows * cols), hs(rows);
    REQUIRE(dirmn_loglik_rowwise_derivatives(ctx.get(), c.get(), alpha.data(), cols, 1,
                                             DIRMN_PARAM_ALPHA, DIRMN_FULL, ll.data(), g.data(),
                                             hd.data(), hs.data(), cols, 1) == DIRMN_SUCCESS);
    for (int64_t b = 0; b < rows; ++b) {
      const double* a = &alpha[static_cast<size_t>(b * cols)];
      const double* n = &x[static_cast<size_t>(b * cols)];
      CHECK(close_to(ll[static_cast<size_t>(b)], reference_loglik(n, a, cols, true), 1e-12, 1e-9));
      long double A = 0;
      long N = 0;
      for (int64_t v = 0; v < cols; ++v) {
        A += a[v];
        N += static_cast<long>(n[v]);
      }
      for (int64_t v = 0; v < cols; ++v) {
        const double gr = static_cast<double>(dpoch_ref(a[v], static_cast<long>(n[v])) - dpoch_ref(A, N));
        CHECK(close_to(g[static_cast<size_t>(b * cols + v)], gr, 1e-11, 1e-12));
        CHECK(close_to(hd[static_cast<size_t>(b * cols + v)],
                       static_cast<double>(tpoch_ref(a[v], static_cast<long>(n[v]))), 1e-11, 1e-12));
      }
      CHECK(close_to(hs[static_cast<size_t>(b)], static_cast<double>(-tpoch_ref(A, N)), 1e-11, 1e-14));
    }
    // Column-major outputs and log alpha.
    std::vector<double> la(alpha.size()), gt(rows * cols);
    for (size_t i = 0; i < alpha.size(); ++i) la[i] = std::log(alpha[i]);
    REQUIRE(dirmn_loglik_rowwise_derivatives(ctx.get(), c.get(), la.data(), cols, 1,
                                             DIRMN_PARAM_LOG_ALPHA, DIRMN_KERNEL, nullptr, gt.data(), nullptr,
                                             nullptr, 1, rows) == DIRMN_SUCCESS);
    for (int64_t b = 0; b < rows; ++b)
      for (int64_t v = 0; v < cols; ++v)
        CHECK(close_to(gt[static_cast<size_t>(b + v * rows)],
                       alpha[static_cast<size_t>(b * cols + v)] * g[static_cast<size_t>(b * cols + v)], 1e-12, 1e-13));
  }
}
