// test_dense_blocked.cpp: the blocked Cholesky factor, triangular solves and
// inverse (kernels/math/dense_blocked.cpp, compiled into this binary)
// against long-double sums (the factor reproduces A, the solves their
// right-hand sides, the inverse times A is the identity), their pivot
// reports, and the promise that the threads change no bit.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>

#include "../kernels/math/dense.hpp"
#include "../kernels/math/dense_blocked.hpp"

namespace {

using dirmn::math::padded;

// A symmetric positive-definite n x n matrix, padded, condition about
// 10^4: G G' / n + diag(1e-4 .. 1).
std::vector<double> spd(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z;
  const int64_t ld = padded(n);
  std::vector<double> g(static_cast<size_t>(n * n)), a(static_cast<size_t>(ld * ld), 0.0);
  for (double& v : g) v = z(rng);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c <= r; ++c) {
      long double s = 0;
      for (int64_t k = 0; k < n; ++k) s += static_cast<long double>(g[r * n + k]) * g[c * n + k];
      a[r * ld + c] = a[c * ld + r] = static_cast<double>(s / n);
    }
  for (int64_t r = 0; r < n; ++r) a[r * ld + r] += std::pow(10.0, -4.0 * static_cast<double>(r) / static_cast<double>(std::max<int64_t>(1, n - 1)));
  return a;
}

// Runs the tiles on `threads` std::threads, each taking every threads-th
// tile from the end: an order unlike the serial one.
dirmn::math::TileLoop threaded(int threads) {
  return [threads](int64_t n, const std::function<void(int64_t)>& body, double) {
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        for (int64_t i = n - 1 - t; i >= 0; i -= threads) body(i);
      });
    for (auto& th : pool) th.join();
  };
}

}  // namespace

TEST_CASE("dense blocked: the factor reproduces A, the solves B, the inverse I", "[math][dense]") {
  for (int64_t n : {1, 3, 17, 63, 64, 65, 130, 257}) {
    CAPTURE(n);
    const int64_t ld = padded(n);
    const std::vector<double> a = spd(n, 100 + static_cast<uint64_t>(n));
    std::vector<double> l = a;
    REQUIRE(dirmn::math::cholesky_blocked(l.data(), n, ld, dirmn::math::serial_tiles) == -1);
    // L L' = A, in long double, to rounding (A's entries are O(1)).
    double worst = 0.0;
    for (int64_t r = 0; r < n; ++r)
      for (int64_t c = 0; c <= r; ++c) {
        long double s = 0;
        for (int64_t k = 0; k <= c; ++k) s += static_cast<long double>(l[r * ld + k]) * l[c * ld + k];
        worst = std::max(worst, static_cast<double>(std::fabs(s - a[r * ld + c])));
      }
    CHECK(worst < 1e-13);
    // The unblocked factor agrees to rounding.
    std::vector<double> u(static_cast<size_t>(n * n));
    for (int64_t r = 0; r < n; ++r)
      for (int64_t c = 0; c < n; ++c) u[r * n + c] = a[r * ld + c];
    REQUIRE(dirmn::math::cholesky(u.data(), n) == -1);
    for (int64_t r = 0; r < n; ++r)
      for (int64_t c = 0; c <= r; ++c) CHECK(l[r * ld + c] == Approx(u[r * n + c]).margin(1e-12));

    // L Y = B for 37 right-hand sides: L Y reproduces B.
    const int64_t m = 37, ldb = padded(m);
    std::mt19937_64 rng(7);
    std::normal_distribution<double> z;
    std::vector<double> b(static_cast<size_t>(ld * ldb), 0.0);
    for (int64_t r = 0; r < n; ++r)
      for (int64_t c = 0; c < m; ++c) b[r * ldb + c] = z(rng);
    std::vector<double> y = b;
    dirmn::math::forward_solve_blocked(l.data(), n, ld, y.data(), m, ldb, dirmn::math::serial_tiles);
    worst = 0.0;
    for (int64_t r = 0; r < n; ++r)
      for (int64_t c = 0; c < m; ++c) {
        long double s = 0;
        for (int64_t k = 0; k <= r; ++k) s += static_cast<long double>(l[r * ld + k]) * y[k * ldb + c];
        worst = std::max(worst, static_cast<double>(std::fabs(s - b[r * ldb + c])));
      }
    CHECK(worst < 1e-12);

    // L L' x = b: A x reproduces b.
    std::vector<double> x(static_cast<size_t>(n));
    for (int64_t r = 0; r < n; ++r) x[r] = b[r * ldb];
    dirmn::math::cholesky_solve_ld(l.data(), n, ld, x.data());
    worst = 0.0;
    for (int64_t r = 0; r < n; ++r) {
      long double s = 0;
      for (int64_t k = 0; k < n; ++k) s += static_cast<long double>(a[r * ld + k]) * x[k];
      worst = std::max(worst, static_cast<double>(std::fabs(s - b[r * ldb])));
    }
    CHECK(worst < 1e-11);

    // The inverse: symmetric, and A^-1 A = I to the condition's rounding.
    std::vector<double> inv(static_cast<size_t>(ld * ld), 0.0);
    dirmn::math::cholesky_inverse_blocked(l.data(), n, ld, inv.data(), ld, dirmn::math::serial_tiles);
    worst = 0.0;
    for (int64_t r = 0; r < n; ++r)
      for (int64_t c = 0; c < n; ++c) {
        CHECK(inv[r * ld + c] == inv[c * ld + r]);
        long double s = 0;
        for (int64_t k = 0; k < n; ++k) s += static_cast<long double>(inv[r * ld + k]) * a[k * ld + c];
        worst = std::max(worst, static_cast<double>(std::fabs(s - (r == c ? 1.0L : 0.0L))));
      }
    CHECK(worst < 1e-9);
  }
}

