// test_communicator_mixture.cpp: mixtures of a table split by rows over a
// communicator's ranks (threads of this process, rank_support.hpp), each
// compared with the fit of one process that holds the whole table (itself
// checked against DirichletMultinomial::dmn and MGLM in test_mixture*.cpp).
// Every rank must reach the whole table's fit: the same starts (the same
// rows sampled, the same splits) and the same optimum. Sums over rows are
// added per rank and then over ranks, so they differ from one process's in
// their last bits; the M step's Newton fits stop on the objective's change
// (1e-12 relative), which leaves alpha ~1e-6 from where another rounding
// would stop it, and the EM's iterations follow. So the log-likelihood,
// AIC and BIC agree to rounding, the parameters and the Laplace value
// (whose log-determinant follows alpha) to the fits' accuracy, at the optimum
// and after a single iteration from each start (which a start from other
// rows would fail); one rank's fit is one process's, bit for bit.
#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "rank_support.hpp"

namespace {

using namespace dirmn_test;
using dirmn_ranks::first_row;
using dirmn_ranks::Got;
using dirmn_ranks::run_ranks;
using dirmn_ranks::weights_of;
using dirmn_world::World;

// The log-likelihood, AIC and BIC; the Laplace value; the parameters
// (relative, absolute near 0): as the header comment explains.
constexpr double kCriteria = 1e-9, kLaplace = 1e-7;
constexpr double kParams = 1e-5, kParamsNearZero = 1e-8;

// Rows from three Dirichlet-multinomial components in turn, some deep, and
// a row without counts.
std::vector<double> three_clusters(int64_t rows, int64_t cols, uint32_t seed) {
  std::vector<double> x(static_cast<size_t>(rows * cols));
  for (int c = 0; c < 3; ++c) {
    const std::vector<double> a = random_alpha(cols, 0.1, 4.0, seed + static_cast<uint32_t>(c));
    const std::vector<double> part = simulate_dm(rows, a, 60 + 150 * c, seed + 10 + static_cast<uint32_t>(c));
    for (int64_t b = c; b < rows; b += 3)
      std::copy(part.begin() + b * cols, part.begin() + (b + 1) * cols, x.begin() + b * cols);
  }
  std::fill(x.begin() + 7 * cols, x.begin() + 8 * cols, 0.0);
  return x;
}

// A fit of k_min .. k_max into g (per k: alpha, weights, responsibilities,
// info).
dirmn_status fit_range_into(dirmn_context* ctx, dirmn_counts* counts, int k_min, int k_max,
                            const dirmn_mixture_options& o, int64_t rows, int64_t cols, Got* g) {
  const int n = k_max - k_min + 1;
  std::vector<dirmn_mixture*> m(static_cast<size_t>(n), nullptr);
  g->status = dirmn_mixture_fit_range(ctx, counts, k_min, k_max, &o, m.data());
  if (g->status != DIRMN_SUCCESS) {
    g->message = dirmn_last_error(ctx);
    // A handle written despite the failure shows as an info of size 1.
    for (dirmn_mixture* x : m) {
      dirmn_mixture_info i;
      std::memset(&i, 0, sizeof i);
      i.size = x != nullptr ? 1 : 0;
      g->m_info.push_back(i);
    }
    return g->status;
  }
  for (int i = 0; i < n; ++i) {
    const int k = k_min + i;
    std::vector<double> alpha(static_cast<size_t>(k * cols)), w(static_cast<size_t>(k)),
        z(static_cast<size_t>(rows * k));
    dirmn_mixture_info info;
    info.size = sizeof info;
    dirmn_mixture_get_info(m[static_cast<size_t>(i)], &info);
    dirmn_mixture_get_params(m[static_cast<size_t>(i)], alpha.data(), cols, 1, w.data());
    dirmn_mixture_get_responsibilities(m[static_cast<size_t>(i)], z.data(), k, 1);
    g->m_alpha.push_back(alpha);
    g->m_weights.push_back(w);
    g->m_resp.push_back(z);
    g->m_info.push_back(info);
    dirmn_mixture_destroy(m[static_cast<size_t>(i)]);
  }
  return g->status;
}

// The whole table's fits, on one process.
Got whole_fits(const std::vector<double>& x, int64_t rows, int64_t cols, int k_min, int k_max,
               const dirmn_mixture_options& o) {
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  Counts counts = counts_of(ctx.get(), x, rows, cols);
  Got g;
  fit_range_into(ctx.get(), counts.get(), k_min, k_max, o, rows, cols, &g);
  INFO(g.message);
  REQUIRE(g.status == DIRMN_SUCCESS);
  return g;
}

void check_all_close(const std::vector<double>& got, const std::vector<double>& want, double rel,
                     double abs_tol) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("entry " << i << ": " << got[i] << " for " << want[i] << ", relative " << (got[i] - want[i]) / want[i]);
    CHECK(close_to(got[i], want[i], rel, abs_tol));
  }
}

