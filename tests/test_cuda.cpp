// test_cuda.cpp: the CUDA backend against the CPU backend (itself checked
// against 50-digit references in test_accuracy.cpp) and hand-computed values.
// Every case is tagged [cuda]; ctest runs them behind --require-cuda, which
// reports them as skipped where no device exists.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "support.hpp"

#if defined(DIRMN_TEST_CUDA)
#include <cuda_runtime.h>
#endif

using dirmn_test::Context;
using dirmn_test::Counts;

namespace {

// A dense table in host memory, row-major doubles.
struct Table {
  int64_t rows = 0;
  int64_t cols = 0;
  std::vector<double> x;
  double& at(int64_t i, int64_t j) { return x[static_cast<size_t>(i * cols + j)]; }
  double at(int64_t i, int64_t j) const { return x[static_cast<size_t>(i * cols + j)]; }
};

// Mostly small counts (which the GPU tabulates) with some up to `max_count`
// (which it evaluates directly), a fraction of zeros, and every seventh row
// entirely zero. `real` adds fractional parts.
Table random_table(std::mt19937_64& rng, int64_t rows, int64_t cols, double max_count,
                   double zero_frac, bool real = false) {
  Table t;
  t.rows = rows;
  t.cols = cols;
  t.x.assign(static_cast<size_t>(rows * cols), 0.0);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::uniform_int_distribution<int> small(1, 9);
  for (int64_t i = 0; i < rows; ++i) {
    if (i % 7 == 3) continue;
    for (int64_t j = 0; j < cols; ++j) {
      if (u(rng) < zero_frac) continue;
      double n = u(rng) < 0.9 ? small(rng) : std::floor(1.0 + u(rng) * (max_count - 1.0));
      if (real) n += std::floor(u(rng) * 4.0) * 0.25;
      t.at(i, j) = n;
    }
  }
  // The largest count appears at least once, so the storage type is known.
  if (rows > 0 && cols > 0) t.at(0, cols - 1) = max_count;
  return t;
}

// Log-uniform alpha in [lo, hi], k vectors of length v.
std::vector<double> random_alpha(std::mt19937_64& rng, int64_t k, int64_t v, double lo, double hi) {
  std::uniform_real_distribution<double> u(std::log(lo), std::log(hi));
  std::vector<double> a(static_cast<size_t>(k * v));
  for (double& x : a) x = std::exp(u(rng));
  return a;
}

Context make(dirmn_backend b) {
  Context c = dirmn_test::make_context(b);
  REQUIRE(c);
  return c;
}

Counts dense_counts(dirmn_context* ctx, const Table& t, dirmn_storage storage, uint32_t flags = 0) {
  dirmn_counts_options o;
  dirmn_counts_options_init(&o);
  o.storage = storage;
  o.flags = flags;
  dirmn_counts* c = nullptr;
  const dirmn_status s = dirmn_counts_create_dense(ctx, &c, t.rows, t.cols, DIRMN_FLOAT64,
                                                   t.x.data(), t.cols, 1, &o);
  INFO(dirmn_last_error(ctx));
  REQUIRE(s == DIRMN_SUCCESS);
  return Counts(c);
}

std::vector<double> loglik(dirmn_context* ctx, const dirmn_counts* c, int64_t rows, int64_t k,
                           const std::vector<double>& params, int64_t v, uint32_t flags = 0,
                           dirmn_param param = DIRMN_PARAM_ALPHA) {
  std::vector<double> out(static_cast<size_t>(rows * k), std::nan(""));
  const dirmn_status s =
      dirmn_loglik(ctx, c, k, params.data(), v, 1, param, flags, out.data(), k, 1);
  INFO(dirmn_last_error(ctx));
  REQUIRE(s == DIRMN_SUCCESS);
  return out;
}

std::vector<double> loglik_rowwise(dirmn_context* ctx, const dirmn_counts* c, int64_t rows,
                                   const std::vector<double>& params, int64_t v,
                                   uint32_t flags = 0, dirmn_param param = DIRMN_PARAM_ALPHA) {
  std::vector<double> out(static_cast<size_t>(rows), std::nan(""));
  const dirmn_status s =
      dirmn_loglik_rowwise(ctx, c, params.data(), v, 1, param, flags, out.data(), 1);
  INFO(dirmn_last_error(ctx));
  REQUIRE(s == DIRMN_SUCCESS);
  return out;
}

// Every element within rel * max(1, |want|, |scale|): relative, with an
// absolute floor below 1 where a relative bound means nothing (a one-column
// table's likelihood is exactly 0). `scale`, where given, is the size of the
// terms the result was formed from (see term_scale).
void require_close(const std::vector<double>& got, const std::vector<double>& want, double rel,
                   const std::vector<double>* scale = nullptr) {
  REQUIRE(got.size() == want.size());
  if (scale) REQUIRE(scale->size() == want.size());
  size_t bad = 0, first = 0;
  double worst = 0.0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double d = std::fabs(got[i] - want[i]);
    const double s = scale ? std::fabs((*scale)[i]) : 0.0;
    const double scaled = d / std::max({1.0, std::fabs(want[i]), s});
    if (!(scaled <= rel)) {
      if (bad == 0) first = i;
      ++bad;
    }
    if (scaled > worst || std::isnan(scaled)) worst = scaled;
  }
  INFO("elements off: " << bad << " of " << got.size() << ", first at " << first << ": got "
                        << (got.empty() ? 0.0 : got[first]) << " want "
                        << (want.empty() ? 0.0 : want[first]) << "; worst scaled error " << worst);
  REQUIRE(bad == 0);
}

// The size of the terms a row's likelihood is summed from, |lgamma(N + A)|
// (row b, vector j at [b * k + j]). A double evaluation of a row can only be
// as precise as these: with counts near 2^24 they reach 10^8 while the
// likelihood is 10^4, so both backends agree to ~1e-12 of the terms, not of
// the result.
std::vector<double> term_scale(const Table& t, const std::vector<double>& alpha, int64_t k) {
  std::vector<double> s(static_cast<size_t>(t.rows * k));
  for (int64_t j = 0; j < k; ++j) {
    double a = 0.0;
    for (int64_t v = 0; v < t.cols; ++v) a += alpha[static_cast<size_t>(j * t.cols + v)];
    for (int64_t b = 0; b < t.rows; ++b) {
      double n = 0.0;
      for (int64_t v = 0; v < t.cols; ++v) n += t.at(b, v);
      s[static_cast<size_t>(b * k + j)] = std::fabs(std::lgamma(n + a)) + std::fabs(std::lgamma(a));
    }
  }
  return s;
}

// The size of the shifted terms a fast-mode row is summed from in float:
// sum_v |lpoch(alpha_v, n_v) - n_v log A| + |lpoch(A, N) - N log A| (row b,
// vector j at [b * k + j]; see kernels/cuda/loglik_types.cuh). Float
// entries carry a relative rounding error of 2^-24 each, so a row whose
// terms cancel is only as precise as these. At large alpha the shifted
// terms are of the size of the result: the scale then adds no slack.
std::vector<double> shifted_scale(const Table& t, const std::vector<double>& alpha, int64_t k) {
  const auto lpoch = [](double a, double n) {
    double s = 0.0;
    for (double i = 0.0; i < n; i += 1.0) s += std::log(a + i);
    return s;
  };
  std::vector<double> s(static_cast<size_t>(t.rows * k));
  for (int64_t j = 0; j < k; ++j) {
    const double* al = alpha.data() + j * t.cols;
    double a = 0.0;
    for (int64_t v = 0; v < t.cols; ++v) a += al[v];
    const double log_a = std::log(a);
    for (int64_t b = 0; b < t.rows; ++b) {
      double n = 0.0, sum = 0.0;
      for (int64_t v = 0; v < t.cols; ++v) {
        const double c = t.at(b, v);
        n += c;
        sum += std::fabs(lpoch(al[v], c) - c * log_a);
      }
      s[static_cast<size_t>(b * k + j)] = sum + std::fabs(lpoch(a, n) - n * log_a);
    }
  }
  return s;
}

