// test_communicator_regression.cpp: DM regressions of a table split by rows
// over a communicator's ranks (threads of this process, rank_support.hpp),
// each rank with its rows of the design, against the fit of one process
// that holds the whole table (itself checked against references in
// test_regression*.cpp). Newton's method reaches the same optimum from the
// same start; its sums over rows are added per rank and then over ranks,
// and the ranks' Newton system is formed whole where one process may solve
// it in the rows' dimension, so the results agree to the solves' rounding.
#include <atomic>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "rank_support.hpp"
#include "regression_support.hpp"

namespace {

using namespace dirmn_test;
using dirmn_ranks::first_row;
using dirmn_ranks::Got;
using dirmn_ranks::run_ranks;
using dirmn_ranks::weights_of;
using dirmn_world::World;

// What a fit gave: info, coefficients, standard errors, the precision's.
struct RegGot {
  dirmn_status status = DIRMN_SUCCESS;
  std::string message;
  dirmn_reg_info info{};
  std::vector<double> coef, se, gamma, gamma_se;
};

RegGot fit_reg(dirmn_context* ctx, dirmn_counts* counts, const double* x, int64_t rows, int64_t p, int64_t V,
               const dirmn_reg_options& o, const double* z, int64_t q) {
  RegGot g;
  dirmn_reg_options mine = o;
  if (z != nullptr) {
    mine.precision_design = z;
    mine.precision_covariates = q;
    mine.precision_stride_row = q;
    mine.precision_stride_col = 1;
  }
  dirmn_reg* reg = nullptr;
  g.status = dirmn_reg_fit(ctx, counts, x, rows, p, p, 1, &mine, &reg);
  if (g.status != DIRMN_SUCCESS) {
    g.message = dirmn_last_error(ctx);
    g.coef.assign(1, reg == nullptr ? 0.0 : 1.0);  // a handle written despite the failure
    return g;
  }
  g.info = info_of(reg);
  g.coef.resize(static_cast<size_t>(p * V));
  g.se.resize(static_cast<size_t>(p * V));
  dirmn_reg_get_coef(reg, g.coef.data(), V, 1);
  dirmn_reg_get_std_errors(reg, g.se.data(), V, 1);
  if (o.model == DIRMN_REG_MEAN_PRECISION) {
    const int64_t nq = z != nullptr ? q : 1;
    g.gamma.resize(static_cast<size_t>(nq));
    g.gamma_se.resize(static_cast<size_t>(nq));
    dirmn_reg_get_precision(reg, g.gamma.data(), g.gamma_se.data());
  }
  dirmn_reg_destroy(reg);
  return g;
}

std::vector<double> as_doubles(const std::vector<int32_t>& y) { return std::vector<double>(y.begin(), y.end()); }

// Rows [first_row(r), first_row(r + 1)) of a rows x n row-major array.
std::vector<double> rows_of(const std::vector<double>& a, int64_t n, int r, int ranks, int64_t rows) {
  return std::vector<double>(a.begin() + first_row(r, ranks, rows) * n, a.begin() + first_row(r + 1, ranks, rows) * n);
}

void check_close(const std::vector<double>& got, const std::vector<double>& want, double rel, double abs_tol) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("entry " << i << ": " << got[i] << " for " << want[i]);
    CHECK(close_to(got[i], want[i], rel, abs_tol));
  }
}

