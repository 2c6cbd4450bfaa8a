// sums.hpp: sums whose rounding does not grow with their length, on the
// host. The sum of alpha enters every likelihood through lgamma(A) and
// lpoch(A, N): with tens of thousands of categories a plain sum would carry
// several ulp of error into terms of size N log A.
#pragma once

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

}  // namespace math
}  // namespace dirmn
