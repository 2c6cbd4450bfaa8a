// test_fit.cpp: the maximum-likelihood fit of one alpha (dirmn_fit): options,
// progress and cancellation, zero rows and columns, weights, the
// multinomial limit, and the device's histograms. A fit is only as good as
// the optimum it reaches, so it is held to references found another way: a
// plain Minka fixed point in long double, the simulated truth within a few
// standard errors, dirmult on a real table, and the CPU backend for the
// device. The derivatives the fit climbs are checked in test_derivatives.cpp.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "support.hpp"

using namespace dirmn_test;


TEST_CASE("fit: simulated data with known alpha", "[fit]") {
  const int64_t rows = 2000, cols = 50;
  std::vector<double> alpha_true(cols);
  for (int64_t v = 0; v < cols; ++v) alpha_true[static_cast<size_t>(v)] = 0.2 + 0.1 * static_cast<double>(v % 7);
  const auto x = simulate_dm(rows, alpha_true, 500, 99);
  const auto minka = minka_ref(x, rows, cols, std::vector<double>(cols, 1.0));
  for (dirmn_backend be : backends_under_test()) {
    INFO("backend " << backend_name(be));
    Context ctx = make_context(be);
    REQUIRE(ctx);
    Counts c = counts_of(ctx.get(), x, rows, cols);
    std::vector<double> a(cols), se(cols), sel(cols);
    dirmn_fit_result r;
    r.size = sizeof r;
    r.alpha = a.data();
    r.std_error_alpha = se.data();
    r.std_error_log_alpha = sel.data();
    REQUIRE(dirmn_fit(ctx.get(), c.get(), nullptr, &r) == DIRMN_SUCCESS);
    CHECK(r.converged == 1);
    CHECK(r.multinomial_limit == 0);
    CHECK(r.zero_columns == 0);
    CHECK(r.iterations < 50);
    CHECK(r.gradient_norm < 1e-4);
    // The maximum is at least as high as the reference fixed point's and
    // the truth's, and agrees with the fixed point.
    const double f_minka = table_loglik_ref(x, rows, cols, minka);
    CHECK(r.loglik_kernel >= f_minka - 1e-8 * std::fabs(f_minka));
    CHECK(r.loglik_kernel >= table_loglik_ref(x, rows, cols, alpha_true));
    CHECK(close_to(r.loglik_kernel, table_loglik_ref(x, rows, cols, a), 1e-12));
    double sum = 0;
    for (int64_t v = 0; v < cols; ++v) {
      CHECK(close_to(a[static_cast<size_t>(v)], minka[static_cast<size_t>(v)], 1e-5));
      // The truth lies within a few standard errors.
      CHECK(std::fabs(a[static_cast<size_t>(v)] - alpha_true[static_cast<size_t>(v)]) < 5 * se[static_cast<size_t>(v)]);
      CHECK(close_to(se[static_cast<size_t>(v)], a[static_cast<size_t>(v)] * sel[static_cast<size_t>(v)], 1e-12));
      sum += a[static_cast<size_t>(v)];
    }
    CHECK(close_to(r.precision, sum, 1e-12));
  }
}

TEST_CASE("fit: a column whose only count is one large value", "[fit]") {
  // Its histogram holds a single value above the small-count range: the
  // column has counts and must be fitted, not taken for an empty one.
  const int64_t rows = 60, cols = 4;
  auto x = simulate_dm(rows, {0.8, 1.5, 0.6, 1.0}, 40, 5);
  for (int64_t b = 0; b < rows; ++b) x[static_cast<size_t>(b * cols + 3)] = b == 7 ? 600 : 0;
  const auto minka = minka_ref(x, rows, cols, std::vector<double>(cols, 1.0));
  for (dirmn_backend be : backends_under_test()) {
    INFO("backend " << backend_name(be));
    Context ctx = make_context(be);
    REQUIRE(ctx);
    Counts c = counts_of(ctx.get(), x, rows, cols);
    std::vector<double> a(cols);
    dirmn_fit_result r;
    r.size = sizeof r;
    r.alpha = a.data();
    r.std_error_alpha = nullptr;
    r.std_error_log_alpha = nullptr;
    REQUIRE(dirmn_fit(ctx.get(), c.get(), nullptr, &r) == DIRMN_SUCCESS);
    CHECK(r.converged == 1);
    CHECK(r.zero_columns == 0);
    CHECK(a[3] > 0.0);
    const double f_minka = table_loglik_ref(x, rows, cols, minka);
    CHECK(r.loglik_kernel >= f_minka - 1e-8 * std::fabs(f_minka));
    for (int64_t v = 0; v < cols; ++v) CHECK(close_to(a[static_cast<size_t>(v)], minka[static_cast<size_t>(v)], 1e-5));
  }
}

