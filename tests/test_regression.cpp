// test_regression.cpp: dirmn_reg_* against an independent reference -- the
// long-double log pmf (support.hpp) summed over rows at alpha = exp(X beta),
// its central-difference gradient and Hessian in vec(beta) -- and the
// promises of the API: weights as replicated rows, results independent of
// the thread count, prediction and Wald tests from the covariance, bad
// designs named by row, column and covariate. MGLM's published fit of its
// rnaseq data is checked by the R package's tests.
#include "regression_support.hpp"

#include <cinttypes>

using namespace dirmn_test;

namespace {

// sum_b w_b log pmf(row b | alpha_b = exp(x_b . beta_v)) in long double;
// beta in vec order (coefficient (i, v) at v p + i).
double reference_total(const Problem& pr, const std::vector<double>& vec_beta,
                       const std::vector<double>* w = nullptr) {
  long double total = 0;
  std::vector<double> n(static_cast<size_t>(pr.V)), a(static_cast<size_t>(pr.V));
  for (int64_t b = 0; b < pr.rows; ++b) {
    for (int64_t v = 0; v < pr.V; ++v) {
      double eta = 0.0;
      for (int64_t i = 0; i < pr.p; ++i)
        eta += pr.x[static_cast<size_t>(b * pr.p + i)] * vec_beta[static_cast<size_t>(v * pr.p + i)];
      a[static_cast<size_t>(v)] = std::exp(eta);
      n[static_cast<size_t>(v)] = pr.y[static_cast<size_t>(b * pr.V + v)];
    }
    total += static_cast<long double>(w ? (*w)[static_cast<size_t>(b)] : 1.0) *
             reference_loglik(n.data(), a.data(), pr.V, true);
  }
  return static_cast<double>(total);
}

Reg fit(dirmn_context* ctx, dirmn_counts* c, const Problem& pr, const double* weights = nullptr) {
  dirmn_reg_options o;
  dirmn_reg_options_init(&o);
  o.weights = weights;
  dirmn_reg* r = nullptr;
  const dirmn_status s = dirmn_reg_fit(ctx, c, pr.x.data(), pr.rows, pr.p, pr.p, 1, &o, &r);
  INFO(dirmn_last_error(ctx));
  REQUIRE(s == DIRMN_SUCCESS);
  return Reg(r);
}

// vec(beta) of a fit (coefficient (i, v) at v p + i).
std::vector<double> vec_coef(const dirmn_reg* r, int64_t p, int64_t V) {
  std::vector<double> c(static_cast<size_t>(p * V));
  REQUIRE(dirmn_reg_get_coef(r, c.data(), 1, p) == DIRMN_SUCCESS);
  return c;
}

// The fit of pr is the reference's optimum, and its covariance, standard
// errors and Wald statistics the inverse of the reference's
// finite-difference Hessian.
void check_against_reference(const Problem& pr) {
  const int64_t P = pr.p * pr.V;
  for (dirmn_backend backend : backends_under_test()) {
    SECTION(backend_name(backend)) {
      Context ctx = make_context(backend);
      REQUIRE(ctx);
      Counts c = counts_of(ctx.get(), pr);
      Reg r = fit(ctx.get(), c.get(), pr);
      const dirmn_reg_info in = info_of(r.get());
      CHECK(in.converged == 1);
      CHECK(in.hessian_definite == 1);
      CHECK(in.rows == pr.rows);
      CHECK(in.covariates == pr.p);
      CHECK(in.categories == pr.V);
      CHECK(in.parameters == P);
      CHECK(in.observations == static_cast<double>(pr.rows));
      const std::vector<double> beta = vec_coef(r.get(), pr.p, pr.V);
      const double ll = reference_total(pr, beta);
      CHECK(close_to(in.loglik, ll, 1e-12));
      const double Pd = static_cast<double>(P);
      CHECK(close_to(in.aic, -2.0 * ll + 2.0 * Pd, 1e-12));
      CHECK(close_to(in.bic, -2.0 * ll + Pd * std::log(static_cast<double>(pr.rows)), 1e-12));
      // The gradient of the reference vanishes there, and its Hessian gives
      // the standard errors and the covariance.
      const std::vector<double> cov_fd =
          fd_covariance([&pr](const std::vector<double>& t) { return reference_total(pr, t); }, beta);
      const std::vector<double> vcov = check_vcov(r.get(), cov_fd, P);
      std::vector<double> se(static_cast<size_t>(P));
      REQUIRE(dirmn_reg_get_std_errors(r.get(), se.data(), 1, pr.p) == DIRMN_SUCCESS);
      for (int64_t k = 0; k < P; ++k) {
        CHECK(close_to(se[static_cast<size_t>(k)], std::sqrt(cov_fd[static_cast<size_t>(k * P + k)]), 1e-4));
        CHECK(close_to(se[static_cast<size_t>(k)], std::sqrt(vcov[static_cast<size_t>(k * P + k)]), 1e-12));
      }
      // Wald: b' S^-1 b with S the covariate's block of the reference's covariance.
      for (int64_t i = 0; i < pr.p; ++i) {
        std::vector<double> s(static_cast<size_t>(pr.V * pr.V));
        for (int64_t v = 0; v < pr.V; ++v)
          for (int64_t u = 0; u < pr.V; ++u)
            s[static_cast<size_t>(v * pr.V + u)] = cov_fd[static_cast<size_t>((v * pr.p + i) * P + u * pr.p + i)];
        const std::vector<double> si = invert(s, pr.V);
        double want = 0.0;
        for (int64_t v = 0; v < pr.V; ++v)
          for (int64_t u = 0; u < pr.V; ++u)
            want += beta[static_cast<size_t>(v * pr.p + i)] * si[static_cast<size_t>(v * pr.V + u)] *
                    beta[static_cast<size_t>(u * pr.p + i)];
        double stat = 0, df = 0, pv = 0;
        REQUIRE(dirmn_reg_wald_test(r.get(), i, &stat, &df, &pv) == DIRMN_SUCCESS);
        CHECK(close_to(stat, want, 1e-4));
        CHECK(df == static_cast<double>(pr.V));
      }
    }
  }
}

// The mean/precision model's total log pmf at its free coefficients
// (vec(beta) without the reference column, then log phi), alpha in long
// double.
double reference_total_mp(const Problem& pr, const std::vector<double>& free, int64_t ref, bool sum_to_zero) {
  const int64_t p = pr.p, V = pr.V;
  std::vector<long double> beta(static_cast<size_t>(p * V), 0.0L);  // (v, i) at v p + i
  for (int64_t k = 0; k < V - 1; ++k) {
    const int64_t v = k < ref ? k : k + 1;
    for (int64_t i = 0; i < p; ++i) {
      beta[static_cast<size_t>(v * p + i)] = free[static_cast<size_t>(k * p + i)];
      if (sum_to_zero) beta[static_cast<size_t>(ref * p + i)] -= free[static_cast<size_t>(k * p + i)];
    }
  }
  const long double phi = std::exp(static_cast<long double>(free.back()));
  long double total = 0;
  std::vector<double> n(static_cast<size_t>(V)), a(static_cast<size_t>(V));
  std::vector<long double> e(static_cast<size_t>(V));
  for (int64_t b = 0; b < pr.rows; ++b) {
    long double sum = 0;
    for (int64_t v = 0; v < V; ++v) {
      long double eta = 0;
      for (int64_t i = 0; i < p; ++i) eta += pr.x[static_cast<size_t>(b * p + i)] * beta[static_cast<size_t>(v * p + i)];
      e[static_cast<size_t>(v)] = std::exp(eta);
      sum += e[static_cast<size_t>(v)];
      n[static_cast<size_t>(v)] = pr.y[static_cast<size_t>(b * V + v)];
    }
    for (int64_t v = 0; v < V; ++v) a[static_cast<size_t>(v)] = static_cast<double>(phi * e[static_cast<size_t>(v)] / sum);
    total += reference_loglik(n.data(), a.data(), V, true);
  }
  return static_cast<double>(total);
}

Reg fit_mp(dirmn_context* ctx, dirmn_counts* c, const Problem& pr, dirmn_reg_contrast contrast, int64_t ref) {
  dirmn_reg_options o;
  dirmn_reg_options_init(&o);
  o.model = DIRMN_REG_MEAN_PRECISION;
  o.contrast = contrast;
  o.reference = ref;
  dirmn_reg* r = nullptr;
  const dirmn_status s = dirmn_reg_fit(ctx, c, pr.x.data(), pr.rows, pr.p, pr.p, 1, &o, &r);
  INFO(dirmn_last_error(ctx));
  REQUIRE(s == DIRMN_SUCCESS);
  return Reg(r);
}

}  // namespace

