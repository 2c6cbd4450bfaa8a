// test_regression_precision.cpp: the mean/precision regression with
// covariates on the precision (options->precision_design, log phi_b = z_b .
// gamma) against an independent reference -- the long-double log pmf
// (support.hpp) at alpha_b = exp(z_b . gamma) softmax(x_b beta), its
// central-difference gradient and Hessian in the free coefficients -- and
// the API's promises: an intercept-only z is the fit without one, a
// reparametrised z the same optimum, weights as replicated rows, and bad
// precision designs named by row, column and covariate.
#include "regression_support.hpp"

using namespace dirmn_test;

namespace {

// A design x = [1, normal], precision design z = [1, group] (group = b % 2:
// precisions 8 and 48), counts drawn from the DM at those alphas.
struct PrecisionProblem {
  Problem pr;
  int64_t q = 2;
  std::vector<double> z;  // rows x q
};

PrecisionProblem simulate_precision(int64_t rows, int64_t V, uint64_t seed) {
  PrecisionProblem pp;
  Problem& pr = pp.pr;
  pr.rows = rows;
  pr.V = V;
  pr.p = 2;
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> beta(static_cast<size_t>(2 * V));  // (i, v) at i V + v
  for (int64_t v = 0; v < V; ++v) {
    beta[static_cast<size_t>(v)] = 0.2 * static_cast<double>(v);
    beta[static_cast<size_t>(V + v)] = 0.5 * normal(rng);
  }
  const double gamma[2] = {std::log(8.0), std::log(6.0)};
  pr.x.resize(static_cast<size_t>(rows * 2));
  pr.y.resize(static_cast<size_t>(rows * V));
  pp.z.resize(static_cast<size_t>(rows * 2));
  for (int64_t b = 0; b < rows; ++b) {
    const double xb = normal(rng), g = static_cast<double>(b % 2);
    pr.x[static_cast<size_t>(2 * b)] = 1.0;
    pr.x[static_cast<size_t>(2 * b + 1)] = xb;
    pp.z[static_cast<size_t>(2 * b)] = 1.0;
    pp.z[static_cast<size_t>(2 * b + 1)] = g;
    const double phi = std::exp(gamma[0] + gamma[1] * g);
    std::vector<double> e(static_cast<size_t>(V)), w(static_cast<size_t>(V));
    double sum = 0.0, wsum = 0.0;
    for (int64_t v = 0; v < V; ++v) sum += e[static_cast<size_t>(v)] = std::exp(beta[static_cast<size_t>(v)] + xb * beta[static_cast<size_t>(V + v)]);
    for (int64_t v = 0; v < V; ++v) {
      std::gamma_distribution<double> gd(phi * e[static_cast<size_t>(v)] / sum, 1.0);
      wsum += w[static_cast<size_t>(v)] = gd(rng);
    }
    int left = 60 + static_cast<int>(b % 5) * 15;
    for (int64_t v = 0; v < V; ++v) {
      const double pv = v + 1 == V || wsum <= 0.0 ? 1.0 : std::min(1.0, w[static_cast<size_t>(v)] / wsum);
      std::binomial_distribution<int> bin(left, pv);
      const int c = v + 1 == V ? left : bin(rng);
      pr.y[static_cast<size_t>(b * V + v)] = c;
      left -= c;
      wsum -= w[static_cast<size_t>(v)];
    }
  }
  return pp;
}

// The total log pmf at the free coefficients (vec(beta) without the
// reference column 0, then the q gammas), alpha in long double; w: row
// weights or null.
double reference_total_z(const PrecisionProblem& pp, const std::vector<double>& free,
                         const std::vector<double>* w = nullptr) {
  const Problem& pr = pp.pr;
  const int64_t p = pr.p, V = pr.V, q = pp.q;
  long double total = 0;
  std::vector<double> n(static_cast<size_t>(V)), a(static_cast<size_t>(V));
  std::vector<long double> e(static_cast<size_t>(V));
  for (int64_t b = 0; b < pr.rows; ++b) {
    long double sum = 0, zeta = 0;
    for (int64_t j = 0; j < q; ++j)
      zeta += pp.z[static_cast<size_t>(b * q + j)] * static_cast<long double>(free[static_cast<size_t>(p * (V - 1) + j)]);
    for (int64_t v = 0; v < V; ++v) {
      long double eta = 0;
      if (v > 0)
        for (int64_t i = 0; i < p; ++i)
          eta += pr.x[static_cast<size_t>(b * p + i)] * static_cast<long double>(free[static_cast<size_t>((v - 1) * p + i)]);
      sum += e[static_cast<size_t>(v)] = std::exp(eta);
      n[static_cast<size_t>(v)] = pr.y[static_cast<size_t>(b * V + v)];
    }
    for (int64_t v = 0; v < V; ++v)
      a[static_cast<size_t>(v)] = static_cast<double>(std::exp(zeta) * e[static_cast<size_t>(v)] / sum);
    total += static_cast<long double>(w ? (*w)[static_cast<size_t>(b)] : 1.0) * reference_loglik(n.data(), a.data(), V, true);
  }
  return static_cast<double>(total);
}

dirmn_reg_options precision_options(const double* z, int64_t q, const double* weights = nullptr) {
  dirmn_reg_options o;
  dirmn_reg_options_init(&o);
  o.model = DIRMN_REG_MEAN_PRECISION;
  o.precision_design = z;
  o.precision_covariates = q;
  o.precision_stride_row = q;
  o.precision_stride_col = 1;
  o.weights = weights;
  return o;
}

Reg fit_z(dirmn_context* ctx, dirmn_counts* c, const Problem& pr, const dirmn_reg_options& o) {
  dirmn_reg* r = nullptr;
  const dirmn_status s = dirmn_reg_fit(ctx, c, pr.x.data(), pr.rows, pr.p, pr.p, 1, &o, &r);
  INFO(dirmn_last_error(ctx));
  REQUIRE(s == DIRMN_SUCCESS);
  return Reg(r);
}

// The free coefficients of a fit (reference category 0): vec(beta) of
// categories 1 .. V - 1, then gamma (q entries; their standard errors in
// *gse where given).
std::vector<double> free_of(const dirmn_reg* r, int64_t p, int64_t V, int64_t q, std::vector<double>* gse = nullptr) {
  std::vector<double> coef(static_cast<size_t>(p * V)), gamma(static_cast<size_t>(q)), se(static_cast<size_t>(q));
  REQUIRE(dirmn_reg_get_coef(r, coef.data(), V, 1) == DIRMN_SUCCESS);
  REQUIRE(dirmn_reg_get_precision(r, gamma.data(), se.data()) == DIRMN_SUCCESS);
  std::vector<double> free;
  for (int64_t v = 1; v < V; ++v)
    for (int64_t i = 0; i < p; ++i) free.push_back(coef[static_cast<size_t>(i * V + v)]);
  free.insert(free.end(), gamma.begin(), gamma.end());
  if (gse) *gse = se;
  return free;
}

}  // namespace

