// weights.hpp: row weights brought to a scale where every sum over them is
// finite and normal.
//
// Every estimator's sums are linear in the row weights: a weight of 1e305
// takes the histograms, the log-likelihood and its derivatives past the
// largest double (NaN, or a false multinomial limit), and weights near
// 1e-320 leave them subnormal, with too few digits for Newton's method to
// converge. The maximum-likelihood alpha does not change when every weight
// is multiplied by one constant, so the estimators work on the weights
// times 2^-exponent -- exactly, a power of two -- with the largest in
// [0.5, 1), and multiply what scales with the weights (log-likelihoods,
// gradients, Hessians) back by 2^exponent. Weights whose largest is within
// 2^+-kFreeExponent are taken as they are (no copy, the same bits as
// before).
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

namespace dirmn {

class ScaledWeights {
 public:
  static constexpr int kFreeExponent = 64;

  // w: rows validated weights (finite, >= 0), or null for all 1. The
  // exponent is kept within +-max_exponent (an objective with a prior
  // weighs the prior by 2^-exponent, which must stay a normal double).
  // Throws std::bad_alloc (a copy of the weights where they are scaled).
  ScaledWeights(const double* w, int64_t rows, int max_exponent = 1 << 20)
      : ScaledWeights(w, rows, max_exponent, top_of(w, rows)) {}
  // The same with the largest weight given: a table split over ranks
  // scales every rank's weights by the largest of all (models/ranks.hpp);
  // null weights are then 1s, scaled as the others are.
  ScaledWeights(const double* w, int64_t rows, int max_exponent, double top) : data_(w) {
    if (!(top > 0.0)) return;
    int e = 0;
    std::frexp(top, &e);
    if (e >= -kFreeExponent && e <= kFreeExponent) return;
    e = e < -max_exponent ? -max_exponent : e > max_exponent ? max_exponent : e;
    exponent_ = e;
    scaled_.resize(static_cast<size_t>(rows));
    for (int64_t b = 0; b < rows; ++b) scaled_[static_cast<size_t>(b)] = std::ldexp(w ? w[b] : 1.0, -e);
    data_ = scaled_.data();
  }
  // The largest of rows weights (null: none, 0).
  static double top_of(const double* w, int64_t rows) {
    double top = 0.0;
    if (w != nullptr)
      for (int64_t b = 0; b < rows; ++b) top = w[b] > top ? w[b] : top;
    return top;
  }
  ScaledWeights(const ScaledWeights&) = delete;
  ScaledWeights& operator=(const ScaledWeights&) = delete;

  // The weights to compute with (null for all 1).
  const double* data() const { return data_; }
  // The caller's weights are data() times 2^exponent().
  int exponent() const { return exponent_; }
  bool scaled() const { return exponent_ != 0; }
  // A sum over the scaled weights as the caller's weights give it (may be
  // infinite: the caller's sum is not a double then).
  double unscale(double x) const { return std::ldexp(x, exponent_); }
  // log(2^exponent): what the log of such a sum gains.
  double log_scale() const { return exponent_ * 0.69314718055994530942; }

 private:
  const double* data_ = nullptr;
  int exponent_ = 0;
  std::vector<double> scaled_;
};

}  // namespace dirmn
