// test_communicator.cpp: a table split by rows over a communicator's ranks
// (the header's Communicators section). The ranks are threads of this
// process over an in-memory communicator (World: allreduce and broadcast
// through shared slots and a barrier), each with its own context and its
// own rows; every result is compared with the one process that holds the
// whole table (itself checked against references in test_fit.cpp and
// test_overdispersion.cpp). Catch2's assertions run on the main thread
// only: the ranks record what they got.
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "rank_support.hpp"

namespace {

using namespace dirmn_test;
using dirmn_world::callbacks_of;
using dirmn_world::Rank;
using dirmn_world::World;
using dirmn_ranks::first_row;
using dirmn_ranks::Got;
using dirmn_ranks::run_ranks;
using dirmn_ranks::weights_of;

// dirmn_fit on a rank (or the whole table): alpha, SEs and the result.
dirmn_status fit_into(dirmn_context* ctx, dirmn_counts* counts, int64_t cols, const double* weights,
                      Got* g) {
  g->alpha.assign(static_cast<size_t>(cols), -1.0);
  g->se.assign(static_cast<size_t>(cols), -1.0);
  dirmn_fit_options o;
  dirmn_fit_options_init(&o);
  o.weights = weights;
  std::memset(&g->fit, 0, sizeof g->fit);
  g->fit.size = sizeof g->fit;
  g->fit.alpha = g->alpha.data();
  g->fit.std_error_alpha = g->se.data();
  g->status = dirmn_fit(ctx, counts, &o, &g->fit);
  if (g->status != DIRMN_SUCCESS) g->message = dirmn_last_error(ctx);
  return g->status;
}

struct Whole {
  Got got;
  Context ctx;
  Counts counts;
};

Whole whole_fit(const std::vector<double>& x, int64_t rows, int64_t cols, const std::vector<double>& w) {
  Whole h{Got(), make_context(DIRMN_BACKEND_CPU), nullptr};
  h.counts = counts_of(h.ctx.get(), x, rows, cols);
  REQUIRE(fit_into(h.ctx.get(), h.counts.get(), cols, w.empty() ? nullptr : w.data(), &h.got) ==
          DIRMN_SUCCESS);
  return h;
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

}  // namespace

TEST_CASE("communicator: the shared-alpha fit of a split table is the whole table's, bit for bit",
          "[communicator]") {
  const int64_t rows = 60, cols = 40;
  std::vector<double> alpha = random_alpha(cols, 0.05, 3.0, 31);
  // Deep counts in a few columns take the pairs and band forms.
  std::vector<double> x = simulate_dm(rows, alpha, 400, 32);
  for (int64_t b = 0; b < rows; b += 3) x[static_cast<size_t>(b * cols)] += 5000.0 + 97.0 * static_cast<double>(b);
  const bool weighted = GENERATE(false, true);
  std::vector<double> w;
  if (weighted)
    for (int64_t b = 0; b < rows; ++b) w.push_back(static_cast<double>(b % 4));  // whole weights
  const Whole whole = whole_fit(x, rows, cols, w);
  for (int n : {1, 2, 3, 4}) {
    INFO("ranks " << n << (weighted ? ", weighted" : ""));
    World world(n);
    std::atomic<int> released{0};
    std::vector<Got> got;
    run_ranks(world, x, rows, cols, &got, [&](int r, dirmn_context* ctx, dirmn_counts* c, Got* g) {
      const std::vector<double> wr = weights_of(w, r, n, rows);
      fit_into(ctx, c, cols, wr.empty() ? nullptr : wr.data(), g);
    }, &released);
    CHECK(released.load() == n);  // once per rank, after its counts went
    for (int r = 0; r < n; ++r) {
      const Got& g = got[static_cast<size_t>(r)];
      INFO("rank " << r << ": " << g.message);
      REQUIRE(g.attach == DIRMN_SUCCESS);
      REQUIRE(g.status == DIRMN_SUCCESS);
      CHECK(same_bits(g.alpha, whole.got.alpha));
      CHECK(same_bits(g.se, whole.got.se));
      CHECK(g.fit.iterations == whole.got.fit.iterations);
      CHECK(g.fit.loglik_kernel == whole.got.fit.loglik_kernel);
      CHECK(g.fit.observations == whole.got.fit.observations);
      CHECK(g.fit.parameters == whole.got.fit.parameters);
      // The multinomial coefficients are summed per rank, then over ranks.
      CHECK(close_to(g.fit.loglik, whole.got.fit.loglik, 1e-14));
    }
  }
}

TEST_CASE("communicator: ranks that draw their own rows (first_row) fit the table one call draws",
          "[communicator]") {
  const int64_t rows = 500, cols = 60;
  const std::vector<double> alpha = random_alpha(cols, 0.02, 2.0, 81);
  const int64_t size = 700;
  const auto draw = [&](dirmn_context* ctx, int64_t from, int64_t n) {
    dirmn_sample_options o;
    dirmn_sample_options_init(&o);
    o.seed = 31;
    o.first_row = from;
    dirmn_counts* c = nullptr;
    dirmn_sample(ctx, &c, n, cols, 1, alpha.data(), cols, 1, DIRMN_PARAM_ALPHA, &size, 0, &o);
    return c;
  };
  Whole whole{Got(), make_context(DIRMN_BACKEND_CPU), nullptr};
  whole.counts = Counts(draw(whole.ctx.get(), 0, rows));
  REQUIRE(whole.counts);
  REQUIRE(fit_into(whole.ctx.get(), whole.counts.get(), cols, nullptr, &whole.got) == DIRMN_SUCCESS);
  const int n = 3;
  World world(n);
  std::atomic<int> released{0};
  std::vector<Got> got(static_cast<size_t>(n));
  std::vector<Rank> ranks(static_cast<size_t>(n));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    ranks[static_cast<size_t>(r)] = Rank{&world, r, 0, &released};
    threads.emplace_back([&, r] {
      Got& g = got[static_cast<size_t>(r)];
      dirmn_context* ctx = nullptr;
      dirmn_context_create(&ctx, DIRMN_BACKEND_CPU, 0);
      const int64_t b0 = first_row(r, n, rows), b1 = first_row(r + 1, n, rows);
      dirmn_counts* mine = draw(ctx, b0, b1 - b0);
      const dirmn_communicator_callbacks cb = callbacks_of(&ranks[static_cast<size_t>(r)]);
      dirmn_communicator* comm = nullptr;
      dirmn_communicator_create(&comm, &cb);
      g.attach = dirmn_counts_set_communicator(ctx, mine, comm);
      dirmn_communicator_destroy(comm);
      if (g.attach == DIRMN_SUCCESS) fit_into(ctx, mine, cols, nullptr, &g);
      dirmn_counts_destroy(mine);
      dirmn_context_destroy(ctx);
    });
  }
  for (std::thread& t : threads) t.join();
  for (int r = 0; r < n; ++r) {
    const Got& g = got[static_cast<size_t>(r)];
    INFO("rank " << r << ": " << g.message);
    REQUIRE(g.status == DIRMN_SUCCESS);
    CHECK(same_bits(g.alpha, whole.got.alpha));
    CHECK(same_bits(g.se, whole.got.se));
  }
  CHECK(released.load() == n);
}