TEST_CASE("regression precision design: the long-double optimum, its covariance from the Hessian, prediction",
          "[regression]") {
  const PrecisionProblem pp = simulate_precision(120, 4, 3101);
  const Problem& pr = pp.pr;
  const int64_t p = pr.p, V = pr.V, q = pp.q, P = p * (V - 1) + q;
  for (dirmn_backend backend : backends_under_test()) {
    SECTION(backend_name(backend)) {
      Context ctx = make_context(backend);
      REQUIRE(ctx);
      Counts c = counts_of(ctx.get(), pr);
      Reg r = fit_z(ctx.get(), c.get(), pr, precision_options(pp.z.data(), q));
      const dirmn_reg_info in = info_of(r.get());
      CHECK(in.converged == 1);
      REQUIRE(in.hessian_definite == 1);
      CHECK(in.parameters == P);
      CHECK(in.precision_covariates == q);
      std::vector<double> gse;
      const std::vector<double> free = free_of(r.get(), p, V, q, &gse);
      const double ll = reference_total_z(pp, free);
      CHECK(close_to(in.loglik, ll, 1e-12));
      CHECK(close_to(in.bic, -2 * ll + static_cast<double>(P) * std::log(static_cast<double>(pr.rows)), 1e-12));
      // The two groups' precisions are told apart: gamma_1 = log(48 / 8) within 3 SE.
      CHECK(std::fabs(free[static_cast<size_t>(P - 1)] - std::log(6.0)) < 3 * gse[1]);
      const std::vector<double> cov_fd =
          fd_covariance([&pp](const std::vector<double>& t) { return reference_total_z(pp, t); }, free);
      check_vcov(r.get(), cov_fd, P);
      for (int64_t j = 0; j < q; ++j)
        CHECK(close_to(gse[static_cast<size_t>(j)], std::sqrt(cov_fd[static_cast<size_t>((P - q + j) * (P + 1))]), 1e-4));
      // Prediction: exp(z . gamma) softmax(x beta), for a row of each group.
      const std::vector<double> xn = {1.0, 0.4, 1.0, -0.7}, zn = {1.0, 0.0, 1.0, 1.0};
      std::vector<double> alpha(static_cast<size_t>(2 * V));
      REQUIRE(dirmn_reg_predict_with_precision(r.get(), xn.data(), 2, p, p, 1, zn.data(), q, q, 1, alpha.data(), V,
                                               1) == DIRMN_SUCCESS);
      for (int64_t b = 0; b < 2; ++b) {
        std::vector<double> e(static_cast<size_t>(V));
        double sum = 0;
        for (int64_t v = 0; v < V; ++v) {
          double eta = 0;
          if (v > 0)
            for (int64_t i = 0; i < p; ++i) eta += xn[static_cast<size_t>(b * p + i)] * free[static_cast<size_t>((v - 1) * p + i)];
          sum += e[static_cast<size_t>(v)] = std::exp(eta);
        }
        const double phi = std::exp(free[static_cast<size_t>(P - 2)] + zn[static_cast<size_t>(2 * b + 1)] * free[static_cast<size_t>(P - 1)]);
        for (int64_t v = 0; v < V; ++v)
          CHECK(close_to(alpha[static_cast<size_t>(b * V + v)], phi * e[static_cast<size_t>(v)] / sum, 1e-13));
      }
      // Without z the fit's new rows have no precision.
      CHECK(dirmn_reg_predict(r.get(), xn.data(), 2, p, p, 1, alpha.data(), V, 1) == DIRMN_ERROR_INVALID_ARGUMENT);
      CHECK(std::string(dirmn_last_error(nullptr)).find("dirmn_reg_predict_with_precision") != std::string::npos);
    }
  }
}

