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

}  // namespace dirmn
