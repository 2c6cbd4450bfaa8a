// support.hpp: shared helpers of the Catch2 suites: the backends under test,
// owning handles, the long-double reference formula, and the table builders
// and references that more than one suite uses. Helpers used by one suite
// stay in that suite's file; those that need cuda_runtime.h are in
// cuda_support.hpp.
#pragma once

#include <catch2/catch.hpp>
#include <dirmn.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "../kernels/math/distributions.hpp"  // chi_square_p's tail

namespace dirmn_test {

inline bool cuda_device_present() {
  int n = 0;
  return dirmn_cuda_device_count(&n) == DIRMN_SUCCESS && n > 0;
}

// Backends every backend-agnostic case runs on: the CPU always, CUDA where a
// device exists.
inline std::vector<dirmn_backend> backends_under_test() {
  std::vector<dirmn_backend> b{DIRMN_BACKEND_CPU};
  if (cuda_device_present()) b.push_back(DIRMN_BACKEND_CUDA);
  return b;
}

inline const char* backend_name(dirmn_backend b) {
  return b == DIRMN_BACKEND_CUDA ? "cuda" : b == DIRMN_BACKEND_CPU ? "cpu" : "auto";
}

inline std::string test_data_path(const char* name) {
  return std::string(DIRMN_TEST_DATA_DIR) + "/" + name;
}

struct ContextDeleter {
  void operator()(dirmn_context* c) const { dirmn_context_destroy(c); }
};
struct CountsDeleter {
  void operator()(dirmn_counts* c) const { dirmn_counts_destroy(c); }
};
using Context = std::unique_ptr<dirmn_context, ContextDeleter>;
using Counts = std::unique_ptr<dirmn_counts, CountsDeleter>;

inline Context make_context(dirmn_backend b) {
  dirmn_context* c = nullptr;
  if (dirmn_context_create(&c, b, 0) != DIRMN_SUCCESS) return Context(nullptr);
  return Context(c);
}

// An independent reference: the textbook formula in long double lgammal.
// Good to ~1e-13 relative for moderate alpha (< 1e4) and counts, which is
// what the API tests use; the accuracy suite checks extreme alpha against
// 50-digit mpmath values instead.
inline double reference_loglik(const double* counts, const double* alpha, int64_t v, bool full) {
  long double n_sum = 0, a_sum = 0, s = 0, coef = 0;
  for (int64_t i = 0; i < v; ++i) {
    const long double n = counts[i], a = alpha[i];
    n_sum += n;
    a_sum += a;
    s += lgammal(n + a) - lgammal(a);
    coef -= lgammal(n + 1);
  }
  long double ll = s + lgammal(a_sum) - lgammal(n_sum + a_sum);
  if (full) ll += coef + lgammal(n_sum + 1);
  return static_cast<double>(ll);
}

// |got - want| within rel relative, or abs absolute.
inline bool close_to(double got, double want, double rel, double abs_tol = 0.0) {
  const double d = std::fabs(got - want);
  return d <= abs_tol || d <= rel * std::fabs(want);
}

// --- tables drawn from a seed, one parameter vector at a time, checked
// against reference_loglik (test_context.cpp, test_counts.cpp, test_loglik.cpp)

// A random table of small counts with a given fraction of zeros, row-major.
inline std::vector<double> random_table(int64_t rows, int64_t cols, double zero_frac, int max_count,
                                        uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::uniform_int_distribution<int> c(1, max_count);
  std::vector<double> x(static_cast<size_t>(rows * cols));
  for (auto& e : x) e = u(rng) < zero_frac ? 0.0 : c(rng);
  return x;
}

// n log-uniform alpha in [lo, hi].
inline std::vector<double> random_alpha(int64_t n, double lo, double hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(std::log(lo), std::log(hi));
  std::vector<double> a(static_cast<size_t>(n));
  for (auto& e : a) e = std::exp(u(rng));
  return a;
}

// Dense float64 counts from a row-major table, in the storage asked for.
inline Counts make_dense(dirmn_context* ctx, const std::vector<double>& x, int64_t rows, int64_t cols,
                         dirmn_storage storage = DIRMN_STORAGE_AUTO) {
  dirmn_counts_options o;
  dirmn_counts_options_init(&o);
  o.storage = storage;
  dirmn_counts* c = nullptr;
  const dirmn_status s =
      dirmn_counts_create_dense(ctx, &c, rows, cols, DIRMN_FLOAT64, x.data(), cols, 1, &o);
  INFO(dirmn_last_error(ctx));
  REQUIRE(s == DIRMN_SUCCESS);
  return Counts(c);
}

// One parameter vector over every row: rows values, a failure ends the test
// case with the library's message.
inline std::vector<double> loglik(dirmn_context* ctx, const dirmn_counts* c, int64_t rows,
                                  const std::vector<double>& alpha, uint32_t flags = DIRMN_KERNEL) {
  std::vector<double> out(static_cast<size_t>(rows), -12345.0);
  const dirmn_status s = dirmn_loglik(ctx, c, 1, alpha.data(), 0, 1, DIRMN_PARAM_ALPHA, flags,
                                      out.data(), 1, 1);
  INFO(dirmn_last_error(ctx));
  REQUIRE(s == DIRMN_SUCCESS);
  return out;
}

// Each row's value within rel (or 1e-9 absolute) of reference_loglik.
inline void check_against_reference(const std::vector<double>& got, const std::vector<double>& x,
                                    const std::vector<double>& alpha, int64_t rows, int64_t cols,
                                    bool full, double rel = 1e-12) {
  for (int64_t b = 0; b < rows; ++b) {
    const double want = reference_loglik(&x[static_cast<size_t>(b * cols)], alpha.data(), cols, full);
    INFO("row " << b << " got " << got[static_cast<size_t>(b)] << " want " << want);
    CHECK(close_to(got[static_cast<size_t>(b)], want, rel, 1e-9));
  }
}

// The context's last error message.
inline std::string last_error(const Context& ctx) { return dirmn_last_error(ctx.get()); }

// --- backend against backend: a Table drawn from the caller's engine, K
// parameter vectors at a time, one backend's values held to another's within
// require_close's bound (test_context.cpp, test_counts_device.cpp,
// test_loglik_device.cpp). The random_table, random_alpha and loglik here
// overload the seed-drawn ones above by their arguments: these take the
// engine first (random_table its largest count before the zero fraction),
// those a seed last.

// A dense table in host memory, row-major doubles.
struct Table {
  int64_t rows = 0;
  int64_t cols = 0;
  std::vector<double> x;
  double& at(int64_t i, int64_t j) { return x[static_cast<size_t>(i * cols + j)]; }
  double at(int64_t i, int64_t j) const { return x[static_cast<size_t>(i * cols + j)]; }
};

// Mostly small counts (which the GPU tabulates) with some up to `max_count`
// (which it evaluates directly), a fraction of zeros, and every seventh row
// entirely zero. `real` adds fractional parts.
inline Table random_table(std::mt19937_64& rng, int64_t rows, int64_t cols, double max_count,
                          double zero_frac, bool real = false) {
  Table t;
  t.rows = rows;
  t.cols = cols;
  t.x.assign(static_cast<size_t>(rows * cols), 0.0);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::uniform_int_distribution<int> small(1, 9);
  for (int64_t i = 0; i < rows; ++i) {
    if (i % 7 == 3) continue;
    for (int64_t j = 0; j < cols; ++j) {
      if (u(rng) < zero_frac) continue;
      double n = u(rng) < 0.9 ? small(rng) : std::floor(1.0 + u(rng) * (max_count - 1.0));
      if (real) n += std::floor(u(rng) * 4.0) * 0.25;
      t.at(i, j) = n;
    }
  }
  // The largest count appears at least once, so the storage type is known.
  if (rows > 0 && cols > 0) t.at(0, cols - 1) = max_count;
  return t;
}

// Log-uniform alpha in [lo, hi], k vectors of length v.
inline std::vector<double> random_alpha(std::mt19937_64& rng, int64_t k, int64_t v, double lo, double hi) {
  std::uniform_real_distribution<double> u(std::log(lo), std::log(hi));
  std::vector<double> a(static_cast<size_t>(k * v));
  for (double& x : a) x = std::exp(u(rng));
  return a;
}

// A context on backend b; the test case fails where there is none.
inline Context make(dirmn_backend b) {
  Context c = dirmn_test::make_context(b);
  REQUIRE(c);
  return c;
}

// Dense float64 counts from a Table, in the storage and with the flags asked
// for.
inline Counts dense_counts(dirmn_context* ctx, const Table& t, dirmn_storage storage, uint32_t flags = 0) {
  dirmn_counts_options o;
  dirmn_counts_options_init(&o);
  o.storage = storage;
  o.flags = flags;
  dirmn_counts* c = nullptr;
  const dirmn_status s = dirmn_counts_create_dense(ctx, &c, t.rows, t.cols, DIRMN_FLOAT64,
                                                   t.x.data(), t.cols, 1, &o);
  INFO(dirmn_last_error(ctx));
  REQUIRE(s == DIRMN_SUCCESS);
  return Counts(c);
}

// k parameter vectors of length v (row-major) over every row: rows x k
// values, row-major.
inline std::vector<double> loglik(dirmn_context* ctx, const dirmn_counts* c, int64_t rows, int64_t k,
                                  const std::vector<double>& params, int64_t v, uint32_t flags = DIRMN_KERNEL,
                                  dirmn_param param = DIRMN_PARAM_ALPHA) {
  std::vector<double> out(static_cast<size_t>(rows * k), std::nan(""));
  const dirmn_status s =
      dirmn_loglik(ctx, c, k, params.data(), v, 1, param, flags, out.data(), k, 1);
  INFO(dirmn_last_error(ctx));
  REQUIRE(s == DIRMN_SUCCESS);
  return out;
}

// One parameter vector of length v per row (row-major): rows values.
inline std::vector<double> loglik_rowwise(dirmn_context* ctx, const dirmn_counts* c, int64_t rows,
                                          const std::vector<double>& params, int64_t v,
                                          uint32_t flags = DIRMN_KERNEL, dirmn_param param = DIRMN_PARAM_ALPHA) {
  std::vector<double> out(static_cast<size_t>(rows), std::nan(""));
  const dirmn_status s =
      dirmn_loglik_rowwise(ctx, c, params.data(), v, 1, param, flags, out.data(), 1);
  INFO(dirmn_last_error(ctx));
  REQUIRE(s == DIRMN_SUCCESS);
  return out;
}

// Every element within rel * max(1, |want|, |scale|): relative, with an
// absolute floor below 1 where a relative bound means nothing (a one-column
// table's likelihood is exactly 0). `scale`, where given, is the size of the
// terms the result was formed from (see term_scale in test_loglik_device.cpp).
inline void require_close(const std::vector<double>& got, const std::vector<double>& want, double rel,
                          const std::vector<double>* scale = nullptr) {
  REQUIRE(got.size() == want.size());
  if (scale) REQUIRE(scale->size() == want.size());
  size_t bad = 0, first = 0;
  double worst = 0.0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double d = std::fabs(got[i] - want[i]);
    const double s = scale ? std::fabs((*scale)[i]) : 0.0;
    const double scaled = d / std::max({1.0, std::fabs(want[i]), s});
    if (!(scaled <= rel)) {
      if (bad == 0) first = i;
      ++bad;
    }
    if (scaled > worst || std::isnan(scaled)) worst = scaled;
  }
  INFO("elements off: " << bad << " of " << got.size() << ", first at " << first << ": got "
                        << (got.empty() ? 0.0 : got[first]) << " want "
                        << (want.empty() ? 0.0 : want[first]) << "; worst scaled error " << worst);
  REQUIRE(bad == 0);
}