TEST_CASE("dense blocked: threads change no bit", "[math][dense]") {
  const int64_t n = 203, ld = padded(n), m = 50, ldb = padded(m);
  const std::vector<double> a = spd(n, 9);
  std::vector<double> l1 = a, l3 = a;
  REQUIRE(dirmn::math::cholesky_blocked(l1.data(), n, ld, dirmn::math::serial_tiles) == -1);
  REQUIRE(dirmn::math::cholesky_blocked(l3.data(), n, ld, threaded(3)) == -1);
  CHECK(l1 == l3);
  std::vector<double> b(static_cast<size_t>(ld * ldb), 0.0);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < m; ++c) b[r * ldb + c] = std::sin(static_cast<double>(r * m + c));
  std::vector<double> y1 = b, y3 = b;
  dirmn::math::forward_solve_blocked(l1.data(), n, ld, y1.data(), m, ldb, dirmn::math::serial_tiles);
  dirmn::math::forward_solve_blocked(l1.data(), n, ld, y3.data(), m, ldb, threaded(4));
  CHECK(y1 == y3);
  std::vector<double> i1(static_cast<size_t>(ld * ld), 0.0), i3 = i1;
  dirmn::math::cholesky_inverse_blocked(l1.data(), n, ld, i1.data(), ld, dirmn::math::serial_tiles);
  dirmn::math::cholesky_inverse_blocked(l1.data(), n, ld, i3.data(), ld, threaded(2));
  CHECK(i1 == i3);
}

TEST_CASE("dense blocked: the first failing pivot is named", "[math][dense]") {
  const int64_t n = 150, ld = padded(n);
  // Column 97 a combination of columns 3 and 40: its pivot is rounding.
  std::vector<double> a = spd(n, 11);
  std::vector<double> g(static_cast<size_t>(ld * ld), 0.0);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < n; ++c) g[r * ld + c] = a[r * ld + c];
  const auto mix = [&](int64_t r) { return 0.5 * g[r * ld + 3] - 2.0 * g[r * ld + 40]; };
  // B = M A M' with M replacing row 97 by 0.5 e_3 - 2 e_40: rank n - 1.
  std::vector<double> col(static_cast<size_t>(n));
  for (int64_t r = 0; r < n; ++r) col[r] = mix(r);
  const double d = 0.25 * g[3 * ld + 3] - 2.0 * g[3 * ld + 40] + 4.0 * g[40 * ld + 40];
  for (int64_t r = 0; r < n; ++r) a[r * ld + 97] = a[97 * ld + r] = col[r];
  a[97 * ld + 97] = d;
  std::vector<double> l = a;
  CHECK(dirmn::math::cholesky_blocked(l.data(), n, ld, dirmn::math::serial_tiles, 1e-10) == 97);
  // Indefinite: a negative diagonal entry at 130.
  l = spd(n, 12);
  l[130 * ld + 130] = -1.0;
  CHECK(dirmn::math::cholesky_blocked(l.data(), n, ld, dirmn::math::serial_tiles) == 130);
}
