// sums.hpp: sums whose rounding does not grow with their length, on the
// host. The sum of alpha enters every likelihood through lgamma(A) and
// lpoch(A, N): with tens of thousands of categories a plain sum would carry
// several ulp of error into terms of size N log A.
#pragma once

#include <cmath>
#include <cstdint>

namespace dirmn {
namespace math {

// sum of a[0 .. n) with Kahan compensation. The CPU and CUDA backends both
// form the sum of alpha this way, so that they agree on it to the bit.
inline double compensated_sum(const double* a, int64_t n) {
  double s = 0.0, comp = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double y = a[i] - comp;
    const double t = s + y;
    comp = (t - s) - y;
    s = t;
  }
  return s;
}

// A running sum with Neumaier's compensation (Kahan's, also exact where a
// term is larger than the sum so far): for the statistics of a test, whose
// terms differ in size by many orders.
class NeumaierSum {
 public:
  void add(double x) {
    const double t = s_ + x;
    c_ += std::fabs(s_) >= std::fabs(x) ? (s_ - t) + x : (x - t) + s_;
    s_ = t;
  }
  double value() const { return s_ + c_; }

 private:
  double s_ = 0.0, c_ = 0.0;
};

}  // namespace math
}  // namespace dirmn
