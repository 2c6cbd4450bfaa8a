// test_regression_groups.cpp: dirmn_reg_test_groups against its definition
// -- each group's fits by dirmn_reg_fit on a table of the group's columns
// with counts, the likelihood-ratio test's chi-square tail in closed form
// (long double), Benjamini-Hochberg by its definition -- and its promises:
// untestable groups named and left out, results independent of the thread
// count, bad input refused with the caller's arrays untouched.
#include "support.hpp"

using namespace dirmn_test;

namespace {

struct RegDeleter {
  void operator()(dirmn_reg* r) const { dirmn_reg_destroy(r); }
};
using Reg = std::unique_ptr<dirmn_reg, RegDeleter>;

// The chi-square upper tail for integer df (closed forms, long double).
double chisq_tail(double x, int df) {
  const long double h = static_cast<long double>(x) / 2;
  if (df % 2 == 0) {
    long double term = 1, sum = 1;
    for (int j = 1; j < df / 2; ++j) {
      term *= h / j;
      sum += term;
    }
    return static_cast<double>(std::exp(-h) * sum);
  }
  long double sum = std::erfc(std::sqrt(h));
  long double term = std::sqrt(h) * 2 / std::sqrt(3.14159265358979323846264338327950288L);  // h^1/2 / Gamma(3/2)
  for (int j = 1; j <= (df - 1) / 2; ++j) {
    sum += std::exp(-h) * term;
    term *= h / (j + 0.5L);
  }
  return static_cast<double>(sum);
}

// BH by its definition: min over j >= rank of p_(j) m / j.
std::vector<double> bh(const std::vector<double>& p) {
  std::vector<double> out(p.size(), std::nan(""));
  std::vector<size_t> idx;
  for (size_t i = 0; i < p.size(); ++i)
    if (!std::isnan(p[i])) idx.push_back(i);
  const double m = static_cast<double>(idx.size());
  for (size_t a : idx) {
    double best = 1.0;
    for (size_t b : idx) {
      if (p[b] < p[a]) continue;
      size_t rank = 0;  // p[b]'s rank: entries below it, ties counted up to b's position
      for (size_t c : idx) rank += p[c] < p[b] || (p[c] == p[b] && c <= b) ? 1 : 0;
      best = std::min(best, p[b] * m / static_cast<double>(rank));
    }
    out[a] = best;
  }
  return out;
}

// 14 samples in two conditions, genes of 2 to 6 transcripts; gene 3's
// second transcript and gene 7's all but one are empty (gene 7: one column
// with counts, untestable); column 2 belongs to no gene.
struct Data {
  int64_t rows = 14, V = 0, genes = 12;
  std::vector<int64_t> group;
  std::vector<int32_t> y;     // rows x V
  std::vector<double> x;      // rows x 2: intercept, condition
};

Data make_data() {
  Data d;
  std::mt19937_64 rng(77);
  std::vector<int64_t> sizes = {2, 3, 4, 4, 6, 3, 5, 3, 2, 4, 3, 2};
  for (int64_t g = 0; g < d.genes; ++g)
    for (int64_t k = 0; k < sizes[static_cast<size_t>(g)]; ++k) {
      d.group.push_back(g);
      if (g == 1 && k == 0) d.group.push_back(-1);  // column 2: no gene
    }
  d.V = static_cast<int64_t>(d.group.size());
  d.y.assign(static_cast<size_t>(d.rows * d.V), 0);
  d.x.resize(static_cast<size_t>(d.rows * 2));
  std::gamma_distribution<double> depth(5.0, 40.0);
  for (int64_t b = 0; b < d.rows; ++b) {
    const int cond = static_cast<int>(b % 2);
    d.x[static_cast<size_t>(2 * b)] = 1.0;
    d.x[static_cast<size_t>(2 * b + 1)] = cond;
    for (int64_t v = 0; v < d.V; ++v) {
      const int64_t g = d.group[static_cast<size_t>(v)];
      const bool empty = (g == 3 && v > 0 && d.group[static_cast<size_t>(v - 1)] == 3 &&
                          (v < 2 || d.group[static_cast<size_t>(v - 2)] != 3)) ||
                         (g == 7 && !(v > 0 && d.group[static_cast<size_t>(v - 1)] != 7));
      if (empty) continue;
      // Condition shifts the usage of genes 0, 4 and 9.
      const double shift = (g == 0 || g == 4 || g == 9) && cond == 1 ? 2.5 * static_cast<double>(v % 3) : 1.0;
      std::gamma_distribution<double> share(4.0 * shift, 1.0);
      std::poisson_distribution<int> count(depth(rng) * share(rng) / 8.0);
      d.y[static_cast<size_t>(b * d.V + v)] = count(rng);
    }
  }
  return d;
}

}  // namespace

