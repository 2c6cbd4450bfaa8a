// bench_groups.cpp: issue #29's grouped benchmark -- dirmn_reg_test_groups
// (DRIMSeq's differential transcript usage as one call) on a simulated
// DRIMSeq-shaped table, through the public C API. bench/groups_drimseq.R
// runs DRIMSeq on the same table (--dump) and compares the p-values;
// bench/run_groups.sh runs both.
//
// Usage:
//   dirmn_bench_groups [cpu|cuda] [--threads N] [--genes G] [--samples S]
//                      [--model meanprecision|loglinear] [--hold-precision]
//                      [--dump DIR]
//
// --hold-precision: each gene's null fit at its full fit's precision
// (DRIMSeq's test; bench/run_groups.sh sets it).
//
// The table (seeded): S samples in two conditions (S / 2 each), G genes of
// 2 to 8 transcripts (uniform), gene proportions ~ Dirichlet(1), one gene
// in ten with the first two transcripts' proportions swapped in the second
// condition (differential usage), gene depth ~ Gamma(2, 500) per sample,
// precision ~ exp(N(log 50, 0.5^2)) per gene, counts ~ DM(phi pi, depth)
// (gamma draws, then a multinomial by conditional binomials). The design
// is an intercept and the condition; the null, the intercept.
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

struct Table {
  int64_t rows = 0, V = 0, genes = 0;
  std::vector<int64_t> group;   // V
  std::vector<char> changed;    // genes: the usage differs between conditions
  std::vector<int32_t> y;       // rows x V
  std::vector<double> x;        // rows x 2
};

Table simulate(int64_t genes, int64_t samples, uint64_t seed) {
  Table t;
  t.rows = samples;
  t.genes = genes;
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> size(2, 8);
  std::vector<int64_t> sizes(static_cast<size_t>(genes));
  for (int64_t g = 0; g < genes; ++g) {
    sizes[static_cast<size_t>(g)] = size(rng);
    for (int64_t k = 0; k < sizes[static_cast<size_t>(g)]; ++k) t.group.push_back(g);
  }
  t.V = static_cast<int64_t>(t.group.size());
  t.y.assign(static_cast<size_t>(t.rows * t.V), 0);
  t.x.resize(static_cast<size_t>(t.rows * 2));
  for (int64_t b = 0; b < t.rows; ++b) {
    t.x[static_cast<size_t>(2 * b)] = 1.0;
    t.x[static_cast<size_t>(2 * b + 1)] = b < t.rows / 2 ? 0.0 : 1.0;
  }
  t.changed.assign(static_cast<size_t>(genes), 0);
  std::gamma_distribution<double> unit(1.0, 1.0), depth(2.0, 500.0);
  std::normal_distribution<double> normal(0.0, 1.0);
  int64_t v0 = 0;
  for (int64_t g = 0; g < genes; ++g) {
    const int64_t K = sizes[static_cast<size_t>(g)];
    std::vector<double> pi(static_cast<size_t>(K));
    double s = 0.0;
    for (double& p : pi) s += (p = unit(rng));
    for (double& p : pi) p /= s;
    t.changed[static_cast<size_t>(g)] = g % 10 == 0;
    const double phi = std::exp(std::log(50.0) + 0.5 * normal(rng));
    for (int64_t b = 0; b < t.rows; ++b) {
      std::vector<double> a = pi;
      if (t.changed[static_cast<size_t>(g)] && b >= t.rows / 2) std::swap(a[0], a[1]);
      std::vector<double> w(static_cast<size_t>(K));
      double ws = 0.0;
      for (int64_t k = 0; k < K; ++k) {
        std::gamma_distribution<double> ga(phi * a[static_cast<size_t>(k)], 1.0);
        ws += (w[static_cast<size_t>(k)] = ga(rng));
      }
      int left = static_cast<int>(std::lround(depth(rng)));
      double rest = ws;
      for (int64_t k = 0; k < K; ++k) {
        const double q = k + 1 == K || rest <= 0.0 ? 1.0 : std::min(1.0, w[static_cast<size_t>(k)] / rest);
        std::binomial_distribution<int> bin(left, q);
        const int c = k + 1 == K ? left : bin(rng);
        t.y[static_cast<size_t>(b * t.V + v0 + k)] = c;
        left -= c;
        rest -= w[static_cast<size_t>(k)];
      }
    }
    v0 += K;
  }
  return t;
}

void dump(const std::string& dir, const Table& t) {
  std::ofstream counts(dir + "/counts.csv"), genes(dir + "/genes.csv");
  for (int64_t v = 0; v < t.V; ++v) {
    counts << "g" << t.group[static_cast<size_t>(v)] << "_t" << v;
    for (int64_t b = 0; b < t.rows; ++b) counts << ',' << t.y[static_cast<size_t>(b * t.V + v)];
    counts << '\n';
  }
  genes << "gene,changed\n";
  for (int64_t g = 0; g < t.genes; ++g) genes << 'g' << g << ',' << int(t.changed[static_cast<size_t>(g)]) << '\n';
}

}  // namespace

