// test_loglik_device.cpp: the CUDA likelihood kernels: double and fast mode,
// the tensor-core, small-table and many-row paths, row-wise alpha, the
// tables rebuilt when alpha changes, device output and asynchronous calls.
// The kernels take shortcuts the host does not (lookup tables, fixed point,
// float), so they are held to the CPU backend (itself checked against
// 50-digit references in test_accuracy.cpp) within a bound scaled to the
// terms each row is summed from, and to one hand-computed value. Every case
// is [cuda]: ctest runs them behind --require-cuda, which reports them as
// skipped where no device exists.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "cuda_support.hpp"
#include "support.hpp"

using namespace dirmn_test;

namespace {

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
      {64, 3000, 9.0, false, 8},                     // wide: several column panels (CSR: through L2)
      {64, 2000, 9.0, false, 8},                     // CSR: two panels in shared memory
      {300, 9000, 60000.0, false, 16},               // CSR through L2, counts past its cut
      {50, 5000, 16777216.0, false, 32},             // ... and 32-bit counts
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
        for (uint32_t flags : {static_cast<uint32_t>(DIRMN_KERNEL), static_cast<uint32_t>(DIRMN_FULL)}) {
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
        for (uint32_t flags : {static_cast<uint32_t>(DIRMN_KERNEL), static_cast<uint32_t>(DIRMN_FULL)}) {
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
    for (uint32_t flags : {static_cast<uint32_t>(DIRMN_KERNEL), static_cast<uint32_t>(DIRMN_FULL)}) {
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
      // 6000 columns: sparse storage reads its float tables through L2.
      for (int64_t cols : {int64_t{2}, int64_t{50}, int64_t{1024}, int64_t{6000}}) {
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
  REQUIRE(dirmn_loglik(gpu.get(), gc.get(), 19, many.data(), 40, 1, DIRMN_PARAM_ALPHA, DIRMN_KERNEL,
                       colmajor.data(), 1, 30) == DIRMN_SUCCESS);
  for (int64_t i = 0; i < 30; ++i)
    for (int64_t j = 0; j < 19; ++j)
      CHECK(std::fabs(colmajor[static_cast<size_t>(j * 30 + i)] - want[static_cast<size_t>(i * 19 + j)]) <=
            1e-12 * std::max(1.0, std::fabs(want[static_cast<size_t>(i * 19 + j)])));
}

#if defined(DIRMN_TEST_CUDA)

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
                       DIRMN_KERNEL | DIRMN_OUTPUT_DEVICE | DIRMN_ASYNC, o1.p, k, 1) == DIRMN_SUCCESS);
  scratch = a2;  // the caller reuses its parameter array at once
  REQUIRE(dirmn_loglik(gpu.get(), c.get(), k, scratch.data(), 64, 1, DIRMN_PARAM_ALPHA,
                       DIRMN_KERNEL | DIRMN_OUTPUT_DEVICE | DIRMN_ASYNC, o2.p, k, 1) == DIRMN_SUCCESS);
  REQUIRE(dirmn_context_synchronize(gpu.get()) == DIRMN_SUCCESS);
  CHECK(o1.to_host() == w1);
  CHECK(o2.to_host() == w2);
}

TEST_CASE("cuda: parameters, row weights and results in device memory", "[cuda]") {
  // What an autograd layer on the GPU passes: log alpha as a device
  // tensor, per-row results on the device, and for the backward pass the
  // incoming gradient as device row weights and a device gradient. Each
  // call is held to the same call with host arrays, bit for bit.
  if (!dirmn_test::cuda_device_present()) return;
  Context gpu = make(DIRMN_BACKEND_CUDA);
  std::mt19937_64 rng(29);
  const int64_t rows = 500, V = 80;
  for (dirmn_storage storage : {DIRMN_STORAGE_DENSE, DIRMN_STORAGE_SPARSE}) {
    for (double max_count : {9.0, 3000.0}) {
      CAPTURE(storage_name(storage), max_count);
      const Table t = random_table(rng, rows, V, max_count, 0.6);
      Counts c = dense_counts(gpu.get(), t, storage);
      const int64_t k = 2;
      std::vector<double> la = random_alpha(rng, k, V, 0.05, 20.0);
      for (double& x : la) x = std::log(x);
      const std::vector<double> want =
          loglik(gpu.get(), c.get(), rows, k, la, V, DIRMN_KERNEL, DIRMN_PARAM_LOG_ALPHA);
      DeviceArray<double> d_la(la), d_out(static_cast<size_t>(rows * k));
      REQUIRE(dirmn_loglik(gpu.get(), c.get(), k, d_la.p, V, 1, DIRMN_PARAM_LOG_ALPHA,
                           DIRMN_KERNEL | DIRMN_PARAMS_DEVICE | DIRMN_OUTPUT_DEVICE, d_out.p, k,
                           1) == DIRMN_SUCCESS);
      CHECK(d_out.to_host() == want);

      // The backward pass: weights of both signs are the caller's to split;
      // here nonnegative with zeros, and NULL (all 1).
      std::vector<double> w(static_cast<size_t>(rows));
      std::uniform_real_distribution<double> u(0.0, 3.0);
      for (double& x : w) x = u(rng) < 0.5 ? 0.0 : u(rng);
      const std::vector<double> la0(la.begin(), la.begin() + V);
      DeviceArray<double> d_la0(la0), d_w(w), d_grad(static_cast<size_t>(V)),
          d_hd(static_cast<size_t>(V)), d_scalars(2);
      for (const double* wp : {static_cast<const double*>(w.data()), static_cast<const double*>(nullptr)}) {
        double f = 0.0, hs = 0.0;
        std::vector<double> g(static_cast<size_t>(V)), hd(static_cast<size_t>(V));
        REQUIRE(dirmn_loglik_sum(gpu.get(), c.get(), la0.data(), 1, DIRMN_PARAM_LOG_ALPHA, wp,
                                 DIRMN_FULL, &f, g.data(), hd.data(), &hs) == DIRMN_SUCCESS);
        INFO(dirmn_last_error(gpu.get()));
        REQUIRE(dirmn_loglik_sum(gpu.get(), c.get(), d_la0.p, 1, DIRMN_PARAM_LOG_ALPHA,
                                 wp ? d_w.p : nullptr,
                                 DIRMN_FULL | DIRMN_PARAMS_DEVICE | DIRMN_WEIGHTS_DEVICE |
                                     DIRMN_OUTPUT_DEVICE,
                                 d_scalars.p, d_grad.p, d_hd.p, d_scalars.p + 1) == DIRMN_SUCCESS);
        CHECK(d_grad.to_host() == g);
        CHECK(d_hd.to_host() == hd);
        const std::vector<double> sc = d_scalars.to_host();
        CHECK(sc[0] == f);
        CHECK(sc[1] == hs);
      }
    }
  }

  // Bad input in device memory is named as on the host, and nothing is
  // written; host memory flagged as device memory is refused.
  const Table t = random_table(rng, 20, 5, 9.0, 0.3);
  Counts c = dense_counts(gpu.get(), t, DIRMN_STORAGE_AUTO);
  std::vector<double> bad(10, 1.0);
  bad[7] = -2.0;  // vector 1, index 2
  DeviceArray<double> d_bad(bad), d_out(40);
  REQUIRE(cudaMemset(d_out.p, 0xff, d_out.n * sizeof(double)) == cudaSuccess);
  CHECK(dirmn_loglik(gpu.get(), c.get(), 2, d_bad.p, 5, 1, DIRMN_PARAM_ALPHA,
                     DIRMN_PARAMS_DEVICE | DIRMN_OUTPUT_DEVICE, d_out.p, 2, 1) ==
        DIRMN_ERROR_INVALID_PARAMETER);
  CHECK(last_error(gpu).find("vector 1, index 2") != std::string::npos);
  for (double x : d_out.to_host()) CHECK(std::isnan(x));
  std::vector<double> w(20, 1.0);
  w[13] = -1.0;
  const std::vector<double> ones(5, 1.0);
  DeviceArray<double> d_w(w), d_ones(ones), d_g(5);
  REQUIRE(cudaMemset(d_g.p, 0xff, d_g.n * sizeof(double)) == cudaSuccess);
  CHECK(dirmn_loglik_sum(gpu.get(), c.get(), d_ones.p, 1, DIRMN_PARAM_ALPHA, d_w.p,
                         DIRMN_PARAMS_DEVICE | DIRMN_WEIGHTS_DEVICE | DIRMN_OUTPUT_DEVICE, nullptr,
                         d_g.p, nullptr, nullptr) == DIRMN_ERROR_INVALID_PARAMETER);
  CHECK(last_error(gpu).find("row 13") != std::string::npos);
  for (double x : d_g.to_host()) CHECK(std::isnan(x));
  std::vector<double> host_g(5, 7.0);
  CHECK(dirmn_loglik_sum(gpu.get(), c.get(), ones.data(), 1, DIRMN_PARAM_ALPHA, nullptr,
                         DIRMN_OUTPUT_DEVICE, nullptr, host_g.data(), nullptr, nullptr) ==
        DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(last_error(gpu).find("gradient is not device memory") != std::string::npos);
  CHECK(host_g == std::vector<double>(5, 7.0));
  CHECK(dirmn_loglik(gpu.get(), c.get(), 1, ones.data(), 5, 1, DIRMN_PARAM_ALPHA,
                     DIRMN_PARAMS_DEVICE | DIRMN_OUTPUT_DEVICE, d_out.p, 1, 1) ==
        DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(last_error(gpu).find("params is not device memory") != std::string::npos);
  // The context works on after all of it.
  Context cpu = make(DIRMN_BACKEND_CPU);
  Counts cc = dense_counts(cpu.get(), t, DIRMN_STORAGE_AUTO);
  require_close(loglik(gpu.get(), c.get(), 20, 1, ones, 5), loglik(cpu.get(), cc.get(), 20, 1, ones, 5),
                1e-12);
}

#endif  // DIRMN_TEST_CUDA