// The counts' value width and info; the test case fails if they cannot be
// read.
inline int value_bits_of(const dirmn_counts* c) {
  dirmn_counts_info info;
  std::memset(&info, 0, sizeof info);
  info.size = sizeof info;
  REQUIRE(dirmn_counts_get_info(c, &info) == DIRMN_SUCCESS);
  return info.value_bits;
}

inline dirmn_counts_info info_of(const dirmn_counts* c) {
  dirmn_counts_info info;
  std::memset(&info, 0, sizeof info);
  info.size = sizeof info;
  REQUIRE(dirmn_counts_get_info(c, &info) == DIRMN_SUCCESS);
  return info;
}

// --- derivatives and fits (test_derivatives.cpp, test_fit.cpp) ---------------

// digamma(a + n) - digamma(a) for an integer n: sum_{k<n} 1/(a + k), in long
// double.
inline long double dpoch_ref(long double a, long n) {
  long double s = 0;
  for (long k = 0; k < n; ++k) s += 1.0L / (a + k);
  return s;
}

// A plain Minka fixed point in long double, run to a tight tolerance.
inline std::vector<double> minka_ref(const std::vector<double>& x, int64_t rows, int64_t cols,
                              std::vector<double> alpha) {
  for (int it = 0; it < 200000; ++it) {
    long double A = 0;
    for (double a : alpha) A += a;
    long double den = 0;
    std::vector<long double> num(static_cast<size_t>(cols), 0);
    for (int64_t b = 0; b < rows; ++b) {
      long N = 0;
      for (int64_t v = 0; v < cols; ++v) {
        const long n = static_cast<long>(x[static_cast<size_t>(b * cols + v)]);
        N += n;
        num[static_cast<size_t>(v)] += dpoch_ref(alpha[static_cast<size_t>(v)], n);
      }
      den += dpoch_ref(A, N);
    }
    double change = 0;
    for (int64_t v = 0; v < cols; ++v) {
      const double a = static_cast<double>(alpha[static_cast<size_t>(v)] * num[static_cast<size_t>(v)] / den);
      change = std::max(change, std::fabs(a / alpha[static_cast<size_t>(v)] - 1));
      alpha[static_cast<size_t>(v)] = a;
    }
    if (change < 1e-13) break;
  }
  return alpha;
}