TEST_CASE("regression precision design: an intercept alone is the fit without one; a reparametrised z the same "
          "optimum; weights are replicated rows",
          "[regression]") {
  const PrecisionProblem pp = simulate_precision(80, 3, 3102);
  const Problem& pr = pp.pr;
  const int64_t p = pr.p, V = pr.V;
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  Counts c = counts_of(ctx.get(), pr);
  // z = 1: the default fit.
  const std::vector<double> ones(static_cast<size_t>(pr.rows), 1.0);
  Reg one = fit_z(ctx.get(), c.get(), pr, precision_options(ones.data(), 1));
  dirmn_reg_options o;
  dirmn_reg_options_init(&o);
  o.model = DIRMN_REG_MEAN_PRECISION;
  Reg plain = fit_z(ctx.get(), c.get(), pr, o);
  CHECK(close_to(info_of(one.get()).loglik, info_of(plain.get()).loglik, 1e-12));
  const std::vector<double> f1 = free_of(one.get(), p, V, 1), f0 = free_of(plain.get(), p, V, 1);
  for (size_t k = 0; k < f1.size(); ++k) CHECK(close_to(f1[k], f0[k], 1e-8, 1e-10));
  // z = [1 - g, g] spans what [1, g] spans: the same optimum, gamma'_0 =
  // gamma_0 and gamma'_1 = gamma_0 + gamma_1.
  std::vector<double> cells(static_cast<size_t>(pr.rows * 2));
  for (int64_t b = 0; b < pr.rows; ++b) {
    cells[static_cast<size_t>(2 * b)] = 1.0 - pp.z[static_cast<size_t>(2 * b + 1)];
    cells[static_cast<size_t>(2 * b + 1)] = pp.z[static_cast<size_t>(2 * b + 1)];
  }
  Reg a = fit_z(ctx.get(), c.get(), pr, precision_options(pp.z.data(), 2));
  Reg b = fit_z(ctx.get(), c.get(), pr, precision_options(cells.data(), 2));
  CHECK(close_to(info_of(a.get()).loglik, info_of(b.get()).loglik, 1e-12));
  const std::vector<double> fa = free_of(a.get(), p, V, 2), fb = free_of(b.get(), p, V, 2);
  const size_t P = fa.size();
  CHECK(close_to(fb[P - 2], fa[P - 2], 1e-7));
  CHECK(close_to(fb[P - 1], fa[P - 2] + fa[P - 1], 1e-7));
  CHECK(info_of(a.get()).loglik > info_of(plain.get()).loglik);
  // Integer weights: the same fit as the rows replicated.
  std::vector<double> w(static_cast<size_t>(pr.rows));
  PrecisionProblem rep = pp;
  rep.pr.x.clear();
  rep.pr.y.clear();
  rep.z.clear();
  rep.pr.rows = 0;
  for (int64_t r = 0; r < pr.rows; ++r) {
    w[static_cast<size_t>(r)] = static_cast<double>(r % 3);
    for (int k = 0; k < r % 3; ++k) {
      rep.pr.x.insert(rep.pr.x.end(), pr.x.begin() + r * p, pr.x.begin() + (r + 1) * p);
      rep.pr.y.insert(rep.pr.y.end(), pr.y.begin() + r * V, pr.y.begin() + (r + 1) * V);
      rep.z.insert(rep.z.end(), pp.z.begin() + r * 2, pp.z.begin() + (r + 1) * 2);
      ++rep.pr.rows;
    }
  }
  Reg weighted = fit_z(ctx.get(), c.get(), pr, precision_options(pp.z.data(), 2, w.data()));
  Counts cr = counts_of(ctx.get(), rep.pr);
  Reg replicated = fit_z(ctx.get(), cr.get(), rep.pr, precision_options(rep.z.data(), 2));
  CHECK(close_to(info_of(weighted.get()).loglik, info_of(replicated.get()).loglik, 1e-10));
  const std::vector<double> fw = free_of(weighted.get(), p, V, 2), fr = free_of(replicated.get(), p, V, 2);
  for (size_t k = 0; k < fw.size(); ++k) CHECK(close_to(fw[k], fr[k], 1e-8, 1e-10));
  CHECK(close_to(reference_total_z(pp, fw, &w), info_of(weighted.get()).loglik, 1e-12));
}