std::string storage_name(dirmn_storage s) {
  return s == DIRMN_STORAGE_SPARSE ? "sparse" : s == DIRMN_STORAGE_DENSE ? "dense" : "auto";
}

int value_bits_of(const dirmn_counts* c) {
  dirmn_counts_info info;
  std::memset(&info, 0, sizeof info);
  info.size = sizeof info;
  REQUIRE(dirmn_counts_get_info(c, &info) == DIRMN_SUCCESS);
  return info.value_bits;
}

dirmn_counts_info info_of(const dirmn_counts* c) {
  dirmn_counts_info info;
  std::memset(&info, 0, sizeof info);
  info.size = sizeof info;
  REQUIRE(dirmn_counts_get_info(c, &info) == DIRMN_SUCCESS);
  return info;
}

}  // namespace

TEST_CASE("cuda: a hand-computed likelihood, both precisions", "[cuda]") {
  if (!dirmn_test::cuda_device_present()) return;
  Context gpu = make(DIRMN_BACKEND_CUDA);
  // Counts (1, 2), alpha (1, 1): the DM pmf is 1/4 (uniform over the
  // 4 compositions of 3 into 2 parts), and the multinomial coefficient is 3.
  Table t;
  t.rows = 1;
  t.cols = 2;
  t.x = {1.0, 2.0};
  Counts c = dense_counts(gpu.get(), t, DIRMN_STORAGE_AUTO);
  const std::vector<double> alpha = {1.0, 1.0};
  for (dirmn_precision p : {DIRMN_PRECISION_DOUBLE, DIRMN_PRECISION_FAST}) {
    REQUIRE(dirmn_context_set_precision(gpu.get(), p) == DIRMN_SUCCESS);
    const double tol = p == DIRMN_PRECISION_DOUBLE ? 1e-14 : 1e-6;
    const double ll = loglik(gpu.get(), c.get(), 1, 1, alpha, 2)[0];
    const double full = loglik(gpu.get(), c.get(), 1, 1, alpha, 2, DIRMN_FULL)[0];
    CHECK(std::fabs(ll - std::log(1.0 / 12.0)) <= tol);
    CHECK(std::fabs(full - std::log(0.25)) <= tol);
  }
}

TEST_CASE("cuda: double mode agrees with the CPU backend to 1e-12", "[cuda]") {
  if (!dirmn_test::cuda_device_present()) return;
  Context cpu = make(DIRMN_BACKEND_CPU);
  Context gpu = make(DIRMN_BACKEND_CUDA);
  std::mt19937_64 rng(20261129);

  struct Shape {
    int64_t rows, cols;
    double max_count;
    bool real;
    int bits;  // expected storage width
  };
  const Shape shapes[] = {
      {61, 300, 200.0, false, 8},                    // u8
      {40, 77, 60000.0, false, 16},                  // u16
      {33, 130, 16777216.0, false, 32},              // u32, counts up to 2^24
      {29, 90, 50.0, true, 64},                      // real-valued: f64
      {12, 40, 8589934592.0, false, 64},             // integers past 2^32: f64
      {200, 1, 30.0, false, 8},                      // one column
      {64, 3000, 9.0, false, 8},                     // wide: several column panels
      {3, 17, 9.0, false, 8},                        // a handful of cells
      // Tall: more rows than the one-vector small-table kernel takes on a
      // 132-multiprocessor device, so K = 1 runs the many-row kernel too.
      {9000, 300, 200.0, false, 8},
      {9000, 40, 60000.0, false, 16},
  };
  for (const Shape& sh : shapes) {
    for (dirmn_storage storage : {DIRMN_STORAGE_DENSE, DIRMN_STORAGE_SPARSE}) {
      const double zero_frac = sh.cols == 1 ? 0.2 : 0.6;
      const Table t = random_table(rng, sh.rows, sh.cols, sh.max_count, zero_frac, sh.real);
      const uint32_t cflags = sh.real ? DIRMN_COUNTS_REAL_VALUED : 0u;
      Counts cc = dense_counts(cpu.get(), t, storage, cflags);
      Counts gc = dense_counts(gpu.get(), t, storage, cflags);
      CAPTURE(sh.rows, sh.cols, sh.max_count, sh.real, storage_name(storage));
      CHECK(value_bits_of(gc.get()) == sh.bits);
      CHECK(info_of(gc.get()).backend == DIRMN_BACKEND_CUDA);
      // Several vectors are bundled on dense tables: 3 fills part of a
      // bundle, 5 and 8 one or two bundles of double entries.
      for (int64_t k : {int64_t{1}, int64_t{3}, int64_t{5}, int64_t{8}}) {
        for (uint32_t flags : {0u, static_cast<uint32_t>(DIRMN_FULL)}) {
          CAPTURE(k, flags);
          const std::vector<double> alpha = random_alpha(rng, k, sh.cols, 0.05, 50.0);
          const std::vector<double> want = loglik(cpu.get(), cc.get(), sh.rows, k, alpha, sh.cols, flags);
          const std::vector<double> got = loglik(gpu.get(), gc.get(), sh.rows, k, alpha, sh.cols, flags);
          const std::vector<double> terms = term_scale(t, alpha, k);
          require_close(got, want, 1e-12, &terms);
          // Rows of zeros have likelihood exactly 0 (the table has every
          // seventh row empty).
          for (int64_t i = 3; i < sh.rows; i += 7)
            for (int64_t j = 0; j < k; ++j) CHECK(got[static_cast<size_t>(i * k + j)] == 0.0);
        }
      }
      // log alpha, and extreme alpha (1e-6 .. 1e10).
      const std::vector<double> alpha = random_alpha(rng, 2, sh.cols, 1e-6, 1e10);
      std::vector<double> log_alpha(alpha.size());
      for (size_t i = 0; i < alpha.size(); ++i) log_alpha[i] = std::log(alpha[i]);
      const std::vector<double> terms = term_scale(t, alpha, 2);
      require_close(loglik(gpu.get(), gc.get(), sh.rows, 2, log_alpha, sh.cols, 0, DIRMN_PARAM_LOG_ALPHA),
                    loglik(cpu.get(), cc.get(), sh.rows, 2, log_alpha, sh.cols, 0, DIRMN_PARAM_LOG_ALPHA),
                    1e-12, &terms);
    }
  }
}