TEST_CASE("fit: zero rows, zero columns, weights and no overdispersion", "[fit]") {
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  const int64_t rows = 300, cols = 6;
  auto x = simulate_dm(rows, {0.5, 1.0, 2.0, 0.0001, 1.5, 3.0}, 60, 3);
  for (int64_t b = 0; b < rows; ++b) x[static_cast<size_t>(b * cols + 3)] = 0;  // an empty column
  for (int64_t v = 0; v < cols; ++v) x[static_cast<size_t>(10 * cols + v)] = 0;  // an empty row
  Counts c = counts_of(ctx.get(), x, rows, cols);
  std::vector<double> a(cols, -1), se(cols, -1);
  dirmn_fit_result r;
  r.size = sizeof r;
  r.alpha = a.data();
  r.std_error_alpha = se.data();
  r.std_error_log_alpha = nullptr;
  REQUIRE(dirmn_fit(ctx.get(), c.get(), nullptr, &r) == DIRMN_SUCCESS);
  CHECK(r.converged == 1);
  CHECK(r.zero_columns == 1);
  CHECK(a[3] == 0.0);
  CHECK(se[3] == 0.0);
  for (int64_t v : {0, 1, 2, 4, 5}) {
    CHECK(a[static_cast<size_t>(v)] > 0);
    CHECK(std::isfinite(se[static_cast<size_t>(v)]));
  }
  CHECK(std::isfinite(r.loglik_kernel));

  SECTION("integer weights equal repeated rows") {
    std::vector<double> w(static_cast<size_t>(rows), 1.0);
    std::vector<double> x2 = x;
    for (int64_t b = 0; b < 50; ++b) {
      w[static_cast<size_t>(b)] = 2.0;
      x2.insert(x2.end(), x.begin() + b * cols, x.begin() + (b + 1) * cols);
    }
    Counts c2 = counts_of(ctx.get(), x2, rows + 50, cols);
    std::vector<double> a1(cols), a2(cols);
    dirmn_fit_options o;
    dirmn_fit_options_init(&o);
    o.weights = w.data();
    dirmn_fit_result r1 = r, r2 = r;
    r1.alpha = a1.data();
    r2.alpha = a2.data();
    r1.std_error_alpha = r2.std_error_alpha = nullptr;
    REQUIRE(dirmn_fit(ctx.get(), c.get(), &o, &r1) == DIRMN_SUCCESS);
    REQUIRE(dirmn_fit(ctx.get(), c2.get(), nullptr, &r2) == DIRMN_SUCCESS);
    CHECK(close_to(r1.loglik_kernel, r2.loglik_kernel, 1e-12));
    for (int64_t v = 0; v < cols; ++v) CHECK(close_to(a1[static_cast<size_t>(v)], a2[static_cast<size_t>(v)], 1e-7, 1e-300));
  }
  SECTION("multinomial data: the multinomial limit is reported") {
    std::mt19937_64 rng(11);
    const std::vector<double> p{0.1, 0.2, 0.3, 0.4};
    std::vector<double> m(static_cast<size_t>(500 * 4));
    for (int64_t b = 0; b < 500; ++b) {
      int left = 100;
      double rest = 1.0;
      for (int v = 0; v < 4; ++v) {
        int k = left;
        if (v < 3) {
          std::binomial_distribution<int> bin(left, p[static_cast<size_t>(v)] / rest);
          k = bin(rng);
        }
        m[static_cast<size_t>(b * 4 + v)] = k;
        left -= k;
        rest -= p[static_cast<size_t>(v)];
      }
    }
    // Underdispersed on purpose: every row identical to the expected counts.
    std::vector<double> flat(static_cast<size_t>(500 * 4));
    for (int64_t b = 0; b < 500; ++b)
      for (int v = 0; v < 4; ++v) flat[static_cast<size_t>(b * 4 + v)] = 100 * p[static_cast<size_t>(v)];
    Counts cf = counts_of(ctx.get(), flat, 500, 4);
    std::vector<double> af(4);
    dirmn_fit_result rf = r;
    rf.alpha = af.data();
    rf.std_error_alpha = nullptr;
    REQUIRE(dirmn_fit(ctx.get(), cf.get(), nullptr, &rf) == DIRMN_SUCCESS);
    CHECK(rf.multinomial_limit == 1);
    CHECK(std::isinf(rf.precision));
    for (int v = 0; v < 4; ++v) CHECK(close_to(af[static_cast<size_t>(v)], p[static_cast<size_t>(v)], 1e-14));
    // Its log-likelihood is the multinomial one: sum n log p.
    double ll = 0;
    for (int v = 0; v < 4; ++v) ll += 500 * 100 * p[static_cast<size_t>(v)] * std::log(p[static_cast<size_t>(v)]);
    CHECK(close_to(rf.loglik_kernel, ll, 1e-12));
    // Truly multinomial data: either the limit, or a huge precision.
    Counts cm = counts_of(ctx.get(), m, 500, 4);
    REQUIRE(dirmn_fit(ctx.get(), cm.get(), nullptr, &rf) == DIRMN_SUCCESS);
    CHECK((rf.multinomial_limit == 1 || rf.precision > 1e3));
    CHECK(std::isfinite(rf.loglik_kernel));
  }
}