// Dirichlet-multinomial draws: p ~ Dirichlet(alpha), counts ~ Multinomial(N, p).
inline std::vector<double> simulate_dm(int64_t rows, const std::vector<double>& alpha, int n_mean,
                                       uint32_t seed, bool vary_totals = true) {
  std::mt19937_64 rng(seed);
  const int64_t V = static_cast<int64_t>(alpha.size());
  std::vector<double> x(static_cast<size_t>(rows * V), 0.0);
  std::uniform_int_distribution<int> nd(n_mean / 2, 3 * n_mean / 2);
  for (int64_t b = 0; b < rows; ++b) {
    std::vector<double> p(static_cast<size_t>(V));
    double s = 0;
    for (int64_t v = 0; v < V; ++v) {
      std::gamma_distribution<double> g(alpha[static_cast<size_t>(v)], 1.0);
      p[static_cast<size_t>(v)] = g(rng);
      s += p[static_cast<size_t>(v)];
    }
    int N = vary_totals ? nd(rng) : n_mean;
    double left = 1.0;
    for (int64_t v = 0; v < V && N > 0; ++v) {
      const double pv = p[static_cast<size_t>(v)] / s;
      int k = N;
      if (v < V - 1) {
        std::binomial_distribution<int> bin(N, std::min(1.0, std::max(0.0, pv / left)));
        k = bin(rng);
      }
      x[static_cast<size_t>(b * V + v)] = k;
      N -= k;
      left -= pv;
    }
  }
  return x;
}