TEST_CASE("cuda: several vectors over counts below 16 agree with the CPU backend", "[cuda]") {
  if (!dirmn_test::cuda_device_present()) return;
  // Dense 8-bit tables with counts below 16 and k >= 4 vectors take the
  // tensor-core likelihood (kernels/cuda/tensor_loglik.cu): each vector's
  // log terms in fixed point, summed exactly in integers. The shapes leave
  // rows past the last whole 256-row block and columns past the last whole
  // 32-column slab (one column: a slab of 31 zero columns); largest counts
  // 15, 9, 2 and 1 give a slab 15, 9, 2 and 1 tiles, one per threshold.
  // k = 9 and 17 leave the last group of eight vectors mostly empty.
  Context cpu = make(DIRMN_BACKEND_CPU);
  Context gpu = make(DIRMN_BACKEND_CUDA);
  std::mt19937_64 rng(31);
  struct Shape {
    int64_t rows, cols;
    double top;
  };
  const Shape shapes[] = {{300, 45, 15.0}, {7, 33, 9.0}, {520, 1, 2.0}, {257, 100, 1.0}, {64, 3000, 9.0}};
  const auto clipped = [&](const Shape& sh) {
    Table t = random_table(rng, sh.rows, sh.cols, sh.top, 0.3);
    for (double& x : t.x) x = std::min(x, sh.top);
    return t;
  };
  struct Range {
    double lo, hi;
  };
  for (const Shape& sh : shapes) {
    const Table t = clipped(sh);
    Counts cc = dense_counts(cpu.get(), t, DIRMN_STORAGE_DENSE);
    Counts gc = dense_counts(gpu.get(), t, DIRMN_STORAGE_DENSE);
    REQUIRE(value_bits_of(gc.get()) == 8);
    for (int64_t k : {int64_t{4}, int64_t{8}, int64_t{9}, int64_t{17}}) {
      // Alpha from 1e-30 spans more than the fixed point's 64 nats: those
      // vectors take the lookup tables, and must agree all the same.
      for (const Range r : {Range{0.05, 50.0}, Range{1e-6, 1e10}, Range{1e-30, 1e8}}) {
        const std::vector<double> alpha = random_alpha(rng, k, sh.cols, r.lo, r.hi);
        const std::vector<double> terms = term_scale(t, alpha, k);
        for (uint32_t flags : {0u, static_cast<uint32_t>(DIRMN_FULL)}) {
          CAPTURE(sh.rows, sh.cols, sh.top, k, r.lo, r.hi, flags);
          const std::vector<double> got = loglik(gpu.get(), gc.get(), sh.rows, k, alpha, sh.cols, flags);
          require_close(got, loglik(cpu.get(), cc.get(), sh.rows, k, alpha, sh.cols, flags), 1e-12, &terms);
          for (int64_t i = 3; i < sh.rows; i += 7)
            for (int64_t j = 0; j < k; ++j) CHECK(got[static_cast<size_t>(i * k + j)] == 0.0);
        }
      }
    }
    REQUIRE(dirmn_context_set_precision(gpu.get(), DIRMN_PRECISION_FAST) == DIRMN_SUCCESS);
    for (int64_t k : {int64_t{4}, int64_t{9}}) {
      for (const Range r : {Range{1e3, 1e8}, Range{1e7, 1e8}, Range{0.01, 10.0}}) {
        CAPTURE(sh.rows, sh.cols, sh.top, k, r.lo, r.hi);
        const std::vector<double> alpha = random_alpha(rng, k, sh.cols, r.lo, r.hi);
        const std::vector<double> terms = shifted_scale(t, alpha, k);
        require_close(loglik(gpu.get(), gc.get(), sh.rows, k, alpha, sh.cols, DIRMN_FULL),
                      loglik(cpu.get(), cc.get(), sh.rows, k, alpha, sh.cols, DIRMN_FULL), 1e-6, &terms);
      }
    }
    REQUIRE(dirmn_context_set_precision(gpu.get(), DIRMN_PRECISION_DOUBLE) == DIRMN_SUCCESS);
  }
  {
    // The same alpha over tables of different largest counts: the
    // fixed-point tables depend on the table's largest count (pairs per
    // column) as well as on alpha, so alternating tables must not reuse
    // each other's.
    const Table a = clipped({300, 45, 15.0}), b = clipped({300, 45, 3.0});
    Counts ca = dense_counts(cpu.get(), a, DIRMN_STORAGE_DENSE), cb = dense_counts(cpu.get(), b, DIRMN_STORAGE_DENSE);
    Counts ga = dense_counts(gpu.get(), a, DIRMN_STORAGE_DENSE), gb = dense_counts(gpu.get(), b, DIRMN_STORAGE_DENSE);
    const std::vector<double> alpha = random_alpha(rng, 8, 45, 0.1, 10.0);
    const std::vector<double> ta = term_scale(a, alpha, 8), tb = term_scale(b, alpha, 8);
    for (int round = 0; round < 2; ++round) {
      CAPTURE(round);
      require_close(loglik(gpu.get(), ga.get(), 300, 8, alpha, 45), loglik(cpu.get(), ca.get(), 300, 8, alpha, 45),
                    1e-12, &ta);
      require_close(loglik(gpu.get(), gb.get(), 300, 8, alpha, 45), loglik(cpu.get(), cb.get(), 300, 8, alpha, 45),
                    1e-12, &tb);
    }
  }
}

TEST_CASE("cuda: row-wise alpha agrees with the CPU backend", "[cuda]") {
  if (!dirmn_test::cuda_device_present()) return;
  Context cpu = make(DIRMN_BACKEND_CPU);
  Context gpu = make(DIRMN_BACKEND_CUDA);
  std::mt19937_64 rng(7);
  for (dirmn_storage storage : {DIRMN_STORAGE_DENSE, DIRMN_STORAGE_SPARSE}) {
    const Table t = random_table(rng, 45, 70, 1000.0, 0.5);
    Counts cc = dense_counts(cpu.get(), t, storage);
    Counts gc = dense_counts(gpu.get(), t, storage);
    const std::vector<double> alpha = random_alpha(rng, t.rows, t.cols, 1e-3, 1e6);
    for (uint32_t flags : {0u, static_cast<uint32_t>(DIRMN_FULL)}) {
      CAPTURE(storage_name(storage), flags);
      require_close(loglik_rowwise(gpu.get(), gc.get(), t.rows, alpha, t.cols, flags),
                    loglik_rowwise(cpu.get(), cc.get(), t.rows, alpha, t.cols, flags), 1e-12);
    }
    std::vector<double> log_alpha(alpha.size());
    for (size_t i = 0; i < alpha.size(); ++i) log_alpha[i] = std::log(alpha[i]);
    REQUIRE(dirmn_context_set_precision(gpu.get(), DIRMN_PRECISION_FAST) == DIRMN_SUCCESS);
    require_close(loglik_rowwise(gpu.get(), gc.get(), t.rows, log_alpha, t.cols, 0, DIRMN_PARAM_LOG_ALPHA),
                  loglik_rowwise(cpu.get(), cc.get(), t.rows, log_alpha, t.cols, 0, DIRMN_PARAM_LOG_ALPHA),
                  1e-6);
  }
}

TEST_CASE("cuda: fast mode stays within 1e-6, also at alpha 1e3..1e8", "[cuda]") {
  if (!dirmn_test::cuda_device_present()) return;
  Context cpu = make(DIRMN_BACKEND_CPU);
  Context gpu = make(DIRMN_BACKEND_CUDA);
  REQUIRE(dirmn_context_set_precision(gpu.get(), DIRMN_PRECISION_FAST) == DIRMN_SUCCESS);
  std::mt19937_64 rng(99);
  struct Range {
    double lo, hi;
  };
  for (const Range r : {Range{1e3, 1e8}, Range{1e3, 3e3}, Range{1e7, 1e8}, Range{0.01, 10.0}}) {
    for (dirmn_storage storage : {DIRMN_STORAGE_DENSE, DIRMN_STORAGE_SPARSE}) {
      for (int64_t cols : {int64_t{2}, int64_t{50}, int64_t{1024}}) {
        const Table t = random_table(rng, 50, cols, 9.0, 0.3);
        Counts cc = dense_counts(cpu.get(), t, storage);
        Counts gc = dense_counts(gpu.get(), t, storage);
        // Float bundles hold 4 or 8 vectors: 3 and 5 fill them in part.
        for (int64_t k : {int64_t{1}, int64_t{3}, int64_t{5}, int64_t{8}}) {
          CAPTURE(r.lo, r.hi, storage_name(storage), cols, k);
          const std::vector<double> alpha = random_alpha(rng, k, cols, r.lo, r.hi);
          const std::vector<double> terms = shifted_scale(t, alpha, k);
          require_close(loglik(gpu.get(), gc.get(), t.rows, k, alpha, cols, DIRMN_FULL),
                        loglik(cpu.get(), cc.get(), t.rows, k, alpha, cols, DIRMN_FULL), 1e-6, &terms);
          require_close(loglik(gpu.get(), gc.get(), t.rows, k, alpha, cols),
                        loglik(cpu.get(), cc.get(), t.rows, k, alpha, cols), 1e-6, &terms);
        }
      }
    }
  }
}