TEST_CASE("regression precision design: bad designs are named, and a failed fit leaves the handle as it was",
          "[regression][errors]") {
  const PrecisionProblem pp = simulate_precision(40, 3, 3103);
  const Problem& pr = pp.pr;
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  Counts c = counts_of(ctx.get(), pr);
  dirmn_reg* const sentinel = reinterpret_cast<dirmn_reg*>(const_cast<PrecisionProblem*>(&pp));
  dirmn_reg* r = sentinel;
  auto fit_with = [&](const std::vector<double>& z, int64_t q, dirmn_reg_options o) {
    o.precision_design = z.data();
    o.precision_covariates = q;
    o.precision_stride_row = q;
    o.precision_stride_col = 1;
    return dirmn_reg_fit(ctx.get(), c.get(), pr.x.data(), pr.rows, pr.p, pr.p, 1, &o, &r);
  };
  const dirmn_reg_options mp = precision_options(nullptr, 0);
  // A NaN in z: its row and column.
  std::vector<double> z = pp.z;
  z[static_cast<size_t>(2 * 9 + 1)] = std::nan("");
  CHECK(fit_with(z, 2, mp) == DIRMN_ERROR_INVALID_PARAMETER);
  CHECK(error_location(ctx.get()).row == 9);
  CHECK(error_location(ctx.get()).column == 1);
  CHECK(std::string(error_location(ctx.get()).argument) == "precision_design");
  CHECK(std::string(dirmn_last_error(ctx.get())).find("precision covariate") != std::string::npos);
  // A column twice another: named by its index.
  std::vector<double> dup(static_cast<size_t>(pr.rows * 3));
  for (int64_t b = 0; b < pr.rows; ++b) {
    dup[static_cast<size_t>(3 * b)] = 1.0;
    dup[static_cast<size_t>(3 * b + 1)] = pp.z[static_cast<size_t>(2 * b + 1)];
    dup[static_cast<size_t>(3 * b + 2)] = 2.0 * pp.z[static_cast<size_t>(2 * b + 1)];
  }
  CHECK(fit_with(dup, 3, mp) == DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(error_location(ctx.get()).index == 2);
  CHECK(std::string(error_location(ctx.get()).argument) == "precision_design column");
  // q out of range; a log-linear model; a held precision beside z.
  CHECK(fit_with(pp.z, 0, mp) == DIRMN_ERROR_INVALID_ARGUMENT);
  dirmn_reg_options o = mp;
  o.model = DIRMN_REG_LOGLINEAR;
  CHECK(fit_with(pp.z, 2, o) == DIRMN_ERROR_INVALID_ARGUMENT);
  o = mp;
  o.log_precision = 2.0;
  CHECK(fit_with(pp.z, 2, o) == DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(dirmn_last_error(ctx.get())).find("log_precision") != std::string::npos);
  CHECK(r == sentinel);
  // The grouped tests take no precision design.
  const std::vector<int64_t> group(static_cast<size_t>(pr.V), 0);
  dirmn_reg_groups_result res;
  std::memset(&res, 0, sizeof res);
  res.size = sizeof res;
  o = precision_options(pp.z.data(), 2);
  CHECK(dirmn_reg_test_groups(ctx.get(), c.get(), group.data(), 1, pr.x.data(), pr.rows, pr.p, pr.p, 1, 1, &o,
                              &res) == DIRMN_ERROR_INVALID_ARGUMENT);
  // Prediction checks z as it checks x.
  Reg ok = fit_z(ctx.get(), c.get(), pr, precision_options(pp.z.data(), 2));
  std::vector<double> xn = {1.0, 0.5}, zn = {1.0, std::numeric_limits<double>::infinity()}, out(3);
  CHECK(dirmn_reg_predict_with_precision(ok.get(), xn.data(), 1, 2, 2, 1, zn.data(), 2, 2, 1, out.data(), 3, 1) ==
        DIRMN_ERROR_INVALID_PARAMETER);
  CHECK(std::string(dirmn_last_error(nullptr)).find("precision covariate") != std::string::npos);
  zn = {1.0, 0.0};
  CHECK(dirmn_reg_predict_with_precision(ok.get(), xn.data(), 1, 2, 2, 1, zn.data(), 1, 2, 1, out.data(), 3, 1) ==
        DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(dirmn_reg_predict_with_precision(ok.get(), xn.data(), 1, 2, 2, 1, nullptr, 2, 2, 1, out.data(), 3, 1) ==
        DIRMN_ERROR_NULL_POINTER);
  // A fit without z takes none.
  Reg plain = fit_z(ctx.get(), c.get(), pr, precision_options(nullptr, 0));
  CHECK(dirmn_reg_predict_with_precision(plain.get(), xn.data(), 1, 2, 2, 1, zn.data(), 2, 2, 1, out.data(), 3, 1) ==
        DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(dirmn_reg_predict_with_precision(plain.get(), xn.data(), 1, 2, 2, 1, nullptr, 0, 0, 0, out.data(), 3, 1) ==
        DIRMN_SUCCESS);
}

TEST_CASE("regression precision: a table without overdispersion is the multinomial limit, not a converged fit",
          "[regression]") {
  // Counts as even as counts can be (each row's share rounded, less
  // spread than any multinomial): the likelihood rises toward phi ->
  // infinity, the multinomial logit model.
  Problem pr;
  pr.rows = 150;
  pr.V = 3;
  pr.p = 2;
  std::mt19937_64 rng(3104);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (int64_t b = 0; b < pr.rows; ++b) {
    const double x = normal(rng), n = 90.0;
    pr.x.insert(pr.x.end(), {1.0, x});
    const double e[3] = {1.0, std::exp(0.4 * x), std::exp(0.2 - 0.3 * x)}, sum = e[0] + e[1] + e[2];
    const int c1 = static_cast<int>(std::lround(n * e[1] / sum)), c2 = static_cast<int>(std::lround(n * e[2] / sum));
    pr.y.insert(pr.y.end(), {90 - c1 - c2, c1, c2});
  }
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  Counts c = counts_of(ctx.get(), pr);
  Reg r = fit_z(ctx.get(), c.get(), pr, precision_options(nullptr, 0));
  const dirmn_reg_info in = info_of(r.get());
  CHECK(in.multinomial_limit == 1);
  CHECK(in.converged == 0);
  // The log-likelihood is the multinomial's at the fitted proportions
  // (long double, with the coefficients), within what phi's plateau leaves.
  std::vector<double> coef(static_cast<size_t>(pr.p * pr.V));
  REQUIRE(dirmn_reg_get_coef(r.get(), coef.data(), pr.V, 1) == DIRMN_SUCCESS);
  long double mult = 0;
  for (int64_t b = 0; b < pr.rows; ++b) {
    long double e[3], sum = 0, n = 0;
    for (int64_t v = 0; v < 3; ++v) {
      e[v] = std::exp(static_cast<long double>(coef[static_cast<size_t>(v)] + pr.x[static_cast<size_t>(2 * b + 1)] * coef[static_cast<size_t>(3 + v)]));
      sum += e[v];
      n += pr.y[static_cast<size_t>(3 * b + v)];
    }
    mult += std::lgamma(n + 1);
    for (int64_t v = 0; v < 3; ++v) {
      const long double y = pr.y[static_cast<size_t>(3 * b + v)];
      mult += y * std::log(e[v] / sum) - std::lgamma(y + 1);
    }
  }
  CHECK(std::fabs(in.loglik - static_cast<double>(mult)) < 1e-4);
  // An overdispersed table is not.
  const PrecisionProblem pp = simulate_precision(120, 4, 3105);
  Counts c2 = counts_of(ctx.get(), pp.pr);
  Reg r2 = fit_z(ctx.get(), c2.get(), pp.pr, precision_options(nullptr, 0));
  CHECK(info_of(r2.get()).multinomial_limit == 0);
  CHECK(info_of(r2.get()).converged == 1);
}
