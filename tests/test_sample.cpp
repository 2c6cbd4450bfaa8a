// test_sample.cpp: dirmn_sample, dirmn_sample_rowwise and dirmn_moments --
// the draws against the exact pmf (chi-square goodness of fit, the pmf from
// the long-double reference formula), their moments against the
// closed-form ones, the extremes of alpha, the same table for any thread
// count, and the checks of every argument -- and the copies out of a counts
// object.
#include <cmath>
#include <map>
#include <vector>

#include "../kernels/math/distributions.hpp"
#include "support.hpp"

using namespace dirmn_test;

namespace {

Counts draw(dirmn_context* ctx, int64_t rows, const std::vector<double>& alpha, int64_t k,
            int64_t size, uint64_t seed, const dirmn_sample_options* base = nullptr) {
  dirmn_sample_options o;
  if (base != nullptr) o = *base; else dirmn_sample_options_init(&o);
  o.seed = seed;
  const int64_t cols = static_cast<int64_t>(alpha.size()) / k;
  dirmn_counts* c = nullptr;
  const dirmn_status s = dirmn_sample(ctx, &c, rows, cols, k, alpha.data(), cols, 1,
                                      DIRMN_PARAM_ALPHA, &size, 0, &o);
  INFO(dirmn_last_error(ctx));
  REQUIRE(s == DIRMN_SUCCESS);
  return Counts(c);
}

std::vector<int64_t> dense_of(dirmn_context* ctx, const dirmn_counts* c) {
  dirmn_counts_info info;
  info.size = sizeof info;
  REQUIRE(dirmn_counts_get_info(c, &info) == DIRMN_SUCCESS);
  std::vector<int64_t> x(static_cast<size_t>(info.rows * info.cols), -1);
  REQUIRE(dirmn_counts_copy_dense(ctx, c, DIRMN_INT64, x.data(), info.cols, 1) == DIRMN_SUCCESS);
  return x;
}

// log of the beta-binomial pmf: the marginal of one category of DM(alpha,
// n), alpha_v against the rest, in long double.
double log_beta_binomial(int64_t x, int64_t n, double a, double b) {
  const long double X = x, N = n;
  return static_cast<double>(lgammal(N + 1) - lgammal(X + 1) - lgammal(N - X + 1) +
                             lgammal(X + a) + lgammal(N - X + b) - lgammal(N + a + b) +
                             lgammal(static_cast<long double>(a) + b) - lgammal(a) - lgammal(b));
}

}  // namespace

TEST_CASE("sample: whole rows of a small DM follow its pmf (chi-square, 10^6 rows)", "[sample]") {
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  const int64_t rows = 1000000;
  // A size of 2 over 3 categories takes the urn, 6 the gamma variates.
  for (const int64_t size : {int64_t{2}, int64_t{6}})
  for (const std::vector<double>& alpha :
       {std::vector<double>{0.5, 1.0, 2.0}, std::vector<double>{0.05, 3.0, 40.0},
        std::vector<double>{1e-3, 1e3, 1.0}}) {
    Counts c = draw(ctx.get(), rows, alpha, 1, size, 11);
    const std::vector<int64_t> x = dense_of(ctx.get(), c.get());
    // Outcome (n0, n1) with n2 = size - n0 - n1.
    std::vector<double> observed(static_cast<size_t>((size + 1) * (size + 1)), 0.0), expected(observed.size(), 0.0);
    for (int64_t b = 0; b < rows; ++b) {
      REQUIRE(x[static_cast<size_t>(b * 3)] + x[static_cast<size_t>(b * 3 + 1)] + x[static_cast<size_t>(b * 3 + 2)] == size);
      observed[static_cast<size_t>(x[static_cast<size_t>(b * 3)] * (size + 1) + x[static_cast<size_t>(b * 3 + 1)])] += 1.0;
    }
    for (int64_t n0 = 0; n0 <= size; ++n0)
      for (int64_t n1 = 0; n0 + n1 <= size; ++n1) {
        const double cell[3] = {static_cast<double>(n0), static_cast<double>(n1), static_cast<double>(size - n0 - n1)};
        expected[static_cast<size_t>(n0 * (size + 1) + n1)] = rows * std::exp(reference_loglik(cell, alpha.data(), 3, true));
      }
    INFO("size " << size << ", alpha " << alpha[0] << ", " << alpha[1] << ", " << alpha[2]);
    CHECK(chi_square_p(observed, expected) > 1e-4);
  }
}