// Every rank's fit of pr (z: rows x q or null) against the whole table's.
void check_over_ranks(const Problem& pr, const dirmn_reg_options& o, const std::vector<double>& w,
                      const std::vector<double>& z, int64_t q) {
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  Counts whole_counts = counts_of(ctx.get(), pr);
  dirmn_reg_options ow = o;
  ow.weights = w.empty() ? nullptr : w.data();
  const RegGot whole = fit_reg(ctx.get(), whole_counts.get(), pr.x.data(), pr.rows, pr.p, pr.V, ow,
                               z.empty() ? nullptr : z.data(), q);
  INFO(whole.message);
  REQUIRE(whole.status == DIRMN_SUCCESS);
  const std::vector<double> y = as_doubles(pr.y);
  for (int n : {1, 2, 3}) {
    World world(n);
    std::atomic<int> released{0};
    std::vector<Got> unused;
    std::vector<RegGot> got(static_cast<size_t>(n));
    run_ranks(world, y, pr.rows, pr.V, &unused, [&](int r, dirmn_context* c, dirmn_counts* k, Got*) {
      const std::vector<double> xr = rows_of(pr.x, pr.p, r, n, pr.rows), wr = weights_of(w, r, n, pr.rows);
      const std::vector<double> zr = z.empty() ? std::vector<double>() : rows_of(z, q, r, n, pr.rows);
      dirmn_reg_options mine = o;
      mine.weights = wr.empty() ? nullptr : wr.data();
      got[static_cast<size_t>(r)] = fit_reg(c, k, xr.data(), first_row(r + 1, n, pr.rows) - first_row(r, n, pr.rows),
                                            pr.p, pr.V, mine, zr.empty() ? nullptr : zr.data(), q);
    }, &released);
    for (int r = 0; r < n; ++r) {
      const RegGot& g = got[static_cast<size_t>(r)];
      INFO("rank " << r << " of " << n << ": " << g.message);
      REQUIRE(g.status == DIRMN_SUCCESS);
      CHECK(g.info.rows == first_row(r + 1, n, pr.rows) - first_row(r, n, pr.rows));
      CHECK(g.info.parameters == whole.info.parameters);
      CHECK(g.info.converged == whole.info.converged);
      CHECK(g.info.hessian_definite == whole.info.hessian_definite);
      CHECK(close_to(g.info.observations, whole.info.observations, 1e-15));
      CHECK(close_to(g.info.loglik, whole.info.loglik, 1e-12));
      CHECK(close_to(g.info.bic, whole.info.bic, 1e-12));
      check_close(g.coef, whole.coef, 1e-7, 1e-9);
      check_close(g.se, whole.se, 1e-6, 1e-9);
      check_close(g.gamma, whole.gamma, 1e-7, 1e-9);
      check_close(g.gamma_se, whole.gamma_se, 1e-6, 1e-9);
      // Every rank holds the same fit, bit for bit.
      CHECK(g.coef == got[0].coef);
      CHECK(g.info.loglik == got[0].info.loglik);
    }
  }
}

}  // namespace

TEST_CASE("communicator: a log-linear regression over ranks is the whole table's", "[communicator][regression]") {
  // 30 rows and 3 x 12 coefficients: one process solves in the rows'
  // dimension (Woodbury), the ranks form the system whole.
  const bool wide = GENERATE(false, true);
  const Problem pr = wide ? simulate(30, 12, 3, 501) : simulate(150, 5, 3, 502);
  const bool weighted = GENERATE(false, true);
  std::vector<double> w;
  if (weighted)
    for (int64_t b = 0; b < pr.rows; ++b) w.push_back(0.5 + static_cast<double>(b % 3));
  INFO((wide ? "wide" : "tall") << (weighted ? ", weighted" : ""));
  dirmn_reg_options o;
  dirmn_reg_options_init(&o);
  check_over_ranks(pr, o, w, {}, 0);
}

TEST_CASE("communicator: a mean/precision regression over ranks, with and without a precision design",
          "[communicator][regression]") {
  const Problem pr = simulate(120, 6, 2, 511);
  dirmn_reg_options o;
  dirmn_reg_options_init(&o);
  o.model = DIRMN_REG_MEAN_PRECISION;
  SECTION("one precision") { check_over_ranks(pr, o, {}, {}, 0); }
  SECTION("log phi on an intercept and the first covariate") {
    std::vector<double> z;
    for (int64_t b = 0; b < pr.rows; ++b) {
      z.push_back(1.0);
      z.push_back(pr.x[static_cast<size_t>(b * pr.p + 1)]);
    }
    check_over_ranks(pr, o, {}, z, 2);
  }
  SECTION("summing to zero, weighted") {
    o.contrast = DIRMN_REG_SUM_TO_ZERO;
    std::vector<double> w;
    for (int64_t b = 0; b < pr.rows; ++b) w.push_back(1.0 + static_cast<double>(b % 2));
    check_over_ranks(pr, o, w, {}, 0);
  }
}

