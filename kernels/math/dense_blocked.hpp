// dense_blocked.hpp: Cholesky factor, solves and inverse of dense symmetric
// positive-definite systems too large for dense.hpp's unblocked loops -- the
// regression's Newton system and covariance, in min(p V, rows) unknowns, up
// to several thousand. Unblocked, a factor of 3000 unknowns reads its
// operands from memory at every step and takes seconds; here the work is
// in panels of kPanel columns whose updates are product blocks
// (vector_math.hpp), with the operands in the cache, on the caller's
// threads.
//
// Matrices are row-major with leading dimension ld >= padded(n) and
// padded(n) rows allocated: product blocks read whole kGramRows x
// kGramCols tiles, so the padding is read (keep it zero) but never
// changes a result. Every entry is summed in an order fixed by n alone:
// the results are the same bits for any number of threads.
#pragma once

#include <cstdint>
#include <functional>

#include "dense.hpp"  // cholesky_solve_ld: one right-hand side

namespace dirmn {
namespace math {

// Runs body(i) for i < n, perhaps on several threads (bodies write only
// their own tiles); work estimates the loop's multiply-adds, so that small
// loops can stay on the calling thread.
using TileLoop = std::function<void(int64_t n, const std::function<void(int64_t)>& body, double work)>;

// Runs every body on the calling thread.
void serial_tiles(int64_t n, const std::function<void(int64_t)>& body, double work);

// Columns of a panel: the factor's updates are product blocks over this
// many columns, which stay in the cache while every tile reads them.
constexpr int64_t kPanel = 64;

// n rounded up to whole product-block columns (kGramCols).
int64_t padded(int64_t n);

// Factors A (n x n, lower triangle read) in place: A = L L', L in the
// lower triangle (the upper one is left as it was). Returns -1 on success,
// else the first column whose pivot is not positive, or falls below
// rel_tol times the column's diagonal entry (as dense.hpp's cholesky).
int64_t cholesky_blocked(double* a, int64_t n, int64_t ld, const TileLoop& loop, double rel_tol = 0.0);

// Solves L Y = B in place: B (n x m, ldb >= padded(m), padded(n) rows) by
// L (lower, from cholesky_blocked).
void forward_solve_blocked(const double* l, int64_t n, int64_t ld, double* b, int64_t m, int64_t ldb,
                           const TileLoop& loop);

// The inverse (L L')^-1, whole and symmetric, into inv (n x n, ldi >=
// padded(n), padded(n) rows): Y = L^-1, then Y' Y. Throws std::bad_alloc.
void cholesky_inverse_blocked(const double* l, int64_t n, int64_t ld, double* inv, int64_t ldi,
                              const TileLoop& loop);

}  // namespace math
}  // namespace dirmn
