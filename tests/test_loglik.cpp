// test_loglik.cpp: dirmn_loglik and dirmn_loglik_rowwise on every backend
// present: K parameter vectors, any output layout, one vector per row,
// invalid parameters, parameters edited in place between calls, edge rows,
// and a real table. Values are held to the long-double lgamma formula
// (support.hpp), good to ~1e-13 at these sizes; the 50-digit checks of
// extreme alpha are in test_accuracy.cpp, the CUDA kernels' own paths in
// test_loglik_device.cpp.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "support.hpp"

using namespace dirmn_test;

TEST_CASE("K parameter vectors at once, any output layout", "[api][loglik]") {
  const int64_t rows = 29, cols = 17, K = 5;
  const auto x = random_table(rows, cols, 0.3, 20, 11);
  const auto alpha = random_alpha(K * cols, 0.1, 50.0, 12);  // K x cols, row-major
  for (dirmn_backend be : backends_under_test()) {
    INFO("backend " << backend_name(be));
    Context ctx = make_context(be);
    REQUIRE(ctx);
    Counts c = make_dense(ctx.get(), x, rows, cols);
    // Parameters column-major (cols x K as in R's t(alpha)), output row-major
    // rows x K, then parameters row-major with output column-major.
    std::vector<double> alpha_cm(static_cast<size_t>(K * cols));
    for (int64_t j = 0; j < K; ++j)
      for (int64_t v = 0; v < cols; ++v) alpha_cm[static_cast<size_t>(v * K + j)] = alpha[static_cast<size_t>(j * cols + v)];
    std::vector<double> out_rm(static_cast<size_t>(rows * K)), out_cm(static_cast<size_t>(rows * K));
    REQUIRE(dirmn_loglik(ctx.get(), c.get(), K, alpha_cm.data(), 1, K, DIRMN_PARAM_ALPHA, DIRMN_FULL,
                         out_rm.data(), K, 1) == DIRMN_SUCCESS);
    REQUIRE(dirmn_loglik(ctx.get(), c.get(), K, alpha.data(), cols, 1, DIRMN_PARAM_ALPHA, DIRMN_FULL,
                         out_cm.data(), 1, rows) == DIRMN_SUCCESS);
    for (int64_t j = 0; j < K; ++j)
      for (int64_t b = 0; b < rows; ++b) {
        const double want = reference_loglik(&x[static_cast<size_t>(b * cols)], &alpha[static_cast<size_t>(j * cols)], cols, true);
        CHECK(close_to(out_rm[static_cast<size_t>(b * K + j)], want, 1e-12, 1e-10));
        CHECK(close_to(out_cm[static_cast<size_t>(b + j * rows)], want, 1e-12, 1e-10));
      }
    // log alpha gives the same values.
    std::vector<double> log_alpha(alpha.size()), out_log(static_cast<size_t>(rows * K));
    for (size_t i = 0; i < alpha.size(); ++i) log_alpha[i] = std::log(alpha[i]);
    REQUIRE(dirmn_loglik(ctx.get(), c.get(), K, log_alpha.data(), cols, 1, DIRMN_PARAM_LOG_ALPHA,
                         DIRMN_FULL, out_log.data(), 1, rows) == DIRMN_SUCCESS);
    for (size_t i = 0; i < out_log.size(); ++i) CHECK(close_to(out_log[i], out_cm[i], 1e-12, 1e-10));
    // Overlapping output layouts are refused before anything is written.
    std::vector<double> sentinel(static_cast<size_t>(rows * K), 7.0);
    CHECK(dirmn_loglik(ctx.get(), c.get(), K, alpha.data(), cols, 1, DIRMN_PARAM_ALPHA, DIRMN_KERNEL,
                       sentinel.data(), 2, 1) == DIRMN_ERROR_INVALID_ARGUMENT);
    CHECK(dirmn_loglik(ctx.get(), c.get(), K, alpha.data(), cols, 1, DIRMN_PARAM_ALPHA, DIRMN_KERNEL,
                       sentinel.data(), 0, 1) == DIRMN_ERROR_INVALID_ARGUMENT);
    CHECK(dirmn_loglik(ctx.get(), c.get(), 0, alpha.data(), cols, 1, DIRMN_PARAM_ALPHA, DIRMN_KERNEL,
                       sentinel.data(), 1, 1) == DIRMN_ERROR_INVALID_ARGUMENT);
    for (double s : sentinel) CHECK(s == 7.0);
  }
}

