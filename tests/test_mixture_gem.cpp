// test_mixture_gem.cpp: the generalized EM (dirmn_mixture_options.
// m_step_iterations). Its M steps take a few Newton steps per component
// instead of fitting each to convergence. From the same start it must reach
// the classical EM's optimum (m_step_iterations 200: every M step to 1e-12)
// -- the same log-likelihood and objective to 1e-8 relative, the same
// mixing weights -- unless the two paths part for different local optima,
// where the GEM's must be the better one on these tables (it is on mite at
// k = 4 under ML: -3333.19 against -3344.85); under maximum likelihood its
// optimum must be stationary (each component's weighted gradient in log
// alpha, from dirmn_loglik_sum, near 0), and it must never lower the
// log-likelihood from one iteration to the next (each Newton step is
// accepted only where it does not lower the component's objective, and the
// E step is exact). Tables: mite and a 26 x 500 cut of GlobalPatterns (real,
// overdispersed), and a simulated three-component table with rows of unequal
// totals, each at k = 2..4, under ML and dmn's objective, on every backend.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <string>
#include <vector>

#include "support.hpp"

using namespace dirmn_test;

namespace {

struct Trace {
  std::vector<double> loglik;
};

int record(int iteration, double loglik, double, void* data) {
  auto* t = static_cast<Trace*>(data);
  if (static_cast<int>(t->loglik.size()) + 1 != iteration) return 1;  // out of order: cancel
  t->loglik.push_back(loglik);
  return 0;
}

struct Fitted {
  dirmn_mixture_info info{};
  std::vector<double> alpha, weights, resp;  // k x cols, k, rows x k
  Trace trace;
};

Fitted run(dirmn_context* ctx, dirmn_counts* c, int k, dirmn_mixture_objective objective,
           int m_step_iterations, uint64_t seed) {
  Fitted f;
  dirmn_mixture_options o;
  dirmn_mixture_options_init(&o);
  o.objective = objective;
  o.init = DIRMN_INIT_KMEANSPP;
  o.starts = 1;
  o.seed = seed;
  o.tolerance = 1e-11;
  o.m_step_iterations = m_step_iterations;
  o.progress = record;
  o.progress_data = &f.trace;
  Mixture m = fit(ctx, c, k, &o);
  f.info.size = sizeof f.info;
  REQUIRE(dirmn_mixture_get_info(m.get(), &f.info) == DIRMN_SUCCESS);
  const int64_t cols = f.info.cols, rows = f.info.rows;
  f.alpha.resize(static_cast<size_t>(k * cols));
  f.weights.resize(static_cast<size_t>(k));
  f.resp.resize(static_cast<size_t>(rows * k));
  REQUIRE(dirmn_mixture_get_params(m.get(), f.alpha.data(), cols, 1, f.weights.data()) ==
          DIRMN_SUCCESS);
  REQUIRE(dirmn_mixture_get_responsibilities(m.get(), f.resp.data(), k, 1) == DIRMN_SUCCESS);
  return f;
}

struct NamedTable {
  std::string name;
  std::vector<double> x;
  int64_t rows = 0, cols = 0;
};

std::vector<NamedTable> tables() {
  std::vector<NamedTable> t(3);
  t[0].name = "mite";
  t[0].x = read_csv(DIRMN_TEST_DATA_DIR "/../../examples/data/mite.csv", &t[0].rows, &t[0].cols);
  t[1].name = "globalpatterns500";
  t[1].x = read_csv(test_data_path("globalpatterns500.csv"), &t[1].rows, &t[1].cols);
  t[2].name = "simulated";
  t[2].rows = 150;
  t[2].cols = 40;
  t[2].x = simulate_mixture(t[2].rows, t[2].cols, 3, 11, 300, 900).x;
  return t;
}

}  // namespace