TEST_CASE("communicator: dirmn_loglik_sum and the overdispersion test over ranks",
          "[communicator]") {
  const int64_t rows = 45, cols = 25;
  const std::vector<double> alpha = random_alpha(cols, 0.1, 2.0, 41);
  const std::vector<double> x = simulate_dm(rows, alpha, 150, 42);
  // Real weights: their sums depend on the order they are added in.
  std::vector<double> w;
  for (int64_t b = 0; b < rows; ++b) w.push_back(0.3 + 0.01 * static_cast<double>(b));
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  Counts counts = counts_of(ctx.get(), x, rows, cols);
  Got want;
  want.gradient.resize(cols);
  want.hessian_diag.resize(cols);
  REQUIRE(dirmn_loglik_sum(ctx.get(), counts.get(), alpha.data(), 1, DIRMN_PARAM_ALPHA, w.data(),
                           DIRMN_FULL, &want.value, want.gradient.data(),
                           want.hessian_diag.data(), &want.hessian_scalar) == DIRMN_SUCCESS);
  want.od.size = sizeof want.od;
  REQUIRE(dirmn_overdispersion_test(ctx.get(), counts.get(), nullptr, &want.od) == DIRMN_SUCCESS);
  const int n = 3;
  World world(n);
  std::atomic<int> released{0};
  std::vector<Got> got;
  run_ranks(world, x, rows, cols, &got, [&](int r, dirmn_context* c, dirmn_counts* k, Got* g) {
    const std::vector<double> wr = weights_of(w, r, n, rows);
    g->gradient.assign(cols, 0.0);
    g->hessian_diag.assign(cols, 0.0);
    g->status = dirmn_loglik_sum(c, k, alpha.data(), 1, DIRMN_PARAM_ALPHA, wr.data(),
                                 DIRMN_FULL, &g->value, g->gradient.data(),
                                 g->hessian_diag.data(), &g->hessian_scalar);
    if (g->status != DIRMN_SUCCESS) return;
    g->od.size = sizeof g->od;
    g->status = dirmn_overdispersion_test(c, k, nullptr, &g->od);
  }, &released);
  for (int r = 0; r < n; ++r) {
    const Got& g = got[static_cast<size_t>(r)];
    INFO("rank " << r << ": " << g.message);
    REQUIRE(g.status == DIRMN_SUCCESS);
    CHECK(close_to(g.value, want.value, 1e-13));
    CHECK(close_to(g.hessian_scalar, want.hessian_scalar, 1e-13));
    for (int64_t v = 0; v < cols; ++v) {
      CHECK(close_to(g.gradient[static_cast<size_t>(v)], want.gradient[static_cast<size_t>(v)], 1e-12, 1e-12));
      CHECK(close_to(g.hessian_diag[static_cast<size_t>(v)], want.hessian_diag[static_cast<size_t>(v)], 1e-12));
    }
    CHECK(close_to(g.od.lrt_statistic, want.od.lrt_statistic, 1e-10));
    CHECK(close_to(g.od.score_statistic, want.od.score_statistic, 1e-12));
    CHECK(g.od.lrt_p_value == Approx(want.od.lrt_p_value).epsilon(1e-9));
    // Every rank the same bits.
    CHECK(g.value == got[0].value);
    CHECK(g.od.score_statistic == got[0].od.score_statistic);
  }
}

