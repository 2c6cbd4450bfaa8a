// dense.hpp: small dense symmetric positive-definite algebra on the host --
// Cholesky factor, solve and inverse -- for the regression's Newton steps
// and covariances (a few thousand unknowns at most: the whole matrix is
// formed), and its least-squares start (p x p).
//
// Matrices are row-major n x n; only the lower triangle is read, and the
// factor L (A = L L^T) overwrites it.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

namespace dirmn {
namespace math {

// Factors A in place. Returns -1 on success, else the first column whose
// pivot is not positive (A is not positive definite, or column j is a
// combination of the columns before it to within `rel_tol` of its
// diagonal: the pivot, the part of A_jj that the earlier columns do not
// explain, falls below rel_tol A_jj).
inline int64_t cholesky(double* a, int64_t n, double rel_tol = 0.0) {
  for (int64_t j = 0; j < n; ++j) {
    double* rj = a + j * n;
    const double ajj = rj[j];
    double d = ajj;
    for (int64_t k = 0; k < j; ++k) d -= rj[k] * rj[k];
    if (!(d > rel_tol * ajj) || !(d > 0.0)) return j;
    const double l = std::sqrt(d);
    rj[j] = l;
    const double inv = 1.0 / l;
    for (int64_t i = j + 1; i < n; ++i) {
      double* ri = a + i * n;
      double s = ri[j];
      for (int64_t k = 0; k < j; ++k) s -= ri[k] * rj[k];
      ri[j] = s * inv;
    }
  }
  return -1;
}

// Solves L L^T x = b in place (b: n entries) with a factor whose rows are
// ld apart (one right-hand side: n^2 work).
inline void cholesky_solve_ld(const double* l, int64_t n, int64_t ld, double* b) {
  for (int64_t i = 0; i < n; ++i) {
    const double* ri = l + i * ld;
    double s = b[i];
    for (int64_t k = 0; k < i; ++k) s -= ri[k] * b[k];
    b[i] = s / ri[i];
  }
  for (int64_t i = n - 1; i >= 0; --i) {
    double s = b[i];
    for (int64_t k = i + 1; k < n; ++k) s -= l[k * ld + i] * b[k];
    b[i] = s / l[i * ld + i];
  }
}

// The same with the factor from cholesky (rows n apart).
inline void cholesky_solve(const double* l, int64_t n, double* b) { cholesky_solve_ld(l, n, n, b); }

// The inverse (L L^T)^-1, whole and symmetric, into inv (n x n) from the
// factor: U = L^-T (upper) by substitution, then U U^T; U is kept by rows
// so that both products read contiguous rows. Throws std::bad_alloc.
inline void cholesky_inverse(const double* l, int64_t n, double* inv) {
  std::vector<double> u(static_cast<size_t>(n * n), 0.0);  // u[j][i] = (L^-1)_ij, i >= j
  for (int64_t j = 0; j < n; ++j) {
    double* uj = u.data() + j * n;
    uj[j] = 1.0 / l[j * n + j];
    for (int64_t i = j + 1; i < n; ++i) {
      const double* li = l + i * n;
      double s = 0.0;
      for (int64_t k = j; k < i; ++k) s -= li[k] * uj[k];
      uj[i] = s / li[i];
    }
  }
  // (L L^T)^-1 = L^-T L^-1: entry (r, c), c <= r, is sum_{k >= r} (L^-1)_kr (L^-1)_kc.
  for (int64_t r = 0; r < n; ++r) {
    const double* ur = u.data() + r * n;
    for (int64_t c = 0; c <= r; ++c) {
      const double* uc = u.data() + c * n;
      double s = 0.0;
      for (int64_t k = r; k < n; ++k) s += ur[k] * uc[k];
      inv[r * n + c] = s;
      inv[c * n + r] = s;
    }
  }
}

}  // namespace math
}  // namespace dirmn