TEST_CASE("mixture: the generalized EM reaches the classical EM's optimum", "[mixture]") {
  const std::vector<NamedTable> all = tables();
  for (dirmn_backend b : backends_under_test()) {
    Context ctx = make_context(b);
    REQUIRE(ctx);
    for (const NamedTable& t : all) {
      Counts c = counts_of(ctx.get(), t.x, t.rows, t.cols);
      for (dirmn_mixture_objective objective : {DIRMN_MIXTURE_ML, DIRMN_MIXTURE_DMN}) {
        for (int k = 2; k <= 4; ++k) {
          INFO(backend_name(b) << " " << t.name << " objective " << objective << " k " << k);
          const Fitted full = run(ctx.get(), c.get(), k, objective, 200, 7);
          for (int steps : {1, 4}) {
            INFO("m_step_iterations " << steps);
            const Fitted gem = run(ctx.get(), c.get(), k, objective, steps, 7);
            INFO("log-likelihood " << std::setprecision(15) << gem.info.loglik << " (classical "
                                   << full.info.loglik << ")");
            CHECK(gem.info.converged == 1);
            if (close_to(gem.info.loglik, full.info.loglik, 1e-6)) {
              CHECK(close_to(gem.info.loglik, full.info.loglik, 1e-8));
              CHECK(close_to(gem.info.objective, full.info.objective, 1e-8));
              for (int j = 0; j < k; ++j)
                CHECK(std::fabs(gem.weights[static_cast<size_t>(j)] - full.weights[static_cast<size_t>(j)]) < 1e-5);
            } else {
              CHECK(gem.info.objective < full.info.objective);
            }
            if (objective != DIRMN_MIXTURE_ML) continue;
            // Stationary: component j's alpha maximises the responsibility-
            // weighted log-likelihood, to what EM's slow final approach at
            // this tolerance leaves (4e-4 n_j at worst here, the classical
            // EM's too; an M step stopped early leaves ~0.1 n_j: the
            // gradient's entries are sums of terms below 1 over rows of
            // total weight n_j). A component in the multinomial limit (one
            // row; alpha the proportions at precision 1e8) has no stationary
            // point.
            for (int j = 0; j < k; ++j) {
              double precision = 0.0;
              for (int64_t v = 0; v < t.cols; ++v) precision += gem.alpha[static_cast<size_t>(j * t.cols + v)];
              if (precision > 1e7) continue;
              std::vector<double> z(static_cast<size_t>(t.rows)), g(static_cast<size_t>(t.cols));
              double n_j = 0.0;
              for (int64_t r = 0; r < t.rows; ++r) {
                z[static_cast<size_t>(r)] = gem.resp[static_cast<size_t>(r * k + j)];
                n_j += z[static_cast<size_t>(r)];
              }
              REQUIRE(dirmn_loglik_sum(ctx.get(), c.get(), gem.alpha.data() + j * t.cols, 1,
                                       DIRMN_PARAM_ALPHA, z.data(), 0, nullptr, g.data(), nullptr,
                                       nullptr) == DIRMN_SUCCESS);
              double worst = 0.0;
              for (int64_t v = 0; v < t.cols; ++v)
                worst = std::max(worst, std::fabs(g[static_cast<size_t>(v)] * gem.alpha[static_cast<size_t>(j * t.cols + v)]));
              INFO("component " << j << " weight " << n_j << " gradient in log alpha " << worst);
              CHECK(worst <= 1e-3 * n_j);
            }
            // Every iteration's log-likelihood at least the last one's (up
            // to the rounding of a sum over the rows).
            REQUIRE(static_cast<int>(gem.trace.loglik.size()) == gem.info.iterations);
            for (size_t i = 1; i < gem.trace.loglik.size(); ++i) {
              INFO("iteration " << i + 1);
              CHECK(gem.trace.loglik[i] >= gem.trace.loglik[i - 1] - 1e-12 * std::fabs(gem.trace.loglik[i - 1]));
            }
          }
        }
      }
    }
  }
}

TEST_CASE("mixture: m_step_iterations is checked", "[mixture]") {
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  const Simulated s = simulate_mixture(30, 6, 2, 3);
  Counts c = counts_of(ctx.get(), s.x, 30, 6);
  dirmn_mixture_options o;
  dirmn_mixture_options_init(&o);
  CHECK(o.m_step_iterations == 4);
  o.m_step_iterations = 0;
  dirmn_mixture* m = nullptr;
  CHECK(dirmn_mixture_fit(ctx.get(), c.get(), 2, &o, &m) == DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(m == nullptr);
  CHECK(std::string(dirmn_last_error(ctx.get())).find("m_step_iterations (0)") != std::string::npos);
}

TEST_CASE("mixture: a fit on the counts leaves later weighted sums as they were", "[mixture]") {
  // The M step sums its histograms by column once the counts have their
  // nonzeros by column; a later dirmn_loglik_sum must give what it gives on
  // counts that never had a mixture, bit for bit: for a small 8-bit table
  // the row-ordered pass (per-thread accumulators) is kept.
  const int64_t rows = 2000, cols = 100;
  const Simulated s = simulate_mixture(rows, cols, 2, 17);
  std::vector<double> w(static_cast<size_t>(rows)), alpha(static_cast<size_t>(cols), 0.7);
  for (int64_t b = 0; b < rows; ++b) w[static_cast<size_t>(b)] = 0.3 + 0.01 * static_cast<double>(b % 97);
  for (dirmn_backend be : backends_under_test()) {
    INFO(backend_name(be));
    Context ctx = make_context(be);
    REQUIRE(ctx);
    REQUIRE(dirmn_context_set_threads(ctx.get(), 2) == DIRMN_SUCCESS);
    Counts fresh = counts_of(ctx.get(), s.x, rows, cols);
    Counts used = counts_of(ctx.get(), s.x, rows, cols);
    dirmn_mixture_options o;
    dirmn_mixture_options_init(&o);
    o.starts = 1;
    o.max_iterations = 3;
    fit(ctx.get(), used.get(), 2, &o);
    double f1 = 0, f2 = 0;
    std::vector<double> g1(static_cast<size_t>(cols)), g2(static_cast<size_t>(cols));
    REQUIRE(dirmn_loglik_sum(ctx.get(), fresh.get(), alpha.data(), 1, DIRMN_PARAM_ALPHA, w.data(), 0,
                             &f1, g1.data(), nullptr, nullptr) == DIRMN_SUCCESS);
    REQUIRE(dirmn_loglik_sum(ctx.get(), used.get(), alpha.data(), 1, DIRMN_PARAM_ALPHA, w.data(), 0,
                             &f2, g2.data(), nullptr, nullptr) == DIRMN_SUCCESS);
    if (be == DIRMN_BACKEND_CPU) {
      CHECK(f1 == f2);
      CHECK(g1 == g2);
    } else {
      // The device's weighted histograms of a sparse table add with
      // floating-point atomics (cuda/histogram.cu): two passes agree to
      // rounding, not bit for bit, with or without a mixture before them.
      CHECK(close_to(f1, f2, 1e-13));
      for (int64_t v = 0; v < cols; ++v)
        CHECK(close_to(g1[static_cast<size_t>(v)], g2[static_cast<size_t>(v)], 1e-12, 1e-12));
    }
  }
}
