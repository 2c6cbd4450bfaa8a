// regression_support.hpp: what the regression tests share -- simulated
// problems (a design and DM counts drawn at alpha = exp(X beta)), their
// counts objects, a fit's info, and a small matrix inverse for the
// finite-difference covariances.
#pragma once

#include "support.hpp"

#include <random>

namespace dirmn_test {

struct RegDeleter {
  void operator()(dirmn_reg* r) const { dirmn_reg_destroy(r); }
};
using Reg = std::unique_ptr<dirmn_reg, RegDeleter>;

// A design with an intercept and p - 1 standard-normal covariates, and
// counts drawn from the DM at alpha = exp(X beta) (gamma draws, then a
// multinomial by conditional binomials).
struct Problem {
  int64_t rows = 0, V = 0, p = 0;
  std::vector<double> x;     // rows x p
  std::vector<int32_t> y;    // rows x V
};

inline Problem simulate(int64_t rows, int64_t V, int64_t p, uint64_t seed, int64_t cycle = 0) {
  Problem pr;
  pr.rows = rows;
  pr.V = V;
  pr.p = p;
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> beta(static_cast<size_t>(p * V));
  for (int64_t v = 0; v < V; ++v) {
    // Intercepts rising with v (every `cycle` categories anew, where set).
    beta[static_cast<size_t>(v)] = 0.5 + 0.3 * static_cast<double>(cycle > 0 ? v % cycle : v);
    for (int64_t i = 1; i < p; ++i) beta[static_cast<size_t>(i * V + v)] = 0.4 * normal(rng);
  }
  pr.x.resize(static_cast<size_t>(rows * p));
  pr.y.resize(static_cast<size_t>(rows * V));
  for (int64_t b = 0; b < rows; ++b) {
    pr.x[static_cast<size_t>(b * p)] = 1.0;
    for (int64_t i = 1; i < p; ++i) pr.x[static_cast<size_t>(b * p + i)] = normal(rng);
    std::vector<double> g(static_cast<size_t>(V));
    double gsum = 0.0;
    for (int64_t v = 0; v < V; ++v) {
      double eta = 0.0;
      for (int64_t i = 0; i < p; ++i) eta += pr.x[static_cast<size_t>(b * p + i)] * beta[static_cast<size_t>(i * V + v)];
      std::gamma_distribution<double> gamma(std::exp(eta), 1.0);
      g[static_cast<size_t>(v)] = gamma(rng);
      gsum += g[static_cast<size_t>(v)];
    }
    int n = 40 + static_cast<int>(b % 7) * 10, left = n;
    double rest = gsum;
    for (int64_t v = 0; v < V; ++v) {
      const double q = v + 1 == V || rest <= 0.0 ? 1.0 : std::min(1.0, g[static_cast<size_t>(v)] / rest);
      std::binomial_distribution<int> bin(left, q);
      const int c = v + 1 == V ? left : bin(rng);
      pr.y[static_cast<size_t>(b * V + v)] = c;
      left -= c;
      rest -= g[static_cast<size_t>(v)];
    }
  }
  return pr;
}

inline Counts counts_of(dirmn_context* ctx, const Problem& pr) {
  dirmn_counts* c = nullptr;
  REQUIRE(dirmn_counts_create_dense(ctx, &c, pr.rows, pr.V, DIRMN_INT32, pr.y.data(), pr.V, 1, nullptr) ==
          DIRMN_SUCCESS);
  return Counts(c);
}

inline dirmn_reg_info info_of(const dirmn_reg* r) {
  dirmn_reg_info in;
  std::memset(&in, 0, sizeof in);
  in.size = sizeof in;
  REQUIRE(dirmn_reg_get_info(r, &in) == DIRMN_SUCCESS);
  return in;
}

// The inverse of a small symmetric positive-definite matrix (Gauss-Jordan).
inline std::vector<double> invert(std::vector<double> a, int64_t n) {
  std::vector<double> inv(static_cast<size_t>(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i) inv[static_cast<size_t>(i * n + i)] = 1.0;
  for (int64_t c = 0; c < n; ++c) {
    const double piv = a[static_cast<size_t>(c * n + c)];
    REQUIRE(piv != 0.0);
    for (int64_t k = 0; k < n; ++k) {
      a[static_cast<size_t>(c * n + k)] /= piv;
      inv[static_cast<size_t>(c * n + k)] /= piv;
    }
    for (int64_t r = 0; r < n; ++r) {
      if (r == c) continue;
      const double f = a[static_cast<size_t>(r * n + c)];
      for (int64_t k = 0; k < n; ++k) {
        a[static_cast<size_t>(r * n + k)] -= f * a[static_cast<size_t>(c * n + k)];
        inv[static_cast<size_t>(r * n + k)] -= f * inv[static_cast<size_t>(c * n + k)];
      }
    }
  }
  return inv;
}

// Where the context's last failure was (dirmn_last_error_location).
inline dirmn_error_location error_location(const dirmn_context* ctx) {
  dirmn_error_location loc;
  std::memset(&loc, 0, sizeof loc);
  loc.size = sizeof loc;
  REQUIRE(dirmn_last_error_location(ctx, &loc) == DIRMN_SUCCESS);
  return loc;
}

// The covariance the reference log-likelihood f implies at its optimum x:
// (-H)^-1, H by central differences of steps 1e-3. On the way, checks that
// f's central-difference gradient (steps 1e-4) vanishes there, below 1e-7
// of |f(x)|.
template <class F>
std::vector<double> fd_covariance(const F& f, const std::vector<double>& x) {
  const int64_t P = static_cast<int64_t>(x.size());
  const double fx = f(x), h = 1e-4, e = 1e-3;
  std::vector<double> neg_h(static_cast<size_t>(P * P));
  for (int64_t k = 0; k < P; ++k) {
    std::vector<double> bp = x, bm = x;
    bp[static_cast<size_t>(k)] += h;
    bm[static_cast<size_t>(k)] -= h;
    CHECK(std::fabs(f(bp) - f(bm)) / (2 * h) < 1e-7 * std::fabs(fx));
    for (int64_t m = 0; m <= k; ++m) {
      const auto at = [&](double dk, double dm) {
        std::vector<double> t = x;
        t[static_cast<size_t>(k)] += dk;
        t[static_cast<size_t>(m)] += dm;
        return f(t);
      };
      neg_h[static_cast<size_t>(k * P + m)] = neg_h[static_cast<size_t>(m * P + k)] =
          -(at(e, e) - at(e, -e) - at(-e, e) + at(-e, -e)) / (4 * e * e);
    }
  }
  return invert(neg_h, P);
}

// A fit's covariance (dirmn_reg_get_vcov, P x P) is cov to 1e-4 of the
// product of the two standard errors, entry by entry; returns it.
inline std::vector<double> check_vcov(const dirmn_reg* r, const std::vector<double>& cov, int64_t P) {
  std::vector<double> vcov(static_cast<size_t>(P * P));
  REQUIRE(dirmn_reg_get_vcov(r, vcov.data(), P) == DIRMN_SUCCESS);
  for (int64_t k = 0; k < P; ++k)
    for (int64_t m = 0; m < P; ++m)
      CHECK(std::fabs(vcov[static_cast<size_t>(k * P + m)] - cov[static_cast<size_t>(k * P + m)]) <
            1e-4 * std::sqrt(cov[static_cast<size_t>(k * P + k)] * cov[static_cast<size_t>(m * P + m)]));
  return vcov;
}

}  // namespace dirmn_test
