// bench_fit.cpp: maximum-likelihood fits and mixtures, timed, on one backend.
// Prints a table. Usage: dirmn_bench_fit [cpu|cuda] [rows] [cols]
//
// The fit is timed from a freshly prepared counts object, so the histogram
// pass over the table is included; "sum (cached)" is one value + gradient +
// Hessian evaluation once the histograms exist (what each Newton iteration
// costs).
#include <dirmn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void require(dirmn_status s, dirmn_context* ctx, const char* what) {
  if (s == DIRMN_SUCCESS) return;
  std::fprintf(stderr, "%s: %s: %s\n", what, dirmn_status_string(s), dirmn_last_error(ctx));
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string be = argc > 1 ? argv[1] : "cpu";
  const int64_t rows = argc > 2 ? std::atoll(argv[2]) : 262144;
  const int64_t cols = argc > 3 ? std::atoll(argv[3]) : 1024;
  const int reps = 5;
  dirmn_context* ctx = nullptr;
  require(dirmn_context_create(&ctx, be == "cuda" ? DIRMN_BACKEND_CUDA : DIRMN_BACKEND_CPU, 0),
          nullptr, "dirmn_context_create");
  // Counts 0-9 drawn from a DM-like profile: a per-row Dirichlet-ish
  // perturbation of column rates, so the table is overdispersed.
  std::mt19937_64 rng(7);
  std::vector<int32_t> x(static_cast<size_t>(rows * cols));
  std::uniform_int_distribution<int> base(0, 9);
  std::uniform_int_distribution<int> shift(-3, 3);
  for (int64_t b = 0; b < rows; ++b) {
    const int s = shift(rng);
    for (int64_t v = 0; v < cols; ++v)
      x[static_cast<size_t>(b * cols + v)] = std::clamp(base(rng) + ((v % 4 == 0) ? s : 0), 0, 9);
  }
  std::vector<double> alpha(static_cast<size_t>(cols)), g(static_cast<size_t>(cols)),
      h(static_cast<size_t>(cols));
  std::vector<double> t_fit, t_sum;
  dirmn_fit_result r;
  std::memset(&r, 0, sizeof r);
  r.size = sizeof r;
  r.alpha = alpha.data();
  for (int rep = 0; rep < reps; ++rep) {
    dirmn_counts* c = nullptr;
    require(dirmn_counts_create_dense(ctx, &c, rows, cols, DIRMN_INT32, x.data(), cols, 1, nullptr),
            ctx, "dirmn_counts_create_dense");
    dirmn_context_synchronize(ctx);
    auto t0 = std::chrono::steady_clock::now();
    require(dirmn_fit(ctx, c, nullptr, &r), ctx, "dirmn_fit");
    t_fit.push_back(seconds_since(t0));
    double f = 0, hs = 0;
    t0 = std::chrono::steady_clock::now();
    require(dirmn_loglik_sum(ctx, c, alpha.data(), 1, DIRMN_PARAM_ALPHA, nullptr, 0, &f, g.data(),
                             h.data(), &hs),
            ctx, "dirmn_loglik_sum");
    t_sum.push_back(seconds_since(t0));
    dirmn_counts_destroy(c);
  }
  std::printf("dirmn fit benchmark, %s backend, %lld x %lld counts 0-9 (median of %d)\n",
              be.c_str(), static_cast<long long>(rows), static_cast<long long>(cols), reps);
  std::printf("%-34s %12s\n", "step", "time");
  std::printf("%-34s %9.3f ms   (%d Newton iterations, converged %d, loglik %.6f)\n",
              "fit (histogram pass included)", 1e3 * median(t_fit), r.iterations, r.converged,
              r.loglik);
  std::printf("%-34s %9.3f ms\n", "sum: value+gradient+Hessian", 1e3 * median(t_sum));
  dirmn_context_destroy(ctx);
  return 0;
}
