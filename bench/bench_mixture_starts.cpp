// bench_mixture_starts: which starts a mixture's EM needs on real tables.
//
// For each table (a CSV of samples x categories, a header row and a name
// column, as ../shared/data and examples/data hold them) and each k, fits
// the mixture with several start settings -- dmn's own procedure (one soft
// k-means start), the former default (k-means++, 3 starts), the mixed
// default and more starts of it, and dirmn_mixture_fit_range (the mixed
// default with a start grown from k - 1) -- and prints each one's objective
// (smaller is better), log-likelihood and seconds, on the CPU backend.
// Optional reference values (a TSV of table, k, seed, objective: what dmn
// reported, e.g. from DirichletMultinomial::dmn with set seeds) are printed
// beside them: their minimum and median over the seeds.
//
// Usage: dirmn_bench_mixture_starts [--objective ml|dmn] [--kmax K]
//          [--ref FILE] TABLE.csv ...
#include <dirmn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Table {
  std::string name;
  int64_t rows = 0, cols = 0;
  std::vector<double> x;
};

bool read_csv(const std::string& path, Table* t) {
  std::ifstream in(path);
  if (!in) return false;
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    std::stringstream ss(line);
    std::string cell;
    std::getline(ss, cell, ',');
    while (std::getline(ss, cell, ',')) t->x.push_back(std::stod(cell));
    ++t->rows;
  }
  if (t->rows == 0) return false;
  t->cols = static_cast<int64_t>(t->x.size()) / t->rows;
  const size_t slash = path.find_last_of('/');
  t->name = path.substr(slash == std::string::npos ? 0 : slash + 1);
  t->name = t->name.substr(0, t->name.find('.'));
  return true;
}

struct Setting {
  const char* label;
  dirmn_mixture_init init;
  int starts;
  bool range;
};

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void die(dirmn_context* ctx, const char* what) {
  std::fprintf(stderr, "%s: %s\n", what, dirmn_last_error(ctx));
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  dirmn_mixture_objective objective = DIRMN_MIXTURE_DMN;
  int kmax = 10;
  std::string ref_path;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--objective") && i + 1 < argc)
      objective = std::strcmp(argv[++i], "ml") ? DIRMN_MIXTURE_DMN : DIRMN_MIXTURE_ML;
    else if (!std::strcmp(argv[i], "--kmax") && i + 1 < argc)
      kmax = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--ref") && i + 1 < argc)
      ref_path = argv[++i];
    else
      paths.push_back(argv[i]);
  }
  // table -> k -> dmn's objectives over its seeds.
  std::map<std::string, std::map<int, std::vector<double>>> ref;
  if (!ref_path.empty()) {
    std::ifstream in(ref_path);
    std::string name;
    int k = 0, seed = 0;
    double value = 0.0;
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#') continue;
      std::stringstream ss(line);
      if (ss >> name >> k >> seed >> value) ref[name][k].push_back(value);
    }
  }
  const Setting settings[] = {{"soft x1 (dmn's)", DIRMN_INIT_SOFT_KMEANS, 1, false},
                              {"kmeans++ x3 (0.1)", DIRMN_INIT_KMEANSPP, 3, false},
                              {"mixed x3", DIRMN_INIT_MIXED, 3, false},
                              {"mixed x6", DIRMN_INIT_MIXED, 6, false},
                              {"mixed x12", DIRMN_INIT_MIXED, 12, false},
                              {"mixed x6, range", DIRMN_INIT_MIXED, 6, true}};
  dirmn_context* ctx = nullptr;
  if (dirmn_context_create(&ctx, DIRMN_BACKEND_CPU, 0) != DIRMN_SUCCESS) die(nullptr, "context");
  int threads = 0;
  dirmn_context_get_threads(ctx, &threads);
  std::printf("# objective %s, CPU backend, %d host threads; objective: smaller is better\n",
              objective == DIRMN_MIXTURE_DMN ? "dmn" : "ml", threads);
  std::printf("%-16s %3s %-18s %14s %14s %6s %5s %8s %14s %14s\n", "table", "k", "starts",
              "objective", "loglik", "iters", "start", "seconds", "dmn min", "dmn median");
  for (const std::string& path : paths) {
    Table t;
    if (!read_csv(path, &t)) {
      std::fprintf(stderr, "cannot read %s\n", path.c_str());
      return 1;
    }
    dirmn_counts* c = nullptr;
    if (dirmn_counts_create_dense(ctx, &c, t.rows, t.cols, DIRMN_FLOAT64, t.x.data(), t.cols, 1,
                                  nullptr) != DIRMN_SUCCESS)
      die(ctx, "counts");
    const int top = static_cast<int>(std::min<int64_t>(kmax, t.rows));
    for (const Setting& s : settings) {
      dirmn_mixture_options o;
      dirmn_mixture_options_init(&o);
      o.objective = objective;
      o.init = s.init;
      o.starts = s.starts;
      std::vector<dirmn_mixture*> fits(static_cast<size_t>(top), nullptr);
      std::vector<double> secs(static_cast<size_t>(top), 0.0);
      if (s.range) {
        const double t0 = now();
        if (dirmn_mixture_fit_range(ctx, c, 1, top, &o, fits.data()) != DIRMN_SUCCESS)
          die(ctx, "fit_range");
        const double per = (now() - t0) / top;
        std::fill(secs.begin(), secs.end(), per);
      } else {
        for (int k = 1; k <= top; ++k) {
          const double t0 = now();
          if (dirmn_mixture_fit(ctx, c, k, &o, &fits[static_cast<size_t>(k - 1)]) != DIRMN_SUCCESS)
            die(ctx, "fit");
          secs[static_cast<size_t>(k - 1)] = now() - t0;
        }
      }
      for (int k = 1; k <= top; ++k) {
        dirmn_mixture_info info;
        info.size = sizeof info;
        dirmn_mixture_get_info(fits[static_cast<size_t>(k - 1)], &info);
        std::vector<double> r = ref[t.name][k];
        std::sort(r.begin(), r.end());
        char rmin[32] = "-", rmed[32] = "-";
        if (!r.empty()) {
          std::snprintf(rmin, sizeof rmin, "%.1f", r.front());
          std::snprintf(rmed, sizeof rmed, "%.1f", r[r.size() / 2]);
        }
        std::printf("%-16s %3d %-18s %14.1f %14.1f %6d %5d %8.3f %14s %14s\n", t.name.c_str(), k,
                    s.label, info.objective, info.loglik, info.iterations, info.start,
                    secs[static_cast<size_t>(k - 1)], rmin, rmed);
        std::fflush(stdout);
        dirmn_mixture_destroy(fits[static_cast<size_t>(k - 1)]);
      }
    }
    dirmn_counts_destroy(c);
  }
  dirmn_context_destroy(ctx);
  return 0;
}