TEST_CASE("cuda: tables are rebuilt exactly when alpha or the request changes", "[cuda]") {
  if (!dirmn_test::cuda_device_present()) return;
  Context cpu = make(DIRMN_BACKEND_CPU);
  Context gpu = make(DIRMN_BACKEND_CUDA);
  std::mt19937_64 rng(3);
  const Table t = random_table(rng, 30, 40, 9.0, 0.3);
  const Table t2 = random_table(rng, 30, 40, 200.0, 0.3);
  Counts cc = dense_counts(cpu.get(), t, DIRMN_STORAGE_DENSE);
  Counts gc = dense_counts(gpu.get(), t, DIRMN_STORAGE_DENSE);
  Counts gc2 = dense_counts(gpu.get(), t2, DIRMN_STORAGE_SPARSE);
  Counts cc2 = dense_counts(cpu.get(), t2, DIRMN_STORAGE_SPARSE);
  std::vector<double> a1 = random_alpha(rng, 2, 40, 0.1, 10.0);
  std::vector<double> a2 = a1;
  a2[57] *= 1.0 + 1e-15;  // one bit of one alpha differs
  const auto check = [&](const std::vector<double>& a, int64_t k, dirmn_counts* g, dirmn_counts* c) {
    require_close(loglik(gpu.get(), g, 30, k, a, 40), loglik(cpu.get(), c, 30, k, a, 40), 1e-12);
  };
  check(a1, 2, gc.get(), cc.get());
  check(a2, 2, gc.get(), cc.get());
  check(a1, 2, gc.get(), cc.get());
  check(a1, 1, gc.get(), cc.get());
  check(a1, 2, gc2.get(), cc2.get());  // another table geometry, same alpha
  check(a1, 2, gc.get(), cc.get());
  REQUIRE(dirmn_context_set_precision(gpu.get(), DIRMN_PRECISION_FAST) == DIRMN_SUCCESS);
  require_close(loglik(gpu.get(), gc.get(), 30, 2, a1, 40), loglik(cpu.get(), cc.get(), 30, 2, a1, 40), 1e-6);
  REQUIRE(dirmn_context_set_precision(gpu.get(), DIRMN_PRECISION_DOUBLE) == DIRMN_SUCCESS);
  check(a1, 2, gc.get(), cc.get());
  // Many parameter vectors: several groups per launch, any output layout.
  const std::vector<double> many = random_alpha(rng, 19, 40, 0.1, 10.0);
  const std::vector<double> want = loglik(cpu.get(), cc.get(), 30, 19, many, 40);
  std::vector<double> colmajor(30 * 19, std::nan(""));
  REQUIRE(dirmn_loglik(gpu.get(), gc.get(), 19, many.data(), 40, 1, DIRMN_PARAM_ALPHA, 0,
                       colmajor.data(), 1, 30) == DIRMN_SUCCESS);
  for (int64_t i = 0; i < 30; ++i)
    for (int64_t j = 0; j < 19; ++j)
      CHECK(std::fabs(colmajor[static_cast<size_t>(j * 30 + i)] - want[static_cast<size_t>(i * 19 + j)]) <=
            1e-12 * std::max(1.0, std::fabs(want[static_cast<size_t>(i * 19 + j)])));
}

TEST_CASE("cuda: contexts, counts and backends are not mixed up", "[cuda]") {
  if (!dirmn_test::cuda_device_present()) return;
  Context cpu = make(DIRMN_BACKEND_CPU);
  Context g1 = make(DIRMN_BACKEND_CUDA);
  Context g2 = make(DIRMN_BACKEND_CUDA);
  std::mt19937_64 rng(5);
  const Table t = random_table(rng, 10, 6, 9.0, 0.2);
  Counts c1 = dense_counts(g1.get(), t, DIRMN_STORAGE_AUTO);
  Counts cc = dense_counts(cpu.get(), t, DIRMN_STORAGE_AUTO);
  const std::vector<double> alpha(6, 1.5);
  std::vector<double> out(10, 7.0);
  CHECK(dirmn_loglik(g2.get(), c1.get(), 1, alpha.data(), 6, 1, DIRMN_PARAM_ALPHA, 0, out.data(), 1, 1) ==
        DIRMN_ERROR_WRONG_CONTEXT);
  CHECK(dirmn_loglik(g1.get(), cc.get(), 1, alpha.data(), 6, 1, DIRMN_PARAM_ALPHA, 0, out.data(), 1, 1) ==
        DIRMN_ERROR_WRONG_CONTEXT);
  CHECK(dirmn_loglik(cpu.get(), c1.get(), 1, alpha.data(), 6, 1, DIRMN_PARAM_ALPHA, 0, out.data(), 1, 1) ==
        DIRMN_ERROR_WRONG_CONTEXT);
  CHECK(std::string(dirmn_last_error(cpu.get())).find("another context") != std::string::npos);
  CHECK(out == std::vector<double>(10, 7.0));
  CHECK(dirmn_loglik(cpu.get(), cc.get(), 1, alpha.data(), 6, 1, DIRMN_PARAM_ALPHA,
                     DIRMN_OUTPUT_DEVICE, out.data(), 1, 1) == DIRMN_ERROR_NOT_SUPPORTED);
  // Host output memory passed as device output is refused, not faulted on,
  // and the context keeps working.
  CHECK(dirmn_loglik(g1.get(), c1.get(), 1, alpha.data(), 6, 1, DIRMN_PARAM_ALPHA,
                     DIRMN_OUTPUT_DEVICE, out.data(), 1, 1) == DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(dirmn_last_error(g1.get())).find("device memory") != std::string::npos);
  require_close(loglik(g1.get(), c1.get(), 10, 1, alpha, 6), loglik(cpu.get(), cc.get(), 10, 1, alpha, 6), 1e-12);
  // Row totals and info of a CUDA counts object.
  std::vector<double> totals(10, -1.0);
  REQUIRE(dirmn_counts_row_totals(g1.get(), c1.get(), totals.data()) == DIRMN_SUCCESS);
  for (int64_t i = 0; i < 10; ++i) {
    double s = 0.0;
    for (int64_t j = 0; j < 6; ++j) s += t.at(i, j);
    CHECK(totals[static_cast<size_t>(i)] == s);
  }
  const dirmn_counts_info info = info_of(c1.get());
  CHECK(info.backend == DIRMN_BACKEND_CUDA);
  CHECK(info.device == 0);
  // Counts outlive their context.
  g1.reset();
  c1.reset();
}

#if defined(DIRMN_TEST_CUDA)

namespace {

// Device memory for a test, freed on scope exit.
template <class T>
struct DeviceArray {
  T* p = nullptr;
  size_t n = 0;
  explicit DeviceArray(size_t count) : n(count) {
    REQUIRE(cudaMalloc(reinterpret_cast<void**>(&p), std::max<size_t>(count, 1) * sizeof(T)) == cudaSuccess);
  }
  DeviceArray(const std::vector<T>& host) : DeviceArray(host.size()) {
    REQUIRE(cudaMemcpy(p, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice) == cudaSuccess);
  }
  ~DeviceArray() { cudaFree(p); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  std::vector<T> to_host() const {
    std::vector<T> h(n);
    REQUIRE(cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost) == cudaSuccess);
    return h;
  }
};

// The table laid out with strides (rs, cs) in an array of `extent` elements;
// cells outside the table hold `pad`.
template <class T>
std::vector<T> strided(const Table& t, int64_t rs, int64_t cs, int64_t extent, T pad) {
  std::vector<T> a(static_cast<size_t>(extent), pad);
  for (int64_t i = 0; i < t.rows; ++i)
    for (int64_t j = 0; j < t.cols; ++j) a[static_cast<size_t>(i * rs + j * cs)] = static_cast<T>(t.at(i, j));
  return a;
}

Counts wrap_dense(dirmn_context* ctx, int64_t rows, int64_t cols, dirmn_dtype dt, const void* p,
                  int64_t rs, int64_t cs, dirmn_storage storage = DIRMN_STORAGE_AUTO,
                  uint32_t flags = 0) {
  dirmn_counts_options o;
  dirmn_counts_options_init(&o);
  o.storage = storage;
  o.flags = flags;
  dirmn_counts* c = nullptr;
  const dirmn_status s = dirmn_counts_wrap_device(ctx, &c, rows, cols, dt, p, rs, cs, &o);
  INFO(dirmn_last_error(ctx));
  REQUIRE(s == DIRMN_SUCCESS);
  return Counts(c);
}

// The CSR form of a table, with the given index and value types.
template <class I, class V>
struct Csr {
  std::vector<I> ptr, idx;
  std::vector<V> val;
};

template <class I, class V>
Csr<I, V> to_csr(const Table& t, bool reverse_rows, bool explicit_zeros) {
  Csr<I, V> c;
  c.ptr.push_back(0);
  for (int64_t i = 0; i < t.rows; ++i) {
    std::vector<int64_t> cols;
    for (int64_t j = 0; j < t.cols; ++j)
      if (t.at(i, j) != 0.0 || (explicit_zeros && (i + j) % 5 == 0)) cols.push_back(j);
    if (reverse_rows) std::reverse(cols.begin(), cols.end());
    for (int64_t j : cols) {
      c.idx.push_back(static_cast<I>(j));
      c.val.push_back(static_cast<V>(t.at(i, j)));
    }
    c.ptr.push_back(static_cast<I>(c.idx.size()));
  }
  return c;
}

template <class I, class V>
dirmn_status wrap_csr(dirmn_context* ctx, dirmn_counts** out, const Table& t, const Csr<I, V>& h,
                      dirmn_index_type it, dirmn_dtype vt, uint32_t flags = 0,
                      dirmn_storage storage = DIRMN_STORAGE_AUTO) {
  DeviceArray<I> dp(h.ptr), di(h.idx);
  DeviceArray<V> dv(h.val);
  dirmn_counts_options o;
  dirmn_counts_options_init(&o);
  o.flags = flags;
  o.storage = storage;
  return dirmn_counts_wrap_device_sparse(ctx, out, t.rows, t.cols, static_cast<int64_t>(h.idx.size()), it,
                                         dp.p, di.p, vt, dv.p, &o);
}

}  // namespace

