// support.hpp: shared helpers of the Catch2 suites.
#pragma once

#include <dirmn.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

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

}  // namespace dirmn_test
