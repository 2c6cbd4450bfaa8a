// bench_cpu.cpp: dirmn's CPU per-row log-likelihood against the R baselines
// (extraDistr::ddirmnom and plain vectorised lgamma), on the same tables.
//
//   dirmn_bench_cpu generate DIR    writes the tables and alpha to DIR
//   dirmn_bench_cpu time DIR        times dirmn on them, checks its results
//                                   against the R results in DIR (if any)
//                                   and prints the combined table
//
// bench/run_cpu.sh runs generate, bench/cpu_baselines.R, then time. The
// files are raw little-endian arrays so R reads them with readBin:
//   counts_<R>x<C>.i32   R x C int32 counts, row-major, uniform on 0..9
//   alpha_<C>.f64        C doubles, uniform on [0.1, 5]
// and R writes back r_times.csv (method,rows,cols,seconds,reps) and
// r_loglik_<R>x<C>.f64 (R's per-row values: ddirmnom's log pmf, then the
// plain expression's log-likelihood without the coefficient).
#include <dirmn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "splitmix.hpp"

namespace {

struct Shape {
  int64_t rows, cols;
};
const Shape kShapes[] = {{65536, 256}, {16384, 1024}};
constexpr uint64_t kSeed = 20261129;

using Rng = SplitMix64;

std::string counts_file(const std::string& dir, const Shape& s) {
  return dir + "/counts_" + std::to_string(s.rows) + "x" + std::to_string(s.cols) + ".i32";
}
std::string alpha_file(const std::string& dir, const Shape& s) {
  return dir + "/alpha_" + std::to_string(s.cols) + ".f64";
}

template <class T>
bool write_raw(const std::string& path, const std::vector<T>& v) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(T)));
  return static_cast<bool>(f);
}

template <class T>
bool read_raw(const std::string& path, std::vector<T>* v, size_t n) {
  std::ifstream f(path, std::ios::binary);
  v->resize(n);
  f.read(reinterpret_cast<char*>(v->data()), static_cast<std::streamsize>(n * sizeof(T)));
  return f.gcount() == static_cast<std::streamsize>(n * sizeof(T));
}

bool little_endian() {
  const uint16_t one = 1;
  unsigned char b;
  std::memcpy(&b, &one, 1);
  return b == 1;
}

