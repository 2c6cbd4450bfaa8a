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
// (so a row's categories could be drawn in parallel); the conditional
// binomials one stream, the urn another.
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

// The rest of a row by gamma variates, once w holds every category's
// draw_gamma_cell: the Dirichlet proportions up to a common factor in w
// (the draws themselves, or w_v = exp(log g_v - max) from their logs),
// their suffix sums from the last category, and the counts by conditional
// binomials over the categories in order, each against its suffix sum (no
// cancellation), until the size is used. emit(v, x) for each x > 0, v
// ascending. w and suffix: cols entries each.
template <class Emit>
DIRMN_HD void draw_row_from_gammas(int64_t cols, bool by_value, uint64_t row_key, int64_t n, Strided<double> w,
                                   Strided<double> suffix, Emit&& emit) {
  double s = 0.0;
  if (by_value) {
    for (int64_t v = cols - 1; v >= 0; --v) {
      s = add(s, w[v]);
      suffix[v] = s;
    }
  } else {
    double top = -1e308;
    for (int64_t v = 0; v < cols; ++v) top = w[v] > top ? w[v] : top;
    for (int64_t v = cols - 1; v >= 0; --v) {
      const double wv = portable_exp(add(w[v], -top));
      w[v] = wv;
      s = add(s, wv);
      suffix[v] = s;
    }
  }
  RandomStream rng{derived_key(row_key, kBinomialStream, 0), 0};
  for (int64_t v = 0; v < cols && n > 0; ++v) {
    const double sv = suffix[v];
    const double p = sv > 0.0 ? w[v] / sv : 1.0;
    const int64_t x = p >= 1.0 ? n : draw_binomial(n, p, rng);
    if (x > 0) {
      emit(v, x);
      n -= x;
    }
  }
}

// A row by gamma variates: every category's draw_gamma_cell, then
// draw_row_from_gammas. shape(v): category v's GammaShape.
template <class Shape, class Emit>
DIRMN_HD void draw_row_gamma(int64_t cols, const Shape& shape, bool by_value, uint64_t row_key,
                             int64_t n, Strided<double> w, Strided<double> suffix, Emit&& emit) {
  for (int64_t v = 0; v < cols; ++v) w[v] = draw_gamma_cell(shape, by_value, row_key, v);
  draw_row_from_gammas(cols, by_value, row_key, n, w, suffix, emit);
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
