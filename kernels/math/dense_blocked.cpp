// dense_blocked.cpp: left-looking blocked Cholesky and triangular solves
// over product blocks.
#include "dense_blocked.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "vector_math.hpp"

namespace dirmn {
namespace math {
namespace {

constexpr int64_t kTile = kGramRows * kGramCols;

int64_t tiles_of(int64_t n, int64_t size) { return (n + size - 1) / size; }

// Solves L Y = B (see forward_solve_blocked); with `triangular`, B is lower
// triangular (B_rc = 0 for c > r, as the identity), and so is Y: the
// products over columns that are zero are left out, which changes no
// entry's sum (they would add exact zeros).
void forward_solve(const double* l, int64_t n, int64_t ld, double* b, int64_t m, int64_t ldb,
                   const TileLoop& loop, bool triangular) {
  for (int64_t j0 = 0; j0 < n; j0 += kPanel) {
    const int64_t j1 = std::min(n, j0 + kPanel), w = j1 - j0;
    // B[j0:j1, :] -= L[j0:j1, 0:j0] Y[0:j0, :]: Y's rows above the panel
    // are final. (Triangular: Y[0:j0, c] is zero for c >= j0.)
    const int64_t cols = triangular ? std::min(m, j0) : m;
    if (j0 > 0 && cols > 0) {
      loop(
          tiles_of(cols, kGramCols),
          [&](int64_t ct) {
            const int64_t c0 = ct * kGramCols;
            double block[kTile];
            for (int64_t r0 = j0; r0 < j1; r0 += kGramRows) {
              // (Triangular: Y[k, c] = 0 for k < c.)
              product_block(l, 1, ld, b, ldb, triangular ? c0 : 0, j0, r0, c0, block);
              for (int64_t r = r0; r < std::min(j1, r0 + kGramRows); ++r)
                for (int64_t c = c0; c < std::min(cols, c0 + kGramCols); ++c)
                  b[r * ldb + c] -= block[(r - r0) * kGramCols + (c - c0)];
            }
          },
          static_cast<double>(w) * static_cast<double>(cols) * static_cast<double>(j0));
    }
    // Within the panel, row by row. (Triangular: columns from j1 on stay 0.)
    const int64_t cols_in = triangular ? std::min(m, j1) : m;
    loop(
        tiles_of(cols_in, kPanel),
        [&](int64_t ct) {
          const int64_t c0 = ct * kPanel, c1 = std::min(cols_in, c0 + kPanel);
          for (int64_t r = j0; r < j1; ++r) {
            const double* lr = l + r * ld;
            double* br = b + r * ldb;
            for (int64_t k = j0; k < r; ++k) {
              const double f = lr[k];
              const double* bk = b + k * ldb;
              for (int64_t c = c0; c < c1; ++c) br[c] -= f * bk[c];
            }
            const double inv = 1.0 / lr[r];
            for (int64_t c = c0; c < c1; ++c) br[c] *= inv;
          }
        },
        static_cast<double>(w) * static_cast<double>(w) * static_cast<double>(cols_in) / 2.0);
  }
}

}  // namespace

void serial_tiles(int64_t n, const std::function<void(int64_t)>& body, double) {
  for (int64_t i = 0; i < n; ++i) body(i);
}

int64_t padded(int64_t n) { return tiles_of(std::max<int64_t>(n, 1), kGramCols) * kGramCols; }

int64_t cholesky_blocked(double* a, int64_t n, int64_t ld, const TileLoop& loop, double rel_tol) {
  std::vector<double> diag0(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) diag0[static_cast<size_t>(j)] = a[j * ld + j];
  // The panel's rows of L left of it, transposed (k x kPanel): the right
  // operand of its update's product blocks. Columns beyond a short last
  // panel stay zero.
  std::vector<double> pt(static_cast<size_t>(std::max<int64_t>(n, 1) * kPanel), 0.0);
  for (int64_t j0 = 0; j0 < n; j0 += kPanel) {
    const int64_t j1 = std::min(n, j0 + kPanel), w = j1 - j0;
    // 1. A[j0:n, j0:j1] -= L[j0:n, 0:j0] L[j0:j1, 0:j0]'.
    if (j0 > 0) {
      for (int64_t k = 0; k < j0; ++k) {
        double* row = pt.data() + k * kPanel;
        for (int64_t c = 0; c < kPanel; ++c) row[c] = c < w ? a[(j0 + c) * ld + k] : 0.0;
      }
      loop(
          tiles_of(n - j0, kGramRows),
          [&](int64_t rt) {
            const int64_t r0 = j0 + rt * kGramRows;
            double block[kTile];
            for (int64_t c0 = 0; c0 < w && j0 + c0 <= r0 + kGramRows - 1; c0 += kGramCols) {
              product_block(a, 1, ld, pt.data(), kPanel, 0, j0, r0, c0, block);
              for (int64_t r = r0; r < std::min(n, r0 + kGramRows); ++r)
                for (int64_t c = j0 + c0; c < std::min({j1, j0 + c0 + kGramCols, r + 1}); ++c)
                  a[r * ld + c] -= block[(r - r0) * kGramCols + (c - j0 - c0)];
            }
          },
          static_cast<double>(n - j0) * static_cast<double>(w) * static_cast<double>(j0));
    }
    // 2. The diagonal block, unblocked.
    for (int64_t j = j0; j < j1; ++j) {
      double* rj = a + j * ld;
      double d = rj[j];
      for (int64_t k = j0; k < j; ++k) d -= rj[k] * rj[k];
      if (!(d > rel_tol * diag0[static_cast<size_t>(j)]) || !(d > 0.0)) return j;
      rj[j] = std::sqrt(d);
      const double inv = 1.0 / rj[j];
      for (int64_t i = j + 1; i < j1; ++i) {
        double* ri = a + i * ld;
        double s = ri[j];
        for (int64_t k = j0; k < j; ++k) s -= ri[k] * rj[k];
        ri[j] = s * inv;
      }
    }
    // 3. The rows below it: L[i, j0:j1] solves L_jj y = A[i, j0:j1].
    if (j1 < n)
      loop(
          tiles_of(n - j1, kPanel),
          [&](int64_t rt) {
            const int64_t i0 = j1 + rt * kPanel, i1 = std::min(n, i0 + kPanel);
            for (int64_t i = i0; i < i1; ++i) {
              double* ri = a + i * ld;
              for (int64_t j = j0; j < j1; ++j) {
                const double* rj = a + j * ld;
                double s = ri[j];
                for (int64_t k = j0; k < j; ++k) s -= ri[k] * rj[k];
                ri[j] = s / rj[j];
              }
            }
          },
          static_cast<double>(n - j1) * static_cast<double>(w) * static_cast<double>(w) / 2.0);
  }
  return -1;
}

void forward_solve_blocked(const double* l, int64_t n, int64_t ld, double* b, int64_t m, int64_t ldb,
                           const TileLoop& loop) {
  forward_solve(l, n, ld, b, m, ldb, loop, false);
}

void cholesky_inverse_blocked(const double* l, int64_t n, int64_t ld, double* inv, int64_t ldi,
                              const TileLoop& loop) {
  const int64_t ly = padded(n);
  std::vector<double> y(static_cast<size_t>(ly * ly), 0.0);
  for (int64_t i = 0; i < n; ++i) y[static_cast<size_t>(i * ly + i)] = 1.0;
  forward_solve(l, n, ld, y.data(), n, ly, loop, true);
  // (L L')^-1 = Y' Y with Y = L^-1 lower triangular: entry (r, c) sums
  // Y_kr Y_kc over k >= max(r, c), kPanel rows of Y at a time (which the
  // cache holds while every tile reads them), in order.
  for (int64_t r = 0; r < n; ++r) std::fill(inv + r * ldi, inv + r * ldi + r + 1, 0.0);
  for (int64_t k0 = 0; k0 < n; k0 += kPanel) {
    const int64_t k1 = std::min(n, k0 + kPanel);
    loop(
        tiles_of(k1, kGramRows),
        [&](int64_t rt) {
          const int64_t r0 = rt * kGramRows;
          double block[kTile];
          for (int64_t c0 = 0; c0 <= r0 + kGramRows - 1 && c0 < k1; c0 += kGramCols) {
            const int64_t from = std::max({k0, r0, c0});
            if (from >= k1) continue;
            product_block(y.data(), ly, 1, y.data(), ly, from, k1, r0, c0, block);
            for (int64_t r = r0; r < std::min(n, r0 + kGramRows); ++r)
              for (int64_t c = c0; c < std::min(r + 1, c0 + kGramCols); ++c)
                inv[r * ldi + c] += block[(r - r0) * kGramCols + (c - c0)];
          }
        },
        static_cast<double>(k1 - k0) * static_cast<double>(k1) * static_cast<double>(k1) / 2.0);
  }
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = r + 1; c < n; ++c) inv[r * ldi + c] = inv[c * ldi + r];
}

}  // namespace math
}  // namespace dirmn