TEST_CASE("sample: both methods give each category's beta-binomial marginal", "[sample]") {
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  // 40 categories: a size of 5 takes the urn, 200 the gamma variates.
  std::vector<double> alpha(40);
  for (size_t v = 0; v < alpha.size(); ++v) alpha[v] = 0.02 * static_cast<double>(v + 1);
  double a_sum = 0.0;
  for (double a : alpha) a_sum += a;
  for (int64_t size : {int64_t{5}, int64_t{200}}) {
    const int64_t rows = 200000;
    Counts c = draw(ctx.get(), rows, alpha, 1, size, 5);
    const std::vector<int64_t> x = dense_of(ctx.get(), c.get());
    for (int64_t v : {int64_t{0}, int64_t{19}, int64_t{39}}) {
      std::vector<double> observed(static_cast<size_t>(size + 1), 0.0), expected(observed.size());
      for (int64_t b = 0; b < rows; ++b) observed[static_cast<size_t>(x[static_cast<size_t>(b * 40 + v)])] += 1.0;
      for (int64_t n = 0; n <= size; ++n)
        expected[static_cast<size_t>(n)] =
            rows * std::exp(log_beta_binomial(n, size, alpha[static_cast<size_t>(v)], a_sum - alpha[static_cast<size_t>(v)]));
      INFO("size " << size << ", category " << v);
      CHECK(chi_square_p(observed, expected) > 1e-4);
    }
  }
}

TEST_CASE("sample: means and variances of wide rows match the moments", "[sample]") {
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  const int64_t cols = 500, rows = 20000;
  std::vector<double> alpha = random_alpha(cols, 1e-3, 10.0, 3);
  for (int64_t size : {int64_t{40}, int64_t{3000}}) {
    Counts c = draw(ctx.get(), rows, alpha, 1, size, 21);
    const std::vector<int64_t> x = dense_of(ctx.get(), c.get());
    std::vector<double> mean(static_cast<size_t>(cols)), var(static_cast<size_t>(cols));
    REQUIRE(dirmn_moments(ctx.get(), cols, alpha.data(), 1, DIRMN_PARAM_ALPHA, static_cast<double>(size),
                          mean.data(), var.data(), nullptr, 0) == DIRMN_SUCCESS);
    int outside = 0;
    for (int64_t v = 0; v < cols; ++v) {
      double m = 0.0;
      for (int64_t b = 0; b < rows; ++b) m += static_cast<double>(x[static_cast<size_t>(b * cols + v)]);
      m /= rows;
      const double z = (m - mean[static_cast<size_t>(v)]) / std::sqrt(var[static_cast<size_t>(v)] / rows);
      if (std::fabs(z) > 4.0) ++outside;
    }
    INFO("size " << size);
    CHECK(outside <= 2);  // of 500 z-scores, ~0.03 beyond 4 expected
  }
}

TEST_CASE("moments: the closed forms in long double", "[sample]") {
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  const std::vector<double> alpha{1e-300, 2.5, 1e12, 0.3};
  const double size = 17.5;
  std::vector<double> mean(4), var(4), cov(4 * 5, -1.0);
  REQUIRE(dirmn_moments(ctx.get(), 4, alpha.data(), 1, DIRMN_PARAM_ALPHA, size, mean.data(), var.data(),
                        cov.data(), 5) == DIRMN_SUCCESS);
  long double a_sum = 0;
  for (double a : alpha) a_sum += a;
  const long double inflate = (size + a_sum) / (1 + a_sum);
  for (int u = 0; u < 4; ++u) {
    const long double pu = alpha[static_cast<size_t>(u)] / a_sum;
    long double others = 0;  // not a_sum - alpha_u, which cancels in long double too
    for (int v = 0; v < 4; ++v)
      if (v != u) others += alpha[static_cast<size_t>(v)];
    const long double qu = others / a_sum;
    CHECK(close_to(mean[static_cast<size_t>(u)], static_cast<double>(size * pu), 1e-14, 1e-300));
    const double want_var = static_cast<double>(size * pu * qu * inflate);
    INFO("category " << u << ": variance " << var[static_cast<size_t>(u)] << ", want " << want_var);
    CHECK(close_to(var[static_cast<size_t>(u)], want_var, 1e-12, 1e-300));
    for (int v = 0; v < 4; ++v) {
      const long double pv = alpha[static_cast<size_t>(v)] / a_sum;
      const double want = u == v ? want_var : static_cast<double>(-size * pu * pv * inflate);
      CHECK(close_to(cov[static_cast<size_t>(u * 5 + v)], want, 1e-12, 1e-300));
    }
    CHECK(cov[static_cast<size_t>(u * 5 + 4)] == -1.0);  // beyond cols: untouched
    for (int v = 0; v < 4; ++v) CHECK(cov[static_cast<size_t>(u * 5 + v)] == cov[static_cast<size_t>(v * 5 + u)]);
  }
  // The dominant category's variance is size p q (size + A) / (1 + A) with
  // q = 2.8 / 1e12, not 0 (1 - p would cancel).
  CHECK(var[2] > 0.0);
  CHECK(close_to(var[2], 17.5 * (2.8 / 1e12) * ((17.5 + 1e12) / (1 + 1e12)), 1e-6));
  // Log alpha gives the same.
  std::vector<double> la(4), mean2(4);
  for (int v = 0; v < 4; ++v) la[static_cast<size_t>(v)] = std::log(alpha[static_cast<size_t>(v)]);
  REQUIRE(dirmn_moments(ctx.get(), 4, la.data(), 1, DIRMN_PARAM_LOG_ALPHA, size, mean2.data(), nullptr,
                        nullptr, 0) == DIRMN_SUCCESS);
  for (int v = 0; v < 4; ++v) CHECK(close_to(mean2[static_cast<size_t>(v)], mean[static_cast<size_t>(v)], 1e-12, 1e-300));
}