TEST_CASE("regression: the optimum of the long-double log pmf, its standard errors from its Hessian",
          "[regression]") {
  // More rows than coefficients: the Newton system formed whole.
  check_against_reference(simulate(80, 3, 3, 2901));
}

TEST_CASE("regression: wide tables (fewer rows than coefficients) are solved in the rows' dimension",
          "[regression]") {
  // 20 rows, 24 coefficients (Woodbury; each covariate's Wald block, 12 x 12,
  // formed whole), and 12 rows, 28 coefficients (the Wald block through
  // Woodbury again: 14 categories > 12 rows).
  SECTION("20 x 12 x 2") { check_against_reference(simulate(20, 12, 2, 2911)); }
  SECTION("12 x 14 x 2") { check_against_reference(simulate(12, 14, 2, 2913)); }
}

TEST_CASE("regression: the rows' dimension (Woodbury) and the whole system give one fit", "[regression]") {
  // 10 rows of weight 3 (28 coefficients: solved in the rows' dimension)
  // and the same rows three times over (30 rows: formed whole).
  const Problem pr = simulate(10, 14, 2, 2912);
  Problem thrice = pr;
  for (int k = 0; k < 2; ++k) {
    thrice.rows += pr.rows;
    thrice.x.insert(thrice.x.end(), pr.x.begin(), pr.x.end());
    thrice.y.insert(thrice.y.end(), pr.y.begin(), pr.y.end());
  }
  const std::vector<double> w(static_cast<size_t>(pr.rows), 3.0);
  const int64_t P = pr.p * pr.V;
  for (dirmn_backend backend : backends_under_test()) {
    SECTION(backend_name(backend)) {
      Context ctx = make_context(backend);
      REQUIRE(ctx);
      Counts c = counts_of(ctx.get(), pr), c3 = counts_of(ctx.get(), thrice);
      Reg rw = fit(ctx.get(), c.get(), pr, w.data());
      Reg rr = fit(ctx.get(), c3.get(), thrice);
      const dirmn_reg_info iw = info_of(rw.get()), ir = info_of(rr.get());
      REQUIRE(iw.hessian_definite == 1);
      REQUIRE(ir.hessian_definite == 1);
      CHECK(close_to(iw.loglik, ir.loglik, 1e-12));
      std::vector<double> vw(static_cast<size_t>(P * P)), vr = vw;
      REQUIRE(dirmn_reg_get_vcov(rw.get(), vw.data(), P) == DIRMN_SUCCESS);
      REQUIRE(dirmn_reg_get_vcov(rr.get(), vr.data(), P) == DIRMN_SUCCESS);
      const std::vector<double> bw = vec_coef(rw.get(), pr.p, pr.V), br = vec_coef(rr.get(), pr.p, pr.V);
      for (int64_t k = 0; k < P; ++k) {
        const double sk = std::sqrt(vr[static_cast<size_t>(k * P + k)]);
        CHECK(std::fabs(bw[static_cast<size_t>(k)] - br[static_cast<size_t>(k)]) < 1e-7 * sk);
        for (int64_t m = 0; m < P; ++m)
          CHECK(std::fabs(vw[static_cast<size_t>(k * P + m)] - vr[static_cast<size_t>(k * P + m)]) <
                1e-8 * sk * std::sqrt(vr[static_cast<size_t>(m * P + m)]));
      }
      for (int64_t i = 0; i < pr.p; ++i) {
        double s1 = 0, s2 = 0, df = 0, pv = 0;
        REQUIRE(dirmn_reg_wald_test(rw.get(), i, &s1, &df, &pv) == DIRMN_SUCCESS);
        REQUIRE(dirmn_reg_wald_test(rr.get(), i, &s2, &df, &pv) == DIRMN_SUCCESS);
        CHECK(close_to(s1, s2, 1e-8));
      }
    }
  }
}