TEST_CASE("communicator: a regression's failures over ranks", "[communicator][regression]") {
  const Problem pr = simulate(60, 4, 2, 521);
  const std::vector<double> y = as_doubles(pr.y);
  const int n = 3;
  World world(n);
  std::atomic<int> released{0};
  std::vector<Got> unused;
  std::vector<RegGot> got(static_cast<size_t>(n));
  dirmn_reg_options o;
  dirmn_reg_options_init(&o);
  const auto run = [&](const std::function<void(int, std::vector<double>*, dirmn_reg_options*)>& edit) {
    run_ranks(world, y, pr.rows, pr.V, &unused, [&](int r, dirmn_context* c, dirmn_counts* k, Got*) {
      std::vector<double> xr = rows_of(pr.x, pr.p, r, n, pr.rows);
      dirmn_reg_options mine = o;
      edit(r, &xr, &mine);
      got[static_cast<size_t>(r)] =
          fit_reg(c, k, xr.data(), static_cast<int64_t>(xr.size()) / pr.p, pr.p, pr.V, mine, nullptr, 0);
    }, &released);
  };
  SECTION("a NaN in rank 1's design") {
    run([](int r, std::vector<double>* x, dirmn_reg_options*) {
      if (r == 1) (*x)[3] = std::nan("");
    });
    for (int r = 0; r < n; ++r) {
      const RegGot& g = got[static_cast<size_t>(r)];
      INFO("rank " << r << ": " << g.message);
      CHECK(g.status == (r == 1 ? DIRMN_ERROR_INVALID_PARAMETER : DIRMN_ERROR_COMMUNICATION));
      CHECK(g.message.find(r == 1 ? "row 1" : "rank 1's part") != std::string::npos);
      CHECK(g.coef == std::vector<double>{0.0});  // no handle
    }
  }
  SECTION("rank 2 passes another number of covariates") {
    run_ranks(world, y, pr.rows, pr.V, &unused, [&](int r, dirmn_context* c, dirmn_counts* k, Got*) {
      std::vector<double> xr = rows_of(pr.x, pr.p, r, n, pr.rows);
      const int64_t rr = static_cast<int64_t>(xr.size()) / pr.p;
      if (r == 2) {
        // An intercept alone.
        std::vector<double> one(static_cast<size_t>(rr), 1.0);
        got[static_cast<size_t>(r)] = fit_reg(c, k, one.data(), rr, 1, pr.V, o, nullptr, 0);
      } else {
        got[static_cast<size_t>(r)] = fit_reg(c, k, xr.data(), rr, pr.p, pr.V, o, nullptr, 0);
      }
    }, &released);
    for (const RegGot& g : got) {
      INFO(g.message);
      CHECK(g.status == DIRMN_ERROR_INVALID_ARGUMENT);
      CHECK(g.message.find("rank 2's p (1) differs from rank 0's (2)") != std::string::npos);
    }
  }
  SECTION("a covariate constant on one rank's rows only is no collinearity") {
    run([&](int r, std::vector<double>* x, dirmn_reg_options*) {
      if (r == 0)
        for (size_t b = 0; b < x->size(); b += 2) (*x)[b + 1] = 0.5;
    });
    for (const RegGot& g : got) {
      INFO(g.message);
      CHECK(g.status == DIRMN_SUCCESS);
    }
  }
  SECTION("a covariate that is another's multiple on every rank") {
    run([&](int, std::vector<double>* x, dirmn_reg_options*) {
      for (size_t b = 0; b < x->size(); b += 2) (*x)[b + 1] = 2.0 * (*x)[b];
    });
    for (const RegGot& g : got) {
      INFO(g.message);
      CHECK(g.status == DIRMN_ERROR_INVALID_ARGUMENT);
      CHECK(g.message.find("not of full column rank") != std::string::npos);
    }
  }
  SECTION("rank 2's progress callback cancels after the first step") {
    std::vector<int> ids{0, 1, 2};
    run([&](int r, std::vector<double>*, dirmn_reg_options* m) {
      m->progress = [](int it, double, double, void* d) { return *static_cast<int*>(d) == 2 && it == 1 ? 1 : 0; };
      m->progress_data = &ids[static_cast<size_t>(r)];
    });
    for (const RegGot& g : got) {
      INFO(g.message);
      CHECK(g.status == DIRMN_ERROR_CANCELLED);
      CHECK(g.message.find("cancelled after 1 Newton steps") != std::string::npos);
    }
  }
  CHECK(released.load() == n);
}