TEST_CASE("sample: extreme alphas -- never NaN, all of a row in one category at 1e-300", "[sample]") {
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  SECTION("every alpha 1e-300: each row in one category, spread over the categories") {
    const std::vector<double> alpha(100, 1e-300);
    for (int64_t size : {int64_t{3}, int64_t{1000}, int64_t{2000000000}}) {
      const int64_t rows = 5000;
      Counts c = draw(ctx.get(), rows, alpha, 1, size, 8);
      const std::vector<int64_t> x = dense_of(ctx.get(), c.get());
      std::vector<int> hits(100, 0);
      for (int64_t b = 0; b < rows; ++b) {
        int nonzero = 0;
        for (int64_t v = 0; v < 100; ++v)
          if (x[static_cast<size_t>(b * 100 + v)] != 0) {
            ++nonzero;
            ++hits[static_cast<size_t>(v)];
            CHECK(x[static_cast<size_t>(b * 100 + v)] == size);
          }
        REQUIRE(nonzero == 1);
      }
      // Each category is the one with probability 1/100: 50 of 5000 rows.
      for (int h : hits) CHECK((h > 15 && h < 100));
    }
  }
  SECTION("tiny and huge in one vector") {
    const std::vector<double> alpha{1e-300, 1e12, 1e-300, 1.0, 1e-200};
    Counts c = draw(ctx.get(), 2000, alpha, 1, 1000, 9);
    const std::vector<int64_t> x = dense_of(ctx.get(), c.get());
    int64_t other = 0;
    for (int64_t b = 0; b < 2000; ++b) {
      REQUIRE(x[static_cast<size_t>(b * 5 + 1)] + x[static_cast<size_t>(b * 5 + 3)] == 1000);
      other += x[static_cast<size_t>(b * 5)] + x[static_cast<size_t>(b * 5 + 2)] + x[static_cast<size_t>(b * 5 + 4)];
    }
    CHECK(other == 0);
  }
  SECTION("huge alphas: the multinomial") {
    const std::vector<double> alpha{1e299, 3e299, 6e298};
    const int64_t rows = 100000;
    Counts c = draw(ctx.get(), rows, alpha, 1, 10, 10);
    const std::vector<int64_t> x = dense_of(ctx.get(), c.get());
    double m0 = 0.0;
    for (int64_t b = 0; b < rows; ++b) m0 += static_cast<double>(x[static_cast<size_t>(b * 3)]);
    const double p0 = 1.0 / 4.6, sd = std::sqrt(10 * p0 * (1 - p0) / rows);
    CHECK(std::fabs(m0 / rows - 10 * p0) < 5 * sd);
  }
}