TEST_CASE("regression: a wide fit is the same bits for any thread count; too large a system is refused",
          "[regression]") {
  // 100 rows, 120 coefficients: passes of the rows' Gram blocks,
  // panels of its factor and blocks of the covariance's columns.
  const Problem pr = simulate(100, 60, 2, 2917, 10);
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  Counts c = counts_of(ctx.get(), pr);
  const int64_t P = pr.p * pr.V;
  std::vector<double> b1, se1;
  double ll1 = 0.0, wald1 = 0.0;
  for (int threads : {1, 2, 7}) {
    REQUIRE(dirmn_context_set_threads(ctx.get(), threads) == DIRMN_SUCCESS);
    Reg r = fit(ctx.get(), c.get(), pr);
    const dirmn_reg_info in = info_of(r.get());
    REQUIRE(in.hessian_definite == 1);
    std::vector<double> se(static_cast<size_t>(P));
    REQUIRE(dirmn_reg_get_std_errors(r.get(), se.data(), 1, pr.p) == DIRMN_SUCCESS);
    double wald = 0, df = 0, pv = 0;
    REQUIRE(dirmn_reg_wald_test(r.get(), 1, &wald, &df, &pv) == DIRMN_SUCCESS);
    if (threads == 1) {
      b1 = vec_coef(r.get(), pr.p, pr.V);
      se1 = se;
      ll1 = in.loglik;
      wald1 = wald;
      CHECK(close_to(in.loglik, reference_total(pr, b1), 1e-12));
    } else {
      CHECK(in.loglik == ll1);
      CHECK(vec_coef(r.get(), pr.p, pr.V) == b1);
      CHECK(se == se1);
      CHECK(wald == wald1);
    }
  }
  // An intercept over DIRMN_REG_MAX_SYSTEM + 1 rows and as many categories
  // (one count a row, CSR): both dimensions of the system above the limit.
  const int64_t n = DIRMN_REG_MAX_SYSTEM + 1;
  std::vector<int64_t> ptr(static_cast<size_t>(n + 1)), idx(static_cast<size_t>(n));
  std::vector<int32_t> val(static_cast<size_t>(n), 1);
  for (int64_t b = 0; b <= n; ++b) ptr[static_cast<size_t>(b)] = b;
  for (int64_t b = 0; b < n; ++b) idx[static_cast<size_t>(b)] = b;
  dirmn_counts* big = nullptr;
  REQUIRE(dirmn_counts_create_sparse(ctx.get(), &big, DIRMN_CSR, n, n, n, DIRMN_INDEX_INT64, ptr.data(),
                                     idx.data(), DIRMN_INT32, val.data(), nullptr) == DIRMN_SUCCESS);
  Counts hold(big);
  const std::vector<double> ones(static_cast<size_t>(n), 1.0);
  dirmn_reg* r = nullptr;
  CHECK(dirmn_reg_fit(ctx.get(), big, ones.data(), n, 1, 1, 1, nullptr, &r) == DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(r == nullptr);
  CHECK(std::string(dirmn_last_error(ctx.get())).find("DIRMN_REG_MAX_SYSTEM") != std::string::npos);
}

TEST_CASE("regression: mean/precision, the long-double optimum, its covariance from the Hessian",
          "[regression]") {
  const Problem pr = simulate(90, 4, 3, 2921);
  const int64_t p = pr.p, V = pr.V, P = p * (V - 1) + 1, ref = 2;
  for (dirmn_backend backend : backends_under_test()) {
    SECTION(backend_name(backend)) {
      Context ctx = make_context(backend);
      REQUIRE(ctx);
      Counts c = counts_of(ctx.get(), pr);
      Reg r = fit_mp(ctx.get(), c.get(), pr, DIRMN_REG_REFERENCE, ref);
      const dirmn_reg_info in = info_of(r.get());
      CHECK(in.converged == 1);
      REQUIRE(in.hessian_definite == 1);
      CHECK(in.model == DIRMN_REG_MEAN_PRECISION);
      CHECK(in.parameters == P);
      CHECK(in.precision_covariates == 1);
      std::vector<double> coef(static_cast<size_t>(p * V)), se(static_cast<size_t>(p * V));
      REQUIRE(dirmn_reg_get_coef(r.get(), coef.data(), V, 1) == DIRMN_SUCCESS);
      REQUIRE(dirmn_reg_get_std_errors(r.get(), se.data(), V, 1) == DIRMN_SUCCESS);
      double gamma = 0, gse = 0;
      REQUIRE(dirmn_reg_get_precision(r.get(), &gamma, &gse) == DIRMN_SUCCESS);
      std::vector<double> free;
      for (int64_t v = 0; v < V; ++v) {
        for (int64_t i = 0; i < p; ++i) {
          if (v == ref) {
            CHECK(coef[static_cast<size_t>(i * V + v)] == 0.0);
            CHECK(se[static_cast<size_t>(i * V + v)] == 0.0);
          } else {
            free.push_back(coef[static_cast<size_t>(i * V + v)]);
          }
        }
      }
      free.push_back(gamma);
      const double ll = reference_total_mp(pr, free, ref, false);
      CHECK(close_to(in.loglik, ll, 1e-12));
      CHECK(close_to(in.aic, -2 * ll + 2.0 * static_cast<double>(P), 1e-12));
      // The reference's gradient vanishes; its Hessian's inverse is the covariance.
      const std::vector<double> cov_fd = fd_covariance(
          [&pr, ref](const std::vector<double>& t) { return reference_total_mp(pr, t, ref, false); }, free);
      check_vcov(r.get(), cov_fd, P);
      CHECK(close_to(gse, std::sqrt(cov_fd[static_cast<size_t>(P * P - 1)]), 1e-4));
      int64_t k = 0;
      for (int64_t v = 0; v < V; ++v)
        if (v != ref) {
          for (int64_t i = 0; i < p; ++i)
            CHECK(close_to(se[static_cast<size_t>(i * V + v)], std::sqrt(cov_fd[static_cast<size_t>((k * p + i) * (P + 1))]), 1e-4));
          ++k;
        }
      // Wald of covariate 1 over its V - 1 free betas.
      std::vector<double> s(static_cast<size_t>((V - 1) * (V - 1))), b(static_cast<size_t>(V - 1));
      for (int64_t u = 0; u < V - 1; ++u) {
        b[static_cast<size_t>(u)] = free[static_cast<size_t>(u * p + 1)];
        for (int64_t w = 0; w < V - 1; ++w)
          s[static_cast<size_t>(u * (V - 1) + w)] = cov_fd[static_cast<size_t>((u * p + 1) * P + w * p + 1)];
      }
      const std::vector<double> si = invert(s, V - 1);
      double want = 0;
      for (int64_t u = 0; u < V - 1; ++u)
        for (int64_t w = 0; w < V - 1; ++w)
          want += b[static_cast<size_t>(u)] * si[static_cast<size_t>(u * (V - 1) + w)] * b[static_cast<size_t>(w)];
      double stat = 0, df = 0, pv = 0;
      REQUIRE(dirmn_reg_wald_test(r.get(), 1, &stat, &df, &pv) == DIRMN_SUCCESS);
      CHECK(close_to(stat, want, 1e-4));
      CHECK(df == static_cast<double>(V - 1));
      // Prediction: phi softmax(x beta).
      const std::vector<double> xn = {1.0, 0.3, -1.2};
      std::vector<double> alpha(static_cast<size_t>(V));
      REQUIRE(dirmn_reg_predict(r.get(), xn.data(), 1, p, p, 1, alpha.data(), V, 1) == DIRMN_SUCCESS);
      double sum = 0;
      std::vector<double> e(static_cast<size_t>(V));
      for (int64_t v = 0; v < V; ++v) {
        double eta = 0;
        for (int64_t i = 0; i < p; ++i) eta += xn[static_cast<size_t>(i)] * coef[static_cast<size_t>(i * V + v)];
        e[static_cast<size_t>(v)] = std::exp(eta);
        sum += e[static_cast<size_t>(v)];
      }
      for (int64_t v = 0; v < V; ++v)
        CHECK(close_to(alpha[static_cast<size_t>(v)], std::exp(gamma) * e[static_cast<size_t>(v)] / sum, 1e-13));
    }
  }
}

TEST_CASE("regression: mean/precision, sum to zero is the same fit; an intercept alone is dirmn_fit's",
          "[regression]") {
  const Problem pr = simulate(70, 5, 2, 2922);
  const int64_t p = pr.p, V = pr.V;
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  Counts c = counts_of(ctx.get(), pr);
  Reg rr = fit_mp(ctx.get(), c.get(), pr, DIRMN_REG_REFERENCE, 0);
  Reg rz = fit_mp(ctx.get(), c.get(), pr, DIRMN_REG_SUM_TO_ZERO, 3);
  const dirmn_reg_info ir = info_of(rr.get()), iz = info_of(rz.get());
  CHECK(close_to(ir.loglik, iz.loglik, 1e-12));
  CHECK(iz.contrast == DIRMN_REG_SUM_TO_ZERO);
  CHECK(iz.reference == 3);
  std::vector<double> br(static_cast<size_t>(p * V)), bz = br, sz = br;
  REQUIRE(dirmn_reg_get_coef(rr.get(), br.data(), V, 1) == DIRMN_SUCCESS);
  REQUIRE(dirmn_reg_get_coef(rz.get(), bz.data(), V, 1) == DIRMN_SUCCESS);
  REQUIRE(dirmn_reg_get_std_errors(rz.get(), sz.data(), V, 1) == DIRMN_SUCCESS);
  for (int64_t i = 0; i < p; ++i) {
    double mean = 0, sum = 0;
    for (int64_t v = 0; v < V; ++v) {
      mean += br[static_cast<size_t>(i * V + v)] / static_cast<double>(V);
      sum += bz[static_cast<size_t>(i * V + v)];
    }
    CHECK(std::fabs(sum) < 1e-12);
    for (int64_t v = 0; v < V; ++v) {
      CHECK(std::fabs(bz[static_cast<size_t>(i * V + v)] - (br[static_cast<size_t>(i * V + v)] - mean)) < 1e-7);
      CHECK(sz[static_cast<size_t>(i * V + v)] > 0.0);
    }
    // The same hypothesis: the same Wald statistic.
    double s1 = 0, s2 = 0, df = 0, pv = 0;
    REQUIRE(dirmn_reg_wald_test(rr.get(), i, &s1, &df, &pv) == DIRMN_SUCCESS);
    REQUIRE(dirmn_reg_wald_test(rz.get(), i, &s2, &df, &pv) == DIRMN_SUCCESS);
    CHECK(close_to(s1, s2, 1e-7));
  }
  // The implied category's standard error: the sum of the free ones'
  // covariance block.
  const int64_t P = p * (V - 1) + 1;
  std::vector<double> vz(static_cast<size_t>(P * P));
  REQUIRE(dirmn_reg_get_vcov(rz.get(), vz.data(), P) == DIRMN_SUCCESS);
  for (int64_t i = 0; i < p; ++i) {
    double var = 0;
    for (int64_t k = 0; k < V - 1; ++k)
      for (int64_t l = 0; l < V - 1; ++l) var += vz[static_cast<size_t>((k * p + i) * P + l * p + i)];
    CHECK(close_to(sz[static_cast<size_t>(i * V + 3)], std::sqrt(var), 1e-12));
  }
  // An intercept alone: the shared-alpha fit, alpha = phi pi.
  Problem one = pr;
  one.p = 1;
  one.x.assign(static_cast<size_t>(pr.rows), 1.0);
  Reg r1 = fit_mp(ctx.get(), c.get(), one, DIRMN_REG_REFERENCE, 1);
  std::vector<double> a(static_cast<size_t>(V));
  dirmn_fit_result fr;
  std::memset(&fr, 0, sizeof fr);
  fr.size = sizeof fr;
  fr.alpha = a.data();
  REQUIRE(dirmn_fit(ctx.get(), c.get(), nullptr, &fr) == DIRMN_SUCCESS);
  CHECK(close_to(info_of(r1.get()).loglik, fr.loglik, 1e-12));
  std::vector<double> pa(static_cast<size_t>(V));
  const double x1 = 1.0;
  REQUIRE(dirmn_reg_predict(r1.get(), &x1, 1, 1, 1, 1, pa.data(), V, 1) == DIRMN_SUCCESS);
  for (int64_t v = 0; v < V; ++v) CHECK(close_to(pa[static_cast<size_t>(v)], a[static_cast<size_t>(v)], 1e-7));
  // Options out of range, and the precision of a log-linear fit.
  dirmn_reg_options o;
  dirmn_reg_options_init(&o);
  dirmn_reg* bad = nullptr;
  o.model = static_cast<dirmn_reg_model>(7);
  CHECK(dirmn_reg_fit(ctx.get(), c.get(), pr.x.data(), pr.rows, p, p, 1, &o, &bad) == DIRMN_ERROR_INVALID_ARGUMENT);
  o.model = DIRMN_REG_MEAN_PRECISION;
  o.contrast = static_cast<dirmn_reg_contrast>(-1);
  CHECK(dirmn_reg_fit(ctx.get(), c.get(), pr.x.data(), pr.rows, p, p, 1, &o, &bad) == DIRMN_ERROR_INVALID_ARGUMENT);
  o.contrast = DIRMN_REG_REFERENCE;
  o.reference = V;
  CHECK(dirmn_reg_fit(ctx.get(), c.get(), pr.x.data(), pr.rows, p, p, 1, &o, &bad) == DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(dirmn_last_error(ctx.get())).find("reference") != std::string::npos);
  CHECK(bad == nullptr);
  Reg ll = fit(ctx.get(), c.get(), pr);
  double g = 0;
  CHECK(dirmn_reg_get_precision(ll.get(), &g, nullptr) == DIRMN_ERROR_NOT_SUPPORTED);
}

TEST_CASE("regression: a row weight of 2 is the row twice, and the thread count changes nothing",
          "[regression]") {
  // 700 rows and 20 coefficients: several chunks of rows, passes of the
  // Hessian's Gram blocks and blocks of columns, which threads share out.
  const Problem pr = simulate(700, 4, 5, 2902);
  Problem twice = pr;
  std::vector<double> w(static_cast<size_t>(pr.rows), 1.0);
  for (int64_t b = 0; b < pr.rows; b += 3) {
    w[static_cast<size_t>(b)] = 2.0;
    twice.rows += 1;
    twice.x.insert(twice.x.end(), pr.x.begin() + b * pr.p, pr.x.begin() + (b + 1) * pr.p);
    twice.y.insert(twice.y.end(), pr.y.begin() + b * pr.V, pr.y.begin() + (b + 1) * pr.V);
  }
  const int64_t P = pr.p * pr.V;
  for (dirmn_backend backend : backends_under_test()) {
    SECTION(backend_name(backend)) {
      Context ctx = make_context(backend);
      REQUIRE(ctx);
      Counts c = counts_of(ctx.get(), pr), c2 = counts_of(ctx.get(), twice);
      Reg rw = fit(ctx.get(), c.get(), pr, w.data());
      Reg rr = fit(ctx.get(), c2.get(), twice);
      const dirmn_reg_info iw = info_of(rw.get()), ir = info_of(rr.get());
      CHECK(close_to(iw.loglik, ir.loglik, 1e-10));
      CHECK(iw.observations == ir.observations);
      CHECK(close_to(iw.loglik, reference_total(pr, vec_coef(rw.get(), pr.p, pr.V), &w), 1e-12));
      const std::vector<double> bw = vec_coef(rw.get(), pr.p, pr.V), br = vec_coef(rr.get(), pr.p, pr.V);
      std::vector<double> sw(static_cast<size_t>(P)), sr(static_cast<size_t>(P));
      REQUIRE(dirmn_reg_get_std_errors(rw.get(), sw.data(), 1, pr.p) == DIRMN_SUCCESS);
      REQUIRE(dirmn_reg_get_std_errors(rr.get(), sr.data(), 1, pr.p) == DIRMN_SUCCESS);
      for (int64_t k = 0; k < P; ++k) {
        CHECK(std::fabs(bw[static_cast<size_t>(k)] - br[static_cast<size_t>(k)]) < 1e-7 * sr[static_cast<size_t>(k)]);
        CHECK(close_to(sw[static_cast<size_t>(k)], sr[static_cast<size_t>(k)], 1e-8));
      }
      // 1, 2 and 7 threads: the same bits.
      if (backend == DIRMN_BACKEND_CPU) {
        for (int threads : {1, 2, 7}) {
          REQUIRE(dirmn_context_set_threads(ctx.get(), threads) == DIRMN_SUCCESS);
          Reg rt = fit(ctx.get(), c.get(), pr, w.data());
          CHECK(info_of(rt.get()).loglik == iw.loglik);
          CHECK(vec_coef(rt.get(), pr.p, pr.V) == bw);
        }
      }
    }
  }
}

TEST_CASE("regression: prediction is exp(x beta), the Wald test b' S^-1 b", "[regression]") {
  const Problem pr = simulate(60, 2, 3, 2903);
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  Counts c = counts_of(ctx.get(), pr);
  Reg r = fit(ctx.get(), c.get(), pr);
  const int64_t P = pr.p * pr.V;
  std::vector<double> coef(static_cast<size_t>(P));  // p x V
  REQUIRE(dirmn_reg_get_coef(r.get(), coef.data(), pr.V, 1) == DIRMN_SUCCESS);
  // New rows, column-major (strides 1 and rows).
  const int64_t m = 4;
  std::vector<double> xn = {1, 1, 1, 1, 0.5, -1, 2, 0, -0.25, 0.75, 1.5, 0};
  std::vector<double> alpha(static_cast<size_t>(m * pr.V));
  REQUIRE(dirmn_reg_predict(r.get(), xn.data(), m, pr.p, 1, m, alpha.data(), pr.V, 1) == DIRMN_SUCCESS);
  for (int64_t b = 0; b < m; ++b)
    for (int64_t v = 0; v < pr.V; ++v) {
      double eta = 0.0;
      for (int64_t i = 0; i < pr.p; ++i) eta += xn[static_cast<size_t>(i * m + b)] * coef[static_cast<size_t>(i * pr.V + v)];
      CHECK(close_to(alpha[static_cast<size_t>(b * pr.V + v)], std::exp(eta), 1e-14));
    }
  // Wald: with V = 2 the chi-square tail is exp(-w / 2).
  std::vector<double> vcov(static_cast<size_t>(P * P));
  REQUIRE(dirmn_reg_get_vcov(r.get(), vcov.data(), P) == DIRMN_SUCCESS);
  for (int64_t i = 0; i < pr.p; ++i) {
    std::vector<double> s(4);
    for (int64_t v = 0; v < 2; ++v)
      for (int64_t u = 0; u < 2; ++u) s[static_cast<size_t>(v * 2 + u)] = vcov[static_cast<size_t>((v * pr.p + i) * P + u * pr.p + i)];
    const std::vector<double> si = invert(s, 2);
    const double b0 = coef[static_cast<size_t>(i * 2)], b1 = coef[static_cast<size_t>(i * 2 + 1)];
    const double want = b0 * (si[0] * b0 + si[1] * b1) + b1 * (si[2] * b0 + si[3] * b1);
    double stat = 0, df = 0, pv = 0;
    REQUIRE(dirmn_reg_wald_test(r.get(), i, &stat, &df, &pv) == DIRMN_SUCCESS);
    CHECK(close_to(stat, want, 1e-10));
    CHECK(df == 2.0);
    CHECK(close_to(pv, std::exp(-want / 2), 1e-10, 1e-300));
  }
  double stat = 0, df = 0, pv = 0;
  CHECK(dirmn_reg_wald_test(r.get(), pr.p, &stat, &df, &pv) == DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(dirmn_reg_wald_test(r.get(), 0, nullptr, &df, &pv) == DIRMN_ERROR_NULL_POINTER);
}

TEST_CASE("regression: bad designs are named, and a failed fit leaves the handle as it was",
          "[regression][errors]") {
  Problem pr = simulate(30, 3, 3, 2904);
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  Counts c = counts_of(ctx.get(), pr);
  dirmn_reg* const sentinel = reinterpret_cast<dirmn_reg*>(&pr);
  dirmn_reg* r = sentinel;
  // A covariate that is twice another: named by its index.
  Problem dup = pr;
  for (int64_t b = 0; b < pr.rows; ++b) dup.x[static_cast<size_t>(b * 3 + 2)] = 2.0 * dup.x[static_cast<size_t>(b * 3 + 1)];
  CHECK(dirmn_reg_fit(ctx.get(), c.get(), dup.x.data(), pr.rows, 3, 3, 1, nullptr, &r) == DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(r == sentinel);
  CHECK(error_location(ctx.get()).index == 2);
  CHECK(std::string(error_location(ctx.get()).argument) == "x column");
  // A NaN covariate: row and column.
  Problem bad = pr;
  bad.x[static_cast<size_t>(7 * 3 + 1)] = std::nan("");
  CHECK(dirmn_reg_fit(ctx.get(), c.get(), bad.x.data(), pr.rows, 3, 3, 1, nullptr, &r) == DIRMN_ERROR_INVALID_PARAMETER);
  CHECK(error_location(ctx.get()).row == 7);
  CHECK(error_location(ctx.get()).column == 1);
  CHECK(std::string(dirmn_last_error(ctx.get())).find("row 7, column 1") != std::string::npos);
  // Rows that are not the table's; p out of range; no handle to write.
  CHECK(dirmn_reg_fit(ctx.get(), c.get(), pr.x.data(), pr.rows - 1, 3, 3, 1, nullptr, &r) ==
        DIRMN_ERROR_DIMENSION_MISMATCH);
  CHECK(dirmn_reg_fit(ctx.get(), c.get(), pr.x.data(), pr.rows, 0, 3, 1, nullptr, &r) == DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(dirmn_reg_fit(ctx.get(), c.get(), pr.x.data(), pr.rows, int64_t{1} << 40, 3, 1, nullptr, &r) == DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(dirmn_reg_fit(ctx.get(), c.get(), pr.x.data(), pr.rows, 3, 3, 1, nullptr, nullptr) == DIRMN_ERROR_NULL_POINTER);
  CHECK(dirmn_reg_fit(ctx.get(), c.get(), nullptr, pr.rows, 3, 3, 1, nullptr, &r) == DIRMN_ERROR_NULL_POINTER);
  // Strides whose extent wraps.
  CHECK(dirmn_reg_fit(ctx.get(), c.get(), pr.x.data(), pr.rows, 3, int64_t{1} << 61, 1, nullptr, &r) ==
        DIRMN_ERROR_OVERFLOW);
  // A negative weight names its row; bad options are refused.
  std::vector<double> w(static_cast<size_t>(pr.rows), 1.0);
  w[4] = -1.0;
  dirmn_reg_options o;
  dirmn_reg_options_init(&o);
  o.weights = w.data();
  CHECK(dirmn_reg_fit(ctx.get(), c.get(), pr.x.data(), pr.rows, 3, 3, 1, &o, &r) == DIRMN_ERROR_INVALID_PARAMETER);
  CHECK(error_location(ctx.get()).row == 4);
  dirmn_reg_options_init(&o);
  o.tolerance = 0.0;
  CHECK(dirmn_reg_fit(ctx.get(), c.get(), pr.x.data(), pr.rows, 3, 3, 1, &o, &r) == DIRMN_ERROR_INVALID_ARGUMENT);
  // A category without counts: named by its column.
  Problem empty = pr;
  for (int64_t b = 0; b < pr.rows; ++b) empty.y[static_cast<size_t>(b * 3 + 1)] = 0;
  Counts ce = counts_of(ctx.get(), empty);
  CHECK(dirmn_reg_fit(ctx.get(), ce.get(), pr.x.data(), pr.rows, 3, 3, 1, nullptr, &r) == DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(error_location(ctx.get()).index == 1);
  CHECK(std::string(error_location(ctx.get()).argument) == "column");
  CHECK(r == sentinel);
  // After all that, the table still fits, and the getters check their input.
  Reg ok = fit(ctx.get(), c.get(), pr);
  std::vector<double> out(9);
  CHECK(dirmn_reg_get_coef(ok.get(), out.data(), 1, 1) == DIRMN_ERROR_INVALID_ARGUMENT);  // overlap
  CHECK(dirmn_reg_get_vcov(ok.get(), out.data(), 8) == DIRMN_ERROR_INVALID_ARGUMENT);      // ld < 9
  CHECK(dirmn_reg_get_coef(nullptr, out.data(), 3, 1) == DIRMN_ERROR_NULL_POINTER);
  dirmn_reg_info in;
  in.size = 4;
  CHECK(dirmn_reg_get_info(ok.get(), &in) == DIRMN_ERROR_INVALID_ARGUMENT);
  std::vector<double> xn = {1, std::numeric_limits<double>::infinity(), 0};
  CHECK(dirmn_reg_predict(ok.get(), xn.data(), 1, 3, 3, 1, out.data(), 3, 1) == DIRMN_ERROR_INVALID_PARAMETER);
  CHECK(dirmn_reg_predict(ok.get(), xn.data(), 1, 2, 3, 1, out.data(), 3, 1) == DIRMN_ERROR_INVALID_ARGUMENT);
  xn = {1, 1e6, 0};
  CHECK(dirmn_reg_predict(ok.get(), xn.data(), 1, 3, 3, 1, out.data(), 3, 1) == DIRMN_ERROR_OVERFLOW);
  dirmn_reg_destroy(nullptr);
}

TEST_CASE("regression: the likelihood-ratio test of a two-group design holds its size under the null",
          "[regression]") {
  // 400 tables drawn under the null (one alpha for both groups): twice the
  // log-likelihood ratio of group + intercept against intercept alone is
  // chi-square with V degrees of freedom, so about 5 % exceed its 95 %
  // point (7.8147 for V = 3). With 400 draws the share has a Monte Carlo
  // standard error of 1.1 %: 2 % to 8 % holds with probability > 0.995.
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  const int64_t rows = 40, V = 3;
  const double alpha[3] = {2.0, 1.0, 0.5};
  std::mt19937_64 rng(2905);
  std::vector<double> x_full(static_cast<size_t>(rows * 2)), x_null(static_cast<size_t>(rows), 1.0);
  for (int64_t b = 0; b < rows; ++b) {
    x_full[static_cast<size_t>(2 * b)] = 1.0;
    x_full[static_cast<size_t>(2 * b + 1)] = b % 2 == 0 ? 0.0 : 1.0;
  }
  const int reps = 400;
  int rejected = 0;
  for (int r = 0; r < reps; ++r) {
    std::vector<int32_t> y(static_cast<size_t>(rows * V));
    for (int64_t b = 0; b < rows; ++b) {
      double g[3], total = 0.0;
      for (int v = 0; v < 3; ++v) {
        std::gamma_distribution<double> gamma(alpha[v], 1.0);
        g[v] = gamma(rng);
        total += g[v];
      }
      int left = 30;
      for (int v = 0; v < 3; ++v) {
        int c = left;
        if (v < 2) {
          std::binomial_distribution<int> bin(left, total > 0.0 ? std::min(1.0, g[v] / total) : 0.0);
          c = bin(rng);
        }
        y[static_cast<size_t>(b * V + v)] = c;
        left -= c;
        total -= g[v];
      }
    }
    dirmn_counts* cp = nullptr;
    REQUIRE(dirmn_counts_create_dense(ctx.get(), &cp, rows, V, DIRMN_INT32, y.data(), V, 1, nullptr) == DIRMN_SUCCESS);
    Counts c(cp);
    dirmn_reg *full = nullptr, *null = nullptr;
    REQUIRE(dirmn_reg_fit(ctx.get(), c.get(), x_full.data(), rows, 2, 2, 1, nullptr, &full) == DIRMN_SUCCESS);
    Reg f(full);
    REQUIRE(dirmn_reg_fit(ctx.get(), c.get(), x_null.data(), rows, 1, 1, 1, nullptr, &null) == DIRMN_SUCCESS);
    Reg n(null);
    const double lrt = 2.0 * (info_of(f.get()).loglik - info_of(n.get()).loglik);
    REQUIRE(lrt > -1e-6);
    rejected += lrt > 7.8147279032511765 ? 1 : 0;
  }
  const double size = static_cast<double>(rejected) / reps;
  INFO("rejected " << rejected << " of " << reps);
  CHECK(size > 0.02);
  CHECK(size < 0.08);
}

TEST_CASE("regression: weights scaled by 2^100 give the same fit, the covariance scaled by 2^-100",
          "[regression]") {
  const Problem pr = simulate(60, 3, 2, 2906);
  const int64_t P = pr.p * pr.V;
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  Counts c = counts_of(ctx.get(), pr);
  std::vector<double> w(static_cast<size_t>(pr.rows));
  for (int64_t b = 0; b < pr.rows; ++b) w[static_cast<size_t>(b)] = 1.0 + static_cast<double>(b % 3);
  std::vector<double> big = w;
  for (double& x : big) x = std::ldexp(x, 100);
  Reg r1 = fit(ctx.get(), c.get(), pr, w.data()), r2 = fit(ctx.get(), c.get(), pr, big.data());
  const dirmn_reg_info i1 = info_of(r1.get()), i2 = info_of(r2.get());
  CHECK(close_to(i2.loglik, std::ldexp(i1.loglik, 100), 1e-12));
  CHECK(close_to(i2.observations, std::ldexp(i1.observations, 100), 1e-15));
  const std::vector<double> b1 = vec_coef(r1.get(), pr.p, pr.V), b2 = vec_coef(r2.get(), pr.p, pr.V);
  std::vector<double> v1(static_cast<size_t>(P * P)), v2(static_cast<size_t>(P * P));
  REQUIRE(dirmn_reg_get_vcov(r1.get(), v1.data(), P) == DIRMN_SUCCESS);
  REQUIRE(dirmn_reg_get_vcov(r2.get(), v2.data(), P) == DIRMN_SUCCESS);
  for (int64_t k = 0; k < P; ++k) {
    CHECK(std::fabs(b1[static_cast<size_t>(k)] - b2[static_cast<size_t>(k)]) <
          1e-8 * std::sqrt(v1[static_cast<size_t>(k * P + k)]));
    CHECK(close_to(v2[static_cast<size_t>(k * P + k)], std::ldexp(v1[static_cast<size_t>(k * P + k)], -100), 1e-8));
  }
}

namespace {
struct Progress {
  int calls = 0, last = 0, stop_at = 0;
  static int fn(int iteration, double loglik, double change, void* self) {
    auto* p = static_cast<Progress*>(self);
    ++p->calls;
    p->last = iteration;
    return std::isfinite(loglik) && std::isfinite(change) && iteration != p->stop_at ? 0 : 1;
  }
};
}  // namespace

TEST_CASE("regression: max_iterations bounds the steps, the progress callback sees each and cancels",
          "[regression]") {
  const Problem pr = simulate(80, 3, 3, 2907);
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  Counts c = counts_of(ctx.get(), pr);
  Progress prog;
  dirmn_reg_options o;
  dirmn_reg_options_init(&o);
  o.progress = &Progress::fn;
  o.progress_data = &prog;
  dirmn_reg* r = nullptr;
  REQUIRE(dirmn_reg_fit(ctx.get(), c.get(), pr.x.data(), pr.rows, pr.p, pr.p, 1, &o, &r) == DIRMN_SUCCESS);
  Reg full(r);
  const dirmn_reg_info in = info_of(full.get());
  CHECK(in.converged == 1);
  CHECK(prog.calls == in.iterations);
  CHECK(prog.last == in.iterations);
  REQUIRE(in.iterations >= 2);
  // One step fewer than it took: not converged, that many steps.
  o.max_iterations = in.iterations - 1;
  o.progress = nullptr;
  r = nullptr;
  REQUIRE(dirmn_reg_fit(ctx.get(), c.get(), pr.x.data(), pr.rows, pr.p, pr.p, 1, &o, &r) == DIRMN_SUCCESS);
  Reg fewer(r);
  CHECK(info_of(fewer.get()).iterations <= in.iterations - 1);
  o.max_iterations = 0;
  r = nullptr;
  REQUIRE(dirmn_reg_fit(ctx.get(), c.get(), pr.x.data(), pr.rows, pr.p, pr.p, 1, &o, &r) == DIRMN_SUCCESS);
  Reg none(r);
  CHECK(info_of(none.get()).iterations == 0);
  CHECK(info_of(none.get()).converged == 0);
  // A callback that stops at step 2: CANCELLED, the handle as it was.
  o.max_iterations = 200;
  o.progress = &Progress::fn;
  prog = Progress{};
  prog.stop_at = 2;
  dirmn_reg* const sentinel = reinterpret_cast<dirmn_reg*>(&prog);
  r = sentinel;
  CHECK(dirmn_reg_fit(ctx.get(), c.get(), pr.x.data(), pr.rows, pr.p, pr.p, 1, &o, &r) == DIRMN_ERROR_CANCELLED);
  CHECK(r == sentinel);
  CHECK(prog.calls == 2);
  // A table of one category is refused; rows of weight 0 take no part,
  // whatever their covariates.
  Problem one = pr;
  one.V = 1;
  one.y.assign(static_cast<size_t>(pr.rows), 5);
  Counts c1 = counts_of(ctx.get(), one);
  CHECK(dirmn_reg_fit(ctx.get(), c1.get(), pr.x.data(), pr.rows, pr.p, pr.p, 1, nullptr, &r) ==
        DIRMN_ERROR_INVALID_ARGUMENT);
  Problem wild = pr;
  std::vector<double> w(static_cast<size_t>(pr.rows), 1.0);
  w[3] = 0.0;
  wild.x[static_cast<size_t>(3 * pr.p + 1)] = 1e6;  // exp of it overflows, but row 3 weighs 0
  dirmn_reg_options_init(&o);
  o.weights = w.data();
  r = nullptr;
  REQUIRE(dirmn_reg_fit(ctx.get(), c.get(), wild.x.data(), pr.rows, pr.p, pr.p, 1, &o, &r) == DIRMN_SUCCESS);
  Reg skipped(r);
  CHECK(info_of(skipped.get()).converged == 1);
  CHECK(info_of(skipped.get()).observations == static_cast<double>(pr.rows - 1));
}