int generate(const std::string& dir) {
  if (!little_endian()) {
    std::fprintf(stderr, "the data files are little-endian; this host is not\n");
    return 1;
  }
  for (const Shape& s : kShapes) {
    Rng rng{kSeed + static_cast<uint64_t>(s.cols)};
    std::vector<int32_t> x(static_cast<size_t>(s.rows * s.cols));
    for (auto& c : x) c = static_cast<int32_t>(rng.next() % 10);
    std::vector<double> alpha(static_cast<size_t>(s.cols));
    for (auto& a : alpha) a = 0.1 + 4.9 * rng.uniform();
    if (!write_raw(counts_file(dir, s), x) || !write_raw(alpha_file(dir, s), alpha)) {
      std::fprintf(stderr, "cannot write to %s\n", dir.c_str());
      return 1;
    }
  }
  return 0;
}

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Median seconds per call over at least `min_reps` calls and `min_time`
// seconds, after one warm-up call.
template <class F>
double median_time(F&& f, int min_reps = 9, double min_time = 1.0) {
  f();
  std::vector<double> t;
  const double start = now();
  while (static_cast<int>(t.size()) < min_reps || now() - start < min_time) {
    const double t0 = now();
    f();
    t.push_back(now() - t0);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

#define CHECK_DIRMN(call, ctx)                                                        \
  do {                                                                                \
    const dirmn_status st_ = (call);                                                  \
    if (st_ != DIRMN_SUCCESS) {                                                       \
      std::fprintf(stderr, "%s failed: %s\n", #call, dirmn_last_error(ctx));          \
      std::exit(1);                                                                   \
    }                                                                                 \
  } while (0)

struct Result {
  std::string method;
  Shape shape;
  double seconds;
};

// R's timings: method,rows,cols,seconds,reps.
std::vector<Result> read_r_times(const std::string& path) {
  std::vector<Result> r;
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);  // header
  while (std::getline(f, line)) {
    std::stringstream ss(line);
    std::string method, rows, cols, secs;
    std::getline(ss, method, ',');
    std::getline(ss, rows, ',');
    std::getline(ss, cols, ',');
    std::getline(ss, secs, ',');
    if (secs.empty()) continue;
    r.push_back({method, {std::stoll(rows), std::stoll(cols)}, std::stod(secs)});
  }
  return r;
}

// Largest relative difference, with an absolute floor for values near 0.
double max_rel_diff(const std::vector<double>& a, const double* b, size_t n) {
  double m = 0;
  for (size_t i = 0; i < n; ++i) {
    const double d = std::fabs(a[i] - b[i]) / std::max(1.0, std::fabs(b[i]));
    if (!(d <= m)) m = d;  // NaN propagates as "worse than anything"
  }
  return m;
}

int time_all(const std::string& dir) {
  dirmn_context* ctx = nullptr;
  if (dirmn_context_create(&ctx, DIRMN_BACKEND_CPU, 0) != DIRMN_SUCCESS) {
    std::fprintf(stderr, "dirmn_context_create: %s\n", dirmn_last_error(nullptr));
    return 1;
  }
  int all_threads = 0;
  CHECK_DIRMN(dirmn_context_get_threads(ctx, &all_threads), ctx);
  std::vector<Result> results;
  bool mismatch = false;
  for (const Shape& s : kShapes) {
    std::vector<int32_t> x;
    std::vector<double> alpha;
    const size_t cells = static_cast<size_t>(s.rows * s.cols);
    if (!read_raw(counts_file(dir, s), &x, cells) ||
        !read_raw(alpha_file(dir, s), &alpha, static_cast<size_t>(s.cols))) {
      std::fprintf(stderr, "missing data in %s: run `generate` first\n", dir.c_str());
      return 1;
    }
    // The counts object is prepared once, as a user's repeated calls (a fit,
    // a mixture) would use it; only the likelihood call is timed.
    dirmn_counts* counts = nullptr;
    CHECK_DIRMN(dirmn_counts_create_dense(ctx, &counts, s.rows, s.cols, DIRMN_INT32, x.data(),
                                          s.cols, 1, nullptr),
                ctx);
    std::vector<double> full(static_cast<size_t>(s.rows)), ll(static_cast<size_t>(s.rows));
    auto run = [&](uint32_t flags, std::vector<double>* out) {
      CHECK_DIRMN(dirmn_loglik(ctx, counts, 1, alpha.data(), s.cols, 1, DIRMN_PARAM_ALPHA, flags,
                               out->data(), 1, 1),
                  ctx);
    };
    // DIRMN_FULL: the log pmf, what ddirmnom returns.
    for (int threads : {0, 1}) {
      CHECK_DIRMN(dirmn_context_set_threads(ctx, threads), ctx);
      const double t = median_time([&] { run(DIRMN_FULL, &full); });
      results.push_back({threads == 0 ? "dirmn (" + std::to_string(all_threads) + " threads)"
                                      : std::string("dirmn (1 thread)"),
                         s, t});
    }
    CHECK_DIRMN(dirmn_context_set_threads(ctx, 0), ctx);
    run(0, &ll);
    // Agreement with R on the same data: any difference beyond rounding means
    // the methods do not compute the same thing and the timings mean nothing.
    std::vector<double> r;
    const std::string rpath =
        dir + "/r_loglik_" + std::to_string(s.rows) + "x" + std::to_string(s.cols) + ".f64";
    if (read_raw(rpath, &r, 2 * static_cast<size_t>(s.rows))) {
      const double d_full = max_rel_diff(full, r.data(), static_cast<size_t>(s.rows));
      const double d_ll = max_rel_diff(ll, r.data() + s.rows, static_cast<size_t>(s.rows));
      std::printf("%lld x %lld: max rel. difference to extraDistr %.2g, to plain R %.2g\n",
                  static_cast<long long>(s.rows), static_cast<long long>(s.cols), d_full, d_ll);
      if (!(d_full <= 1e-10 && d_ll <= 1e-10)) mismatch = true;
    }
    dirmn_counts_destroy(counts);
  }
  dirmn_context_destroy(ctx);

  for (const Result& r : read_r_times(dir + "/r_times.csv")) results.push_back(r);
  std::map<std::pair<int64_t, int64_t>, double> extradistr;
  for (const Result& r : results)
    if (r.method == "extraDistr::ddirmnom") extradistr[{r.shape.rows, r.shape.cols}] = r.seconds;

  std::printf("\n%-24s %-13s %14s %12s %14s\n", "method", "shape", "time/call", "M cells/s",
              "x extraDistr");
  for (const Shape& s : kShapes)
    for (const Result& r : results) {
      if (r.shape.rows != s.rows || r.shape.cols != s.cols) continue;
      const double mcells = static_cast<double>(s.rows * s.cols) / r.seconds / 1e6;
      char shape[32], time[32], ratio[32] = "-";
      std::snprintf(shape, sizeof shape, "%lldx%lld", static_cast<long long>(s.rows),
                    static_cast<long long>(s.cols));
      if (r.seconds >= 1) std::snprintf(time, sizeof time, "%.3f s", r.seconds);
      else std::snprintf(time, sizeof time, "%.2f ms", r.seconds * 1e3);
      const auto e = extradistr.find({s.rows, s.cols});
      if (e != extradistr.end()) std::snprintf(ratio, sizeof ratio, "%.1f", e->second / r.seconds);
      std::printf("%-24s %-13s %14s %12.1f %14s\n", r.method.c_str(), shape, time, mcells, ratio);
    }
  if (mismatch) {
    std::fprintf(stderr, "dirmn and R disagree beyond 1e-10: see above\n");
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "generate") == 0) return generate(argv[2]);
  if (argc == 3 && std::strcmp(argv[1], "time") == 0) return time_all(argv[2]);
  std::fprintf(stderr, "usage: %s generate DIR | time DIR\n", argv[0]);
  return 2;
}