TEST_CASE("sample: the same table for any thread count; rows are a prefix; seeds differ", "[sample]") {
  std::vector<double> alpha = random_alpha(300, 1e-2, 5.0, 4);
  const int64_t sizes[3] = {50, 2000, 7};  // urn, gamma, urn
  std::vector<std::vector<int64_t>> tables;
  for (int threads : {1, 2, 7}) {
    Context ctx = make_context(DIRMN_BACKEND_CPU);
    REQUIRE(ctx);
    REQUIRE(dirmn_context_set_threads(ctx.get(), threads) == DIRMN_SUCCESS);
    dirmn_sample_options o;
    dirmn_sample_options_init(&o);
    o.seed = 99;
    dirmn_counts* c = nullptr;
    std::vector<int64_t> size_of(400);
    for (size_t b = 0; b < size_of.size(); ++b) size_of[b] = sizes[b % 3];
    REQUIRE(dirmn_sample(ctx.get(), &c, 400, 300, 1, alpha.data(), 300, 1, DIRMN_PARAM_ALPHA,
                         size_of.data(), 1, &o) == DIRMN_SUCCESS);
    Counts owned(c);
    tables.push_back(dense_of(ctx.get(), c));
    // The first 100 rows of this table are the table of 100 rows.
    dirmn_counts* c100 = nullptr;
    REQUIRE(dirmn_sample(ctx.get(), &c100, 100, 300, 1, alpha.data(), 300, 1, DIRMN_PARAM_ALPHA,
                         size_of.data(), 1, &o) == DIRMN_SUCCESS);
    Counts owned100(c100);
    const std::vector<int64_t> x100 = dense_of(ctx.get(), c100);
    CHECK(std::equal(x100.begin(), x100.end(), tables.back().begin()));
  }
  CHECK(tables[0] == tables[1]);
  CHECK(tables[0] == tables[2]);
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  Counts other = draw(ctx.get(), 400, alpha, 1, 50, 100);
  Counts same = draw(ctx.get(), 400, alpha, 1, 50, 99);
  CHECK(dense_of(ctx.get(), other.get()) != dense_of(ctx.get(), same.get()));
}

namespace {

// Rows [from, to) of the seed's table drawn as one call with first_row =
// from, on ctx: what a rank of a split table draws.
std::vector<int64_t> draw_block(dirmn_context* ctx, int64_t from, int64_t to, const std::vector<double>& alpha,
                                int64_t k, const std::vector<int64_t>& sizes, std::vector<int64_t>* component) {
  dirmn_sample_options o;
  dirmn_sample_options_init(&o);
  o.seed = 2026;
  o.first_row = from;
  std::vector<int64_t> comp(static_cast<size_t>(to - from), -1);
  if (k > 1) o.component_out = comp.data();
  const int64_t cols = static_cast<int64_t>(alpha.size()) / k;
  dirmn_counts* c = nullptr;
  const dirmn_status s = dirmn_sample(ctx, &c, to - from, cols, k, alpha.data(), cols, 1, DIRMN_PARAM_ALPHA,
                                      sizes.data() + from, 1, &o);
  INFO(dirmn_last_error(ctx));
  REQUIRE(s == DIRMN_SUCCESS);
  Counts owned(c);
  if (component != nullptr) component->insert(component->end(), comp.begin(), comp.end());
  return dense_of(ctx, c);
}

// The whole table's rows as blocks [cut[i], cut[i + 1]) on contexts[i % n].
void check_blocks_make_the_table(const std::vector<dirmn_context*>& contexts) {
  const int64_t rows = 300, cols = 120, k = 3;
  const std::vector<double> alpha = random_alpha(k * cols, 1e-3, 4.0, 8);
  std::vector<int64_t> sizes(static_cast<size_t>(rows));
  for (size_t b = 0; b < sizes.size(); ++b) sizes[b] = b % 3 == 0 ? 30 : 2500;  // urn and gamma rows
  std::vector<int64_t> comp_whole;
  const std::vector<int64_t> whole = draw_block(contexts[0], 0, rows, alpha, k, sizes, &comp_whole);
  for (const std::vector<int64_t>& cut : {std::vector<int64_t>{0, 1, 150, 300}, std::vector<int64_t>{0, 97, 98, 299, 300}}) {
    std::vector<int64_t> joined, comp;
    for (size_t i = 0; i + 1 < cut.size(); ++i) {
      const std::vector<int64_t> part =
          draw_block(contexts[i % contexts.size()], cut[i], cut[i + 1], alpha, k, sizes, &comp);
      joined.insert(joined.end(), part.begin(), part.end());
    }
    CHECK(joined == whole);
    CHECK(comp == comp_whole);
  }
}

}  // namespace

TEST_CASE("sample: first_row -- blocks of rows drawn apart make the table of one call", "[sample]") {
  Context a = make_context(DIRMN_BACKEND_CPU), b = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(dirmn_context_set_threads(b.get(), 3) == DIRMN_SUCCESS);
  check_blocks_make_the_table({a.get(), b.get()});
}