int main(int argc, char** argv) {
  std::string backend = "cpu", dump_dir, model = "meanprecision";
  int threads = 0;
  int hold = 0;
  int64_t genes = 7764, samples = 12;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "cpu" || a == "cuda") backend = a;
    else if (a == "--threads" && i + 1 < argc) threads = std::atoi(argv[++i]);
    else if (a == "--genes" && i + 1 < argc) genes = std::atoll(argv[++i]);
    else if (a == "--samples" && i + 1 < argc) samples = std::atoll(argv[++i]);
    else if (a == "--model" && i + 1 < argc) model = argv[++i];
    else if (a == "--dump" && i + 1 < argc) dump_dir = argv[++i];
    else if (a == "--hold-precision") hold = 1;
    else {
      std::fprintf(stderr, "usage: dirmn_bench_groups [cpu|cuda] [--threads N] [--genes G] [--samples S] "
                           "[--model meanprecision|loglinear] [--hold-precision] [--dump DIR]\n");
      return 2;
    }
  }
  const Table t = simulate(genes, samples, 2931);
  if (!dump_dir.empty()) dump(dump_dir, t);
  dirmn_context* ctx = nullptr;
  if (dirmn_context_create(&ctx, backend == "cuda" ? DIRMN_BACKEND_CUDA : DIRMN_BACKEND_CPU, 0) !=
      DIRMN_SUCCESS) {
    std::fprintf(stderr, "context: %s\n", dirmn_last_error(nullptr));
    return 1;
  }
  if (threads > 0 && dirmn_context_set_threads(ctx, threads) != DIRMN_SUCCESS) {
    std::fprintf(stderr, "threads: %s\n", dirmn_last_error(ctx));
    return 1;
  }
  dirmn_context_get_threads(ctx, &threads);
  dirmn_counts* c = nullptr;
  if (dirmn_counts_create_dense(ctx, &c, t.rows, t.V, DIRMN_INT32, t.y.data(), t.V, 1, nullptr) != DIRMN_SUCCESS) {
    std::fprintf(stderr, "counts: %s\n", dirmn_last_error(ctx));
    return 1;
  }
  dirmn_reg_options o;
  dirmn_reg_options_init(&o);
  o.model = model == "loglinear" ? DIRMN_REG_LOGLINEAR : DIRMN_REG_MEAN_PRECISION;
  o.hold_precision = hold;
  const size_t G = static_cast<size_t>(t.genes);
  std::vector<double> pv(G), pa(G);
  std::vector<int32_t> conv(G);
  dirmn_reg_groups_result r;
  r.size = sizeof r;
  r.loglik_full = r.loglik_null = r.statistic = r.df = nullptr;
  r.p_value = pv.data();
  r.p_adjusted = pa.data();
  r.status = nullptr;
  r.converged = conv.data();
  r.categories = nullptr;
  std::vector<double> secs;
  for (int rep = 0; rep < 3; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    if (dirmn_reg_test_groups(ctx, c, t.group.data(), t.genes, t.x.data(), t.rows, 2, 2, 1, 1, &o, &r) !=
        DIRMN_SUCCESS) {
      std::fprintf(stderr, "dirmn_reg_test_groups: %s\n", dirmn_last_error(ctx));
      return 1;
    }
    secs.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(secs.begin(), secs.end());
  int64_t found = 0, false_pos = 0, changed = 0, not_converged = 0;
  for (size_t g = 0; g < G; ++g) {
    changed += t.changed[g];
    if (pa[g] < 0.05) (t.changed[g] ? found : false_pos) += 1;
    not_converged += conv[g] ? 0 : 1;
  }
  std::printf("dirmn grouped regression benchmark, %s backend, %d threads (dirmn_reg_test_groups, %s%s)\n",
              backend.c_str(), threads, model.c_str(), hold ? ", null fit at the full fit's precision" : "");
  std::printf("%-8s %-8s %-8s %10s %8s %8s %10s %8s\n", "genes", "samples", "columns", "time", "tested", "changed",
              "found@5%", "false+");
  std::printf("%-8lld %-8lld %-8lld %8.2f s %8lld %8lld %10lld %8lld\n", static_cast<long long>(t.genes),
              static_cast<long long>(t.rows), static_cast<long long>(t.V), secs[1],
              static_cast<long long>(r.tested), static_cast<long long>(changed), static_cast<long long>(found),
              static_cast<long long>(false_pos));
  std::printf("(median of 3 runs; %lld genes' fits not converged)\n", static_cast<long long>(not_converged));
  if (!dump_dir.empty()) {
    std::ofstream out(dump_dir + "/dirmn.csv");
    out << "gene,p_value,p_adjusted\n";
    out.precision(17);
    for (size_t g = 0; g < G; ++g) out << 'g' << g << ',' << pv[g] << ',' << pa[g] << '\n';
  }
  dirmn_counts_destroy(c);
  dirmn_context_destroy(ctx);
  return 0;
}