// Every rank's fits against the whole table's (its rows of the
// responsibilities).
// exact: one rank's fit must be the whole table's bit for bit (where both
// ran on the same backend).
void check_ranks(const std::vector<Got>& got, const Got& whole, int n, int64_t rows, int k_min,
                 bool exact = true) {
  for (int r = 0; r < n; ++r) {
    const Got& g = got[static_cast<size_t>(r)];
    INFO("rank " << r << " of " << n << ": " << g.message);
    REQUIRE(g.attach == DIRMN_SUCCESS);
    REQUIRE(g.status == DIRMN_SUCCESS);
    REQUIRE(g.m_info.size() == whole.m_info.size());
    const int64_t b0 = first_row(r, n, rows), b1 = first_row(r + 1, n, rows);
    for (size_t i = 0; i < whole.m_info.size(); ++i) {
      const int k = k_min + static_cast<int>(i);
      INFO("k = " << k);
      const dirmn_mixture_info& a = g.m_info[i];
      const dirmn_mixture_info& b = whole.m_info[i];
      CHECK(a.rows == b1 - b0);
      CHECK(a.converged == b.converged);
      CHECK(a.parameters == b.parameters);
      CHECK(close_to(a.observations, b.observations, 1e-15));
      CHECK(close_to(a.loglik, b.loglik, kCriteria));
      CHECK(close_to(a.objective, b.objective, kCriteria));
      CHECK(close_to(a.aic, b.aic, kCriteria));
      CHECK(close_to(a.bic, b.bic, kCriteria));
      // Its log-determinant follows alpha.
      CHECK(close_to(a.laplace, b.laplace, kLaplace));
      if (n == 1 && exact) {
        // One rank sums nothing: the very fit of one process.
        CHECK(a.loglik == b.loglik);
        CHECK(a.iterations == b.iterations);
        CHECK(a.start == b.start);
        CHECK(g.m_alpha[i] == whole.m_alpha[i]);
        CHECK(g.m_resp[i] == whole.m_resp[i]);
      }
      check_all_close(g.m_weights[i], whole.m_weights[i], kParams, kParamsNearZero);
      check_all_close(g.m_alpha[i], whole.m_alpha[i], kParams, kParamsNearZero);
      const std::vector<double> mine(whole.m_resp[i].begin() + b0 * k, whole.m_resp[i].begin() + b1 * k);
      check_all_close(g.m_resp[i], mine, kParams, kParams);
    }
  }
}

}  // namespace

TEST_CASE("communicator: a mixture of a split table is the whole table's, every initialisation",
          "[communicator][mixture]") {
  const int64_t rows = 96, cols = 24;
  const std::vector<double> x = three_clusters(rows, cols, 71);
  const dirmn_mixture_init init =
      GENERATE(DIRMN_INIT_KMEANS, DIRMN_INIT_KMEANSPP, DIRMN_INIT_SOFT_KMEANS, DIRMN_INIT_MIXED);
  const dirmn_mixture_objective objective = GENERATE(DIRMN_MIXTURE_ML, DIRMN_MIXTURE_DMN);
  const bool weighted = GENERATE(false, true);
  std::vector<double> w;
  if (weighted)
    for (int64_t b = 0; b < rows; ++b) w.push_back(0.25 + static_cast<double>(b % 5));
  dirmn_mixture_options o;
  dirmn_mixture_options_init(&o);
  o.init = init;
  o.objective = objective;
  o.starts = init == DIRMN_INIT_MIXED ? 3 : 1;
  // At the optimum, and after the first iteration of the best start.
  o.max_iterations = GENERATE(1000, 1);
  o.weights = w.empty() ? nullptr : w.data();
  INFO("init " << init << ", objective " << objective << (weighted ? ", weighted" : "") << ", "
                << o.max_iterations << " iterations at most");
  const Got whole = whole_fits(x, rows, cols, 3, 3, o);
  for (int n : {1, 2, 4}) {
    World world(n);
    std::atomic<int> released{0};
    std::vector<Got> got;
    run_ranks(world, x, rows, cols, &got, [&](int r, dirmn_context* ctx, dirmn_counts* c, Got* g) {
      const std::vector<double> wr = weights_of(w, r, n, rows);
      dirmn_mixture_options mine = o;
      mine.weights = wr.empty() ? nullptr : wr.data();
      fit_range_into(ctx, c, 3, 3, mine, first_row(r + 1, n, rows) - first_row(r, n, rows), cols, g);
    }, &released);
    CHECK(released.load() == n);
    check_ranks(got, whole, n, rows, 3);
  }
}

