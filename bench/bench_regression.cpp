// bench_regression.cpp: issue #29's benchmark -- dirmn_reg_fit on simulated
// DM regressions of the shapes, through the public C API. The same
// tables go to the anchors (bench/regression_mglm.R: MGLM's MGLMreg;
// bench/regression_torch.py: full-batch LBFGS in PyTorch) with --dump;
// bench/run_regression.sh runs all three and merges their tables.
//
// Usage:
//   dirmn_bench_regression [cpu|cuda] [--threads N] [--only NAME[,NAME]]
//                          [--dump DIR] [--csv FILE]
//
// The tables (seeded): rows x categories x covariates, the design an
// intercept and standard-normal covariates, beta ~ N(0, 0.25^2), 600 counts
// per row drawn from the DM at alpha = exp(X beta) (gamma draws, then a
// multinomial by conditional binomials):
//   small   500 x 20 x 3      medium  2000 x 50 x 5
//   large   5000 x 100 x 5    wide    800 x 1000 x 3 (3000 coefficients)
// Each row: the time of dirmn_reg_fit with standard errors (the median of
// 3 or more runs, 1 for wide), Newton steps, the log pmf, convergence.
#include <dirmn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace {

struct Shape {
  const char* name;
  int64_t rows, V, p;
  uint64_t seed;
};
constexpr Shape kShapes[] = {{"small", 500, 20, 3, 2901},
                             {"medium", 2000, 50, 5, 2902},
                             {"large", 5000, 100, 5, 2903},
                             {"wide", 800, 1000, 3, 2904}};
constexpr int kDepth = 600;

struct Table {
  std::vector<double> x;   // rows x p
  std::vector<int32_t> y;  // rows x V
};

