// bench_fit.cpp: maximum-likelihood fits and mixtures, timed, on one backend.
// Prints a table. Usage:
//   dirmn_bench_fit [cpu|cuda] [rows] [cols]
//   dirmn_bench_fit [cpu|cuda] mixture [rows] [cols] [k] [iterations]
//   dirmn_bench_fit [cpu|cuda] microbiome [rows] [cols] [k_max] [k_min]
//
// The fit is timed from a freshly prepared counts object, so the histogram
// pass over the table is included; the fits run back to back, and "fit
// after idling" is one more after a pause (a GPU's clocks fall while it
// idles). "sum" is one value + gradient + Hessian
// evaluation once the histograms exist (what each Newton iteration costs);
// "pass" is a value + gradient evaluation for weights whose histograms are
// not cached (one pass over the table).
//
// "mixture": one EM start with a fixed number of iterations (no tolerance)
// on the counts 0-9 table. "microbiome": a simulated sparse, overdispersed
// table of microbiome shape (a few dominant taxa, a long tail of rare ones,
// most cells zero) fitted for k = 1..k_max with the default options.
#include <dirmn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

// The pause before the last fit, long enough for a GPU to lower its clocks.
constexpr int kIdleMs = 300;

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

// Counts 0-9 drawn from a DM-like profile: a per-row perturbation of
// column rates, so the table is overdispersed.
std::vector<int32_t> table_0_9(int64_t rows, int64_t cols) {
  std::mt19937_64 rng(7);
  std::vector<int32_t> x(static_cast<size_t>(rows * cols));
  std::uniform_int_distribution<int> base(0, 9);
  std::uniform_int_distribution<int> shift(-3, 3);
  for (int64_t b = 0; b < rows; ++b) {
    const int s = shift(rng);
    for (int64_t v = 0; v < cols; ++v)
      x[static_cast<size_t>(b * cols + v)] = std::clamp(base(rng) + ((v % 4 == 0) ? s : 0), 0, 9);
  }
  return x;
}

int run_mixture(dirmn_context* ctx, const std::string& be, int64_t rows, int64_t cols, int k, int iters) {
  const auto x = table_0_9(rows, cols);
  dirmn_counts* c = nullptr;
  require(dirmn_counts_create_dense(ctx, &c, rows, cols, DIRMN_INT32, x.data(), cols, 1, nullptr), ctx,
          "dirmn_counts_create_dense");
  dirmn_mixture_options o;
  dirmn_mixture_options_init(&o);
  o.starts = 1;
  o.max_iterations = iters;
  o.tolerance = std::numeric_limits<double>::min();  // runs the full count unless EM stands still
  // The progress callback runs after every E step: the time from the first
  // call to the last is the EM iterations' alone, without the seeding.
  struct Clock {
    std::chrono::steady_clock::time_point first, last;
    int calls = 0;
  } clk;
  o.progress = [](int, double, double, void* data) {
    auto* c = static_cast<Clock*>(data);
    c->last = std::chrono::steady_clock::now();
    if (c->calls++ == 0) c->first = c->last;
    return 0;
  };
  o.progress_data = &clk;
  dirmn_mixture* m = nullptr;
  auto t0 = std::chrono::steady_clock::now();
  require(dirmn_mixture_fit(ctx, c, k, &o, &m), ctx, "dirmn_mixture_fit");
  const double t = seconds_since(t0);
  const double em = std::chrono::duration<double>(clk.last - clk.first).count();
  dirmn_mixture_info info;
  std::memset(&info, 0, sizeof info);
  info.size = sizeof info;
  require(dirmn_mixture_get_info(m, &info), nullptr, "dirmn_mixture_get_info");
  std::printf("dirmn mixture benchmark, %s backend, %lld x %lld counts 0-9, k = %d, one start\n",
              be.c_str(), static_cast<long long>(rows), static_cast<long long>(cols), k);
  std::printf("%-34s %9.3f s   (%d EM iterations; loglik %.6f)\n", "fit (seeding included)", t,
              info.iterations, info.loglik);
  std::printf("%-34s %9.3f s   (%d iterations, %.3f ms each)\n", "EM iterations 2..n", em,
              clk.calls - 1, 1e3 * em / std::max(1, clk.calls - 1));
  dirmn_mixture_destroy(m);
  dirmn_counts_destroy(c);
  return 0;
}

