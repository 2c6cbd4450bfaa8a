// test_mixture_starts.cpp: the promises of issue #25 about mixtures --
// the default starts against dmn's own procedure on real tables, k grown
// from k - 1 (the ML log-likelihood non-decreasing in k), one order of
// components, one rule for P and n shared with dirmn_fit, progress counted
// from 1 -- and the likelihood functions' default form (the log pmf).
#include <map>

#include "support.hpp"

using namespace dirmn_test;

namespace {

std::vector<double> data_table(const char* file, int64_t* rows, int64_t* cols) {
  const std::string dir = DIRMN_TEST_DATA_DIR;
  const std::string path = std::string(file) == "globalpatterns500.csv"
                               ? dir + "/" + file
                               : dir + "/../../examples/data/" + file;
  return read_csv(path, rows, cols);
}

// tests/data/dmn_objectives.tsv: dmn's objective per table, k and seed.
std::map<std::string, std::map<int, std::vector<double>>> dmn_objectives() {
  std::ifstream in(test_data_path("dmn_objectives.tsv"));
  REQUIRE(in.good());
  std::map<std::string, std::map<int, std::vector<double>>> ref;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::stringstream ss(line);
    std::string table;
    int k = 0, seed = 0;
    double value = 0.0;
    if (ss >> table >> k >> seed >> value) ref[table][k].push_back(value);
  }
  return ref;
}

dirmn_mixture_info info_of(const dirmn_mixture* m) {
  dirmn_mixture_info i;
  std::memset(&i, 0, sizeof i);
  i.size = sizeof i;
  REQUIRE(dirmn_mixture_get_info(m, &i) == DIRMN_SUCCESS);
  return i;
}

std::vector<Mixture> fit_range(dirmn_context* ctx, dirmn_counts* c, int k_max,
                               const dirmn_mixture_options& o) {
  std::vector<dirmn_mixture*> raw(static_cast<size_t>(k_max), nullptr);
  const dirmn_status s = dirmn_mixture_fit_range(ctx, c, 1, k_max, &o, raw.data());
  INFO(dirmn_last_error(ctx));
  REQUIRE(s == DIRMN_SUCCESS);
  std::vector<Mixture> out;
  for (dirmn_mixture* m : raw) out.emplace_back(m);
  return out;
}

struct IterationLog {
  std::vector<int> iterations;
  std::vector<double> values;
};

int log_iteration(int iteration, double loglik, double, void* data) {
  auto* log = static_cast<IterationLog*>(data);
  log->iterations.push_back(iteration);
  log->values.push_back(loglik);
  return 0;
}

}  // namespace

TEST_CASE("mixture starts: the default is no worse than dmn's procedure on real tables",
          "[mixture][data]") {
  // dmn's objective over five seeds per k (tests/data/dmn_objectives.tsv):
  // the default, fitted for k = 1..10 as users fit it (one range, each k
  // grown from k - 1 besides its random starts), reaches an objective at
  // least as good as dmn's median at every k.
  const auto ref = dmn_objectives();
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  for (const char* file : {"mite.csv", "bci.csv", "globalpatterns500.csv"}) {
    int64_t rows = 0, cols = 0;
    const auto x = data_table(file, &rows, &cols);
    Counts c = counts_of(ctx.get(), x, rows, cols);
    dirmn_mixture_options o;
    dirmn_mixture_options_init(&o);
    CHECK(o.init == DIRMN_INIT_MIXED);
    o.objective = DIRMN_MIXTURE_DMN;
    const std::string name = std::string(file) == "globalpatterns500.csv" ? "gp500"
                             : std::string(file) == "mite.csv"             ? "mite"
                                                                           : "bci";
    const std::vector<Mixture> fits = fit_range(ctx.get(), c.get(), 10, o);
    for (int k = 1; k <= 10; ++k) {
      std::vector<double> r = ref.at(name).at(k);
      if (r.size() < 3) continue;  // a median needs seeds (gp500, k = 10: one)
      std::sort(r.begin(), r.end());
      const double median = r[r.size() / 2];
      const dirmn_mixture_info i = info_of(fits[static_cast<size_t>(k - 1)].get());
      INFO(name << " k = " << k << ": " << i.objective << " against dmn's median " << median);
      CHECK(i.objective <= median * (1.0 + 1e-9));
    }
  }
}