Table simulate(const Shape& s) {
  Table t;
  std::mt19937_64 rng(s.seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> beta(static_cast<size_t>(s.p * s.V));
  for (double& b : beta) b = 0.25 * normal(rng);
  t.x.resize(static_cast<size_t>(s.rows * s.p));
  t.y.resize(static_cast<size_t>(s.rows * s.V));
  std::vector<double> g(static_cast<size_t>(s.V));
  for (int64_t b = 0; b < s.rows; ++b) {
    double* xb = t.x.data() + b * s.p;
    xb[0] = 1.0;
    for (int64_t i = 1; i < s.p; ++i) xb[i] = normal(rng);
    double total = 0.0;
    for (int64_t v = 0; v < s.V; ++v) {
      double eta = 0.0;
      for (int64_t i = 0; i < s.p; ++i) eta += xb[i] * beta[static_cast<size_t>(i * s.V + v)];
      std::gamma_distribution<double> gamma(std::exp(eta), 1.0);
      g[static_cast<size_t>(v)] = gamma(rng);
      total += g[static_cast<size_t>(v)];
    }
    int left = kDepth;
    for (int64_t v = 0; v < s.V; ++v) {
      int c = left;
      if (v + 1 < s.V && total > 0.0) {
        std::binomial_distribution<int> bin(left, std::min(1.0, g[static_cast<size_t>(v)] / total));
        c = bin(rng);
      }
      t.y[static_cast<size_t>(b * s.V + v)] = c;
      left -= c;
      total -= g[static_cast<size_t>(v)];
    }
  }
  return t;
}

void require(dirmn_status s, const dirmn_context* ctx, const char* what) {
  if (s == DIRMN_SUCCESS) return;
  std::fprintf(stderr, "%s: %s: %s\n", what, dirmn_status_string(s), dirmn_last_error(ctx));
  std::exit(1);
}

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void dump(const std::string& dir, const Shape& s, const Table& t) {
  std::ofstream y(dir + "/" + s.name + ".y.csv"), x(dir + "/" + s.name + ".x.csv");
  for (int64_t b = 0; b < s.rows; ++b) {
    for (int64_t v = 0; v < s.V; ++v) y << (v ? "," : "") << t.y[static_cast<size_t>(b * s.V + v)];
    y << "\n";
    for (int64_t i = 0; i < s.p; ++i) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.17g", t.x[static_cast<size_t>(b * s.p + i)]);
      x << (i ? "," : "") << buf;
    }
    x << "\n";
  }
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  size_t a = 0;
  while (a <= s.size()) {
    const size_t b = s.find(',', a);
    out.push_back(s.substr(a, b == std::string::npos ? std::string::npos : b - a));
    if (b == std::string::npos) break;
    a = b + 1;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string backend = "cpu", dump_dir, csv;
  std::vector<std::string> only;
  int threads = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "cpu" || a == "cuda") backend = a;
    else if (a == "--threads" && i + 1 < argc) threads = std::atoi(argv[++i]);
    else if (a == "--only" && i + 1 < argc) only = split(argv[++i]);
    else if (a == "--dump" && i + 1 < argc) dump_dir = argv[++i];
    else if (a == "--csv" && i + 1 < argc) csv = argv[++i];
    else {
      std::fprintf(stderr, "unknown argument %s (see the top of bench/bench_regression.cpp)\n", a.c_str());
      return 2;
    }
  }
  dirmn_context* ctx = nullptr;
  require(dirmn_context_create(&ctx, backend == "cuda" ? DIRMN_BACKEND_CUDA : DIRMN_BACKEND_CPU, 0), nullptr,
          "dirmn_context_create");
  require(dirmn_context_set_threads(ctx, threads), ctx, "dirmn_context_set_threads");
  int nthreads = 0;
  dirmn_context_get_threads(ctx, &nthreads);
  std::FILE* out = csv.empty() ? nullptr : std::fopen(csv.c_str(), "w");
  if (out) std::fprintf(out, "shape,rows,categories,covariates,seconds,iterations,loglik,converged\n");
  std::printf("dirmn regression benchmark, %s backend, %d threads (dirmn_reg_fit with standard errors)\n",
              backend.c_str(), nthreads);
  std::printf("%-8s %22s %12s %6s %20s %5s\n", "shape", "rows x V x p", "time", "iter", "loglik", "conv");
  for (const Shape& s : kShapes) {
    if (!only.empty() && std::find(only.begin(), only.end(), s.name) == only.end()) continue;
    const Table t = simulate(s);
    if (!dump_dir.empty()) dump(dump_dir, s, t);
    dirmn_counts* c = nullptr;
    require(dirmn_counts_create_dense(ctx, &c, s.rows, s.V, DIRMN_INT32, t.y.data(), s.V, 1, nullptr), ctx,
            "dirmn_counts_create_dense");
    std::vector<double> times;
    dirmn_reg_info in{};
    const int reps = s.p * s.V >= 2000 ? 1 : 3;
    for (int r = 0; r < reps; ++r) {
      dirmn_reg* reg = nullptr;
      const double t0 = now();
      require(dirmn_reg_fit(ctx, c, t.x.data(), s.rows, s.p, s.p, 1, nullptr, &reg), ctx, "dirmn_reg_fit");
      std::vector<double> se(static_cast<size_t>(s.p * s.V));
      const dirmn_status st = dirmn_reg_get_std_errors(reg, se.data(), s.V, 1);
      times.push_back(now() - t0);
      in.size = sizeof in;
      require(dirmn_reg_get_info(reg, &in), nullptr, "dirmn_reg_get_info");
      if (st != DIRMN_SUCCESS) std::fprintf(stderr, "%s: no standard errors (%s)\n", s.name, dirmn_last_error(nullptr));
      dirmn_reg_destroy(reg);
    }
    std::sort(times.begin(), times.end());
    const double tm = times[times.size() / 2];
    char dims[64];
    std::snprintf(dims, sizeof dims, "%lld x %lld x %lld", static_cast<long long>(s.rows),
                  static_cast<long long>(s.V), static_cast<long long>(s.p));
    std::printf("%-8s %22s %10.1f ms %6d %20.6f %5d\n", s.name, dims, tm * 1e3, in.iterations, in.loglik,
                in.converged);
    if (out)
      std::fprintf(out, "%s,%lld,%lld,%lld,%.6g,%d,%.12g,%d\n", s.name, static_cast<long long>(s.rows),
                   static_cast<long long>(s.V), static_cast<long long>(s.p), tm, in.iterations, in.loglik,
                   in.converged);
    dirmn_counts_destroy(c);
  }
  if (out) std::fclose(out);
  dirmn_context_destroy(ctx);
  return 0;
}