TEST_CASE("communicator: a range of k over ranks grows each k from the last, as one process does",
          "[communicator][mixture]") {
  const int64_t rows = 120, cols = 16;
  const std::vector<double> x = three_clusters(rows, cols, 81);
  dirmn_mixture_options o;
  dirmn_mixture_options_init(&o);
  o.starts = 2;
  const Got whole = whole_fits(x, rows, cols, 1, 4, o);
  for (int n : {2, 3}) {
    World world(n);
    std::atomic<int> released{0};
    std::vector<Got> got;
    run_ranks(world, x, rows, cols, &got, [&](int r, dirmn_context* ctx, dirmn_counts* c, Got* g) {
      fit_range_into(ctx, c, 1, 4, o, first_row(r + 1, n, rows) - first_row(r, n, rows), cols, g);
    }, &released);
    check_ranks(got, whole, n, rows, 1);
  }
}

TEST_CASE("communicator: more rows than the initialisations sample, over ranks",
          "[communicator][mixture]") {
  // 4096 rows are sampled for k-means and fitted by a split: the ranks
  // must draw and send the whole table's.
  const int64_t rows = 5000, cols = 6;
  const std::vector<double> x = three_clusters(rows, cols, 91);
  dirmn_mixture_options o;
  dirmn_mixture_options_init(&o);
  o.starts = 2;
  o.init = DIRMN_INIT_KMEANSPP;
  o.max_iterations = 30;
  const Got whole = whole_fits(x, rows, cols, 1, 2, o);
  const int n = 3;
  World world(n);
  std::atomic<int> released{0};
  std::vector<Got> got;
  run_ranks(world, x, rows, cols, &got, [&](int r, dirmn_context* ctx, dirmn_counts* c, Got* g) {
    fit_range_into(ctx, c, 1, 2, o, first_row(r + 1, n, rows) - first_row(r, n, rows), cols, g);
  }, &released);
  check_ranks(got, whole, n, rows, 1);
}