TEST_CASE("cuda: first_row -- blocks drawn on a device and on the host make the host's table",
          "[cuda][sample]") {
  if (!cuda_device_present()) return;
  Context cpu = make_context(DIRMN_BACKEND_CPU), gpu = make_context(DIRMN_BACKEND_CUDA);
  check_blocks_make_the_table({cpu.get(), gpu.get()});
  check_blocks_make_the_table({gpu.get(), cpu.get()});
}

TEST_CASE("sample: mixtures -- components given or drawn from the weights", "[sample]") {
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  // Two components far apart: component 0 puts its counts in category 0.
  const std::vector<double> alpha{50.0, 1.0, 1.0, 1.0, 1.0, 50.0};
  const int64_t rows = 20000;
  std::vector<int64_t> drawn(static_cast<size_t>(rows), -1);
  const double weights[2] = {1.0, 3.0};
  dirmn_sample_options o;
  dirmn_sample_options_init(&o);
  o.mixture_weights = weights;
  o.component_out = drawn.data();
  Counts c = draw(ctx.get(), rows, alpha, 2, 100, 3, &o);
  const std::vector<int64_t> x = dense_of(ctx.get(), c.get());
  int64_t ones = 0;
  for (int64_t b = 0; b < rows; ++b) {
    const int64_t j = drawn[static_cast<size_t>(b)];
    REQUIRE((j == 0 || j == 1));
    ones += j;
    // The row's dominant category tells its component.
    CHECK((x[static_cast<size_t>(b * 3)] > x[static_cast<size_t>(b * 3 + 2)]) == (j == 0));
  }
  const double sd = std::sqrt(rows * 0.75 * 0.25);
  CHECK(std::fabs(static_cast<double>(ones) - 0.75 * rows) < 5 * sd);
  // Given components are followed and reported back.
  std::vector<int64_t> given(static_cast<size_t>(rows)), back(static_cast<size_t>(rows), -1);
  for (int64_t b = 0; b < rows; ++b) given[static_cast<size_t>(b)] = (b / 7) % 2;
  dirmn_sample_options_init(&o);
  o.component = given.data();
  o.component_out = back.data();
  Counts g = draw(ctx.get(), rows, alpha, 2, 100, 4, &o);
  CHECK(back == given);
  const std::vector<int64_t> y = dense_of(ctx.get(), g.get());
  for (int64_t b = 0; b < rows; b += 97)
    CHECK((y[static_cast<size_t>(b * 3)] > y[static_cast<size_t>(b * 3 + 2)]) == (given[static_cast<size_t>(b)] == 0));
}

TEST_CASE("sample_rowwise: each row's own alpha", "[sample]") {
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  const int64_t rows = 40000, cols = 4;
  // Column-major per-row alpha (R's layout): row b's alpha_v at b + v rows.
  std::vector<double> alpha(static_cast<size_t>(rows * cols));
  for (int64_t b = 0; b < rows; ++b)
    for (int64_t v = 0; v < cols; ++v)
      alpha[static_cast<size_t>(b + v * rows)] = b % 2 == 0 ? 1.0 + static_cast<double>(v) : 4.0 - static_cast<double>(v);
  const int64_t size = 30;
  dirmn_counts* c = nullptr;
  REQUIRE(dirmn_sample_rowwise(ctx.get(), &c, rows, cols, alpha.data(), 1, rows, DIRMN_PARAM_ALPHA, &size, 0,
                               nullptr) == DIRMN_SUCCESS);
  Counts owned(c);
  const std::vector<int64_t> x = dense_of(ctx.get(), c);
  for (int parity = 0; parity < 2; ++parity) {
    const double a[4] = {parity == 0 ? 1.0 : 4.0, parity == 0 ? 2.0 : 3.0, parity == 0 ? 3.0 : 2.0, parity == 0 ? 4.0 : 1.0};
    for (int v = 0; v < 4; ++v) {
      double m = 0.0;
      for (int64_t b = parity; b < rows; b += 2) m += static_cast<double>(x[static_cast<size_t>(b * cols + v)]);
      m /= rows / 2;
      const double p = a[v] / 10.0, var = size * p * (1 - p) * (size + 10.0) / 11.0;
      CHECK(std::fabs(m - size * p) < 5 * std::sqrt(var / (rows / 2)));
    }
  }
}