TEST_CASE("cuda: device output, asynchronous calls and synchronize", "[cuda]") {
  if (!dirmn_test::cuda_device_present()) return;
  Context gpu = make(DIRMN_BACKEND_CUDA);
  std::mt19937_64 rng(11);
  const Table t = random_table(rng, 300, 64, 40.0, 0.4);
  Counts c = dense_counts(gpu.get(), t, DIRMN_STORAGE_AUTO);
  const int64_t k = 3;
  const std::vector<double> alpha = random_alpha(rng, k, 64, 0.1, 5.0);
  const std::vector<double> want = loglik(gpu.get(), c.get(), 300, k, alpha, 64, DIRMN_FULL);

  // Column-major device output with a leading dimension of 301.
  const int64_t ld = 301;
  DeviceArray<double> d(static_cast<size_t>(ld * k));
  REQUIRE(cudaMemset(d.p, 0xff, d.n * sizeof(double)) == cudaSuccess);  // NaN everywhere
  for (uint32_t extra : {0u, static_cast<uint32_t>(DIRMN_ASYNC)}) {
    CAPTURE(extra);
    REQUIRE(dirmn_loglik(gpu.get(), c.get(), k, alpha.data(), 64, 1, DIRMN_PARAM_ALPHA,
                         DIRMN_FULL | DIRMN_OUTPUT_DEVICE | extra, d.p, 1, ld) == DIRMN_SUCCESS);
    if (extra) REQUIRE(dirmn_context_synchronize(gpu.get()) == DIRMN_SUCCESS);
    const std::vector<double> h = d.to_host();
    for (int64_t i = 0; i < 300; ++i)
      for (int64_t j = 0; j < k; ++j)
        CHECK(h[static_cast<size_t>(j * ld + i)] == want[static_cast<size_t>(i * k + j)]);
    // The padding row of each column is left alone.
    for (int64_t j = 0; j < k; ++j) CHECK(std::isnan(h[static_cast<size_t>(j * ld + 300)]));
  }
  // Back-to-back asynchronous calls with different alpha: each result is
  // that call's, so parameters were staged before the call returned.
  std::vector<double> a1 = alpha, a2 = alpha;
  for (double& x : a2) x *= 2.0;
  const std::vector<double> w1 = loglik(gpu.get(), c.get(), 300, k, a1, 64);
  const std::vector<double> w2 = loglik(gpu.get(), c.get(), 300, k, a2, 64);
  DeviceArray<double> o1(300 * k), o2(300 * k);
  std::vector<double> scratch = a1;
  REQUIRE(dirmn_loglik(gpu.get(), c.get(), k, scratch.data(), 64, 1, DIRMN_PARAM_ALPHA,
                       DIRMN_OUTPUT_DEVICE | DIRMN_ASYNC, o1.p, k, 1) == DIRMN_SUCCESS);
  scratch = a2;  // the caller reuses its parameter array at once
  REQUIRE(dirmn_loglik(gpu.get(), c.get(), k, scratch.data(), 64, 1, DIRMN_PARAM_ALPHA,
                       DIRMN_OUTPUT_DEVICE | DIRMN_ASYNC, o2.p, k, 1) == DIRMN_SUCCESS);
  REQUIRE(dirmn_context_synchronize(gpu.get()) == DIRMN_SUCCESS);
  CHECK(o1.to_host() == w1);
  CHECK(o2.to_host() == w2);
}

TEST_CASE("cuda: the caller's stream is used, reported and released", "[cuda]") {
  if (!dirmn_test::cuda_device_present()) return;
  Context gpu = make(DIRMN_BACKEND_CUDA);
  void* own = nullptr;
  REQUIRE(dirmn_context_get_stream(gpu.get(), &own) == DIRMN_SUCCESS);
  CHECK(own != nullptr);
  cudaStream_t s = nullptr;
  REQUIRE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
  REQUIRE(dirmn_context_set_stream(gpu.get(), s) == DIRMN_SUCCESS);
  void* got = nullptr;
  REQUIRE(dirmn_context_get_stream(gpu.get(), &got) == DIRMN_SUCCESS);
  CHECK(got == static_cast<void*>(s));

  std::mt19937_64 rng(13);
  const Table t = random_table(rng, 500, 33, 9.0, 0.3);
  Counts c = dense_counts(gpu.get(), t, DIRMN_STORAGE_AUTO);
  const std::vector<double> alpha = random_alpha(rng, 1, 33, 0.5, 2.0);
  const std::vector<double> want = loglik(gpu.get(), c.get(), 500, 1, alpha, 33);
  DeviceArray<double> d(500);
  // Work the caller queued first (poisoning the output) is ordered before
  // dirmn's on the same stream.
  REQUIRE(cudaMemsetAsync(d.p, 0xff, 500 * sizeof(double), s) == cudaSuccess);
  REQUIRE(dirmn_loglik(gpu.get(), c.get(), 1, alpha.data(), 33, 1, DIRMN_PARAM_ALPHA,
                       DIRMN_OUTPUT_DEVICE | DIRMN_ASYNC, d.p, 1, 1) == DIRMN_SUCCESS);
  REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
  CHECK(d.to_host() == want);

  REQUIRE(dirmn_context_set_stream(gpu.get(), nullptr) == DIRMN_SUCCESS);
  REQUIRE(dirmn_context_get_stream(gpu.get(), &got) == DIRMN_SUCCESS);
  CHECK(got == own);
  REQUIRE(cudaStreamDestroy(s) == cudaSuccess);
  CHECK(loglik(gpu.get(), c.get(), 500, 1, alpha, 33) == want);

  Context cpu = make(DIRMN_BACKEND_CPU);
  CHECK(dirmn_context_set_stream(cpu.get(), nullptr) == DIRMN_ERROR_NOT_SUPPORTED);
  CHECK(dirmn_context_get_stream(cpu.get(), &got) == DIRMN_ERROR_NOT_SUPPORTED);
}

