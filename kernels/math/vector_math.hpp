// vector_math.hpp: logarithms and exponentials of whole arrays on the host.
//
// The shared-alpha sums spend most of their time in log(); evaluating many
// arguments per instruction is what makes a Newton iteration on a wide
// table cheap. Where glibc's vector math library (libmvec) was found at
// build time, x86-64 CPUs with AVX-512 or AVX2 take 8 or 4 arguments per
// call; everywhere else the loops call the scalar functions. glibc bounds
// the vector variants' errors at a few ulp (the scalar ones: one), so the
// last bits of a result depend on the CPU and the build, but every element
// of an array gets the same treatment (a short tail is padded to a whole
// vector), so they do not depend on its neighbours or on threads.
#pragma once

#include <cstdint>

namespace dirmn {

// y[i] = log(x[i]) for i < n. x and y may be the same array.
void log_many(const double* x, double* y, int64_t n);

// y[i] = exp(x[i]) for i < n. x and y may be the same array.
void exp_many(const double* x, double* y, int64_t n);

// y[i] = 1 / x[i] for i < n (correctly rounded, as a scalar division).
void reciprocal_many(const double* x, double* y, int64_t n);

// Block (r0, c0) of U' diag(s) U over the rows b0 .. b1 - 1 of U (ldu
// doubles a row, row-major): block[r * kGramCols + c] =
// sum_b s[b] u[b ldu + r0 + r] u[b ldu + c0 + c] for r < kGramRows,
// c < kGramCols, summed over b in order (every entry alone: the same bits
// whatever the block's neighbours). The regression's Hessian (rows x
// (p V)^2 / 2 multiply-adds) in whole vectors.
constexpr int kGramRows = 4;
constexpr int kGramCols = 16;
void gram_block(const double* u, int64_t ldu, const double* s, int64_t b0, int64_t b1, int64_t r0,
                int64_t c0, double* block);

// Block (r0, c0) of the product A' B over k = k0 .. k1 - 1, with A's entry
// (k, r) at a[k a_sk + r a_sr] and B's entry (k, c) at b[k ldb + c]:
// block[r * kGramCols + c] = sum_k a(k, r0 + r) b(k, c0 + c), r <
// kGramRows, c < kGramCols, summed over k in order. The blocked
// Cholesky factor and triangular solves (dense_blocked.hpp) are made of
// these. Every entry of the kGramRows x kGramCols block is read: the
// caller pads A and B so that they exist.
void product_block(const double* a, int64_t a_sk, int64_t a_sr, const double* b, int64_t ldb,
                   int64_t k0, int64_t k1, int64_t r0, int64_t c0, double* block);

}  // namespace dirmn
