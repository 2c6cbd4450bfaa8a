// bench_shapes.cpp: issue #26's benchmark -- what loading, likelihoods,
// fits and mixtures cost on tables of real shapes, through the public C API
// alone (so one source builds against any 0.3 library: bench/run_shapes.sh
// runs it against an earlier commit's library and this one's, beside
// bench/shapes_torch.py). Prints one table per count table.
//
// Usage:
//   dirmn_bench_shapes [cpu|cuda] [--threads N] [--quick | --large]
//                      [--only NAME[,NAME]] [--steps STEP[,STEP]]
//                      [--data DIR] [--dump DIR] [--csv FILE] [--em-iterations N]
//                      [--range-k K]
//
//   cpu|cuda        the context's backend (default cpu)
//   --threads N     the context's host threads (dirmn_context_set_threads;
//                   default 0, every hardware thread)
//   --quick         the synthetic tables with a quarter of the rows, half of
//                   the columns and half of the depth (about the same density)
//   --large         issue #27's GPU sizes: single-cell 300000 x 20000 and
//                   text 100000 x 50000 (microbiome unchanged), same
//                   densities and depths
//   --only NAMES    only these tables: microbiome, single-cell, text,
//                   globalpatterns, soilrep (comma-separated)
//   --steps STEPS   only these rows: load, loglik, fit, em, range
//                   (comma-separated; default all)
//   --data DIR      the real tables' folder (default: ../shared/data beside
//                   the repository the bench was built from); real tables
//                   are skipped, saying so, where it has none
//   --dump DIR      writes each table, its K = 1 alpha and dirmn's per-row
//                   log pmf under it as raw arrays (shapes_tables.hpp) for
//                   shapes_torch.py
//   --csv FILE      every row also as CSV (what run_shapes.sh merges)
//   --em-iterations N  the EM-iteration rows' N (default 5)
//   --range-k K     fit_range's k_max for every table (0 leaves the row out)
//
// The tables (shapes_tables.hpp draws them, seeded, directly as CSR):
//   microbiome   2000 x 30000, ~5 % nonzero: reads over taxa of Zipf-like
//                abundance (rank^-1.15), 6 community types, 30 % of each
//                sample's reads from a sample-private perturbation of the
//                top 500 taxa; depth log-normal, median 7000 (1000-30000);
//                counts mostly 1 (68 %), 99th percentile ~75, largest ~5000
//   single-cell  20000 x 20000, ~3 % nonzero: UMIs over genes, three genes
//                with 15, 5 and 2 % of the reads, the rest rank^-0.9; 8 cell
//                types; depth log-normal, median 750; counts 1-3 for 94 %,
//                largest ~8000
//   text         20000 x 50000, ~0.2 % nonzero: words of Zipf frequency
//                (rank^-1.05), 10 topics; documents of median 130 words;
//                counts 1 for 84 %, largest ~300
//   globalpatterns, soilrep: the real 26 x 19216 and 56 x 16825 tables of
//                DIR (samples are rows)
//
// The rows of each table (one context; every time the median of 3 or more
// repetitions unless it says "1 run"):
//   load dense      dirmn_counts_create_dense of the row-major int32 array
//                   (AUTO storage: validation and encoding), destroyed after
//                   each; "-" where rows x cols x 4 bytes pass 1 GiB. cells/s
//   load CSR        dirmn_counts_create_sparse of int32 ptr, indices and
//                   values. nonzeros/s
//   loglik K=1      dirmn_loglik, one alpha vector for every row: the rows'
//                   log pmf. alpha_j = 0.05 + 50 p_j (p_j column j's share
//                   of all counts). nonzeros/s
//   loglik K=8      dirmn_loglik with 8 vectors (alpha times 2^(m/2 - 2),
//                   m = 0..7): rows x 8 values. nonzeros x 8 per second
//   loglik_sum+grad dirmn_loglik_sum, value and gradient in log alpha (the
//                   K = 1 alpha), once the first call has built the
//                   histograms (its time is in the notes)
//   fit first       dirmn_fit, default options, on a counts object made just
//                   before (untimed): its histogram pass included
//   fit later       a second dirmn_fit on the same object (histograms cached)
//   EM iteration    one mixture start of k components (dirmn_mixture_fit,
//                   starts 1, init k-means++, max_iterations N + 1,
//                   tolerance DBL_MIN, since 0 is refused, so that it runs
//                   them all): the time from the first progress callback to
//                   the last over N, i.e. an M step (k weighted histogram
//                   sets, k Newton fits) and an E step (rows x k
//                   likelihoods), without the initialisation and the first
//                   iteration; 1 run. k = 10 on microbiome, 8 on
//                   single-cell and text (20 on text with --large), 5 on
//                   the real tables
//   fit_range       dirmn_mixture_fit_range k = 1..K with default options;
//                   1 run. K keeps the whole run near 4 minutes on 2 cores:
//                   5 on microbiome, 3 on single-cell, 2 on text, 5 on
//                   globalpatterns (k = 1..10 takes 160 s there), 10 on
//                   soilrep; --range-k K sets it for every table (0: no row)
// "device" says where the step ran, from dirmn_counts_get_info's host_steps
// for the step's DIRMN_STEP_* bits ("cpu", "cuda0", or "cuda0+cpu" where
// some of them fall back to the host); "thr" the context's threads.
#include <dirmn.h>