TEST_CASE("one parameter vector per row", "[api][loglik]") {
  const int64_t rows = 41, cols = 13;
  const auto x = random_table(rows, cols, 0.5, 30, 21);
  const auto alpha = random_alpha(rows * cols, 0.02, 100.0, 22);  // rows x cols row-major
  for (dirmn_backend be : backends_under_test()) {
    INFO("backend " << backend_name(be));
    Context ctx = make_context(be);
    REQUIRE(ctx);
    Counts c = make_dense(ctx.get(), x, rows, cols, DIRMN_STORAGE_SPARSE);
    // Column-major parameters (R's matrix), padded output.
    std::vector<double> alpha_cm(alpha.size());
    for (int64_t b = 0; b < rows; ++b)
      for (int64_t v = 0; v < cols; ++v) alpha_cm[static_cast<size_t>(b + v * rows)] = alpha[static_cast<size_t>(b * cols + v)];
    std::vector<double> out(static_cast<size_t>(2 * rows), -1.0);
    for (bool full : {false, true}) {
      REQUIRE(dirmn_loglik_rowwise(ctx.get(), c.get(), alpha_cm.data(), 1, rows, DIRMN_PARAM_ALPHA,
                                   full ? DIRMN_FULL : DIRMN_KERNEL, out.data(), 2) == DIRMN_SUCCESS);
      for (int64_t b = 0; b < rows; ++b) {
        const double want = reference_loglik(&x[static_cast<size_t>(b * cols)], &alpha[static_cast<size_t>(b * cols)], cols, full);
        CHECK(close_to(out[static_cast<size_t>(2 * b)], want, 1e-12, 1e-10));
        CHECK(out[static_cast<size_t>(2 * b + 1)] == -1.0);  // the gaps are not written
      }
    }
    // A bad alpha names its row and column.
    alpha_cm[static_cast<size_t>(5 + 3 * rows)] = 0.0;
    CHECK(dirmn_loglik_rowwise(ctx.get(), c.get(), alpha_cm.data(), 1, rows, DIRMN_PARAM_ALPHA, DIRMN_KERNEL,
                               out.data(), 1) == DIRMN_ERROR_INVALID_PARAMETER);
    CHECK(last_error(ctx).find("row 5, index 3") != std::string::npos);
  }
}