TEST_CASE("grouped regression: each group's fits and test, BH over the groups tested", "[regression][groups]") {
  const Data d = make_data();
  for (dirmn_reg_model model : {DIRMN_REG_MEAN_PRECISION, DIRMN_REG_LOGLINEAR}) {
    SECTION(model == DIRMN_REG_MEAN_PRECISION ? "mean/precision" : "log-linear") {
      Context ctx = make_context(DIRMN_BACKEND_CPU);
      REQUIRE(ctx);
      dirmn_counts* c = nullptr;
      REQUIRE(dirmn_counts_create_dense(ctx.get(), &c, d.rows, d.V, DIRMN_INT32, d.y.data(), d.V, 1, nullptr) ==
              DIRMN_SUCCESS);
      Counts hold(c);
      dirmn_reg_options o;
      dirmn_reg_options_init(&o);
      o.model = model;
      const size_t G = static_cast<size_t>(d.genes);
      std::vector<double> lf(G), ln(G), st(G), df(G), pv(G), pa(G);
      std::vector<int32_t> status(G), conv(G);
      std::vector<int64_t> cats(G);
      dirmn_reg_groups_result res;
      std::memset(&res, 0, sizeof res);
      res.size = sizeof res;
      res.loglik_full = lf.data();
      res.loglik_null = ln.data();
      res.statistic = st.data();
      res.df = df.data();
      res.p_value = pv.data();
      res.p_adjusted = pa.data();
      res.status = status.data();
      res.converged = conv.data();
      res.categories = cats.data();
      REQUIRE(dirmn_reg_test_groups(ctx.get(), c, d.group.data(), d.genes, d.x.data(), d.rows, 2, 2, 1, 1, &o,
                                    &res) == DIRMN_SUCCESS);
      CHECK(res.tested == d.genes - 1);
      for (int64_t g = 0; g < d.genes; ++g) {
        CAPTURE(g);
        // The group's columns with counts, as their own table.
        std::vector<int64_t> cols;
        for (int64_t v = 0; v < d.V; ++v) {
          if (d.group[static_cast<size_t>(v)] != g) continue;
          int64_t sum = 0;
          for (int64_t b = 0; b < d.rows; ++b) sum += d.y[static_cast<size_t>(b * d.V + v)];
          if (sum > 0) cols.push_back(v);
        }
        CHECK(cats[static_cast<size_t>(g)] == static_cast<int64_t>(cols.size()));
        if (g == 7) {
          CHECK(cols.size() == 1);
          CHECK(status[static_cast<size_t>(g)] == DIRMN_ERROR_INVALID_ARGUMENT);
          CHECK(std::isnan(pv[static_cast<size_t>(g)]));
          CHECK(std::isnan(pa[static_cast<size_t>(g)]));
          continue;
        }
        REQUIRE(status[static_cast<size_t>(g)] == DIRMN_SUCCESS);
        const int64_t n = static_cast<int64_t>(cols.size());
        std::vector<int32_t> sub(static_cast<size_t>(d.rows * n));
        for (int64_t b = 0; b < d.rows; ++b)
          for (int64_t j = 0; j < n; ++j)
            sub[static_cast<size_t>(b * n + j)] = d.y[static_cast<size_t>(b * d.V + cols[static_cast<size_t>(j)])];
        dirmn_counts* cg = nullptr;
        REQUIRE(dirmn_counts_create_dense(ctx.get(), &cg, d.rows, n, DIRMN_INT32, sub.data(), n, 1, nullptr) ==
                DIRMN_SUCCESS);
        Counts hg(cg);
        double ll[2];
        for (int k = 0; k < 2; ++k) {
          dirmn_reg* r = nullptr;
          REQUIRE(dirmn_reg_fit(ctx.get(), cg, d.x.data(), d.rows, k == 0 ? 2 : 1, 2, 1, &o, &r) == DIRMN_SUCCESS);
          Reg hr(r);
          dirmn_reg_info in;
          in.size = sizeof in;
          REQUIRE(dirmn_reg_get_info(r, &in) == DIRMN_SUCCESS);
          ll[k] = in.loglik;
        }
        CHECK(close_to(lf[static_cast<size_t>(g)], ll[0], 1e-12));
        CHECK(close_to(ln[static_cast<size_t>(g)], ll[1], 1e-12));
        const double stat = 2 * (ll[0] - ll[1]);
        CHECK(std::fabs(st[static_cast<size_t>(g)] - stat) < 1e-9 * std::fabs(ll[0]));
        const int want_df = static_cast<int>(model == DIRMN_REG_MEAN_PRECISION ? n - 1 : n);
        CHECK(df[static_cast<size_t>(g)] == want_df);
        CHECK(close_to(pv[static_cast<size_t>(g)], chisq_tail(st[static_cast<size_t>(g)], want_df), 1e-10, 1e-300));
        CHECK(conv[static_cast<size_t>(g)] == 1);
      }
      const std::vector<double> want = bh(pv);
      for (size_t g = 0; g < G; ++g)
        if (!std::isnan(want[g])) CHECK(close_to(pa[g], want[g], 1e-14));
      // The genes whose usage changes with the condition are found.
      if (model == DIRMN_REG_MEAN_PRECISION) {
        CHECK(pa[0] < 0.05);
        CHECK(pa[4] < 0.05);
      }
      // Threads change no bit.
      for (int threads : {1, 3}) {
        REQUIRE(dirmn_context_set_threads(ctx.get(), threads) == DIRMN_SUCCESS);
        std::vector<double> lf2(G);
        dirmn_reg_groups_result r2;
        std::memset(&r2, 0, sizeof r2);
        r2.size = sizeof r2;
        r2.loglik_full = lf2.data();
        REQUIRE(dirmn_reg_test_groups(ctx.get(), c, d.group.data(), d.genes, d.x.data(), d.rows, 2, 2, 1, 1, &o,
                                      &r2) == DIRMN_SUCCESS);
        for (size_t g = 0; g < G; ++g)
          CHECK((lf2[g] == lf[g] || (std::isnan(lf2[g]) && std::isnan(lf[g]))));
      }
    }
  }
}

