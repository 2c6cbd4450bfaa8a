// bench_sample.cpp: issue #30's benchmark -- dirmn_sample at the issue's
// shapes, and the parametric-bootstrap group test, through the public C API.
// bench/run_sample.sh runs it beside the anchors on the same shapes
// (bench/sample_anchors.R: extraDistr's rdirmnom and MGLM's rdirmn;
// bench/sample_torch.py: torch.distributions' Dirichlet then Multinomial).
//
// Usage:
//   dirmn_bench_sample [cpu|cuda] [--threads N] [--quick] [--per-row] [--only NAME[,NAME]]
//                      [--power FILE [--tables N]]
//
// The shapes (rows x categories, size per row), alpha_v = 0.5 + (v mod 7)
// / 2 (1.8 on average: dense rows where the size passes the categories):
//   wide-deep     10^4 x 1000, 10^4        tall        10^5 x 100, 10^3
//   wide-shallow  10^4 x 1000, 100         sparse      10^4 x 30000, 2000 (alpha 0.01: a
//                                                       microbiome-like table)
//   tiny-alpha    10^4 x 1000, 10^4 at alpha 1e-300 (every row in one category)
//   and on the CUDA backend (or named by --only) the GPU shapes:
//   deep-1e5      10^5 x 1000, 10^4        shallow-1e5   10^5 x 1000, 100
//   deep-1e6      10^6 x 1000, 10^4
//   (--quick: a tenth of the rows. --per-row: each row its own size, spread
//   over [size / 2, 3 size / 2].) Each row: the median of 3 draws (one for
//   draws over 2 s), cells/s (rows x categories / time), the table's
//   nonzeros and whether any row's total differs from its size.
// Then: dirmn_test_groups with a 1000-table parametric bootstrap on a 500 x
// 50 table in two groups (the target). With --power FILE (one
// group's alpha per line, comma-separated; bench/power_hmp.R writes HMP's
// example): dirmn_power_groups on HMP's MC.Xdc.statistics example design
// -- 9, 11 and 12 subjects of 12000 reads -- with N tables (default 1000),
// for the likelihood ratio and for Xmcupo.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "dirmn.h"

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void require(dirmn_status s, dirmn_context* ctx, const char* what) {
  if (s == DIRMN_SUCCESS) return;
  std::fprintf(stderr, "%s: %s: %s\n", what, dirmn_status_string(s), dirmn_last_error(ctx));
  std::exit(1);
}

struct Shape {
  const char* name;
  int64_t rows, cols, size;
  double alpha;  // 0: the default pattern
  bool gpu;      // drawn by default on the CUDA backend only
};

constexpr Shape kShapes[] = {{"wide-deep", 10000, 1000, 10000, 0.0, false},
                             {"wide-shallow", 10000, 1000, 100, 0.0, false},
                             {"tall", 100000, 100, 1000, 0.0, false},
                             {"sparse", 10000, 30000, 2000, 0.01, false},
                             {"tiny-alpha", 10000, 1000, 10000, 1e-300, false},
                             {"deep-1e5", 100000, 1000, 10000, 0.0, true},
                             {"shallow-1e5", 100000, 1000, 100, 0.0, true},
                             {"deep-1e6", 1000000, 1000, 10000, 0.0, true}};

// Row b's size with --per-row: spread over [size / 2, 3 size / 2], the
// shape's size on average.
int64_t size_of_row(int64_t size, int64_t b) {
  return size / 2 + static_cast<int64_t>((static_cast<uint64_t>(b) * 2654435761u) % static_cast<uint64_t>(size + 1));
}

std::vector<double> alpha_of(const Shape& s) {
  std::vector<double> a(static_cast<size_t>(s.cols));
  for (int64_t v = 0; v < s.cols; ++v) a[static_cast<size_t>(v)] = s.alpha > 0.0 ? s.alpha : 0.5 + static_cast<double>(v % 7) / 2.0;
  return a;
}