#include <algorithm>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "shapes_tables.hpp"

#ifndef DIRMN_SHAPES_DATA_DIR
#define DIRMN_SHAPES_DATA_DIR ""
#endif

namespace {

using shapes::Csr;

struct Args {
  std::string backend = "cpu";
  int threads = 0;
  bool quick = false, large = false;
  std::vector<std::string> only, steps;
  std::string data = DIRMN_SHAPES_DATA_DIR;
  std::string dump, csv;
  int em_iterations = 5;
  int range_k = -1;  // fit_range's k_max for every table; -1 the defaults, 0 none
};

void require(dirmn_status s, const dirmn_context* ctx, const char* what) {
  if (s == DIRMN_SUCCESS) return;
  std::fprintf(stderr, "%s: %s: %s\n", what, dirmn_status_string(s), dirmn_last_error(ctx));
  std::exit(1);
}

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The median of at least min_reps calls of f, more (up to max_reps) while
// the calls so far took under `budget` seconds: many of a millisecond's
// call, so that a shared machine's bursts move the median little. `setup` runs untimed
// before each call, `teardown` after it.
template <class Setup, class F, class Teardown>
double median_time(Setup&& setup, F&& f, Teardown&& teardown, int min_reps = 3, int max_reps = 51,
                   double budget = 1.0) {
  std::vector<double> t;
  double spent = 0.0;
  while (static_cast<int>(t.size()) < min_reps || (static_cast<int>(t.size()) < max_reps && spent < budget)) {
    setup();
    const double t0 = now();
    f();
    t.push_back(now() - t0);
    spent += t.back();
    teardown();
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}
template <class F>
double median_time(F&& f) {
  return median_time([] {}, f, [] {});
}

dirmn_counts_info counts_info(const dirmn_counts* c) {
  dirmn_counts_info i;
  std::memset(&i, 0, sizeof i);
  i.size = sizeof i;
  require(dirmn_counts_get_info(c, &i), nullptr, "dirmn_counts_get_info");
  return i;
}

// Where the steps `steps` of a counts object run.
std::string where(const dirmn_counts_info& i, uint32_t steps) {
  if (i.backend == DIRMN_BACKEND_CPU) return "cpu";
  const std::string dev = "cuda" + std::to_string(i.device);
  const uint32_t host = i.host_steps & steps;
  if ((i.unavailable_steps & steps) != 0) return dev + "(n/a)";
  return host == 0 ? dev : host == steps ? "cpu" : dev + "+cpu";
}

std::string stored(const dirmn_counts_info& i) {
  return std::string(i.storage == DIRMN_STORAGE_SPARSE ? "sparse" : "dense") + " " +
         std::to_string(i.value_bits) + "-bit";
}

std::string fmt_time(double s) {
  char b[32];
  if (!(s >= 0.0)) return "-";
  if (s < 1e-3) std::snprintf(b, sizeof b, "%.1f us", 1e6 * s);
  else if (s < 1.0) std::snprintf(b, sizeof b, "%.2f ms", 1e3 * s);
  else std::snprintf(b, sizeof b, "%.3f s", s);
  return b;
}

std::string fmt_rate(double r, const char* unit) {
  char b[48];
  if (!(r > 0.0)) return "";
  if (r >= 1e9) std::snprintf(b, sizeof b, "%.2f G%s", r / 1e9, unit);
  else if (r >= 1e6) std::snprintf(b, sizeof b, "%.1f M%s", r / 1e6, unit);
  else std::snprintf(b, sizeof b, "%.0f k%s", r / 1e3, unit);
  return b;
}

class Report {
 public:
  Report(const std::string& csv_path, int threads) : threads_(threads) {
    if (!csv_path.empty()) {
      csv_.open(csv_path);
      if (!csv_) {
        std::fprintf(stderr, "cannot write %s\n", csv_path.c_str());
        std::exit(1);
      }
      csv_ << "table,step,seconds,rate,unit,device,threads,value,note\n";
    }
  }
  void table(const std::string& name) {
    table_ = name;
    std::printf("\n%-22s %11s %15s %-10s %3s  %s\n", "step", "time", "rate", "device", "thr", "notes");
  }
  // seconds < 0: not measured ("-"). value: a number the runs should agree
  // on (a log-likelihood), NaN for none.
  void row(const std::string& step, double seconds, double rate, const char* unit, const std::string& device,
           const std::string& note, double value = NAN) {
    std::printf("%-22s %11s %15s %-10s %3d  %s\n", step.c_str(), fmt_time(seconds).c_str(),
                fmt_rate(rate, unit).c_str(), device.c_str(), threads_, note.c_str());
    std::fflush(stdout);
    if (!csv_.is_open()) return;
    std::string n = note;
    std::replace(n.begin(), n.end(), ',', ';');
    char v[40] = "";
    if (std::isfinite(value)) std::snprintf(v, sizeof v, "%.17g", value);
    char s[40] = "";
    if (seconds >= 0.0) std::snprintf(s, sizeof s, "%.9g", seconds);
    csv_ << table_ << ',' << step << ',' << s << ',' << (rate > 0 ? std::to_string(rate) : "") << ',' << unit << ','
         << device << ',' << threads_ << ',' << v << ',' << n << '\n';
  }

 private:
  std::ofstream csv_;
  std::string table_;
  int threads_;
};

struct Plan {
  int em_k;     // components of the EM-iteration row
  int range_k;  // fit_range's k_max
};

bool listed(const std::vector<std::string>& list, const std::string& name) {
  return list.empty() || std::find(list.begin(), list.end(), name) != list.end();
}
bool wanted(const Args& a, const std::string& name) { return listed(a.only, name); }
bool step_wanted(const Args& a, const char* step) { return listed(a.steps, step); }

// The k of each table's mixture rows. fit_range's k_max keeps each table's
// call within about a minute on 2 cores (on single-cell k = 1..5 takes
// several minutes, on text k = 3 alone a minute; globalpatterns k = 1..10
// 160 s), unless --range-k sets it.
Plan plan_for(const std::string& name, const Args& a) {
  Plan p = name == "microbiome"       ? Plan{10, 5}
           : name == "single-cell"    ? Plan{8, 3}
           : name == "text"           ? Plan{8, 2}
           : name == "globalpatterns" ? Plan{5, 5}
                                      : Plan{5, 10};
  if (a.large && name == "text") p.em_k = 20;  // issue #27's text row
  if (a.range_k >= 0) p.range_k = a.range_k;
  return p;
}

dirmn_counts* load_csr(dirmn_context* ctx, const Csr& c) {
  dirmn_counts* h = nullptr;
  require(dirmn_counts_create_sparse(ctx, &h, DIRMN_CSR, c.rows, c.cols, c.nnz(), DIRMN_INDEX_INT32, c.ptr.data(),
                                     c.idx.data(), DIRMN_INT32, c.val.data(), nullptr),
          ctx, "dirmn_counts_create_sparse");
  return h;
}

void describe(const std::string& name, const Csr& c, const std::string& origin) {
  int32_t max_count = 0;
  for (int32_t x : c.val) max_count = std::max(max_count, x);
  std::vector<int64_t> totals(static_cast<size_t>(c.rows), 0);
  size_t ones = 0;
  for (int64_t b = 0; b < c.rows; ++b)
    for (int32_t i = c.ptr[static_cast<size_t>(b)]; i < c.ptr[static_cast<size_t>(b) + 1]; ++i) {
      totals[static_cast<size_t>(b)] += c.val[static_cast<size_t>(i)];
      ones += c.val[static_cast<size_t>(i)] == 1;
    }
  std::nth_element(totals.begin(), totals.begin() + c.rows / 2, totals.end());
  std::printf("\n== %s: %lld x %lld, %lld nonzeros (%.3f %%), counts 1 in %.0f %% of them, largest %d, "
              "median row total %lld; %s\n",
              name.c_str(), static_cast<long long>(c.rows), static_cast<long long>(c.cols),
              static_cast<long long>(c.nnz()), 100.0 * static_cast<double>(c.nnz()) / static_cast<double>(c.rows * c.cols),
              100.0 * static_cast<double>(ones) / static_cast<double>(std::max<int64_t>(1, c.nnz())), max_count,
              static_cast<long long>(totals[static_cast<size_t>(c.rows / 2)]), origin.c_str());
}

void run_table(dirmn_context* ctx, const Args& a, Report& rep, const std::string& name, const Csr& c,
               const Plan& plan, int threads) {
  const double nnz = static_cast<double>(c.nnz());
  const int64_t V = c.cols;
  rep.table(name);

  // Loading. The counts objects are destroyed between repetitions, so each
  // one pays for its memory as a caller's first load would.
  dirmn_counts* h = nullptr;
  std::string form, dev;  // of the last load
  const auto read_and_destroy = [&] {
    const dirmn_counts_info i = counts_info(h);
    form = stored(i);
    dev = where(i, 0);
    dirmn_counts_destroy(h);
    h = nullptr;
  };
  const double dense_bytes = 4.0 * static_cast<double>(c.rows) * static_cast<double>(c.cols);
  if (step_wanted(a, "load") && dense_bytes <= 1024.0 * 1024.0 * 1024.0) {
    const std::vector<int32_t> x = shapes::to_dense(c);
    const double t = median_time(
        [] {},
        [&] {
          require(dirmn_counts_create_dense(ctx, &h, c.rows, c.cols, DIRMN_INT32, x.data(), c.cols, 1, nullptr), ctx,
                  "dirmn_counts_create_dense");
        },
        read_and_destroy);
    rep.row("load dense int32", t, static_cast<double>(c.rows * c.cols) / t, "cell/s", dev, "stored " + form);
  } else if (step_wanted(a, "load")) {
    char n[80];
    std::snprintf(n, sizeof n, "skipped: the dense array would take %.1f GiB", dense_bytes / (1u << 30));
    rep.row("load dense int32", -1.0, 0.0, "cell/s", "-", n);
  }
  if (step_wanted(a, "load")) {
    const double t = median_time(
        [] {}, [&] { h = load_csr(ctx, c); },
        read_and_destroy);
    rep.row("load CSR int32", t, nnz / t, "nz/s", dev, "stored " + form);
  }

  // Likelihoods, on one counts object.
  h = load_csr(ctx, c);
  const dirmn_counts_info info = counts_info(h);
  std::vector<double> colsum(static_cast<size_t>(V), 0.0);
  double total = 0.0;
  for (int64_t i = 0; i < c.nnz(); ++i) {
    colsum[static_cast<size_t>(c.idx[static_cast<size_t>(i)])] += c.val[static_cast<size_t>(i)];
    total += c.val[static_cast<size_t>(i)];
  }
  std::vector<double> alpha(static_cast<size_t>(V));
  for (int64_t v = 0; v < V; ++v) alpha[static_cast<size_t>(v)] = 0.05 + 50.0 * colsum[static_cast<size_t>(v)] / total;
  char note[160];
  if (step_wanted(a, "loglik")) {
    std::vector<double> out1(static_cast<size_t>(c.rows));
    double t = median_time([&] {
      require(dirmn_loglik(ctx, h, 1, alpha.data(), V, 1, DIRMN_PARAM_ALPHA, 0, out1.data(), 1, 1), ctx,
              "dirmn_loglik");
    });
    double sum1 = 0.0;
    for (double v : out1) sum1 += v;
    std::snprintf(note, sizeof note, "total log pmf %.10g", sum1);
    rep.row("loglik K=1", t, nnz / t, "nz/s", where(info, DIRMN_STEP_LOGLIK), note, sum1);
    if (!a.dump.empty() && !shapes::dump(a.dump, name, c, alpha, out1, threads)) {
      std::fprintf(stderr, "cannot write the dump of %s to %s\n", name.c_str(), a.dump.c_str());
      std::exit(1);
    }
    const int K = 8;
    std::vector<double> alpha8(static_cast<size_t>(K * V)), out8(static_cast<size_t>(c.rows * K));
    for (int m = 0; m < K; ++m)
      for (int64_t v = 0; v < V; ++v)
        alpha8[static_cast<size_t>(m * V + v)] = alpha[static_cast<size_t>(v)] * std::exp2(0.5 * m - 2.0);
    t = median_time([&] {
      require(dirmn_loglik(ctx, h, K, alpha8.data(), V, 1, DIRMN_PARAM_ALPHA, 0, out8.data(), K, 1), ctx,
              "dirmn_loglik");
    });
    double sum8 = 0.0;
    for (double v : out8) sum8 += v;
    std::snprintf(note, sizeof note, "rows x 8 values; their total %.10g", sum8);
    rep.row("loglik K=8", t, nnz * K / t, "nz*k/s", where(info, DIRMN_STEP_LOGLIK), note, sum8);
    // The summed log pmf and its gradient in log alpha, what training the
    // seed's PyTorch module asks for (shapes_torch.py --gradient times it
    // there): from the count histograms, built by the first call.
    std::vector<double> log_alpha(static_cast<size_t>(V)), grad(static_cast<size_t>(V));
    for (int64_t v = 0; v < V; ++v) log_alpha[static_cast<size_t>(v)] = std::log(alpha[static_cast<size_t>(v)]);
    double value = 0.0;
    const auto value_and_gradient = [&] {
      require(dirmn_loglik_sum(ctx, h, log_alpha.data(), 1, DIRMN_PARAM_LOG_ALPHA, nullptr, 0, &value, grad.data(),
                               nullptr, nullptr),
              ctx, "dirmn_loglik_sum");
    };
    const double t0 = now();
    value_and_gradient();
    const double t_first = now() - t0;
    t = median_time(value_and_gradient);
    std::snprintf(note, sizeof note, "summed log pmf %.10g and its gradient; the first call (histograms) %s", value,
                  fmt_time(t_first).c_str());
    rep.row("loglik_sum+grad", t, nnz / t, "nz/s", where(info, DIRMN_STEP_HISTOGRAMS), note, value);
  }

  // Fits: a fresh object each time for the first fit, then the second fit
  // on the same object.
  if (step_wanted(a, "fit")) {
    std::vector<double> fitted(static_cast<size_t>(V));
    dirmn_fit_result r;
    std::memset(&r, 0, sizeof r);
    r.size = sizeof r;
    r.alpha = fitted.data();
    dirmn_counts* fresh = nullptr;
    std::vector<double> later;
    const double t_first = median_time(
        [&] { fresh = load_csr(ctx, c); }, [&] { require(dirmn_fit(ctx, fresh, nullptr, &r), ctx, "dirmn_fit"); },
        [&] {
          const double t0 = now();
          require(dirmn_fit(ctx, fresh, nullptr, &r), ctx, "dirmn_fit");
          later.push_back(now() - t0);
          dirmn_counts_destroy(fresh);
        },
        3, 5, 2.0);
    std::sort(later.begin(), later.end());
    std::snprintf(note, sizeof note, "%d Newton iterations, converged %d, log pmf %.10g", r.iterations, r.converged,
                  r.loglik);
    rep.row("fit first", t_first, nnz / t_first, "nz/s", where(info, DIRMN_STEP_HISTOGRAMS), note, r.loglik);
    rep.row("fit later", later[later.size() / 2], 0.0, "", where(info, DIRMN_STEP_HISTOGRAMS), "histograms cached",
            r.loglik);
  }

  // One EM iteration at k: the progress callback marks the end of each.
  const uint32_t em_steps = DIRMN_STEP_LOGLIK | DIRMN_STEP_HISTOGRAMS | DIRMN_STEP_MIXTURE_EM |
                            DIRMN_STEP_MIXTURE_FITS;
  if (step_wanted(a, "em")) {
    dirmn_mixture_options o;
    dirmn_mixture_options_init(&o);
    o.starts = 1;
    // k-means++ rather than the default's first start (dmn's soft k-means,
    // up to 1000 passes over a sample): the iterations timed are the same,
    // the run shorter.
    o.init = DIRMN_INIT_KMEANSPP;
    o.max_iterations = a.em_iterations + 1;
    o.tolerance = DBL_MIN;  // 0 is refused; this stops only where EM stands still
    struct Marks {
      std::vector<double> at;
    } marks;
    o.progress = [](int, double, double, void* data) {
      static_cast<Marks*>(data)->at.push_back(now());
      return 0;
    };
    o.progress_data = &marks;
    dirmn_mixture* m = nullptr;
    const double t0 = now();
    require(dirmn_mixture_fit(ctx, h, plan.em_k, &o, &m), ctx, "dirmn_mixture_fit");
    const double call = now() - t0;
    dirmn_mixture_info mi;
    std::memset(&mi, 0, sizeof mi);
    mi.size = sizeof mi;
    require(dirmn_mixture_get_info(m, &mi), nullptr, "dirmn_mixture_get_info");
    dirmn_mixture_destroy(m);
    const int n = static_cast<int>(marks.at.size()) - 1;
    const double per = n > 0 ? (marks.at.back() - marks.at.front()) / n : -1.0;
    std::snprintf(note, sizeof note, "1 run: mean of %d iterations after the first; whole call %s", n,
                  fmt_time(call).c_str());
    rep.row("EM iteration k=" + std::to_string(plan.em_k), per, nnz * plan.em_k / per, "nz*k/s",
            where(info, em_steps), note);
  }

  // The model-selection call a user makes, with its defaults.
  if (plan.range_k > 0 && step_wanted(a, "range")) {
    dirmn_mixture_options o;
    dirmn_mixture_options_init(&o);
    std::vector<dirmn_mixture*> ms(static_cast<size_t>(plan.range_k), nullptr);
    const double t0 = now();
    require(dirmn_mixture_fit_range(ctx, h, 1, plan.range_k, &o, ms.data()), ctx, "dirmn_mixture_fit_range");
    const double tr = now() - t0;
    std::string its;
    int best = 1;
    double best_bic = INFINITY, last_loglik = 0.0;
    for (int k = 1; k <= plan.range_k; ++k) {
      dirmn_mixture_info mi;
      std::memset(&mi, 0, sizeof mi);
      mi.size = sizeof mi;
      require(dirmn_mixture_get_info(ms[static_cast<size_t>(k - 1)], &mi), nullptr, "dirmn_mixture_get_info");
      its += (k > 1 ? "/" : "") + std::to_string(mi.iterations);
      if (mi.bic < best_bic) {
        best_bic = mi.bic;
        best = k;
      }
      last_loglik = mi.loglik;
      dirmn_mixture_destroy(ms[static_cast<size_t>(k - 1)]);
    }
    std::snprintf(note, sizeof note, "1 run, defaults; EM iterations %s; BIC picks k=%d; log pmf at k=%d %.10g",
                  its.c_str(), best, plan.range_k, last_loglik);
    rep.row("fit_range k=1.." + std::to_string(plan.range_k), tr, 0.0, "", where(info, em_steps), note, last_loglik);
  }
  dirmn_counts_destroy(h);
}


Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string s = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", s.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (s == "cpu" || s == "cuda") a.backend = s;
    else if (s == "--threads") a.threads = std::atoi(value().c_str());
    else if (s == "--quick") a.quick = true;
    else if (s == "--large") a.large = true;
    else if (s == "--data") a.data = value();
    else if (s == "--dump") a.dump = value();
    else if (s == "--csv") a.csv = value();
    else if (s == "--em-iterations") a.em_iterations = std::max(1, std::atoi(value().c_str()));
    else if (s == "--range-k") a.range_k = std::max(0, std::atoi(value().c_str()));
    else if (s == "--only" || s == "--steps") {
      const std::string list = value();
      std::vector<std::string>& into = s == "--only" ? a.only : a.steps;
      size_t from = 0;
      while (from <= list.size()) {
        const size_t to = std::min(list.find(',', from), list.size());
        into.push_back(list.substr(from, to - from));
        from = to + 1;
      }
    } else {
      std::fprintf(stderr, "unknown argument %s (see the top of bench/bench_shapes.cpp)\n", s.c_str());
      std::exit(2);
    }
  }
  for (const std::string& s : a.steps)
    if (s != "load" && s != "loglik" && s != "fit" && s != "em" && s != "range") {
      std::fprintf(stderr, "unknown step %s (--steps takes load, loglik, fit, em, range)\n", s.c_str());
      std::exit(2);
    }
  for (const std::string& s : a.only)
    if (s != "microbiome" && s != "single-cell" && s != "text" && s != "globalpatterns" && s != "soilrep") {
      std::fprintf(stderr, "unknown table %s (see --only at the top of bench/bench_shapes.cpp)\n", s.c_str());
      std::exit(2);
    }
  if (!a.dump.empty() && !step_wanted(a, "loglik")) {
    std::fprintf(stderr, "--dump writes the K = 1 log pmf: it needs the loglik step\n");
    std::exit(2);
  }
  if (a.quick && a.large) {
    std::fprintf(stderr, "--quick and --large exclude each other\n");
    std::exit(2);
  }
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse(argc, argv);
  dirmn_context* ctx = nullptr;
  require(dirmn_context_create(&ctx, a.backend == "cuda" ? DIRMN_BACKEND_CUDA : DIRMN_BACKEND_CPU, 0), nullptr,
          "dirmn_context_create");
  require(dirmn_context_set_threads(ctx, a.threads), ctx, "dirmn_context_set_threads");
  int threads = 0;
  require(dirmn_context_get_threads(ctx, &threads), ctx, "dirmn_context_get_threads");
  Report rep(a.csv, threads);
  std::printf("dirmn %s, %s backend, %d threads%s; EM iteration rows over %d iterations\n", dirmn_version_string(),
              a.backend.c_str(), threads, a.quick ? ", --quick sizes" : a.large ? ", --large sizes" : "", a.em_iterations);