TEST_CASE("sample: bad arguments get a status and a message naming them", "[sample]") {
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  const std::vector<double> alpha{1.0, 2.0, 3.0, 4.0, 5.0, 6.0};
  dirmn_counts* c = nullptr;
  dirmn_error_location loc;
  loc.size = sizeof loc;
  const auto call = [&](int64_t rows, int64_t k, const double* a, const int64_t* sizes, int64_t stride,
                        const dirmn_sample_options* o) {
    return dirmn_sample(ctx.get(), &c, rows, 3, k, a, 3, 1, DIRMN_PARAM_ALPHA, sizes, stride, o);
  };
  int64_t sizes[3] = {5, -1, 7};
  CHECK(call(3, 1, alpha.data(), sizes, 1, nullptr) == DIRMN_ERROR_INVALID_ARGUMENT);
  REQUIRE(dirmn_last_error_location(ctx.get(), &loc) == DIRMN_SUCCESS);
  CHECK(loc.row == 1);
  CHECK(std::string(loc.argument) == "sizes");
  CHECK(last_error(ctx).find("size -1") != std::string::npos);
  sizes[1] = int64_t{1} << 31;
  CHECK(call(3, 1, alpha.data(), sizes, 1, nullptr) == DIRMN_ERROR_INVALID_ARGUMENT);
  const int64_t one = 4;
  const std::vector<double> tiny{1.0, 1e-310, 2.0};
  CHECK(call(3, 1, tiny.data(), &one, 0, nullptr) == DIRMN_ERROR_INVALID_PARAMETER);
  REQUIRE(dirmn_last_error_location(ctx.get(), &loc) == DIRMN_SUCCESS);
  CHECK(loc.index == 1);
  INFO(last_error(ctx));
  CHECK(last_error(ctx).find("outside the sampler's range") != std::string::npos);
  const std::vector<double> bad{1.0, -2.0, 2.0};
  CHECK(call(3, 1, bad.data(), &one, 0, nullptr) == DIRMN_ERROR_INVALID_PARAMETER);
  CHECK(call(0, 1, alpha.data(), &one, 0, nullptr) == DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(call(3, 0, alpha.data(), &one, 0, nullptr) == DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(call(3, 1, nullptr, &one, 0, nullptr) == DIRMN_ERROR_NULL_POINTER);
  CHECK(call(3, 1, alpha.data(), nullptr, 0, nullptr) == DIRMN_ERROR_NULL_POINTER);
  CHECK(call(3, 1, alpha.data(), &one, -1, nullptr) == DIRMN_ERROR_INVALID_ARGUMENT);
  dirmn_sample_options o;
  dirmn_sample_options_init(&o);
  const int64_t comp[3] = {0, 2, 1};
  o.component = comp;
  CHECK(call(3, 2, alpha.data(), &one, 0, &o) == DIRMN_ERROR_INVALID_ARGUMENT);
  REQUIRE(dirmn_last_error_location(ctx.get(), &loc) == DIRMN_SUCCESS);
  CHECK(loc.row == 1);
  dirmn_sample_options_init(&o);
  const double w[2] = {1.0, -1.0};
  o.mixture_weights = w;
  CHECK(call(3, 2, alpha.data(), &one, 0, &o) == DIRMN_ERROR_INVALID_ARGUMENT);
  REQUIRE(dirmn_last_error_location(ctx.get(), &loc) == DIRMN_SUCCESS);
  CHECK(loc.index == 1);
  const double w0[2] = {0.0, 0.0};
  o.mixture_weights = w0;
  CHECK(call(3, 2, alpha.data(), &one, 0, &o) == DIRMN_ERROR_INVALID_ARGUMENT);
  dirmn_sample_options_init(&o);
  o.storage = static_cast<dirmn_storage>(9);
  CHECK(call(3, 1, alpha.data(), &one, 0, &o) == DIRMN_ERROR_INVALID_ARGUMENT);
  dirmn_sample_options_init(&o);
  o.first_row = -1;
  CHECK(call(3, 1, alpha.data(), &one, 0, &o) == DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(last_error(ctx).find("options->first_row (-1) must be >= 0") != std::string::npos);
  o.first_row = INT64_MAX - 2;
  CHECK(call(3, 1, alpha.data(), &one, 0, &o) == DIRMN_ERROR_INVALID_ARGUMENT);
  o.first_row = INT64_MAX - 3;
  REQUIRE(call(3, 1, alpha.data(), &one, 0, &o) == DIRMN_SUCCESS);
  dirmn_counts_destroy(c);
  c = nullptr;
  dirmn_sample_options_init(&o);
  o.size = 2;
  CHECK(call(3, 1, alpha.data(), &one, 0, &o) == DIRMN_ERROR_INVALID_ARGUMENT);
  dirmn_sample_options_init(&o);
  o.component = comp;
  CHECK(dirmn_sample_rowwise(ctx.get(), &c, 2, 3, alpha.data(), 3, 1, DIRMN_PARAM_ALPHA, &one, 0, &o) ==
        DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(c == nullptr);  // nothing made by any failure
  // Moments.
  double m[3];
  CHECK(dirmn_moments(ctx.get(), 3, alpha.data(), 1, DIRMN_PARAM_ALPHA, -1.0, m, nullptr, nullptr, 0) ==
        DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(dirmn_moments(ctx.get(), 3, bad.data(), 1, DIRMN_PARAM_ALPHA, 1.0, m, nullptr, nullptr, 0) ==
        DIRMN_ERROR_INVALID_PARAMETER);
  double cov[9];
  CHECK(dirmn_moments(ctx.get(), 3, alpha.data(), 1, DIRMN_PARAM_ALPHA, 1.0, nullptr, nullptr, cov, 2) ==
        DIRMN_ERROR_INVALID_ARGUMENT);
}

TEST_CASE("counts copy: dense, CSR and CSC out equal the table put in", "[sample][counts]") {
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  const std::vector<double> x = random_table(30, 17, 0.7, 40, 12);
  for (dirmn_storage storage : {DIRMN_STORAGE_DENSE, DIRMN_STORAGE_SPARSE}) {
    Counts c = make_dense(ctx.get(), x, 30, 17, storage);
    // Column-major int32 out, with a leading dimension.
    std::vector<int32_t> d(static_cast<size_t>(32 * 17), -5);
    REQUIRE(dirmn_counts_copy_dense(ctx.get(), c.get(), DIRMN_INT32, d.data(), 1, 32) == DIRMN_SUCCESS);
    for (int64_t b = 0; b < 30; ++b)
      for (int64_t v = 0; v < 17; ++v)
        CHECK(d[static_cast<size_t>(b + v * 32)] == static_cast<int32_t>(x[static_cast<size_t>(b * 17 + v)]));
    CHECK(d[30] == -5);  // the padding of the leading dimension is not written
    dirmn_counts_info info;
    info.size = sizeof info;
    REQUIRE(dirmn_counts_get_info(c.get(), &info) == DIRMN_SUCCESS);
    std::vector<int64_t> ptr(31), idx(static_cast<size_t>(info.nnz));
    std::vector<float> val(static_cast<size_t>(info.nnz));
    REQUIRE(dirmn_counts_copy_sparse(ctx.get(), c.get(), DIRMN_CSR, DIRMN_INDEX_INT64, ptr.data(), idx.data(),
                                     DIRMN_FLOAT32, val.data()) == DIRMN_SUCCESS);
    std::vector<double> back(x.size(), 0.0);
    for (int64_t b = 0; b < 30; ++b)
      for (int64_t i = ptr[static_cast<size_t>(b)]; i < ptr[static_cast<size_t>(b) + 1]; ++i) {
        if (i > ptr[static_cast<size_t>(b)]) CHECK(idx[static_cast<size_t>(i)] > idx[static_cast<size_t>(i - 1)]);
        back[static_cast<size_t>(b * 17 + idx[static_cast<size_t>(i)])] = val[static_cast<size_t>(i)];
      }
    CHECK(back == x);
    std::vector<int32_t> cptr(18), ridx(static_cast<size_t>(info.nnz));
    std::vector<double> cval(static_cast<size_t>(info.nnz));
    REQUIRE(dirmn_counts_copy_sparse(ctx.get(), c.get(), DIRMN_CSC, DIRMN_INDEX_INT32, cptr.data(), ridx.data(),
                                     DIRMN_FLOAT64, cval.data()) == DIRMN_SUCCESS);
    std::fill(back.begin(), back.end(), 0.0);
    for (int64_t v = 0; v < 17; ++v)
      for (int32_t i = cptr[static_cast<size_t>(v)]; i < cptr[static_cast<size_t>(v) + 1]; ++i) {
        if (i > cptr[static_cast<size_t>(v)]) CHECK(ridx[static_cast<size_t>(i)] > ridx[static_cast<size_t>(i - 1)]);
        back[static_cast<size_t>(ridx[static_cast<size_t>(i)] * 17 + v)] = cval[static_cast<size_t>(i)];
      }
    CHECK(back == x);
  }
  SECTION("refusals leave the output as it was") {
    const int64_t big[4] = {1, 3000000000LL, 0, 2};
    dirmn_counts* c = nullptr;
    REQUIRE(dirmn_counts_create_dense(ctx.get(), &c, 2, 2, DIRMN_INT64, big, 2, 1, nullptr) == DIRMN_SUCCESS);
    Counts owned(c);
    std::vector<int32_t> out(4, 7);
    CHECK(dirmn_counts_copy_dense(ctx.get(), c, DIRMN_INT32, out.data(), 2, 1) == DIRMN_ERROR_OVERFLOW);
    dirmn_error_location loc;
    loc.size = sizeof loc;
    REQUIRE(dirmn_last_error_location(ctx.get(), &loc) == DIRMN_SUCCESS);
    CHECK(loc.row == 0);
    CHECK(loc.column == 1);
    CHECK(out == std::vector<int32_t>(4, 7));
    std::vector<int64_t> out64(4);
    REQUIRE(dirmn_counts_copy_dense(ctx.get(), c, DIRMN_INT64, out64.data(), 2, 1) == DIRMN_SUCCESS);
    CHECK(out64[1] == 3000000000LL);
    const double real[2] = {0.5, 2.0};
    dirmn_counts_options co;
    dirmn_counts_options_init(&co);
    co.flags = DIRMN_COUNTS_REAL_VALUED;
    dirmn_counts* r = nullptr;
    REQUIRE(dirmn_counts_create_dense(ctx.get(), &r, 1, 2, DIRMN_FLOAT64, real, 2, 1, &co) == DIRMN_SUCCESS);
    Counts owned_r(r);
    CHECK(dirmn_counts_copy_dense(ctx.get(), r, DIRMN_INT64, out64.data(), 2, 1) == DIRMN_ERROR_INVALID_ARGUMENT);
    CHECK(dirmn_counts_copy_dense(ctx.get(), r, static_cast<dirmn_dtype>(7), out64.data(), 2, 1) ==
          DIRMN_ERROR_INVALID_ARGUMENT);
    CHECK(dirmn_counts_copy_sparse(ctx.get(), r, static_cast<dirmn_sparse_format>(5), DIRMN_INDEX_INT32,
                                   out.data(), out.data(), DIRMN_FLOAT64, out64.data()) == DIRMN_ERROR_INVALID_ARGUMENT);
  }
}

TEST_CASE("cuda: a table drawn on a CUDA context is the CPU's, and tests and copies alike", "[cuda][sample]") {
  if (!cuda_device_present()) return;
  Context cpu = make_context(DIRMN_BACKEND_CPU);
  Context gpu = make_context(DIRMN_BACKEND_CUDA);
  REQUIRE(cpu);
  REQUIRE(gpu);
  const std::vector<double> alpha = random_alpha(300, 1e-2, 5.0, 6);
  std::vector<int64_t> sizes(500);
  for (size_t b = 0; b < sizes.size(); ++b) sizes[b] = b % 2 == 0 ? 40 : 3000;  // urn and gamma rows
  std::vector<std::vector<int64_t>> dense;
  std::vector<dirmn_group_test_result> tests;
  for (dirmn_context* ctx : {cpu.get(), gpu.get()}) {
    dirmn_sample_options o;
    dirmn_sample_options_init(&o);
    o.seed = 44;
    dirmn_counts* c = nullptr;
    REQUIRE(dirmn_sample(ctx, &c, 500, 300, 1, alpha.data(), 300, 1, DIRMN_PARAM_ALPHA, sizes.data(), 1, &o) ==
            DIRMN_SUCCESS);
    Counts owned(c);
    dirmn_counts_info info;
    info.size = sizeof info;
    REQUIRE(dirmn_counts_get_info(c, &info) == DIRMN_SUCCESS);
    CHECK(info.backend == (ctx == gpu.get() ? DIRMN_BACKEND_CUDA : DIRMN_BACKEND_CPU));
    dense.push_back(dense_of(ctx, c));
    std::vector<int64_t> group(500);
    for (size_t b = 0; b < group.size(); ++b) group[b] = static_cast<int64_t>(b % 3);
    dirmn_group_test_options go;
    dirmn_group_test_options_init(&go);
    go.bootstrap = 20;
    dirmn_group_test_result r;
    std::memset(&r, 0, sizeof r);
    r.size = sizeof r;
    REQUIRE(dirmn_test_groups(ctx, c, group.data(), 3, &go, &r) == DIRMN_SUCCESS);
    tests.push_back(r);
    // The device's likelihood of the drawn table agrees with the host's.
    std::vector<double> ll = loglik(ctx, c, 500, alpha, 0);
    CHECK(std::isfinite(ll[0]));
  }
  CHECK(dense[0] == dense[1]);
  CHECK(tests[0].statistic == tests[1].statistic);
  CHECK(tests[0].p_value_bootstrap == tests[1].p_value_bootstrap);
}