namespace {
int cancel_at_two(int iteration, double, double, void* calls) {
  ++*static_cast<int*>(calls);
  return iteration >= 2;
}
}  // namespace

TEST_CASE("fit: options, progress, cancellation and errors", "[fit]") {
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  const int64_t rows = 200, cols = 8;
  const auto x = simulate_dm(rows, {0.3, 0.6, 0.9, 1.2, 1.5, 1.8, 2.1, 2.4}, 80, 21);
  Counts c = counts_of(ctx.get(), x, rows, cols);
  std::vector<double> a(cols, -7);
  dirmn_fit_result r;
  r.size = sizeof r;
  r.alpha = a.data();
  r.std_error_alpha = r.std_error_log_alpha = nullptr;
  int calls = 0;
  dirmn_fit_options o;
  dirmn_fit_options_init(&o);
  CHECK(o.size == sizeof o);
  CHECK(o.tolerance == 1e-10);
  o.progress = cancel_at_two;
  o.progress_data = &calls;
  o.start = nullptr;
  // A start far away still converges; cancelling leaves the result alone.
  std::vector<double> start(cols, 50.0);
  o.start = start.data();
  CHECK(dirmn_fit(ctx.get(), c.get(), &o, &r) == DIRMN_ERROR_CANCELLED);
  CHECK(calls == 2);  // after iterations 1 and 2
  CHECK(a[0] == -7);
  o.progress = nullptr;
  REQUIRE(dirmn_fit(ctx.get(), c.get(), &o, &r) == DIRMN_SUCCESS);
  CHECK(r.converged == 1);
  std::vector<double> a_default(cols);
  dirmn_fit_result rd = r;
  rd.alpha = a_default.data();
  REQUIRE(dirmn_fit(ctx.get(), c.get(), nullptr, &rd) == DIRMN_SUCCESS);
  for (int64_t v = 0; v < cols; ++v) CHECK(close_to(a[static_cast<size_t>(v)], a_default[static_cast<size_t>(v)], 1e-6));
  // An iteration limit of 0 reports no convergence, not an error.
  o.max_iterations = 0;
  o.start = nullptr;
  REQUIRE(dirmn_fit(ctx.get(), c.get(), &o, &r) == DIRMN_SUCCESS);
  CHECK(r.iterations == 0);
  // Errors.
  o = dirmn_fit_options{};
  dirmn_fit_options_init(&o);
  start[4] = -1;
  o.start = start.data();
  CHECK(dirmn_fit(ctx.get(), c.get(), &o, &r) == DIRMN_ERROR_INVALID_PARAMETER);
  CHECK(std::string(dirmn_last_error(ctx.get())).find("start index 4") != std::string::npos);
  o.start = nullptr;
  o.tolerance = -1;
  CHECK(dirmn_fit(ctx.get(), c.get(), &o, &r) == DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(dirmn_fit(ctx.get(), c.get(), nullptr, nullptr) == DIRMN_ERROR_NULL_POINTER);
  dirmn_fit_result small = r;
  small.size = 8;
  CHECK(dirmn_fit(ctx.get(), c.get(), nullptr, &small) == DIRMN_ERROR_INVALID_ARGUMENT);
  small = r;
  small.alpha = nullptr;
  CHECK(dirmn_fit(ctx.get(), c.get(), nullptr, &small) == DIRMN_ERROR_NULL_POINTER);
  Counts zeros = counts_of(ctx.get(), std::vector<double>(12, 0.0), 3, 4);
  CHECK(dirmn_fit(ctx.get(), zeros.get(), nullptr, &r) == DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(dirmn_last_error(ctx.get())).find("no counts") != std::string::npos);
  dirmn_fit_options_init(nullptr);
}

TEST_CASE("fit: the BCI table against dirmult", "[fit][data]") {
  std::ifstream in(std::string(DIRMN_TEST_DATA_DIR) + "/../../examples/data/bci.csv");
  REQUIRE(in.good());
  std::string line;
  std::getline(in, line);
  std::vector<double> x;
  int64_t rows = 0;
  while (std::getline(in, line)) {
    std::stringstream ss(line);
    std::string cell;
    std::getline(ss, cell, ',');
    while (std::getline(ss, cell, ',')) x.push_back(std::stod(cell));
    ++rows;
  }
  const int64_t cols = static_cast<int64_t>(x.size()) / rows;
  for (dirmn_backend be : backends_under_test()) {
    Context ctx = make_context(be);
    REQUIRE(ctx);
    Counts c = counts_of(ctx.get(), x, rows, cols);
    std::vector<double> a(static_cast<size_t>(cols));
    dirmn_fit_result r;
    r.size = sizeof r;
    r.alpha = a.data();
    r.std_error_alpha = r.std_error_log_alpha = nullptr;
    REQUIRE(dirmn_fit(ctx.get(), c.get(), nullptr, &r) == DIRMN_SUCCESS);
    CHECK(r.converged == 1);
    // dirmult::dirmult(x, epsilon = 1e-10) (dirmult 0.1.3) reports
    // loglik -88904.836012946 and gamma[1:2] = 0.01802453069, 0.03668692474.
    CHECK(r.loglik_kernel >= -88904.836012946 - 1e-8 * 88904.836012946);
    CHECK(close_to(r.loglik_kernel, -88904.836012946, 1e-12));
    CHECK(close_to(a[0], 0.01802453069, 1e-5));
    CHECK(close_to(a[1], 0.03668692474, 1e-5));
  }
}

TEST_CASE("fit: device histograms agree with the CPU's", "[fit][cuda]") {
  REQUIRE(cuda_device_present());
  const int64_t rows = 3000, cols = 70;
  std::vector<double> alpha_true(cols);
  for (int64_t v = 0; v < cols; ++v) alpha_true[static_cast<size_t>(v)] = 0.1 + 0.05 * static_cast<double>(v % 9);
  const auto x = simulate_dm(rows, alpha_true, 120, 123);
  std::vector<double> w(static_cast<size_t>(rows));
  for (int64_t b = 0; b < rows; ++b) w[static_cast<size_t>(b)] = static_cast<double>(b % 5) * 0.5;
  Context cpu = make_context(DIRMN_BACKEND_CPU);
  Context gpu = make_context(DIRMN_BACKEND_CUDA);
  REQUIRE(cpu);
  REQUIRE(gpu);
  for (dirmn_storage st : {DIRMN_STORAGE_DENSE, DIRMN_STORAGE_SPARSE}) {
    dirmn_counts_options o;
    dirmn_counts_options_init(&o);
    o.storage = st;
    dirmn_counts *cc = nullptr, *cg = nullptr;
    REQUIRE(dirmn_counts_create_dense(cpu.get(), &cc, rows, cols, DIRMN_FLOAT64, x.data(), cols, 1, &o) == DIRMN_SUCCESS);
    REQUIRE(dirmn_counts_create_dense(gpu.get(), &cg, rows, cols, DIRMN_FLOAT64, x.data(), cols, 1, &o) == DIRMN_SUCCESS);
    Counts hc(cc), hg(cg);
    dirmn_counts_info info;
    info.size = sizeof info;
    REQUIRE(dirmn_counts_get_info(cg, &info) == DIRMN_SUCCESS);
    REQUIRE(info.value_bits == 8);  // the device histogram path
    for (const double* wp : {static_cast<const double*>(nullptr), static_cast<const double*>(w.data())}) {
      double fc = 0, fg = 0, sc = 0, sg = 0;
      std::vector<double> gc(cols), gg(cols), dc(cols), dg(cols);
      REQUIRE(dirmn_loglik_sum(cpu.get(), cc, alpha_true.data(), 1, DIRMN_PARAM_ALPHA, wp, DIRMN_FULL,
                               &fc, gc.data(), dc.data(), &sc) == DIRMN_SUCCESS);
      REQUIRE(dirmn_loglik_sum(gpu.get(), cg, alpha_true.data(), 1, DIRMN_PARAM_ALPHA, wp, DIRMN_FULL,
                               &fg, gg.data(), dg.data(), &sg) == DIRMN_SUCCESS);
      CHECK(close_to(fg, fc, 1e-12));
      CHECK(close_to(sg, sc, 1e-12));
      for (int64_t v = 0; v < cols; ++v) {
        CHECK(close_to(gg[static_cast<size_t>(v)], gc[static_cast<size_t>(v)], 1e-10, 1e-9));
        CHECK(close_to(dg[static_cast<size_t>(v)], dc[static_cast<size_t>(v)], 1e-12, 1e-9));
      }
      std::vector<double> ac(cols), ag(cols);
      dirmn_fit_options fo;
      dirmn_fit_options_init(&fo);
      fo.weights = wp;
      dirmn_fit_result rc, rg;
      rc.size = rg.size = sizeof rc;
      rc.alpha = ac.data();
      rg.alpha = ag.data();
      rc.std_error_alpha = rc.std_error_log_alpha = rg.std_error_alpha = rg.std_error_log_alpha = nullptr;
      REQUIRE(dirmn_fit(cpu.get(), cc, &fo, &rc) == DIRMN_SUCCESS);
      REQUIRE(dirmn_fit(gpu.get(), cg, &fo, &rg) == DIRMN_SUCCESS);
      CHECK(close_to(rg.loglik_kernel, rc.loglik_kernel, 1e-12));
      for (int64_t v = 0; v < cols; ++v) CHECK(close_to(ag[static_cast<size_t>(v)], ac[static_cast<size_t>(v)], 1e-8));
    }
  }
}

TEST_CASE("fit: device histograms of small counts agree with the CPU's", "[fit][cuda]") {
  // Counts below 16: the device counts them in registers (4-bit fields,
  // then 8-bit ones emptied every 255 rows). 5003 rows and 301 columns leave
  // partial row batches and column tiles; 1200007 rows of 7 columns give
  // each thread hundreds of rows: columns 0 and 1 are all 15 and all 1, so
  // their 8-bit counters reach exactly 255 before each emptying (one more
  // row would carry into the next field), the others are nine in ten 15.
  REQUIRE(cuda_device_present());
  struct Shape { int64_t rows, cols; bool tall; };
  for (const Shape sh : {Shape{5003, 301, false}, Shape{1200007, 7, true}}) {
    const int64_t rows = sh.rows, cols = sh.cols;
    INFO("rows " << rows << ", cols " << cols);
    std::mt19937_64 rng(31);
    std::vector<double> x(static_cast<size_t>(rows * cols));
    std::bernoulli_distribution mostly(0.9);
    for (int64_t b = 0; b < rows; ++b) {
      const int top = 1 + static_cast<int>(b % 15);  // row maxima 1..15
      std::uniform_int_distribution<int> n(0, top);
      for (int64_t v = 0; v < cols; ++v)
        x[static_cast<size_t>(b * cols + v)] = !sh.tall ? n(rng) : v == 0 ? 15 : v == 1 ? 1 : mostly(rng) ? 15 : n(rng);
    }
    std::vector<double> alpha(cols), w(static_cast<size_t>(rows));
    for (int64_t v = 0; v < cols; ++v) alpha[static_cast<size_t>(v)] = 0.2 + 0.01 * static_cast<double>(v % 50);
    for (int64_t b = 0; b < rows; ++b) w[static_cast<size_t>(b)] = 0.25 * static_cast<double>(b % 7);
    Context cpu = make_context(DIRMN_BACKEND_CPU);
    Context gpu = make_context(DIRMN_BACKEND_CUDA);
    REQUIRE(cpu);
    REQUIRE(gpu);
    Counts cc = counts_of(cpu.get(), x, rows, cols);
    Counts cg = counts_of(gpu.get(), x, rows, cols);
    for (const double* wp : {static_cast<const double*>(nullptr), static_cast<const double*>(w.data())}) {
      INFO("weighted " << (wp != nullptr));
      double fc = 0, fg = 0, sc = 0, sg = 0;
      std::vector<double> gc(cols), gg(cols), dc(cols), dg(cols);
      REQUIRE(dirmn_loglik_sum(cpu.get(), cc.get(), alpha.data(), 1, DIRMN_PARAM_ALPHA, wp, DIRMN_FULL, &fc,
                               gc.data(), dc.data(), &sc) == DIRMN_SUCCESS);
      REQUIRE(dirmn_loglik_sum(gpu.get(), cg.get(), alpha.data(), 1, DIRMN_PARAM_ALPHA, wp, DIRMN_FULL, &fg,
                               gg.data(), dg.data(), &sg) == DIRMN_SUCCESS);
      // The log multinomial coefficients (DIRMN_FULL) of 1.2 million rows
      // are summed in other orders on the two backends, and they cancel
      // most of the value: their rounding shows at 1e-12 there.
      CHECK(close_to(fg, fc, sh.tall ? 1e-10 : 1e-12));
      CHECK(close_to(sg, sc, 1e-12));
      // Without them, the values agree to 1e-12 at any size.
      REQUIRE(dirmn_loglik_sum(cpu.get(), cc.get(), alpha.data(), 1, DIRMN_PARAM_ALPHA, wp, DIRMN_KERNEL, &fc, nullptr,
                               nullptr, nullptr) == DIRMN_SUCCESS);
      REQUIRE(dirmn_loglik_sum(gpu.get(), cg.get(), alpha.data(), 1, DIRMN_PARAM_ALPHA, wp, DIRMN_KERNEL, &fg, nullptr,
                               nullptr, nullptr) == DIRMN_SUCCESS);
      CHECK(close_to(fg, fc, 1e-12));
      for (int64_t v = 0; v < cols; ++v) {
        CHECK(close_to(gg[static_cast<size_t>(v)], gc[static_cast<size_t>(v)], 1e-10, 1e-9));
        CHECK(close_to(dg[static_cast<size_t>(v)], dc[static_cast<size_t>(v)], 1e-12, 1e-9));
      }
    }
    std::vector<double> ac(cols), ag(cols);
    dirmn_fit_result rc, rg;
    std::memset(&rc, 0, sizeof rc);
    std::memset(&rg, 0, sizeof rg);
    rc.size = rg.size = sizeof rc;
    rc.alpha = ac.data();
    rg.alpha = ag.data();
    REQUIRE(dirmn_fit(cpu.get(), cc.get(), nullptr, &rc) == DIRMN_SUCCESS);
    REQUIRE(dirmn_fit(gpu.get(), cg.get(), nullptr, &rg) == DIRMN_SUCCESS);
    CHECK(close_to(rg.loglik_kernel, rc.loglik_kernel, 1e-12));
    for (int64_t v = 0; v < cols; ++v) CHECK(close_to(ag[static_cast<size_t>(v)], ac[static_cast<size_t>(v)], 1e-8));
  }
}

namespace {

// sum_{k<n} 1 / (a + k)^2 in long double: minus the trigamma difference.
long double tpoch_neg_ref(long double a, long n) {
  long double s = 0;
  for (long k = 0; k < n; ++k) s += 1.0L / ((a + k) * (a + k));
  return s;
}

struct ProgressLog {
  std::vector<double> values;
};

int record_progress(int, double loglik, double, void* log) {
  static_cast<ProgressLog*>(log)->values.push_back(loglik);
  return 0;
}

}  // namespace

TEST_CASE("fit: the Hessian at the fit, and progress on the log pmf's scale", "[fit]") {
  const int64_t rows = 150, cols = 6;
  // A column of zeros: its diagonal entry must be 0.
  std::vector<double> x = simulate_dm(rows, {0.4, 0.8, 1.2, 1e-12, 2.0, 2.4}, 60, 33);
  for (int64_t b = 0; b < rows; ++b) x[static_cast<size_t>(b * cols + 3)] = 0.0;
  for (dirmn_backend be : backends_under_test()) {
    INFO("backend " << backend_name(be));
    Context ctx = make_context(be);
    REQUIRE(ctx);
    Counts c = counts_of(ctx.get(), x, rows, cols);
    std::vector<double> hd(static_cast<size_t>(cols), -99.0);
    std::vector<double> a(static_cast<size_t>(cols));
    ProgressLog plain, full;
    dirmn_fit_options o;
    dirmn_fit_options_init(&o);
    o.progress = record_progress;
    o.progress_data = &plain;
    o.flags = DIRMN_KERNEL;
    dirmn_fit_result r;
    std::memset(&r, 0, sizeof r);
    r.size = sizeof r;
    r.alpha = a.data();
    REQUIRE(dirmn_fit(ctx.get(), c.get(), &o, &r) == DIRMN_SUCCESS);
    REQUIRE(r.converged == 1);
    CHECK(hd[0] == -99.0);  // not asked for: not written
    o.flags = 0;  // the default: the log pmf
    o.progress_data = &full;
    o.hessian_diag = hd.data();
    r.hessian_scalar = -99.0;
    REQUIRE(dirmn_fit(ctx.get(), c.get(), &o, &r) == DIRMN_SUCCESS);
    // The same iterations, each shifted by the multinomial coefficients.
    REQUIRE(full.values.size() == plain.values.size());
    const double coef = r.loglik - r.loglik_kernel;
    for (size_t i = 0; i < plain.values.size(); ++i)
      CHECK(close_to(full.values[i] - plain.values[i], coef, 1e-12, 1e-9));
    // The Hessian with respect to alpha at the fitted alpha, independently.
    long double A = 0;
    for (double v : a) A += v;
    long double scalar = 0;
    std::vector<long double> diag(static_cast<size_t>(cols), 0);
    for (int64_t b = 0; b < rows; ++b) {
      long N = 0;
      for (int64_t v = 0; v < cols; ++v) {
        const long n = static_cast<long>(x[static_cast<size_t>(b * cols + v)]);
        N += n;
        if (n > 0) diag[static_cast<size_t>(v)] -= tpoch_neg_ref(a[static_cast<size_t>(v)], n);
      }
      scalar += tpoch_neg_ref(A, N);
    }
    CHECK(a[3] == 0.0);
    CHECK(hd[3] == 0.0);
    for (int64_t v = 0; v < cols; ++v)
      if (v != 3) CHECK(close_to(hd[static_cast<size_t>(v)], static_cast<double>(diag[static_cast<size_t>(v)]), 1e-10));
    CHECK(close_to(r.hessian_scalar, static_cast<double>(scalar), 1e-10));
    // What dirmn_loglik_sum gives at the same alpha (columns without counts
    // at the smallest alpha).
    std::vector<double> at = a;
    at[3] = std::numeric_limits<double>::min();
    std::vector<double> hd_sum(static_cast<size_t>(cols));
    double c_sum = 0.0;
    REQUIRE(dirmn_loglik_sum(ctx.get(), c.get(), at.data(), 1, DIRMN_PARAM_ALPHA, nullptr, DIRMN_KERNEL, nullptr,
                             nullptr, hd_sum.data(), &c_sum) == DIRMN_SUCCESS);
    for (int64_t v = 0; v < cols; ++v) CHECK(hd[static_cast<size_t>(v)] == hd_sum[static_cast<size_t>(v)]);
    CHECK(r.hessian_scalar == c_sum);
  }
}

TEST_CASE("fit: an unknown options flag is refused", "[fit]") {
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  const std::vector<double> x = {1, 2, 3, 4, 0, 1};
  Counts c = counts_of(ctx.get(), x, 2, 3);
  std::vector<double> a(3);
  dirmn_fit_options o;
  dirmn_fit_options_init(&o);
  o.flags = 0x10u;
  dirmn_fit_result r;
  r.size = sizeof r;
  r.alpha = a.data();
  r.std_error_alpha = nullptr;
  r.std_error_log_alpha = nullptr;
  CHECK(dirmn_fit(ctx.get(), c.get(), &o, &r) == DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(dirmn_last_error(ctx.get())).find("flags") != std::string::npos);
  o.flags = DIRMN_FULL | DIRMN_KERNEL;
  CHECK(dirmn_fit(ctx.get(), c.get(), &o, &r) == DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(dirmn_last_error(ctx.get())).find("give one") != std::string::npos);
}

namespace {
int stop_at_once(void*) { return 1; }
}  // namespace

TEST_CASE("fit: an interrupt during the histogram pass is said to be the interrupt's", "[fit]") {
  const int64_t rows = 3000, cols = 400;  // more cells than one chunk: the pass polls
  const auto x = simulate_dm(rows, std::vector<double>(static_cast<size_t>(cols), 0.5), 30, 5);
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  REQUIRE(dirmn_context_set_threads(ctx.get(), 2) == DIRMN_SUCCESS);
  Counts c = counts_of(ctx.get(), x, rows, cols);
  REQUIRE(dirmn_context_set_interrupt(ctx.get(), stop_at_once, nullptr) == DIRMN_SUCCESS);
  std::vector<double> a(static_cast<size_t>(cols), -1.0);
  dirmn_fit_result r;
  std::memset(&r, 0, sizeof r);
  r.size = sizeof r;
  r.alpha = a.data();
  CHECK(dirmn_fit(ctx.get(), c.get(), nullptr, &r) == DIRMN_ERROR_CANCELLED);
  CHECK(std::string(dirmn_last_error(ctx.get())).find("interrupt callback") != std::string::npos);
  CHECK(a[0] == -1.0);  // outputs untouched
}