TEST_CASE("communicator: one rank's bad argument fails every rank, and nothing is written",
          "[communicator]") {
  const int64_t rows = 30, cols = 12;
  const std::vector<double> x = simulate_dm(rows, random_alpha(cols, 0.2, 2.0, 51), 80, 52);
  const int n = 3;
  World world(n);
  std::atomic<int> released{0};
  std::vector<Got> got;
  run_ranks(world, x, rows, cols, &got, [&](int r, dirmn_context* c, dirmn_counts* k, Got* g) {
    std::vector<double> wr(static_cast<size_t>(first_row(r + 1, n, rows) - first_row(r, n, rows)), 1.0);
    if (r == 1) wr[2] = -1.0;
    fit_into(c, k, cols, wr.data(), g);
    // The next collective call works again on every rank.
    Got again;
    fit_into(c, k, cols, nullptr, &again);
    if (again.status != DIRMN_SUCCESS) g->status = DIRMN_ERROR_INTERNAL;
  }, &released);
  for (int r = 0; r < n; ++r) {
    const Got& g = got[static_cast<size_t>(r)];
    INFO("rank " << r << ": " << g.message);
    if (r == 1) {
      CHECK(g.status == DIRMN_ERROR_INVALID_PARAMETER);  // its own status and message
      CHECK(g.message.find("row 2 (0-based): weight -1 is negative") != std::string::npos);
    } else {
      CHECK(g.status == DIRMN_ERROR_COMMUNICATION);
      CHECK(g.message.find("rank 1's part") != std::string::npos);
    }
    for (double a : g.alpha) CHECK(a == -1.0);
  }
}

TEST_CASE("communicator: a failed callback, mismatched columns, estimators not yet over ranks",
          "[communicator]") {
  const int64_t rows = 24, cols = 10;
  const std::vector<double> x = simulate_dm(rows, random_alpha(cols, 0.2, 2.0, 61), 60, 62);
  const int n = 2;
  std::atomic<int> released{0};
  std::vector<Got> got;
  SECTION("a callback that fails on every rank") {
    World world(n);
    world.fail_at = 3;  // after the attach's vote and gather: inside the fit
    world.fail_code = 5;
    run_ranks(world, x, rows, cols, &got, [&](int, dirmn_context* c, dirmn_counts* k, Got* g) {
      fit_into(c, k, cols, nullptr, g);
    }, &released);
    for (const Got& g : got) {
      INFO(g.message);
      CHECK(g.status == DIRMN_ERROR_COMMUNICATION);
      CHECK(g.message.find("callback returned 5") != std::string::npos);
      for (double a : g.alpha) CHECK(a == -1.0);
    }
  }
  SECTION("ranks with other columns") {
    World world(n);
    run_ranks(world, x, rows, cols, &got, [&](int, dirmn_context*, dirmn_counts*, Got*) {},
              &released, [&](int r) { return r == 1 ? cols - 2 : cols; });
    for (const Got& g : got) {
      INFO(g.message);
      CHECK(g.attach == DIRMN_ERROR_DIMENSION_MISMATCH);
      CHECK(g.message.find("rank 1's counts have 8 columns, rank 0's 10") != std::string::npos);
    }
  }
  SECTION("a group test is refused on split counts, and works once detached") {
    World world(n);
    run_ranks(world, x, rows, cols, &got, [&](int r, dirmn_context* c, dirmn_counts* k, Got* g) {
      const int64_t my_rows = first_row(r + 1, n, rows) - first_row(r, n, rows);
      std::vector<int64_t> group(static_cast<size_t>(my_rows));
      for (int64_t b = 0; b < my_rows; ++b) group[static_cast<size_t>(b)] = b % 2;
      dirmn_group_test_result t;
      std::memset(&t, 0, sizeof t);
      t.size = sizeof t;
      g->status = dirmn_test_groups(c, k, group.data(), 2, nullptr, &t);
      g->message = dirmn_last_error(c);
      if (dirmn_counts_set_communicator(c, k, nullptr) != DIRMN_SUCCESS ||
          dirmn_test_groups(c, k, group.data(), 2, nullptr, &t) != DIRMN_SUCCESS)
        g->attach = DIRMN_ERROR_INTERNAL;
    }, &released);
    for (const Got& g : got) {
      INFO(g.message);
      CHECK(g.attach == DIRMN_SUCCESS);
      CHECK(g.status == DIRMN_ERROR_NOT_SUPPORTED);
      CHECK(g.message.find("dirmn_test_groups does not sum over ranks") != std::string::npos);
    }
  }
  CHECK(released.load() == n);
}