// A CSV of the repository's data folders (a header row, a name column,
// counts): rows x cols values, row-major.
inline std::vector<double> read_csv(const std::string& path, int64_t* rows, int64_t* cols) {
  std::ifstream in(path);
  REQUIRE(in.good());
  std::string line;
  std::getline(in, line);
  std::vector<double> x;
  *rows = 0;
  while (std::getline(in, line)) {
    std::stringstream ss(line);
    std::string cell;
    std::getline(ss, cell, ',');
    while (std::getline(ss, cell, ',')) x.push_back(std::stod(cell));
    ++*rows;
  }
  *cols = static_cast<int64_t>(x.size()) / *rows;
  return x;
}

// Dense float64 counts from a row-major table, default options.
inline Counts counts_of(dirmn_context* ctx, const std::vector<double>& x, int64_t rows, int64_t cols) {
  dirmn_counts* c = nullptr;
  REQUIRE(dirmn_counts_create_dense(ctx, &c, rows, cols, DIRMN_FLOAT64, x.data(), cols, 1,
                                    nullptr) == DIRMN_SUCCESS);
  return Counts(c);
}

// sum_b w_b log p(x_b | alpha) without the multinomial coefficients, from
// reference_loglik (w: all 1 where not given).
inline double table_loglik_ref(const std::vector<double>& x, int64_t rows, int64_t cols,
                               const std::vector<double>& alpha, const std::vector<double>* w = nullptr) {
  long double s = 0;
  for (int64_t b = 0; b < rows; ++b)
    s += (w ? (*w)[static_cast<size_t>(b)] : 1.0) *
         static_cast<long double>(reference_loglik(&x[static_cast<size_t>(b * cols)], alpha.data(), cols, false));
  return static_cast<double>(s);
}