// A microbiome-shaped table: k_true community types, each a Dirichlet
// profile over taxa whose mean abundances fall off as a power law; row
// totals 5000-50000 reads. Most cells are zero.
int run_microbiome(dirmn_context* ctx, const std::string& be, int64_t rows, int64_t cols, int k_max,
                   int k_min) {
  std::mt19937_64 rng(11);
  const int k_true = 6;
  std::vector<std::vector<double>> prof(k_true, std::vector<double>(static_cast<size_t>(cols)));
  for (auto& p : prof) {
    std::vector<int64_t> perm(static_cast<size_t>(cols));
    for (int64_t v = 0; v < cols; ++v) perm[static_cast<size_t>(v)] = v;
    // Community types share most of the tail but reorder the leading taxa.
    std::shuffle(perm.begin(), perm.begin() + std::min<int64_t>(cols, 200), rng);
    for (int64_t r = 0; r < cols; ++r) p[static_cast<size_t>(perm[static_cast<size_t>(r)])] = 2.0 / std::pow(1.0 + r, 1.3);
  }
  std::vector<int32_t> x(static_cast<size_t>(rows * cols), 0);
  std::uniform_int_distribution<int> pick(0, k_true - 1);
  std::uniform_int_distribution<int> depth(5000, 50000);
  std::vector<double> q(static_cast<size_t>(cols));
  for (int64_t b = 0; b < rows; ++b) {
    const auto& p = prof[static_cast<size_t>(pick(rng))];
    double s = 0.0;
    for (int64_t v = 0; v < cols; ++v) {
      std::gamma_distribution<double> g(p[static_cast<size_t>(v)], 1.0);
      q[static_cast<size_t>(v)] = g(rng);
      s += q[static_cast<size_t>(v)];
    }
    int left = depth(rng);
    double mass = 1.0;
    for (int64_t v = 0; v < cols && left > 0; ++v) {
      const double pv = q[static_cast<size_t>(v)] / s;
      std::binomial_distribution<int> bin(left, std::min(1.0, std::max(0.0, pv / mass)));
      const int n = v + 1 < cols ? bin(rng) : left;
      x[static_cast<size_t>(b * cols + v)] = n;
      left -= n;
      mass -= pv;
    }
  }
  int64_t nonzero = 0;
  for (int32_t n : x) nonzero += n != 0;
  dirmn_counts* c = nullptr;
  require(dirmn_counts_create_dense(ctx, &c, rows, cols, DIRMN_INT32, x.data(), cols, 1, nullptr), ctx,
          "dirmn_counts_create_dense");
  std::printf("dirmn mixture benchmark, %s backend, microbiome-shaped %lld x %lld (%.1f%% zeros), k = %d..%d, default options\n",
              be.c_str(), static_cast<long long>(rows), static_cast<long long>(cols),
              100.0 * (1.0 - static_cast<double>(nonzero) / static_cast<double>(x.size())), k_min, k_max);
  std::printf("%4s %10s %6s %16s %16s\n", "k", "time", "iters", "loglik", "BIC");
  double total = 0.0;
  for (int k = k_min; k <= k_max; ++k) {
    dirmn_mixture_options o;
    dirmn_mixture_options_init(&o);
    dirmn_mixture* m = nullptr;
    auto t0 = std::chrono::steady_clock::now();
    require(dirmn_mixture_fit(ctx, c, k, &o, &m), ctx, "dirmn_mixture_fit");
    const double t = seconds_since(t0);
    total += t;
    dirmn_mixture_info info;
    std::memset(&info, 0, sizeof info);
    info.size = sizeof info;
    require(dirmn_mixture_get_info(m, &info), nullptr, "dirmn_mixture_get_info");
    std::printf("%4d %8.3f s %6d %16.3f %16.3f\n", k, t, info.iterations, info.loglik, info.bic);
    std::fflush(stdout);
    dirmn_mixture_destroy(m);
  }
  std::printf("total k = %d..%d: %.2f s\n", k_min, k_max, total);
  dirmn_counts_destroy(c);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string be = argc > 1 ? argv[1] : "cpu";
  const std::string mode = argc > 2 ? argv[2] : "";
  if (mode == "mixture" || mode == "microbiome") {
    dirmn_context* ctx = nullptr;
    require(dirmn_context_create(&ctx, be == "cuda" ? DIRMN_BACKEND_CUDA : DIRMN_BACKEND_CPU, 0),
            nullptr, "dirmn_context_create");
    int rc;
    if (mode == "mixture")
      rc = run_mixture(ctx, be, argc > 3 ? std::atoll(argv[3]) : 262144, argc > 4 ? std::atoll(argv[4]) : 1024,
                       argc > 5 ? std::atoi(argv[5]) : 8, argc > 6 ? std::atoi(argv[6]) : 100);
    else
      rc = run_microbiome(ctx, be, argc > 3 ? std::atoll(argv[3]) : 800, argc > 4 ? std::atoll(argv[4]) : 26742,
                          argc > 5 ? std::atoi(argv[5]) : 20, argc > 6 ? std::atoi(argv[6]) : 1);
    dirmn_context_destroy(ctx);
    return rc;
  }
  const int64_t rows = argc > 2 ? std::atoll(argv[2]) : 262144;
  const int64_t cols = argc > 3 ? std::atoll(argv[3]) : 1024;
  const int reps = 5;
  dirmn_context* ctx = nullptr;
  require(dirmn_context_create(&ctx, be == "cuda" ? DIRMN_BACKEND_CUDA : DIRMN_BACKEND_CPU, 0),
          nullptr, "dirmn_context_create");
  const auto x = table_0_9(rows, cols);
  std::vector<double> alpha(static_cast<size_t>(cols)), g(static_cast<size_t>(cols)),
      h(static_cast<size_t>(cols));
  std::vector<double> t_fit, t_newton, t_sum, t_pass_w, t_pass;
  const std::vector<double> ones(static_cast<size_t>(rows), 1.0);
  dirmn_fit_result r;
  std::memset(&r, 0, sizeof r);
  r.size = sizeof r;
  r.alpha = alpha.data();
  // Every counts object is prepared first, so the fits run back to back as
  // in a session's work (a device left idle lowers its clocks and takes a
  // while to raise them; the last row shows that case on its own). That
  // holds reps + 1 copies of the table at once: 1.6 GB at 262144 x 1024.
  std::vector<dirmn_counts*> prepared(static_cast<size_t>(reps) + 1);
  for (auto& c : prepared)
    require(dirmn_counts_create_dense(ctx, &c, rows, cols, DIRMN_INT32, x.data(), cols, 1, nullptr),
            ctx, "dirmn_counts_create_dense");
  dirmn_context_synchronize(ctx);
  for (int rep = 0; rep < reps; ++rep) {
    dirmn_counts* c = prepared[static_cast<size_t>(rep)];
    auto t0 = std::chrono::steady_clock::now();
    require(dirmn_fit(ctx, c, nullptr, &r), ctx, "dirmn_fit");
    t_fit.push_back(seconds_since(t0));
    // Again, with the histograms now cached: the Newton iterations alone.
    t0 = std::chrono::steady_clock::now();
    require(dirmn_fit(ctx, c, nullptr, &r), ctx, "dirmn_fit");
    t_newton.push_back(seconds_since(t0));
    double f = 0, hs = 0;
    t0 = std::chrono::steady_clock::now();
    require(dirmn_loglik_sum(ctx, c, alpha.data(), 1, DIRMN_PARAM_ALPHA, nullptr, DIRMN_KERNEL, &f, g.data(),
                             h.data(), &hs),
            ctx, "dirmn_loglik_sum");
    t_sum.push_back(seconds_since(t0));
    // A pass with weights the counts object has no histograms for: the
    // weights go to the device, one pass over the table builds weighted
    // histograms, and the value and gradient follow from them. Alternating
    // weightings defeat the cache, so every call makes its pass.
    for (int pass = 0; pass < 2; ++pass) {
      const double* w = pass == 0 ? ones.data() : nullptr;
      t0 = std::chrono::steady_clock::now();
      require(dirmn_loglik_sum(ctx, c, alpha.data(), 1, DIRMN_PARAM_ALPHA, w, DIRMN_KERNEL, &f, g.data(),
                               nullptr, nullptr),
              ctx, "dirmn_loglik_sum");
      (pass == 0 ? t_pass_w : t_pass).push_back(seconds_since(t0));
    }
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(kIdleMs));
  auto t0 = std::chrono::steady_clock::now();
  require(dirmn_fit(ctx, prepared.back(), nullptr, &r), ctx, "dirmn_fit");
  const double t_idle = seconds_since(t0);
  for (dirmn_counts* c : prepared) dirmn_counts_destroy(c);
  std::printf("dirmn fit benchmark, %s backend, %lld x %lld counts 0-9 (median of %d)\n",
              be.c_str(), static_cast<long long>(rows), static_cast<long long>(cols), reps);
  std::printf("%-34s %12s\n", "step", "time");
  std::printf("%-34s %9.3f ms   (%d Newton iterations, converged %d, loglik %.6f)\n",
              "fit (histogram pass included)", 1e3 * median(t_fit), r.iterations, r.converged,
              r.loglik);
  std::printf("%-34s %9.3f ms\n", "fit again (histograms cached)", 1e3 * median(t_newton));
  std::printf("%-34s %9.3f ms\n", "sum: value+gradient+Hessian", 1e3 * median(t_sum));
  std::printf("%-34s %9.3f ms\n", "pass: value+gradient, weighted", 1e3 * median(t_pass_w));
  std::printf("%-34s %9.3f ms\n", "pass: value+gradient, unweighted", 1e3 * median(t_pass));
  std::printf("%-34s %9.3f ms   (one call, after %d ms with nothing to do)\n", "fit after idling", 1e3 * t_idle,
              kIdleMs);
  dirmn_context_destroy(ctx);
  return 0;
}