TEST_CASE("communicator: creation checks its callbacks", "[communicator]") {
  World world(3);
  std::atomic<int> released{0};
  Rank r{&world, 2, 0, &released};
  dirmn_communicator_callbacks cb = callbacks_of(&r);
  dirmn_communicator* comm = nullptr;
  CHECK(dirmn_communicator_create(nullptr, &cb) == DIRMN_ERROR_NULL_POINTER);
  CHECK(dirmn_communicator_create(&comm, nullptr) == DIRMN_ERROR_NULL_POINTER);
  dirmn_communicator_callbacks bad = cb;
  bad.size = 8;
  CHECK(dirmn_communicator_create(&comm, &bad) == DIRMN_ERROR_INVALID_ARGUMENT);
  bad = cb;
  bad.rank = 3;
  CHECK(dirmn_communicator_create(&comm, &bad) == DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(dirmn_last_error(nullptr)).find("callbacks->rank (3) is outside [0, 3)") !=
        std::string::npos);
  bad = cb;
  bad.ranks = 0;
  CHECK(dirmn_communicator_create(&comm, &bad) == DIRMN_ERROR_INVALID_ARGUMENT);
  bad = cb;
  bad.broadcast = nullptr;
  CHECK(dirmn_communicator_create(&comm, &bad) == DIRMN_ERROR_NULL_POINTER);
  CHECK(std::string(dirmn_last_error(nullptr)).find("callbacks->broadcast is NULL") != std::string::npos);
  CHECK(comm == nullptr);
  REQUIRE(dirmn_communicator_create(&comm, &cb) == DIRMN_SUCCESS);
  int rank = -1, ranks = -1;
  CHECK(dirmn_communicator_get_rank(comm, &rank, &ranks) == DIRMN_SUCCESS);
  CHECK(rank == 2);
  CHECK(ranks == 3);
  CHECK(dirmn_communicator_get_rank(nullptr, &rank, &ranks) == DIRMN_ERROR_NULL_POINTER);
  CHECK(released.load() == 0);
  dirmn_communicator_destroy(comm);
  CHECK(released.load() == 1);
  dirmn_communicator_destroy(nullptr);
  CHECK(std::string(dirmn_status_name(DIRMN_ERROR_COMMUNICATION)) == "DIRMN_ERROR_COMMUNICATION");
}

TEST_CASE("cuda communicator: ranks on one device sum their device histograms as the host does",
          "[cuda][communicator]") {
  REQUIRE(cuda_device_present());
  const int64_t rows = 80, cols = 30;
  const std::vector<double> alpha = random_alpha(cols, 0.05, 3.0, 71);
  const std::vector<double> x = simulate_dm(rows, alpha, 200, 72);  // counts below 256: 8-bit
  const Whole whole = whole_fit(x, rows, cols, {});
  for (int n : {1, 3}) {
    INFO("ranks " << n);
    World world(n);
    std::atomic<int> released{0};
    std::vector<Got> got;
    run_ranks(world, x, rows, cols, &got, [&](int, dirmn_context* ctx, dirmn_counts* c, Got* g) {
      fit_into(ctx, c, cols, nullptr, g);
    }, &released, nullptr, DIRMN_BACKEND_CUDA);
    for (int r = 0; r < n; ++r) {
      const Got& g = got[static_cast<size_t>(r)];
      INFO("rank " << r << ": " << g.message);
      REQUIRE(g.status == DIRMN_SUCCESS);
      // Against the CPU backend's whole-table fit: the device's histograms
      // are the host's (exact sums of whole counts).
      CHECK(same_bits(g.alpha, whole.got.alpha));
      CHECK(g.fit.iterations == whole.got.fit.iterations);
    }
  }
}