TEST_CASE("mixture starts: the ML log-likelihood is non-decreasing in k", "[mixture][data]") {
  for (dirmn_backend be : backends_under_test()) {
    Context ctx = make_context(be);
    REQUIRE(ctx);
    for (const char* file : {"mite.csv", "bci.csv"}) {
      INFO(backend_name(be) << " " << file);
      int64_t rows = 0, cols = 0;
      const auto x = data_table(file, &rows, &cols);
      Counts c = counts_of(ctx.get(), x, rows, cols);
      dirmn_mixture_options o;
      dirmn_mixture_options_init(&o);
      const std::vector<Mixture> fits = fit_range(ctx.get(), c.get(), 10, o);
      double prev = -INFINITY;
      for (int k = 1; k <= 10; ++k) {
        const dirmn_mixture_info i = info_of(fits[static_cast<size_t>(k - 1)].get());
        INFO("k = " << k << ": " << i.loglik << " after " << prev);
        CHECK(i.loglik >= prev - 1e-9 * std::fabs(prev));
        prev = i.loglik;
      }
    }
  }
}

TEST_CASE("mixture starts: grow_from is checked and keeps the k - 1 fit's likelihood",
          "[mixture]") {
  const Simulated sim = simulate_mixture(90, 12, 2, 5);
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  Counts c = counts_of(ctx.get(), sim.x, 90, 12);
  dirmn_mixture_options o;
  dirmn_mixture_options_init(&o);
  Mixture two = fit(ctx.get(), c.get(), 2, &o);
  // k = 3 from the 2-component fit: at least its log-likelihood, whatever
  // the random starts found (one start only, of the weakest kind).
  dirmn_mixture_options g = o;
  g.starts = 1;
  g.init = DIRMN_INIT_KMEANS;
  g.grow_from = two.get();
  Mixture three = fit(ctx.get(), c.get(), 3, &g);
  CHECK(info_of(three.get()).loglik >= info_of(two.get()).loglik - 1e-9 * std::fabs(info_of(two.get()).loglik));
  CHECK(info_of(three.get()).start >= 1);  // a grown start won
  // The wrong k, or a table of another shape.
  dirmn_mixture* bad = nullptr;
  CHECK(dirmn_mixture_fit(ctx.get(), c.get(), 4, &g, &bad) == DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(last_error(ctx).find("grow_from has 2 components") != std::string::npos);
  CHECK(bad == nullptr);
  Counts narrow = counts_of(ctx.get(), std::vector<double>(sim.x.begin(), sim.x.begin() + 60 * 12), 60, 12);
  CHECK(dirmn_mixture_fit(ctx.get(), narrow.get(), 3, &g, &bad) == DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(bad == nullptr);
}

TEST_CASE("mixture starts: components by decreasing weight, on every output", "[mixture]") {
  const Simulated sim = simulate_mixture(120, 15, 3, 8);
  for (dirmn_backend be : backends_under_test()) {
    INFO(backend_name(be));
    Context ctx = make_context(be);
    REQUIRE(ctx);
    Counts c = counts_of(ctx.get(), sim.x, 120, 15);
    // Unequal clusters: rows of cluster 0 weighted up.
    std::vector<double> w(120, 1.0);
    for (int64_t b = 0; b < 120; ++b)
      if (sim.label[static_cast<size_t>(b)] == 2) w[static_cast<size_t>(b)] = 3.0;
    dirmn_mixture_options o;
    dirmn_mixture_options_init(&o);
    o.weights = w.data();
    Mixture m = fit(ctx.get(), c.get(), 3, &o);
    std::vector<double> pi(3), z(360), a(45), assigned(360);
    REQUIRE(dirmn_mixture_get_params(m.get(), a.data(), 15, 1, pi.data()) == DIRMN_SUCCESS);
    CHECK(pi[0] >= pi[1]);
    CHECK(pi[1] >= pi[2]);
    REQUIRE(dirmn_mixture_get_responsibilities(m.get(), z.data(), 3, 1) == DIRMN_SUCCESS);
    REQUIRE(dirmn_mixture_assign(ctx.get(), m.get(), c.get(), assigned.data(), 3, 1) == DIRMN_SUCCESS);
    // The heaviest component holds the up-weighted cluster, in every output.
    for (int64_t b = 0; b < 120; ++b) {
      if (sim.label[static_cast<size_t>(b)] != 2) continue;
      CHECK(z[static_cast<size_t>(b * 3)] > 0.99);
      CHECK(assigned[static_cast<size_t>(b * 3)] > 0.99);
    }
  }
}

TEST_CASE("mixture starts: dirmn_fit and one component count P and n alike", "[mixture][fit]") {
  int64_t rows = 0, cols = 0;
  const auto mite = data_table("mite.csv", &rows, &cols);
  // mite with an empty column and an all-zero row added.
  const int64_t R = rows + 1, C = cols + 1;
  std::vector<double> x(static_cast<size_t>(R * C), 0.0);
  for (int64_t b = 0; b < rows; ++b)
    for (int64_t v = 0; v < cols; ++v) x[static_cast<size_t>(b * C + v)] = mite[static_cast<size_t>(b * cols + v)];
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  Counts c = counts_of(ctx.get(), x, R, C);
  std::vector<double> a(static_cast<size_t>(C));
  dirmn_fit_result f;
  std::memset(&f, 0, sizeof f);
  f.size = sizeof f;
  f.alpha = a.data();
  REQUIRE(dirmn_fit(ctx.get(), c.get(), nullptr, &f) == DIRMN_SUCCESS);
  CHECK(f.parameters == cols);
  CHECK(f.observations == static_cast<double>(rows));
  dirmn_mixture_options o;
  dirmn_mixture_options_init(&o);
  Mixture m = fit(ctx.get(), c.get(), 1, &o);
  const dirmn_mixture_info i = info_of(m.get());
  CHECK(i.parameters == f.parameters);
  CHECK(i.observations == f.observations);
  CHECK(close_to(i.loglik, f.loglik, 1e-10));
  CHECK(close_to(i.aic, -2.0 * f.loglik + 2.0 * static_cast<double>(f.parameters), 1e-10));
  CHECK(close_to(i.bic, -2.0 * f.loglik + static_cast<double>(f.parameters) * std::log(f.observations), 1e-10));
  // k = 3: P = 3 C' + 2 over the columns with counts; under dmn's prior
  // every column is estimated.
  Mixture m3 = fit(ctx.get(), c.get(), 3, &o);
  CHECK(info_of(m3.get()).parameters == 3 * cols + 2);
  o.objective = DIRMN_MIXTURE_DMN;
  Mixture d3 = fit(ctx.get(), c.get(), 3, &o);
  CHECK(info_of(d3.get()).parameters == 3 * C + 2);
  CHECK(info_of(d3.get()).observations == static_cast<double>(rows));
  // Weights: n is the weight of the rows with counts.
  std::vector<double> w(static_cast<size_t>(R), 2.0);
  w[0] = 0.0;
  dirmn_fit_options fo;
  dirmn_fit_options_init(&fo);
  fo.weights = w.data();
  REQUIRE(dirmn_fit(ctx.get(), c.get(), &fo, &f) == DIRMN_SUCCESS);
  CHECK(f.observations == 2.0 * static_cast<double>(rows - 1));
}

TEST_CASE("mixture starts: progress counts iterations from 1, on the log pmf", "[mixture]") {
  const Simulated sim = simulate_mixture(80, 10, 2, 3);
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  Counts c = counts_of(ctx.get(), sim.x, 80, 10);
  IterationLog log;
  dirmn_mixture_options o;
  dirmn_mixture_options_init(&o);
  o.starts = 1;
  o.progress = log_iteration;
  o.progress_data = &log;
  Mixture m = fit(ctx.get(), c.get(), 2, &o);
  const dirmn_mixture_info i = info_of(m.get());
  REQUIRE(!log.iterations.empty());
  for (size_t n = 0; n < log.iterations.size(); ++n) CHECK(log.iterations[n] == static_cast<int>(n) + 1);
  CHECK(log.iterations.back() == i.iterations);
  CHECK(close_to(log.values.back(), i.loglik, 1e-12));
  // The fit: the same count, its last value the result's log pmf.
  IterationLog flog;
  std::vector<double> a(10);
  dirmn_fit_result f;
  std::memset(&f, 0, sizeof f);
  f.size = sizeof f;
  f.alpha = a.data();
  dirmn_fit_options fo;
  dirmn_fit_options_init(&fo);
  fo.progress = log_iteration;
  fo.progress_data = &flog;
  REQUIRE(dirmn_fit(ctx.get(), c.get(), &fo, &f) == DIRMN_SUCCESS);
  REQUIRE(!flog.iterations.empty());
  for (size_t n = 0; n < flog.iterations.size(); ++n) CHECK(flog.iterations[n] == static_cast<int>(n) + 1);
  CHECK(flog.iterations.back() == f.iterations);
  CHECK(close_to(flog.values.back(), f.loglik, 1e-9));
}

TEST_CASE("likelihood functions give the log pmf by default", "[loglik]") {
  const std::vector<double> x = {3, 0, 1, 2, 0, 0, 0, 0, 9, 1, 0, 4};
  const std::vector<double> alpha = {0.5, 1.0, 2.0, 0.25};
  for (dirmn_backend be : backends_under_test()) {
    INFO(backend_name(be));
    Context ctx = make_context(be);
    REQUIRE(ctx);
    Counts c = counts_of(ctx.get(), x, 3, 4);
    const auto plain = loglik(ctx.get(), c.get(), 3, alpha, 0);
    const auto kernel = loglik(ctx.get(), c.get(), 3, alpha, DIRMN_KERNEL);
    for (int64_t b = 0; b < 3; ++b) {
      CHECK(close_to(plain[static_cast<size_t>(b)], reference_loglik(&x[static_cast<size_t>(b * 4)], alpha.data(), 4, true), 1e-13, 1e-15));
      CHECK(close_to(kernel[static_cast<size_t>(b)], reference_loglik(&x[static_cast<size_t>(b * 4)], alpha.data(), 4, false), 1e-13, 1e-15));
    }
    double sum = 0.0, sum_kernel = 0.0;
    REQUIRE(dirmn_loglik_sum(ctx.get(), c.get(), alpha.data(), 1, DIRMN_PARAM_ALPHA, nullptr, 0, &sum,
                             nullptr, nullptr, nullptr) == DIRMN_SUCCESS);
    REQUIRE(dirmn_loglik_sum(ctx.get(), c.get(), alpha.data(), 1, DIRMN_PARAM_ALPHA, nullptr,
                             DIRMN_KERNEL, &sum_kernel, nullptr, nullptr, nullptr) == DIRMN_SUCCESS);
    CHECK(close_to(sum, plain[0] + plain[1] + plain[2], 1e-13));
    CHECK(close_to(sum_kernel, kernel[0] + kernel[1] + kernel[2], 1e-13));
    std::vector<double> out(3, -1.0);
    CHECK(dirmn_loglik(ctx.get(), c.get(), 1, alpha.data(), 0, 1, DIRMN_PARAM_ALPHA,
                       DIRMN_FULL | DIRMN_KERNEL, out.data(), 1, 1) == DIRMN_ERROR_INVALID_ARGUMENT);
    CHECK(last_error(ctx).find("give one") != std::string::npos);
    CHECK(out[0] == -1.0);
  }
}