TEST_CASE("grouped regression: bad input is named, and the caller's arrays stay as they were",
          "[regression][groups][errors]") {
  const Data d = make_data();
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  dirmn_counts* c = nullptr;
  REQUIRE(dirmn_counts_create_dense(ctx.get(), &c, d.rows, d.V, DIRMN_INT32, d.y.data(), d.V, 1, nullptr) ==
          DIRMN_SUCCESS);
  Counts hold(c);
  std::vector<double> pv(static_cast<size_t>(d.genes), -7.0);
  dirmn_reg_groups_result res;
  std::memset(&res, 0, sizeof res);
  res.size = sizeof res;
  res.p_value = pv.data();
  std::vector<int64_t> bad = d.group;
  bad[5] = d.genes;
  CHECK(dirmn_reg_test_groups(ctx.get(), c, bad.data(), d.genes, d.x.data(), d.rows, 2, 2, 1, 1, nullptr, &res) ==
        DIRMN_ERROR_INVALID_PARAMETER);
  CHECK(std::string(dirmn_last_error(ctx.get())).find("group[5]") != std::string::npos);
  CHECK(dirmn_reg_test_groups(ctx.get(), c, d.group.data(), d.genes, d.x.data(), d.rows, 2, 2, 1, 2, nullptr,
                              &res) == DIRMN_ERROR_INVALID_ARGUMENT);  // p_null = p
  CHECK(dirmn_reg_test_groups(ctx.get(), c, d.group.data(), 0, d.x.data(), d.rows, 2, 2, 1, 1, nullptr, &res) ==
        DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(dirmn_reg_test_groups(ctx.get(), c, d.group.data(), d.genes, d.x.data(), d.rows - 1, 2, 2, 1, 1, nullptr,
                              &res) == DIRMN_ERROR_DIMENSION_MISMATCH);
  dirmn_reg_options o;
  dirmn_reg_options_init(&o);
  o.model = DIRMN_REG_MEAN_PRECISION;
  o.reference = 1;
  CHECK(dirmn_reg_test_groups(ctx.get(), c, d.group.data(), d.genes, d.x.data(), d.rows, 2, 2, 1, 1, &o, &res) ==
        DIRMN_ERROR_INVALID_ARGUMENT);
  std::vector<double> xb = d.x;
  xb[9] = std::nan("");
  CHECK(dirmn_reg_test_groups(ctx.get(), c, d.group.data(), d.genes, xb.data(), d.rows, 2, 2, 1, 1, nullptr, &res) ==
        DIRMN_ERROR_INVALID_PARAMETER);
  CHECK(dirmn_reg_test_groups(ctx.get(), c, nullptr, d.genes, d.x.data(), d.rows, 2, 2, 1, 1, nullptr, &res) ==
        DIRMN_ERROR_NULL_POINTER);
  res.size = sizeof res + 8;
  CHECK(dirmn_reg_test_groups(ctx.get(), c, d.group.data(), d.genes, d.x.data(), d.rows, 2, 2, 1, 1, nullptr, &res) ==
        DIRMN_ERROR_INVALID_ARGUMENT);
  for (double v : pv) CHECK(v == -7.0);
}

TEST_CASE("grouped regression: a held precision -- a single fit at the MLE's, DRIMSeq's null fit",
          "[regression][groups]") {
  const Data d = make_data();
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  // Gene 5's columns as a table of their own (every transcript with counts
  // in both conditions: its coefficients have a finite MLE).
  std::vector<int64_t> cols;
  for (int64_t v = 0; v < d.V; ++v)
    if (d.group[static_cast<size_t>(v)] == 5) cols.push_back(v);
  const int64_t n = static_cast<int64_t>(cols.size()), p = 2;
  std::vector<int32_t> sub(static_cast<size_t>(d.rows * n));
  for (int64_t b = 0; b < d.rows; ++b)
    for (int64_t j = 0; j < n; ++j)
      sub[static_cast<size_t>(b * n + j)] = d.y[static_cast<size_t>(b * d.V + cols[static_cast<size_t>(j)])];
  dirmn_counts* cg = nullptr;
  REQUIRE(dirmn_counts_create_dense(ctx.get(), &cg, d.rows, n, DIRMN_INT32, sub.data(), n, 1, nullptr) ==
          DIRMN_SUCCESS);
  Counts hg(cg);
  const auto fit_at = [&](double log_phi, int64_t cov) {
    dirmn_reg_options o;
    dirmn_reg_options_init(&o);
    o.model = DIRMN_REG_MEAN_PRECISION;
    o.log_precision = log_phi;
    dirmn_reg* r = nullptr;
    REQUIRE(dirmn_reg_fit(ctx.get(), cg, d.x.data(), d.rows, cov, 2, 1, &o, &r) == DIRMN_SUCCESS);
    return Reg(r);
  };
  const auto info = [](const Reg& r) {
    dirmn_reg_info in;
    in.size = sizeof in;
    REQUIRE(dirmn_reg_get_info(r.get(), &in) == DIRMN_SUCCESS);
    return in;
  };
  Reg free_fit = fit_at(std::nan(""), p);
  double gamma = 0, gse = 0;
  REQUIRE(dirmn_reg_get_precision(free_fit.get(), &gamma, &gse) == DIRMN_SUCCESS);
  CHECK(gse > 0.0);
  // Held at its own MLE: the same optimum, p (V - 1) free coefficients,
  // standard errors no larger (the precision no longer uncertain).
  Reg held = fit_at(gamma, p);
  const dirmn_reg_info fi = info(free_fit), hi = info(held);
  CHECK(close_to(hi.loglik, fi.loglik, 1e-12));
  CHECK(hi.parameters == p * (n - 1));
  CHECK(hi.precision_covariates == 0);
  double g2 = 0, s2 = -1;
  REQUIRE(dirmn_reg_get_precision(held.get(), &g2, &s2) == DIRMN_SUCCESS);
  CHECK(g2 == gamma);
  CHECK(s2 == 0.0);
  std::vector<double> bf(static_cast<size_t>(p * n)), bh_(bf), sf(bf), sh(bf);
  REQUIRE(dirmn_reg_get_coef(free_fit.get(), bf.data(), n, 1) == DIRMN_SUCCESS);
  REQUIRE(dirmn_reg_get_coef(held.get(), bh_.data(), n, 1) == DIRMN_SUCCESS);
  REQUIRE(dirmn_reg_get_std_errors(free_fit.get(), sf.data(), n, 1) == DIRMN_SUCCESS);
  REQUIRE(dirmn_reg_get_std_errors(held.get(), sh.data(), n, 1) == DIRMN_SUCCESS);
  for (size_t k = 0; k < bf.size(); ++k) {
    CHECK(std::fabs(bf[k] - bh_[k]) < 1e-6 * (1.0 + sf[k]));
    CHECK(sh[k] <= sf[k] * (1 + 1e-12));
  }
  // The grouped test holding the precision: the null fit at the full fit's.
  dirmn_counts* c = nullptr;
  REQUIRE(dirmn_counts_create_dense(ctx.get(), &c, d.rows, d.V, DIRMN_INT32, d.y.data(), d.V, 1, nullptr) ==
          DIRMN_SUCCESS);
  Counts hold(c);
  const size_t G = static_cast<size_t>(d.genes);
  std::vector<double> st_free(G), st_held(G), ln(G);
  for (int h = 0; h < 2; ++h) {
    dirmn_reg_options o;
    dirmn_reg_options_init(&o);
    o.model = DIRMN_REG_MEAN_PRECISION;
    o.hold_precision = h;
    dirmn_reg_groups_result res;
    std::memset(&res, 0, sizeof res);
    res.size = sizeof res;
    res.statistic = h ? st_held.data() : st_free.data();
    res.loglik_null = ln.data();
    REQUIRE(dirmn_reg_test_groups(ctx.get(), c, d.group.data(), d.genes, d.x.data(), d.rows, 2, 2, 1, 1, &o, &res) ==
            DIRMN_SUCCESS);
  }
  CHECK(close_to(ln[5], info(fit_at(gamma, 1)).loglik, 1e-12));
  for (size_t g = 0; g < G; ++g)
    if (!std::isnan(st_free[g])) CHECK(st_held[g] >= st_free[g] - 1e-9 * std::fabs(ln[g]));
  dirmn_reg_options o;
  dirmn_reg_options_init(&o);
  o.model = DIRMN_REG_MEAN_PRECISION;
  o.log_precision = INFINITY;
  dirmn_reg* r = nullptr;
  CHECK(dirmn_reg_fit(ctx.get(), cg, d.x.data(), d.rows, p, 2, 1, &o, &r) == DIRMN_ERROR_INVALID_ARGUMENT);
  o.log_precision = std::nan("");
  o.hold_precision = 2;
  CHECK(dirmn_reg_fit(ctx.get(), cg, d.x.data(), d.rows, p, 2, 1, &o, &r) == DIRMN_ERROR_INVALID_ARGUMENT);
}
