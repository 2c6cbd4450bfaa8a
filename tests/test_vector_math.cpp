// test_vector_math.cpp: the array log, exp and reciprocal of the host sums
// (kernels/vector_math.cpp, compiled into this binary) against the scalar
// libm functions, and the promise that an element's result depends only on
// its value, not on where it sits in the array or how long the array is.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "../kernels/math/vector_math.hpp"

namespace {

using ArrayFn = void (*)(const double*, double*, int64_t);

struct Case {
  const char* name;
  ArrayFn fn;
  double (*scalar)(double);
  double lo, hi;   // arguments drawn log-uniformly (log) or uniformly (exp)
  bool log_scale;
};

double scalar_log(double x) { return std::log(x); }
double scalar_exp(double x) { return std::exp(x); }
double scalar_reciprocal(double x) { return 1.0 / x; }

}  // namespace

TEST_CASE("vector math: log, exp and reciprocal of arrays", "[math][vector]") {
  const Case cases[] = {
      {"log", dirmn::log_many, scalar_log, -300.0, 300.0, true},
      {"exp", dirmn::exp_many, scalar_exp, -700.0, 700.0, false},
      {"reciprocal", dirmn::reciprocal_many, scalar_reciprocal, -300.0, 300.0, true},
  };
  std::mt19937_64 rng(5);
  for (const Case& c : cases) {
    INFO(c.name);
    std::uniform_real_distribution<double> u(c.lo, c.hi);
    std::vector<double> x(4099);
    for (double& v : x) v = c.log_scale ? std::pow(10.0, u(rng)) : u(rng);
    // glibc bounds the vector variants at a few ulp; 4 ulp relative.
    std::vector<double> y(x.size());
    c.fn(x.data(), y.data(), static_cast<int64_t>(x.size()));
    int off = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const double want = c.scalar(x[i]);
      if (std::fabs(y[i] - want) > 4.0 * std::numeric_limits<double>::epsilon() * std::fabs(want)) ++off;
    }
    CHECK(off == 0);
    // Every length up to 17 (whole vectors, tails, both) and every offset:
    // the same value gives the same bits wherever it stands (a scalar tail
    // would differ from the vector code in the last bit for about a
    // quarter of the values: 64 values make that certain to show).
    int moved = 0;
    for (size_t k = 0; k < 64; ++k)
      for (int64_t n = 1; n <= 17; ++n)
        for (int64_t at = 0; at < n; ++at) {
          std::vector<double> in(static_cast<size_t>(n), x[1000]), out(static_cast<size_t>(n), -1.0);
          in[static_cast<size_t>(at)] = x[k];
          c.fn(in.data(), out.data(), n);
          moved += out[static_cast<size_t>(at)] != y[k];
        }
    CHECK(moved == 0);
    // In place, as the sums call it.
    std::vector<double> z(x.begin(), x.begin() + 13);
    c.fn(z.data(), z.data(), static_cast<int64_t>(z.size()));
    for (size_t i = 0; i < z.size(); ++i) CHECK(z[i] == y[i]);
  }
}