  for (const shapes::Spec& s : shapes::synthetic_specs(a.quick, a.large)) {
    if (!wanted(a, s.name)) continue;
    const double t0 = now();
    const Csr c = shapes::generate(s);
    char origin[96];
    std::snprintf(origin, sizeof origin, "generated, seed %llu (%.1f s)", static_cast<unsigned long long>(s.seed),
                  now() - t0);
    describe(s.name, c, origin);
    std::printf("%s%s\n", s.about, a.quick ? " (at full size: --quick halves the depth)" : "");
    const Plan plan = plan_for(s.name, a);
    std::printf("EM iteration at k = %d; fit_range k = 1..%d%s\n", plan.em_k, plan.range_k,
                a.range_k >= 0 ? " (--range-k)" : " (kept short on this 2-core-sized run: see the usage comment)");
    run_table(ctx, a, rep, s.name, c, plan, threads);
  }
  for (const char* name : {"globalpatterns", "soilrep"}) {
    if (!wanted(a, name)) continue;
    const std::string path = a.data + "/" + name + ".csv";
    Csr c;
    if (a.data.empty() || !shapes::read_csv(path, &c)) {
      std::printf("\n== %s: skipped, no %s (give --data DIR)\n", name, path.c_str());
      continue;
    }
    describe(name, c, path);
    const Plan plan = plan_for(name, a);
    std::printf("EM iteration at k = %d; fit_range k = 1..%d%s\n", plan.em_k, plan.range_k,
                a.range_k >= 0 ? " (--range-k)" : "");
    run_table(ctx, a, rep, name, c, plan, threads);
  }
  dirmn_context_destroy(ctx);
  return 0;
}