TEST_CASE("invalid parameters name vector and index, and change nothing", "[api][loglik]") {
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  Counts c = make_dense(ctx.get(), {1, 2, 3, 0, 0, 4}, 2, 3);
  std::vector<double> out{42.0, 43.0};
  const double inf = std::numeric_limits<double>::infinity();
  const struct {
    std::vector<double> p;
    dirmn_param kind;
    const char* says;
  } cases[] = {{{1, -1, 2}, DIRMN_PARAM_ALPHA, "index 1"},
               {{1, 0, 2}, DIRMN_PARAM_ALPHA, "not positive"},
               {{1, 2, std::nan("")}, DIRMN_PARAM_ALPHA, "NaN"},
               {{inf, 2, 3}, DIRMN_PARAM_ALPHA, "infinite"},
               {{0, 800, 0}, DIRMN_PARAM_LOG_ALPHA, "overflows"},
               {{0, -800, 0}, DIRMN_PARAM_LOG_ALPHA, "underflows"},
               {{0, std::nan(""), 0}, DIRMN_PARAM_LOG_ALPHA, "NaN"},
               {{1e308, 1e308, 1e308}, DIRMN_PARAM_ALPHA, "sum of alpha overflows"}};
  for (const auto& cs : cases) {
    CHECK(dirmn_loglik(ctx.get(), c.get(), 1, cs.p.data(), 3, 1, cs.kind, DIRMN_KERNEL, out.data(), 1, 1) ==
          DIRMN_ERROR_INVALID_PARAMETER);
    INFO(last_error(ctx));
    CHECK(last_error(ctx).find(cs.says) != std::string::npos);
    CHECK(out[0] == 42.0);
    CHECK(out[1] == 43.0);
  }
  const double a[3] = {1, 1, 1};
  CHECK(dirmn_loglik(ctx.get(), c.get(), 1, nullptr, 3, 1, DIRMN_PARAM_ALPHA, DIRMN_KERNEL, out.data(), 1, 1) ==
        DIRMN_ERROR_NULL_POINTER);
  CHECK(dirmn_loglik(ctx.get(), c.get(), 1, a, 3, 1, DIRMN_PARAM_ALPHA, DIRMN_KERNEL, nullptr, 1, 1) ==
        DIRMN_ERROR_NULL_POINTER);
  CHECK(dirmn_loglik(ctx.get(), nullptr, 1, a, 3, 1, DIRMN_PARAM_ALPHA, DIRMN_KERNEL, out.data(), 1, 1) ==
        DIRMN_ERROR_NULL_POINTER);
  CHECK(dirmn_loglik(nullptr, c.get(), 1, a, 3, 1, DIRMN_PARAM_ALPHA, DIRMN_KERNEL, out.data(), 1, 1) ==
        DIRMN_ERROR_NULL_POINTER);
  CHECK(dirmn_loglik(ctx.get(), c.get(), 1, a, 3, 1, static_cast<dirmn_param>(3), DIRMN_KERNEL, out.data(), 1,
                     1) == DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(dirmn_loglik(ctx.get(), c.get(), 1, a, 3, 1, DIRMN_PARAM_ALPHA, 0x100, out.data(), 1, 1) ==
        DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(dirmn_loglik(ctx.get(), c.get(), 1, a, 3, 0, DIRMN_PARAM_ALPHA, DIRMN_KERNEL, out.data(), 1, 1) ==
        DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(dirmn_loglik(ctx.get(), c.get(), 1, a, 3, 1, DIRMN_PARAM_ALPHA, DIRMN_ASYNC, out.data(), 1,
                     1) == DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(dirmn_loglik(ctx.get(), c.get(), 1, a, 3, 1, DIRMN_PARAM_ALPHA, DIRMN_OUTPUT_DEVICE,
                     out.data(), 1, 1) == DIRMN_ERROR_NOT_SUPPORTED);
  CHECK(dirmn_loglik(ctx.get(), c.get(), 1, a, 3, 1, DIRMN_PARAM_ALPHA, DIRMN_PARAMS_DEVICE,
                     out.data(), 1, 1) == DIRMN_ERROR_NOT_SUPPORTED);
  CHECK(last_error(ctx).find("DIRMN_PARAMS_DEVICE needs a CUDA context") != std::string::npos);
  // dirmn_loglik_sum's device flags on the CPU: refused, outputs untouched.
  {
    double value = 42.0, scalar = 43.0;
    std::vector<double> grad(3, 44.0);
    const double w[2] = {1.0, 2.0};
    const struct {
      uint32_t flag;
      const char* says;
    } flag_cases[] = {{DIRMN_PARAMS_DEVICE, "DIRMN_PARAMS_DEVICE needs a CUDA context"},
                      {DIRMN_WEIGHTS_DEVICE, "DIRMN_WEIGHTS_DEVICE needs a CUDA context"},
                      {DIRMN_OUTPUT_DEVICE, "DIRMN_OUTPUT_DEVICE needs a CUDA context"}};
    for (const auto& fc : flag_cases) {
      CHECK(dirmn_loglik_sum(ctx.get(), c.get(), a, 1, DIRMN_PARAM_ALPHA, w, fc.flag, &value,
                             grad.data(), nullptr, &scalar) == DIRMN_ERROR_NOT_SUPPORTED);
      CHECK(last_error(ctx).find(fc.says) != std::string::npos);
    }
    CHECK(value == 42.0);
    CHECK(scalar == 43.0);
    CHECK(grad == std::vector<double>(3, 44.0));
    CHECK(dirmn_loglik_sum(ctx.get(), c.get(), a, 1, DIRMN_PARAM_ALPHA, w, 0x40u, &value,
                           grad.data(), nullptr, &scalar) == DIRMN_ERROR_INVALID_ARGUMENT);
  }
  CHECK(out[0] == 42.0);
  CHECK(out[1] == 43.0);
  // The context stays usable after failures.
  REQUIRE(dirmn_loglik(ctx.get(), c.get(), 1, a, 3, 1, DIRMN_PARAM_ALPHA, DIRMN_KERNEL, out.data(), 1, 1) ==
          DIRMN_SUCCESS);
  CHECK(std::string(dirmn_last_error(ctx.get())).empty());
}

TEST_CASE("parameters edited in place, or given as the other kind, are never stale", "[api][loglik]") {
  // dirmn_loglik remembers the last shared parameters it converted; a call
  // with other values at the same address must see them.
  const int64_t rows = 23, cols = 9, K = 2;
  const auto x = random_table(rows, cols, 0.4, 12, 31);
  for (dirmn_backend be : backends_under_test()) {
    INFO("backend " << backend_name(be));
    Context ctx = make_context(be);
    REQUIRE(ctx);
    Counts c = make_dense(ctx.get(), x, rows, cols);
    // K vectors with stride 2 between entries, inside a padded buffer.
    std::vector<double> buf(static_cast<size_t>(K * 2 * cols), -99.0);
    const auto alpha = random_alpha(K * cols, 0.2, 5.0, 32);  // exp of them stays below 4e6
    for (int64_t j = 0; j < K; ++j)
      for (int64_t v = 0; v < cols; ++v)
        buf[static_cast<size_t>(j * 2 * cols + 2 * v)] = alpha[static_cast<size_t>(j * cols + v)];
    const auto run = [&](dirmn_param kind, std::vector<double>& out) {
      out.assign(static_cast<size_t>(rows * K), 0.0);
      const dirmn_status s =
          dirmn_loglik(ctx.get(), c.get(), K, buf.data(), 2 * cols, 2, kind, DIRMN_KERNEL, out.data(), K, 1);
      INFO(last_error(ctx));
      REQUIRE(s == DIRMN_SUCCESS);
    };
    const auto check = [&](const std::vector<double>& out, const std::vector<double>& a) {
      for (int64_t j = 0; j < K; ++j)
        for (int64_t b = 0; b < rows; ++b) {
          const double want = reference_loglik(&x[static_cast<size_t>(b * cols)], &a[static_cast<size_t>(j * cols)], cols, false);
          INFO("vector " << j << ", row " << b);
          CHECK(close_to(out[static_cast<size_t>(b * K + j)], want, 1e-12, 1e-10));
        }
    };
    std::vector<double> out, again;
    run(DIRMN_PARAM_ALPHA, out);
    check(out, alpha);
    // The padding between entries is not a parameter: changing it changes nothing.
    buf[1] = 12345.0;
    run(DIRMN_PARAM_ALPHA, again);
    CHECK(again == out);
    // One entry of the second vector edited in place.
    auto edited = alpha;
    edited[static_cast<size_t>(cols + 4)] *= 3.0;
    buf[static_cast<size_t>(2 * cols + 8)] = edited[static_cast<size_t>(cols + 4)];
    run(DIRMN_PARAM_ALPHA, out);
    check(out, edited);
    // The same bits read as log alpha.
    std::vector<double> exp_alpha(edited.size());
    for (size_t i = 0; i < edited.size(); ++i) exp_alpha[i] = std::exp(edited[i]);
    run(DIRMN_PARAM_LOG_ALPHA, out);
    check(out, exp_alpha);
    // An edit that is valid in entry 1 and invalid in entry 3 is refused
    // every time it is passed (its conversion stops part-way, after entry 1),
    // and the values before it still evaluate afterwards, with entry 1 as
    // it was.
    run(DIRMN_PARAM_ALPHA, out);
    check(out, edited);
    const double keep1 = buf[2], keep3 = buf[6];
    buf[2] = 2.0 * keep1;
    buf[6] = -1.0;
    std::vector<double> sentinel(static_cast<size_t>(rows * K), 7.0);
    for (int pass = 0; pass < 2; ++pass)
      CHECK(dirmn_loglik(ctx.get(), c.get(), K, buf.data(), 2 * cols, 2, DIRMN_PARAM_ALPHA, DIRMN_KERNEL,
                         sentinel.data(), K, 1) == DIRMN_ERROR_INVALID_PARAMETER);
    for (double v : sentinel) CHECK(v == 7.0);
    buf[2] = keep1;
    buf[6] = keep3;
    run(DIRMN_PARAM_ALPHA, out);
    check(out, edited);
  }
}

TEST_CASE("zero rows, one category and huge counts", "[api][loglik]") {
  for (dirmn_backend be : backends_under_test()) {
    INFO("backend " << backend_name(be));
    Context ctx = make_context(be);
    REQUIRE(ctx);
    SECTION("a row of zeros has log-likelihood 0") {
      const std::vector<double> x{0, 0, 0, 1, 2, 3, 0, 0, 0};
      for (dirmn_storage st : {DIRMN_STORAGE_DENSE, DIRMN_STORAGE_SPARSE}) {
        Counts c = make_dense(ctx.get(), x, 3, 3, st);
        const auto ll = loglik(ctx.get(), c.get(), 3, {0.3, 0.4, 0.5}, DIRMN_FULL);
        CHECK(ll[0] == 0.0);
        CHECK(ll[2] == 0.0);
        CHECK(ll[1] < 0.0);
      }
    }
    SECTION("one category: the density is 1") {
      const std::vector<double> x{5, 0, 123456};
      Counts c = make_dense(ctx.get(), x, 3, 1);
      const auto ll = loglik(ctx.get(), c.get(), 3, {2.5}, DIRMN_FULL);
      for (double v : ll) CHECK(std::fabs(v) < 1e-9);
      const auto ll0 = loglik(ctx.get(), c.get(), 3, {2.5}, 0);
      for (double v : ll0) CHECK(std::fabs(v) < 1e-9);
    }
    SECTION("a one-cell row under a subnormal alpha stays finite") {
      // Found by the fuzzer: the one-cell form's quotient alpha / A
      // underflowed to 0 (log 0 = -Inf). The one-cell log pmf is
      // log rf(a, n) - log rf(A, n); values from mpmath at 30 digits.
      const std::vector<double> x{5, 0, 1, 0};
      const std::vector<double> alpha{4.9406564584124654e-324, 5110.6};
      for (dirmn_storage st : {DIRMN_STORAGE_DENSE, DIRMN_STORAGE_SPARSE}) {
        Counts c = make_dense(ctx.get(), x, 2, 2, st);
        for (uint32_t flags : {static_cast<uint32_t>(DIRMN_KERNEL), static_cast<uint32_t>(DIRMN_FULL)}) {
          const auto ll = loglik(ctx.get(), c.get(), 2, alpha, flags);
          CHECK(ll[0] == Approx(-783.959334700055726824103226836).epsilon(1e-12));
          CHECK(ll[1] == Approx(-752.979144014515941633712903137).epsilon(1e-12));
          std::vector<double> rw(2, 0.0), per_row{alpha[0], alpha[1], alpha[0], alpha[1]};
          REQUIRE(dirmn_loglik_rowwise(ctx.get(), c.get(), per_row.data(), 2, 1, DIRMN_PARAM_ALPHA,
                                       flags, rw.data(), 1) == DIRMN_SUCCESS);
          CHECK(rw[0] == Approx(-783.959334700055726824103226836).epsilon(1e-12));
          CHECK(rw[1] == Approx(-752.979144014515941633712903137).epsilon(1e-12));
        }
      }
    }
    SECTION("counts up to 2^24") {
      const double big = 16777216.0;
      const std::vector<double> x{big, 1, 0, 70000, big - 1, 3, 12, 0, 1e6};
      const std::vector<double> alpha{0.7, 3.0, 1e-3};
      Counts c = make_dense(ctx.get(), x, 3, 3);
      for (bool full : {false, true}) {
        const auto ll = loglik(ctx.get(), c.get(), 3, alpha, full ? DIRMN_FULL : DIRMN_KERNEL);
        check_against_reference(ll, x, alpha, 3, 3, full, 1e-12);
      }
    }
  }
}

TEST_CASE("a real table: BCI tree counts", "[api][data]") {
  // examples/data/bci.csv: 50 plots x 225 species (vegan's BCI data).
  std::ifstream in(std::string(DIRMN_TEST_DATA_DIR) + "/../../examples/data/bci.csv");
  REQUIRE(in.good());
  std::string line;
  std::getline(in, line);  // header
  std::vector<double> x;
  int64_t rows = 0, cols = -1;
  while (std::getline(in, line)) {
    std::stringstream ss(line);
    std::string cell;
    std::getline(ss, cell, ',');  // row name
    int64_t n = 0;
    while (std::getline(ss, cell, ',')) {
      x.push_back(std::stod(cell));
      ++n;
    }
    if (cols < 0) cols = n;
    REQUIRE(n == cols);
    ++rows;
  }
  REQUIRE(rows == 50);
  REQUIRE(cols == 225);
  // A fitted-looking alpha: column means scaled to a total of 50.
  std::vector<double> alpha(static_cast<size_t>(cols), 0.0);
  double total = 0;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      alpha[static_cast<size_t>(j)] += x[static_cast<size_t>(i * cols + j)];
      total += x[static_cast<size_t>(i * cols + j)];
    }
  for (auto& a : alpha) a = 50.0 * (a + 0.5) / (total + 0.5 * static_cast<double>(cols));
  for (dirmn_backend be : backends_under_test()) {
    Context ctx = make_context(be);
    REQUIRE(ctx);
    Counts c = make_dense(ctx.get(), x, rows, cols);
    const auto ll = loglik(ctx.get(), c.get(), rows, alpha, DIRMN_FULL);
    check_against_reference(ll, x, alpha, rows, cols, true, 1e-11);
  }
}