TEST_CASE("communicator: a mixture's failure on one rank fails every rank, and none writes",
          "[communicator][mixture]") {
  const int64_t rows = 48, cols = 10;
  const std::vector<double> x = three_clusters(rows, cols, 101);
  const int n = 3;
  World world(n);
  std::atomic<int> released{0};
  std::vector<Got> got;
  SECTION("a bad option on rank 1") {
    run_ranks(world, x, rows, cols, &got, [&](int r, dirmn_context* ctx, dirmn_counts* c, Got* g) {
      dirmn_mixture_options o;
      dirmn_mixture_options_init(&o);
      if (r == 1) o.starts = 0;
      fit_range_into(ctx, c, 2, 3, o, 0, cols, g);
    }, &released);
    for (int r = 0; r < n; ++r) {
      const Got& g = got[static_cast<size_t>(r)];
      INFO("rank " << r << ": " << g.message);
      CHECK(g.status == (r == 1 ? DIRMN_ERROR_INVALID_ARGUMENT : DIRMN_ERROR_COMMUNICATION));
      CHECK(g.message.find(r == 1 ? "starts (0)" : "rank 1's part of this collective call failed") !=
            std::string::npos);
      for (const dirmn_mixture_info& i : g.m_info) CHECK(i.size == 0);  // no handle written
    }
  }
  SECTION("rank 2's progress callback cancels at iteration 2") {
    run_ranks(world, x, rows, cols, &got, [&](int r, dirmn_context* ctx, dirmn_counts* c, Got* g) {
      dirmn_mixture_options o;
      dirmn_mixture_options_init(&o);
      o.starts = 1;
      o.progress = [](int it, double, double, void* d) { return *static_cast<int*>(d) == 2 && it == 2 ? 1 : 0; };
      o.progress_data = &r;
      fit_range_into(ctx, c, 2, 2, o, 0, cols, g);
    }, &released);
    for (const Got& g : got) {
      INFO(g.message);
      CHECK(g.status == DIRMN_ERROR_CANCELLED);
      CHECK(g.message.find("cancelled at EM iteration 2") != std::string::npos);
    }
  }
  SECTION("rank 1 asks for other components and starts") {
    run_ranks(world, x, rows, cols, &got, [&](int r, dirmn_context* ctx, dirmn_counts* c, Got* g) {
      dirmn_mixture_options o;
      dirmn_mixture_options_init(&o);
      o.starts = r == 2 ? 3 : 2;
      fit_range_into(ctx, c, r == 1 ? 3 : 2, 3, o, 0, cols, g);
    }, &released);
    for (const Got& g : got) {
      INFO(g.message);
      CHECK(g.status == DIRMN_ERROR_INVALID_ARGUMENT);
      CHECK(g.message.find("rank 1's k_min (3) differs from rank 0's (2): every rank of a collective call") !=
            std::string::npos);
      for (const dirmn_mixture_info& i : g.m_info) CHECK(i.size == 0);
    }
  }
  SECTION("k beyond every rank's rows with counts together") {
    run_ranks(world, x, rows, cols, &got, [&](int, dirmn_context* ctx, dirmn_counts* c, Got* g) {
      dirmn_mixture_options o;
      dirmn_mixture_options_init(&o);
      fit_range_into(ctx, c, 48, 48, o, 0, cols, g);
    }, &released);
    for (const Got& g : got) {
      INFO(g.message);
      CHECK(g.status == DIRMN_ERROR_INVALID_ARGUMENT);
      CHECK(g.message.find("k (48) must be between 1 and the number of rows with counts (47)") !=
            std::string::npos);
    }
  }
  CHECK(released.load() == n);
}

TEST_CASE("communicator: a rank with fewer rows with counts than k still fits its part",
          "[communicator][mixture]") {
  // Rank 0 holds 6 rows; k = 8 needs the others'.
  const int64_t rows = 40, cols = 8;
  const std::vector<double> x = three_clusters(rows, cols, 111);
  dirmn_mixture_options o;
  dirmn_mixture_options_init(&o);
  o.starts = 2;
  const Got whole = whole_fits(x, rows, cols, 8, 8, o);
  const int n = 3;
  World world(n);
  std::atomic<int> released{0};
  std::vector<Got> got;
  run_ranks(world, x, rows, cols, &got, [&](int r, dirmn_context* ctx, dirmn_counts* c, Got* g) {
    fit_range_into(ctx, c, 8, 8, o, first_row(r + 1, n, rows) - first_row(r, n, rows), cols, g);
  }, &released);
  check_ranks(got, whole, n, rows, 8);
}

TEST_CASE("cuda communicator: a mixture over ranks on one device is the host's whole-table fit",
          "[cuda][communicator]") {
  // Each rank's histograms and likelihoods on the device, its EM state on
  // the host: the same fit as the CPU backend's over the whole table.
  REQUIRE(cuda_device_present());
  const int64_t rows = 90, cols = 20;
  const std::vector<double> x = three_clusters(rows, cols, 121);
  dirmn_mixture_options o;
  dirmn_mixture_options_init(&o);
  o.starts = 2;
  const Got whole = whole_fits(x, rows, cols, 2, 3, o);
  for (int n : {1, 3}) {
    World world(n);
    std::atomic<int> released{0};
    std::vector<Got> got;
    run_ranks(world, x, rows, cols, &got, [&](int r, dirmn_context* ctx, dirmn_counts* c, Got* g) {
      fit_range_into(ctx, c, 2, 3, o, first_row(r + 1, n, rows) - first_row(r, n, rows), cols, g);
    }, &released, nullptr, DIRMN_BACKEND_CUDA);
    check_ranks(got, whole, n, rows, 2, false);
  }
}