bool wanted(const std::string& only, const char* name) {
  if (only.empty()) return true;
  const std::string n = name;
  size_t at = 0;
  while (at <= only.size()) {
    const size_t end = std::min(only.find(',', at), only.size());
    if (only.substr(at, end - at) == n) return true;
    at = end + 1;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  std::string backend = "cpu", only, power_file;
  int64_t power_tables = 1000;
  int threads = 0;
  bool quick = false, per_row = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "cpu" || a == "cuda") backend = a;
    else if (a == "--threads" && i + 1 < argc) threads = std::atoi(argv[++i]);
    else if (a == "--quick") quick = true;
    else if (a == "--per-row") per_row = true;
    else if (a == "--only" && i + 1 < argc) only = argv[++i];
    else if (a == "--power" && i + 1 < argc) power_file = argv[++i];
    else if (a == "--tables" && i + 1 < argc) power_tables = std::atoll(argv[++i]);
    else {
      std::fprintf(stderr, "usage: dirmn_bench_sample [cpu|cuda] [--threads N] [--quick] [--per-row] [--only NAMES] "
                           "[--power FILE [--tables N]]\n");
      return 2;
    }
  }
  dirmn_context* ctx = nullptr;
  require(dirmn_context_create(&ctx, backend == "cuda" ? DIRMN_BACKEND_CUDA : DIRMN_BACKEND_CPU, 0), nullptr,
          "context");
  if (threads > 0) require(dirmn_context_set_threads(ctx, threads), ctx, "threads");
  dirmn_context_get_threads(ctx, &threads);
  std::printf("dirmn sampling benchmark, %s backend, %d host threads%s%s\n", backend.c_str(), threads,
              quick ? " (--quick: a tenth of the rows)" : "",
              per_row ? " (--per-row: sizes from size / 2 to 3 size / 2)" : "");
  std::printf("%-13s %22s %10s %12s %12s %10s\n", "shape", "rows x cols, size", "time", "cells/s", "nonzeros",
              "totals ok");
  for (const Shape& s0 : kShapes) {
    if (!wanted(only, s0.name)) continue;
    if (s0.gpu && only.empty() && backend != "cuda") continue;
    Shape s = s0;
    if (quick) s.rows /= 10;
    std::vector<int64_t> sizes(per_row ? static_cast<size_t>(s.rows) : 1, s.size);
    if (per_row)
      for (int64_t b = 0; b < s.rows; ++b) sizes[static_cast<size_t>(b)] = size_of_row(s.size, b);
    const std::vector<double> alpha = alpha_of(s);
    std::vector<double> times;
    dirmn_counts_info info;
    std::memset(&info, 0, sizeof info);
    info.size = sizeof info;
    bool totals_ok = true;
    for (int rep = 0; rep < 3; ++rep) {
      dirmn_sample_options o;
      dirmn_sample_options_init(&o);
      o.seed = 1 + static_cast<uint64_t>(rep);
      dirmn_counts* c = nullptr;
      const auto t0 = std::chrono::steady_clock::now();
      require(dirmn_sample(ctx, &c, s.rows, s.cols, 1, alpha.data(), s.cols, 1, DIRMN_PARAM_ALPHA, sizes.data(),
                           per_row ? 1 : 0, &o),
              ctx, "dirmn_sample");
      times.push_back(seconds_since(t0));
      require(dirmn_counts_get_info(c, &info), ctx, "info");
      std::vector<double> totals(static_cast<size_t>(s.rows));
      require(dirmn_counts_row_totals(ctx, c, totals.data()), ctx, "totals");
      for (int64_t b = 0; b < s.rows; ++b)
        totals_ok = totals_ok && totals[static_cast<size_t>(b)] == static_cast<double>(sizes[per_row ? static_cast<size_t>(b) : 0]);
      dirmn_counts_destroy(c);
      if (times.back() > 2.0) break;
    }
    std::sort(times.begin(), times.end());
    const double t = times[times.size() / 2];
    char dims[64];
    std::snprintf(dims, sizeof dims, "%lld x %lld, %lld", static_cast<long long>(s.rows),
                  static_cast<long long>(s.cols), static_cast<long long>(s.size));
    std::printf("%-13s %22s %8.3f s %12.3g %12lld %10s\n", s.name, dims, t,
                static_cast<double>(s.rows * s.cols) / t, static_cast<long long>(info.nnz),
                totals_ok ? "yes" : "NO");
  }
  if (wanted(only, "bootstrap")) {
    // 500 x 50 in two groups, drawn from one DM (the null holds).
    const int64_t rows = 500, cols = 50, size = 400;
    std::vector<double> alpha(static_cast<size_t>(cols));
    for (int64_t v = 0; v < cols; ++v) alpha[static_cast<size_t>(v)] = 0.2 + static_cast<double>(v % 5);
    dirmn_sample_options so;
    dirmn_sample_options_init(&so);
    so.seed = 30;
    dirmn_counts* c = nullptr;
    require(dirmn_sample(ctx, &c, rows, cols, 1, alpha.data(), cols, 1, DIRMN_PARAM_ALPHA, &size, 0, &so), ctx,
            "dirmn_sample");
    std::vector<int64_t> group(static_cast<size_t>(rows));
    for (int64_t b = 0; b < rows; ++b) group[static_cast<size_t>(b)] = b % 2;
    dirmn_group_test_options o;
    dirmn_group_test_options_init(&o);
    o.bootstrap = 1000;
    o.seed = 1;
    dirmn_group_test_result r;
    std::memset(&r, 0, sizeof r);
    r.size = sizeof r;
    const auto t0 = std::chrono::steady_clock::now();
    require(dirmn_test_groups(ctx, c, group.data(), 2, &o, &r), ctx, "dirmn_test_groups");
    const double t = seconds_since(t0);
    std::printf("\ngroup test, 500 x 50 in two groups, B = 1000 bootstrap tables: %.3f s "
                "(statistic %.3f on %.0f df, chi-square p %.4f, bootstrap p %.4f)\n",
                t, r.statistic, r.df, r.p_value, r.p_value_bootstrap);
    dirmn_counts_destroy(c);
  }
  if (!power_file.empty()) {
    std::ifstream in(power_file);
    std::vector<double> alpha;
    int64_t groups = 0, cols = 0;
    for (std::string line; std::getline(in, line);) {
      if (line.empty()) continue;
      std::stringstream ss(line);
      int64_t n = 0;
      for (std::string cell; std::getline(ss, cell, ',');) {
        alpha.push_back(std::stod(cell));
        ++n;
      }
      cols = n;
      ++groups;
    }
    if (groups < 2 || static_cast<int64_t>(alpha.size()) != groups * cols) {
      std::fprintf(stderr, "%s: want one group's alpha per line, the same length each\n", power_file.c_str());
      return 1;
    }
    // HMP's MC.Xdc.statistics example: 9, 11 and 12 subjects of 12000 reads.
    std::vector<int64_t> rows_per_group(static_cast<size_t>(groups), 10);
    const int64_t example[3] = {9, 11, 12};
    for (int64_t g = 0; g < groups && g < 3; ++g) rows_per_group[static_cast<size_t>(g)] = example[g];
    int64_t rows = 0;
    for (int64_t n : rows_per_group) rows += n;
    const std::vector<int64_t> sizes(static_cast<size_t>(rows), 12000);
    std::printf("\npower by simulation, %lld groups x %lld taxa (rows", static_cast<long long>(groups),
                static_cast<long long>(cols));
    for (int64_t n : rows_per_group) std::printf(" %lld", static_cast<long long>(n));
    std::printf(", 12000 reads each), %lld tables at level 0.05\n", static_cast<long long>(power_tables));
    for (dirmn_group_statistic stat : {DIRMN_GROUP_LRT, DIRMN_GROUP_XMCUPO}) {
      dirmn_power_options o;
      dirmn_power_options_init(&o);
      o.tables = power_tables;
      o.seed = 1;
      o.statistic = stat;
      dirmn_power_result r;
      std::memset(&r, 0, sizeof r);
      r.size = sizeof r;
      const auto t0 = std::chrono::steady_clock::now();
      require(dirmn_power_groups(ctx, groups, cols, alpha.data(), cols, 1, DIRMN_PARAM_ALPHA, rows_per_group.data(),
                                 sizes.data(), &o, &r),
              ctx, "dirmn_power_groups");
      const double t = seconds_since(t0);
      std::printf("  %-7s %8.3f s (%.2f ms a table): power %.4f (se %.4f), mean statistic %.2f\n",
                  stat == DIRMN_GROUP_LRT ? "LRT" : "Xmcupo", t, 1e3 * t / static_cast<double>(power_tables), r.power,
                  r.std_error, r.mean_statistic);
    }
  }
  dirmn_context_destroy(ctx);
  return 0;
}