// --- mixtures (test_mixture.cpp, test_mixture_device.cpp) ---------------------

// A table drawn from a mixture, and the component each row was drawn from.
struct Simulated {
  std::vector<double> x;
  std::vector<int> label;
};

// rows from k components with disjoint dominant categories. Row b has
// total + (7919 b mod spread) counts (spread 0: all have total).
inline Simulated simulate_mixture(int64_t rows, int64_t cols, int k, uint32_t seed, int total = 200,
                                  int spread = 0) {
  std::mt19937_64 rng(seed);
  Simulated s;
  s.x.assign(static_cast<size_t>(rows * cols), 0.0);
  for (int64_t b = 0; b < rows; ++b) {
    const int j = static_cast<int>(b % k);
    s.label.push_back(j);
    std::vector<double> p(static_cast<size_t>(cols));
    double sum = 0;
    for (int64_t v = 0; v < cols; ++v) {
      const bool dominant = v % k == j;
      std::gamma_distribution<double> g(dominant ? 5.0 : 0.3, 1.0);
      p[static_cast<size_t>(v)] = g(rng);
      sum += p[static_cast<size_t>(v)];
    }
    std::discrete_distribution<int64_t> cat(p.begin(), p.end());
    const int64_t n_b = total + (spread > 0 ? (7919 * b) % spread : 0);
    for (int64_t n = 0; n < n_b; ++n) s.x[static_cast<size_t>(b * cols + cat(rng))] += 1;
  }
  return s;
}

struct MixtureDeleter {
  void operator()(dirmn_mixture* m) const { dirmn_mixture_destroy(m); }
};
using Mixture = std::unique_ptr<dirmn_mixture, MixtureDeleter>;

// Fits k components; a failure ends the test case with the library's message.
inline Mixture fit(dirmn_context* ctx, dirmn_counts* c, int k, const dirmn_mixture_options* o) {
  dirmn_mixture* m = nullptr;
  const dirmn_status s = dirmn_mixture_fit(ctx, c, k, o, &m);
  INFO(dirmn_last_error(ctx));
  REQUIRE(s == DIRMN_SUCCESS);
  return Mixture(m);
}

// --- goodness of fit (test_sample.cpp, test_sampling_math.cpp)

// P(chi2_df >= stat) of observed against expected frequencies, the
// expected ones below 5 pooled into one cell.
inline double chi_square_p(const std::vector<double>& observed, const std::vector<double>& expected) {
  double stat = 0.0, o_rest = 0.0, e_rest = 0.0;
  int cells = 0;
  for (size_t i = 0; i < observed.size(); ++i) {
    if (expected[i] < 5.0) {
      o_rest += observed[i];
      e_rest += expected[i];
      continue;
    }
    stat += (observed[i] - expected[i]) * (observed[i] - expected[i]) / expected[i];
    ++cells;
  }
  if (e_rest > 0.0) {
    stat += (o_rest - e_rest) * (o_rest - e_rest) / e_rest;
    ++cells;
  }
  return dirmn::math::gamma_q(0.5 * (cells - 1), 0.5 * stat);
}

}  // namespace dirmn_test