TEST_CASE("cuda: wrapped dense device arrays match host tables", "[cuda]") {
  if (!dirmn_test::cuda_device_present()) return;
  Context cpu = make(DIRMN_BACKEND_CPU);
  Context gpu = make(DIRMN_BACKEND_CUDA);
  std::mt19937_64 rng(17);
  const Table t = random_table(rng, 41, 36, 300.0, 0.5);
  Counts cc = dense_counts(cpu.get(), t, DIRMN_STORAGE_AUTO);
  const std::vector<double> alpha = random_alpha(rng, 2, 36, 0.05, 20.0);
  const std::vector<double> want = loglik(cpu.get(), cc.get(), 41, 2, alpha, 36, DIRMN_FULL);
  // One parameter vector takes the small-table kernel, two the many-row one.
  const std::vector<double> alpha1(alpha.begin(), alpha.begin() + 36);
  const std::vector<double> want1 = loglik(cpu.get(), cc.get(), 41, 1, alpha1, 36, DIRMN_FULL);
  const auto check = [&](const dirmn_counts* g, int bits) {
    CHECK(value_bits_of(g) == bits);
    require_close(loglik(gpu.get(), g, 41, 2, alpha, 36, DIRMN_FULL), want, 1e-12);
    require_close(loglik(gpu.get(), g, 41, 1, alpha1, 36, DIRMN_FULL), want1, 1e-12);
    std::vector<double> totals(41);
    REQUIRE(dirmn_counts_row_totals(gpu.get(), g, totals.data()) == DIRMN_SUCCESS);
    for (int64_t i = 0; i < 41; ++i) {
      double s = 0.0;
      for (int64_t j = 0; j < 36; ++j) s += t.at(i, j);
      CHECK(totals[static_cast<size_t>(i)] == s);
    }
    const dirmn_counts_info info = info_of(g);
    CHECK(info.nnz > 0);
    CHECK(info.max_count == 300.0);
  };
  SECTION("float32, row-major, padded rows: referenced in place, vector reads") {
    DeviceArray<float> d(strided<float>(t, 40, 1, 41 * 40, -1.0f));
    Counts g = wrap_dense(gpu.get(), 41, 36, DIRMN_FLOAT32, d.p, 40, 1);
    check(g.get(), 0);
  }
  SECTION("float32, misaligned start: referenced in place, scalar reads") {
    DeviceArray<float> d(strided<float>(t, 37, 1, 41 * 37 + 1, -1.0f));
    // Offsetting by one element breaks 16-byte alignment; the array then
    // starts at element 1 with the table packed from there.
    std::vector<float> shifted(d.n, -1.0f);
    for (int64_t i = 0; i < 41; ++i)
      for (int64_t j = 0; j < 36; ++j) shifted[static_cast<size_t>(1 + i * 37 + j)] = static_cast<float>(t.at(i, j));
    REQUIRE(cudaMemcpy(d.p, shifted.data(), shifted.size() * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess);
    Counts g = wrap_dense(gpu.get(), 41, 36, DIRMN_FLOAT32, d.p + 1, 37, 1);
    check(g.get(), 0);
  }
  SECTION("int32, row-major: referenced in place") {
    DeviceArray<int32_t> d(strided<int32_t>(t, 36, 1, 41 * 36, 0));
    Counts g = wrap_dense(gpu.get(), 41, 36, DIRMN_INT32, d.p, 36, 1);
    check(g.get(), 0);
  }
  SECTION("float64, column-major with a leading dimension: copied") {
    DeviceArray<double> d(strided<double>(t, 1, 45, 45 * 36, -1.0));
    Counts g = wrap_dense(gpu.get(), 41, 36, DIRMN_FLOAT64, d.p, 1, 45);
    check(g.get(), 16);
  }
  SECTION("int32, column-major: copied") {
    DeviceArray<int32_t> d(strided<int32_t>(t, 1, 41, 41 * 36, 0));
    Counts g = wrap_dense(gpu.get(), 41, 36, DIRMN_INT32, d.p, 1, 41);
    check(g.get(), 16);
  }
  SECTION("float32 asked to be sparse: copied into CSR") {
    DeviceArray<float> d(strided<float>(t, 36, 1, 41 * 36, 0.0f));
    Counts g = wrap_dense(gpu.get(), 41, 36, DIRMN_FLOAT32, d.p, 36, 1, DIRMN_STORAGE_SPARSE);
    CHECK(info_of(g.get()).storage == DIRMN_STORAGE_SPARSE);
    check(g.get(), 16);
  }
  SECTION("fast mode on a wrapped array") {
    DeviceArray<float> d(strided<float>(t, 36, 1, 41 * 36, 0.0f));
    Counts g = wrap_dense(gpu.get(), 41, 36, DIRMN_FLOAT32, d.p, 36, 1);
    REQUIRE(dirmn_context_set_precision(gpu.get(), DIRMN_PRECISION_FAST) == DIRMN_SUCCESS);
    require_close(loglik(gpu.get(), g.get(), 41, 2, alpha, 36, DIRMN_FULL), want, 1e-6);
  }
}

TEST_CASE("cuda: wrapped real-valued and wide device arrays", "[cuda]") {
  if (!dirmn_test::cuda_device_present()) return;
  Context cpu = make(DIRMN_BACKEND_CPU);
  Context gpu = make(DIRMN_BACKEND_CUDA);
  std::mt19937_64 rng(19);
  {
    const Table t = random_table(rng, 20, 30, 12.0, 0.3, true);
    Counts cc = dense_counts(cpu.get(), t, DIRMN_STORAGE_AUTO, DIRMN_COUNTS_REAL_VALUED);
    const std::vector<double> alpha = random_alpha(rng, 1, 30, 0.1, 10.0);
    for (dirmn_dtype dt : {DIRMN_FLOAT32, DIRMN_FLOAT64}) {
      CAPTURE(dt);
      DeviceArray<float> f(strided<float>(t, 32, 1, 20 * 32, 0.0f));
      DeviceArray<double> dd(strided<double>(t, 30, 1, 20 * 30, 0.0));
      Counts g = dt == DIRMN_FLOAT32 ? wrap_dense(gpu.get(), 20, 30, dt, f.p, 32, 1, DIRMN_STORAGE_AUTO, DIRMN_COUNTS_REAL_VALUED)
                              : wrap_dense(gpu.get(), 20, 30, dt, dd.p, 30, 1, DIRMN_STORAGE_AUTO, DIRMN_COUNTS_REAL_VALUED);
      require_close(loglik(gpu.get(), g.get(), 20, 1, alpha, 30, DIRMN_FULL),
                    loglik(cpu.get(), cc.get(), 20, 1, alpha, 30, DIRMN_FULL), 1e-12);
    }
  }
  {
    // Wide enough for column panels, in place and copied.
    const Table t = random_table(rng, 40, 2500, 9.0, 0.5);
    Counts cc = dense_counts(cpu.get(), t, DIRMN_STORAGE_AUTO);
    const std::vector<double> alpha = random_alpha(rng, 3, 2500, 0.1, 10.0);
    const std::vector<double> want = loglik(cpu.get(), cc.get(), 40, 3, alpha, 2500);
    DeviceArray<float> f(strided<float>(t, 2500, 1, 40 * 2500, 0.0f));
    Counts g = wrap_dense(gpu.get(), 40, 2500, DIRMN_FLOAT32, f.p, 2500, 1);
    require_close(loglik(gpu.get(), g.get(), 40, 3, alpha, 2500), want, 1e-12);
    Counts gs = wrap_dense(gpu.get(), 40, 2500, DIRMN_FLOAT32, f.p, 2500, 1, DIRMN_STORAGE_SPARSE);
    require_close(loglik(gpu.get(), gs.get(), 40, 3, alpha, 2500), want, 1e-12);
    const std::vector<double> rw = random_alpha(rng, 40, 2500, 0.1, 10.0);
    require_close(loglik_rowwise(gpu.get(), g.get(), 40, rw, 2500), loglik_rowwise(cpu.get(), cc.get(), 40, rw, 2500),
                  1e-12);
  }
  {
    // The small-table kernel (one vector, few rows, one panel) on rows longer
    // than a lane's loads in flight: float32 cells keep 4 vectors of 4 per
    // lane of a warp, 512 columns a round, so 700 columns take a full round
    // and a partial one. Counts all below the tables' cut, and past it.
    for (double top : {9.0, 300.0}) {
      CAPTURE(top);
      const Table t = random_table(rng, 30, 700, top, 0.5);
      Counts cc = dense_counts(cpu.get(), t, DIRMN_STORAGE_AUTO);
      const std::vector<double> alpha = random_alpha(rng, 1, 700, 0.1, 10.0);
      DeviceArray<float> f(strided<float>(t, 700, 1, 30 * 700, 0.0f));
      Counts g = wrap_dense(gpu.get(), 30, 700, DIRMN_FLOAT32, f.p, 700, 1);
      require_close(loglik(gpu.get(), g.get(), 30, 1, alpha, 700, DIRMN_FULL),
                    loglik(cpu.get(), cc.get(), 30, 1, alpha, 700, DIRMN_FULL), 1e-12);
    }
  }
  {
    // Tall float32 and int32 arrays in place: one parameter vector on the
    // many-row kernel (past the small-table kernel's rows on 132
    // multiprocessors), in both precisions.
    const Table t = random_table(rng, 9000, 36, 9.0, 0.5);
    Counts cc = dense_counts(cpu.get(), t, DIRMN_STORAGE_AUTO);
    const std::vector<double> alpha = random_alpha(rng, 1, 36, 0.1, 10.0);
    const std::vector<double> want = loglik(cpu.get(), cc.get(), 9000, 1, alpha, 36, DIRMN_FULL);
    DeviceArray<float> f(strided<float>(t, 36, 1, 9000 * 36, 0.0f));
    DeviceArray<int32_t> i(strided<int32_t>(t, 36, 1, 9000 * 36, 0));
    Counts gf = wrap_dense(gpu.get(), 9000, 36, DIRMN_FLOAT32, f.p, 36, 1);
    Counts gi = wrap_dense(gpu.get(), 9000, 36, DIRMN_INT32, i.p, 36, 1);
    require_close(loglik(gpu.get(), gf.get(), 9000, 1, alpha, 36, DIRMN_FULL), want, 1e-12);
    require_close(loglik(gpu.get(), gi.get(), 9000, 1, alpha, 36, DIRMN_FULL), want, 1e-12);
    REQUIRE(dirmn_context_set_precision(gpu.get(), DIRMN_PRECISION_FAST) == DIRMN_SUCCESS);
    require_close(loglik(gpu.get(), gf.get(), 9000, 1, alpha, 36, DIRMN_FULL), want, 1e-6);
  }
}

TEST_CASE("cuda: wrapped CSR device arrays match host tables", "[cuda]") {
  if (!dirmn_test::cuda_device_present()) return;
  Context cpu = make(DIRMN_BACKEND_CPU);
  Context gpu = make(DIRMN_BACKEND_CUDA);
  std::mt19937_64 rng(23);
  const Table t = random_table(rng, 57, 80, 70000.0, 0.7);
  Counts cc = dense_counts(cpu.get(), t, DIRMN_STORAGE_AUTO);
  const std::vector<double> alpha = random_alpha(rng, 2, 80, 0.05, 20.0);
  const std::vector<double> want = loglik(cpu.get(), cc.get(), 57, 2, alpha, 80, DIRMN_FULL);
  // The wrap runs first (a call's arguments are evaluated in no fixed
  // order), then check() takes the handle it made.
  const auto check = [&](dirmn_status s, dirmn_counts*& made, dirmn_storage expect) {
    Counts g(made);
    made = nullptr;
    INFO(dirmn_last_error(gpu.get()));
    REQUIRE(s == DIRMN_SUCCESS);
    const dirmn_counts_info info = info_of(g.get());
    CHECK(info.storage == expect);
    CHECK(info.value_bits == 32);
    require_close(loglik(gpu.get(), g.get(), 57, 2, alpha, 80, DIRMN_FULL), want, 1e-12);
  };
  dirmn_counts* raw = nullptr;
  {
    const auto h = to_csr<int32_t, int32_t>(t, false, false);
    const dirmn_status s = wrap_csr(gpu.get(), &raw, t, h, DIRMN_INDEX_INT32, DIRMN_INT32, 0, DIRMN_STORAGE_SPARSE);
    check(s, raw, DIRMN_STORAGE_SPARSE);
  }
  {
    // Unsorted columns and explicit zeros: sorted and dropped on the device.
    const auto h = to_csr<int64_t, float>(t, true, true);
    const dirmn_status s = wrap_csr(gpu.get(), &raw, t, h, DIRMN_INDEX_INT64, DIRMN_FLOAT32);
    check(s, raw, DIRMN_STORAGE_SPARSE);
  }
  {
    const auto h = to_csr<int32_t, double>(t, true, false);
    const dirmn_status s = wrap_csr(gpu.get(), &raw, t, h, DIRMN_INDEX_INT32, DIRMN_FLOAT64, 0, DIRMN_STORAGE_DENSE);
    check(s, raw, DIRMN_STORAGE_DENSE);
  }
  {
    // An empty table.
    Table z;
    z.rows = 4;
    z.cols = 3;
    z.x.assign(12, 0.0);
    const auto h = to_csr<int32_t, float>(z, false, false);
    dirmn_counts* e = nullptr;
    REQUIRE(wrap_csr(gpu.get(), &e, z, h, DIRMN_INDEX_INT32, DIRMN_FLOAT32) == DIRMN_SUCCESS);
    Counts g(e);
    CHECK(loglik(gpu.get(), g.get(), 4, 1, std::vector<double>(3, 2.0), 3, DIRMN_FULL) ==
          std::vector<double>(4, 0.0));
  }
}

TEST_CASE("cuda: bad device data is reported with where and what", "[cuda]") {
  if (!dirmn_test::cuda_device_present()) return;
  Context gpu = make(DIRMN_BACKEND_CUDA);
  const auto msg = [&] { return std::string(dirmn_last_error(gpu.get())); };
  Table t;
  t.rows = 6;
  t.cols = 9;
  t.x.assign(54, 1.0);
  dirmn_counts* raw = nullptr;
  SECTION("dense: negative, NaN, infinite, non-integral cells") {
    Table b = t;
    b.at(3, 5) = -2.0;
    b.at(4, 1) = -7.0;  // later in row-major order: not the one reported
    DeviceArray<int32_t> di(strided<int32_t>(b, 9, 1, 54, 0));
    CHECK(dirmn_counts_wrap_device(gpu.get(), &raw, 6, 9, DIRMN_INT32, di.p, 9, 1, nullptr) ==
          DIRMN_ERROR_INVALID_COUNTS);
    CHECK(raw == nullptr);
    CHECK(msg().find("row 3, column 5") != std::string::npos);
    CHECK(msg().find("-2") != std::string::npos);
    CHECK(msg().find("negative") != std::string::npos);
    // Column-major: the first bad cell in memory order is (4, 1).
    DeviceArray<int32_t> dc(strided<int32_t>(b, 1, 6, 54, 0));
    CHECK(dirmn_counts_wrap_device(gpu.get(), &raw, 6, 9, DIRMN_INT32, dc.p, 1, 6, nullptr) ==
          DIRMN_ERROR_INVALID_COUNTS);
    CHECK(msg().find("row 4, column 1") != std::string::npos);

    Table n = t;
    n.at(2, 2) = std::nan("");
    DeviceArray<float> dn(strided<float>(n, 9, 1, 54, 0.0f));
    CHECK(dirmn_counts_wrap_device(gpu.get(), &raw, 6, 9, DIRMN_FLOAT32, dn.p, 9, 1, nullptr) ==
          DIRMN_ERROR_INVALID_COUNTS);
    CHECK(msg().find("NaN") != std::string::npos);
    Table inf = t;
    inf.at(5, 8) = HUGE_VAL;
    DeviceArray<double> dinf(strided<double>(inf, 9, 1, 54, 0.0));
    CHECK(dirmn_counts_wrap_device(gpu.get(), &raw, 6, 9, DIRMN_FLOAT64, dinf.p, 9, 1, nullptr) ==
          DIRMN_ERROR_INVALID_COUNTS);
    CHECK(msg().find("row 5, column 8") != std::string::npos);
    CHECK(msg().find("infinite") != std::string::npos);
    Table frac = t;
    frac.at(1, 0) = 2.5;
    DeviceArray<double> df(strided<double>(frac, 9, 1, 54, 0.0));
    CHECK(dirmn_counts_wrap_device(gpu.get(), &raw, 6, 9, DIRMN_FLOAT64, df.p, 9, 1, nullptr) ==
          DIRMN_ERROR_INVALID_COUNTS);
    CHECK(msg().find("not an integer") != std::string::npos);
    CHECK(raw == nullptr);
  }
  SECTION("dense: arguments") {
    DeviceArray<float> d(54);
    std::vector<float> host(54, 1.0f);
    CHECK(dirmn_counts_wrap_device(gpu.get(), &raw, 6, 9, DIRMN_FLOAT32, host.data(), 9, 1, nullptr) ==
          DIRMN_ERROR_INVALID_ARGUMENT);
    CHECK(msg().find("not device memory") != std::string::npos);
    CHECK(dirmn_counts_wrap_device(gpu.get(), &raw, 6, 9, DIRMN_INT64, d.p, 9, 1, nullptr) ==
          DIRMN_ERROR_NOT_SUPPORTED);
    CHECK(dirmn_counts_wrap_device(gpu.get(), &raw, 0, 9, DIRMN_FLOAT32, d.p, 9, 1, nullptr) ==
          DIRMN_ERROR_INVALID_ARGUMENT);
    CHECK(dirmn_counts_wrap_device(gpu.get(), &raw, 6, 9, DIRMN_FLOAT32, d.p, 0, 1, nullptr) ==
          DIRMN_ERROR_INVALID_ARGUMENT);
    CHECK(dirmn_counts_wrap_device(gpu.get(), &raw, 6, 9, DIRMN_FLOAT32, nullptr, 9, 1, nullptr) ==
          DIRMN_ERROR_NULL_POINTER);
    CHECK(dirmn_counts_wrap_device(gpu.get(), nullptr, 6, 9, DIRMN_FLOAT32, d.p, 9, 1, nullptr) ==
          DIRMN_ERROR_NULL_POINTER);
    CHECK(raw == nullptr);
  }
  SECTION("CSR: pointers, indices, repeats and values") {
    auto h = to_csr<int32_t, float>(t, false, false);
    auto bad = h;
    bad.ptr[3] = bad.ptr[2] - 1;
    CHECK(wrap_csr(gpu.get(), &raw, t, bad, DIRMN_INDEX_INT32, DIRMN_FLOAT32) == DIRMN_ERROR_INVALID_ARGUMENT);
    CHECK(msg().find("ptr[3]") != std::string::npos);
    bad = h;
    bad.ptr[0] = 1;
    CHECK(wrap_csr(gpu.get(), &raw, t, bad, DIRMN_INDEX_INT32, DIRMN_FLOAT32) == DIRMN_ERROR_INVALID_ARGUMENT);
    CHECK(msg().find("ptr[0]") != std::string::npos);
    bad = h;
    bad.idx[20] = 9;  // row 2 (9 entries a row)
    CHECK(wrap_csr(gpu.get(), &raw, t, bad, DIRMN_INDEX_INT32, DIRMN_FLOAT32) == DIRMN_ERROR_INVALID_ARGUMENT);
    CHECK(msg().find("entry 20 (row 2)") != std::string::npos);
    bad = h;
    bad.idx[30] = bad.idx[31];  // row 3 names column 4 twice
    CHECK(wrap_csr(gpu.get(), &raw, t, bad, DIRMN_INDEX_INT32, DIRMN_FLOAT32) == DIRMN_ERROR_INVALID_ARGUMENT);
    CHECK(msg().find("row 3, column 4") != std::string::npos);
    CHECK(msg().find("more than once") != std::string::npos);
    bad = h;
    bad.val[40] = -3.0f;  // row 4, column 4
    CHECK(wrap_csr(gpu.get(), &raw, t, bad, DIRMN_INDEX_INT32, DIRMN_FLOAT32) == DIRMN_ERROR_INVALID_COUNTS);
    CHECK(msg().find("row 4, column 4") != std::string::npos);
    CHECK(msg().find("-3") != std::string::npos);
    CHECK(raw == nullptr);
    // The context is still usable.
    CHECK(wrap_csr(gpu.get(), &raw, t, h, DIRMN_INDEX_INT32, DIRMN_FLOAT32) == DIRMN_SUCCESS);
    Counts g(raw);
    CHECK(info_of(g.get()).nnz == 54);
  }
}

TEST_CASE("cuda: an absurd table fails with OUT_OF_MEMORY and the context survives", "[cuda]") {
  if (!dirmn_test::cuda_device_present()) return;
  Context cpu = make(DIRMN_BACKEND_CPU);
  Context gpu = make(DIRMN_BACKEND_CUDA);
  // 2^20 x 2^22 cells over a small array (overlapping strides are valid
  // input): a dense copy needs 4 TiB.
  DeviceArray<double> d(size_t{1} << 23);
  REQUIRE(cudaMemset(d.p, 0, d.n * sizeof(double)) == cudaSuccess);
  dirmn_counts_options o;
  dirmn_counts_options_init(&o);
  o.storage = DIRMN_STORAGE_DENSE;
  dirmn_counts* raw = nullptr;
  CHECK(dirmn_counts_wrap_device(gpu.get(), &raw, int64_t{1} << 20, int64_t{1} << 22, DIRMN_FLOAT64, d.p,
                                 1, 1, &o) == DIRMN_ERROR_OUT_OF_MEMORY);
  CHECK(raw == nullptr);
  CHECK(std::string(dirmn_last_error(gpu.get())).find("out of memory") != std::string::npos);
  std::mt19937_64 rng(29);
  const Table t = random_table(rng, 25, 12, 9.0, 0.3);
  Counts g = dense_counts(gpu.get(), t, DIRMN_STORAGE_AUTO);
  Counts c = dense_counts(cpu.get(), t, DIRMN_STORAGE_AUTO);
  const std::vector<double> alpha = random_alpha(rng, 1, 12, 0.5, 2.0);
  require_close(loglik(gpu.get(), g.get(), 25, 1, alpha, 12), loglik(cpu.get(), c.get(), 25, 1, alpha, 12), 1e-12);
}

// Kept apart ([hog]) so memory checkers, which track every allocation, can
// leave it out.
TEST_CASE("cuda: a full device gives OUT_OF_MEMORY, nothing leaks, and work resumes", "[cuda][hog]") {
  if (!dirmn_test::cuda_device_present()) return;
  Context cpu = make(DIRMN_BACKEND_CPU);
  Context gpu = make(DIRMN_BACKEND_CUDA);
  std::mt19937_64 rng(31);
  const Table t = random_table(rng, 4000, 512, 9.0, 0.0);  // 2 MB compact
  Counts c = dense_counts(cpu.get(), t, DIRMN_STORAGE_DENSE);
  const std::vector<double> alpha = random_alpha(rng, 1, 512, 0.5, 2.0);
  const std::vector<double> want = loglik(cpu.get(), c.get(), 4000, 1, alpha, 512);
  size_t free_b = 0, total_b = 0;
  REQUIRE(cudaMemGetInfo(&free_b, &total_b) == cudaSuccess);
  // Take all but 256 KB of what is free, in large blocks.
  std::vector<void*> hog;
  const size_t keep = size_t{1} << 18;
  size_t block = size_t{1} << 32;
  while (block >= keep) {
    size_t f = 0, tt = 0;
    REQUIRE(cudaMemGetInfo(&f, &tt) == cudaSuccess);
    if (f <= keep + block) {
      block /= 2;
      continue;
    }
    void* p = nullptr;
    if (cudaMalloc(&p, block) != cudaSuccess) {
      (void)cudaGetLastError();
      block /= 2;
      continue;
    }
    hog.push_back(p);
  }
  dirmn_counts* raw = nullptr;
  const dirmn_status s = dirmn_counts_create_dense(gpu.get(), &raw, t.rows, t.cols, DIRMN_FLOAT64,
                                                   t.x.data(), t.cols, 1, nullptr);
  for (void* p : hog) cudaFree(p);
  CHECK(s == DIRMN_ERROR_OUT_OF_MEMORY);
  CHECK(raw == nullptr);
  CHECK(std::string(dirmn_last_error(gpu.get())).find("out of memory") != std::string::npos);
  size_t after = 0;
  REQUIRE(cudaMemGetInfo(&after, &total_b) == cudaSuccess);
  CHECK(after + (size_t{16} << 20) >= free_b);  // the failed call left nothing allocated
  Counts g = dense_counts(gpu.get(), t, DIRMN_STORAGE_DENSE);
  require_close(loglik(gpu.get(), g.get(), 4000, 1, alpha, 512), want, 1e-12);
}

#endif  // DIRMN_TEST_CUDA
