// dm_draw.hpp: one row of a Dirichlet-multinomial table, drawn the same way
// on the host and on the device.
//
// A seed must give the same table on every backend, so the steps of a row
// -- which streams it reads, in which order it sums, when it stops -- are
// written once, here, over scratch arrays the caller lays out (contiguous
// on the host; interleaved across a device's threads, so that a warp's
// reads coalesce). The draws themselves are sampling.hpp's.
//
// Streams: row b's key is derived_key(seed, kFamilySampleRows, b); category
// v's gamma variate takes the stream derived_key(row key, kGammaStreams, v)
// (so a row's categories could be drawn in parallel); the split among
// blocks of categories the row's binomial stream, block k's split among
// its categories derived_key(row key, kBlockStreams, k); the urn another.
#pragma once

#include <cstdint>
#include <type_traits>

#include "sampling.hpp"

namespace dirmn {
namespace math {

// Sub-streams of a row's key.
constexpr uint64_t kGammaStreams = 1;
constexpr uint64_t kBinomialStream = 2;
constexpr uint64_t kUrnStream = 3;

// Which method a row of `size` counts over `cols` categories takes (the
// same distribution either way): the Polya urn where the size is below
// twice the categories (a ball costs about a third of a category's gamma
// variate and binomial), else gamma variates and conditional binomials.
DIRMN_HD bool sample_by_urn(int64_t size, int64_t cols) { return size < 2 * cols; }

// Entries of an array `stride` apart: entry v at p[v * stride].
template <class T>
struct Strided {
  T* p = nullptr;
  int64_t stride = 1;
  DIRMN_HD T& operator[](int64_t v) const { return p[v * stride]; }
};

// Category v's gamma draw in a row by gamma variates: the variate where
// the row's shapes are all gamma_by_value's (by_value), else its log; from
// its own stream, so that a row's categories may be drawn in any order or
// at once.
template <class Shape>
DIRMN_HD double draw_gamma_cell(const Shape& shape, bool by_value, uint64_t row_key, int64_t v) {
  RandomStream g{derived_key(row_key, kGammaStreams, static_cast<uint64_t>(v)), 0};
  return by_value ? draw_gamma(shape(v), g) : draw_log_gamma(shape(v), g);
}

// The multinomial split of a row by gamma variates, in two levels so that
// a device can draw a row's blocks at once: the categories in blocks of
// kChainBlock, the size split among the blocks by conditional binomials
// (the row's binomial stream), then each block's share among its
// categories by conditional binomials (the block's own stream). Each
// conditional probability is a weight against its suffix sum (no
// cancellation); the two levels together draw the multinomial exactly.
constexpr int64_t kChainBlock = 32;
constexpr uint64_t kBlockStreams = 4;

DIRMN_HD int64_t chain_blocks(int64_t cols) { return (cols + kChainBlock - 1) / kChainBlock; }

// Step 1, once w holds every category's draw_gamma_cell: the Dirichlet
// proportions up to a common factor in w (the draws themselves, or w_v =
// exp(log g_v - max) from their logs), each block's suffix sums from its
// last category in suffix (so suffix at a block's first category is its
// sum S_k), and in t (chain_blocks(cols) entries) the blocks' suffix sums
// T_k = S_k + T_(k+1).
DIRMN_HD void prepare_blocks(int64_t cols, bool by_value, Strided<double> w, Strided<double> suffix,
                             Strided<double> t) {
  if (!by_value) {
    double top = -1e308;
    for (int64_t v = 0; v < cols; ++v) top = w[v] > top ? w[v] : top;
    for (int64_t v = 0; v < cols; ++v) w[v] = portable_exp(add(w[v], -top));
  }
  double total = 0.0;
  for (int64_t k = chain_blocks(cols) - 1; k >= 0; --k) {
    const int64_t v0 = k * kChainBlock, v1 = v0 + kChainBlock < cols ? v0 + kChainBlock : cols;
    double r = 0.0;
    for (int64_t v = v1 - 1; v >= v0; --v) {
      r = add(r, w[v]);
      suffix[v] = r;
    }
    total = add(total, r);
    t[k] = total;
  }
}

// Step 2: the size n among the blocks, block k's count replacing T_k in t
// (as a double: exact below 2^53).
DIRMN_HD void split_blocks(int64_t cols, uint64_t row_key, int64_t n, Strided<double> suffix, Strided<double> t) {
  RandomStream rng{derived_key(row_key, kBinomialStream, 0), 0};
  for (int64_t k = 0; k < chain_blocks(cols); ++k) {
    int64_t x = 0;
    if (n > 0) {
      const double tk = t[k];
      const double p = tk > 0.0 ? suffix[k * kChainBlock] / tk : 1.0;
      x = p >= 1.0 ? n : draw_binomial(n, p, rng);
      n -= x;
    }
    t[k] = static_cast<double>(x);
  }
}

// Step 3: block k's count m among its categories: emit(v, x) for each
// x > 0, v ascending.
template <class Emit>
DIRMN_HD void draw_block(int64_t cols, int64_t k, uint64_t row_key, int64_t m, Strided<double> w,
                         Strided<double> suffix, Emit&& emit) {
  if (m <= 0) return;
  RandomStream rng{derived_key(row_key, kBlockStreams, static_cast<uint64_t>(k)), 0};
  const int64_t v0 = k * kChainBlock, v1 = v0 + kChainBlock < cols ? v0 + kChainBlock : cols;
  for (int64_t v = v0; v < v1 && m > 0; ++v) {
    const double sv = suffix[v];
    const double p = sv > 0.0 ? w[v] / sv : 1.0;
    const int64_t x = p >= 1.0 ? m : draw_binomial(m, p, rng);
    if (x > 0) {
      emit(v, x);
      m -= x;
    }
  }
}

// The rest of a row by gamma variates, once w holds every category's
// draw_gamma_cell: steps 1 to 3 in turn. emit(v, x) for each x > 0, v
// ascending. w and suffix: cols entries each; t: chain_blocks(cols).
template <class Emit>
DIRMN_HD void draw_row_from_gammas(int64_t cols, bool by_value, uint64_t row_key, int64_t n, Strided<double> w,
                                   Strided<double> suffix, Strided<double> t, Emit&& emit) {
  prepare_blocks(cols, by_value, w, suffix, t);
  split_blocks(cols, row_key, n, suffix, t);
  for (int64_t k = 0; k < chain_blocks(cols); ++k)
    draw_block(cols, k, row_key, static_cast<int64_t>(t[k]), w, suffix, emit);
}

// A row by gamma variates: every category's draw_gamma_cell, then
// draw_row_from_gammas. shape(v): category v's GammaShape.
template <class Shape, class Emit>
DIRMN_HD void draw_row_gamma(int64_t cols, const Shape& shape, bool by_value, uint64_t row_key,
                             int64_t n, Strided<double> w, Strided<double> suffix, Strided<double> t, Emit&& emit) {
  for (int64_t v = 0; v < cols; ++v) w[v] = draw_gamma_cell(shape, by_value, row_key, v);
  draw_row_from_gammas(cols, by_value, row_key, n, w, suffix, t, emit);
}

// Whether every one of cols shapes a(v) is gamma_by_value's.
template <class Alpha>
DIRMN_HD bool gamma_row_by_value(int64_t cols, const Alpha& a) {
  bool all = true;
  for (int64_t v = 0; v < cols; ++v) all = all && gamma_by_value(a(v));
  return all;
}

// The first v with cum[v] > u (u < cum[cols - 1]), by a bisection whose
// steps are conditional moves, not branches (their outcomes are random).
template <class Cum>
DIRMN_HD int64_t find_category(const Cum& cum, int64_t cols, double u) {
  int64_t base = 0, len = cols;
  while (len > 1) {
    const int64_t half = len / 2;
    base = cum[base + half - 1] <= u ? base + half : base;
    len -= half;
  }
  return base + (cum[base] <= u ? 1 : 0);
}

// Row by the Polya urn: ball i is a new draw from alpha with probability
// A / (A + i), else a copy of one of the i balls before it. cum(v) = alpha_0
// + ... + alpha_v, summed in order by add. balls: n entries; tally: cols
// entries, zero on entry, the balls per category on return. first(v) is
// called when category v takes its first ball.
template <class Cum, class Ball, class First>
DIRMN_HD void draw_row_urn(int64_t cols, const Cum& cum, uint64_t row_key, int64_t n, Ball balls,
                           Strided<uint32_t> tally, First&& first) {
  const double a_sum = cum[cols - 1];
  RandomStream rng{derived_key(row_key, kUrnStream, 0), 0};
  for (int64_t i = 0; i < n; ++i) {
    const double u = rng.uniform();
    int64_t v;
    if (mul(u, add(a_sum, static_cast<double>(i))) < a_sum) {
      v = find_category(cum, cols, mul(rng.uniform(), a_sum));
      v = v < cols - 1 ? v : cols - 1;
    } else {
      // One of the i balls: floor(u i) < i (no modulo: a division costs more
      // than the rest of the step).
      const int64_t j = static_cast<int64_t>(mul(rng.uniform(), static_cast<double>(i)));
      v = static_cast<int64_t>(balls[j < i - 1 ? j : i - 1]);
    }
    balls[i] = static_cast<std::remove_reference_t<decltype(balls[i])>>(v);
    if (tally[v]++ == 0) first(v);
  }
}

// Row b's vector of a mixture of k: counter 0 of the row's stream against
// the ascending cumulative weights (k entries ending at 1; null: equal).
DIRMN_HD int64_t draw_component(uint64_t row_key, int64_t k, const double* cum_weights) {
  const double u = random_uniform(row_key, 0);
  if (cum_weights == nullptr) {
    const int64_t j = static_cast<int64_t>(u * static_cast<double>(k));
    return j < k - 1 ? j : k - 1;
  }
  int64_t j = 0;
  while (j < k - 1 && !(u < cum_weights[j])) ++j;
  return j;
}

}  // namespace math
}  // namespace dirmn
