// test_mixture_device.cpp: the CUDA backend's mixture EM, with the
// responsibilities, histograms and M steps on the device (tensor-core forms
// included). The device runs the host's algorithm in other orders and
// forms, so its reference is the host's fit of the same table from the same
// seed (itself checked against dmn and the reference formula in
// test_mixture.cpp), within bounds that allow for the flat directions of
// over-fitted mixtures. Every case is [cuda]: ctest runs them behind
// --require-cuda, which reports them as skipped where no device exists.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>
#include <string>
#include <vector>

#include "support.hpp"

using namespace dirmn_test;

namespace {

struct DeviceCase {
  int k;
  dirmn_mixture_objective obj;
  bool weighted;  // row weights 0.5, 1.5, 2.5, ...
};

// Fits the same table on both backends with the same seed and compares
// everything the fit reports. With more components than the `clusters` the
// table was drawn from, the likelihood has nearly flat directions (how a
// cluster is shared between components), along which rounding moves the
// parameters far more than the likelihood: there alpha, pi and the
// responsibilities are compared more loosely, the likelihood as tightly as
// ever. Seen on H200 at k = 9 over 3 clusters: alpha within 1.8e-5, pi
// 7e-9, responsibilities 2.3e-6 with the M step's fits on the host (general
// and tensor-core histograms alike); pi within 1.6e-6 with the fits on the
// device, whose sums run in another order.
// These cases compare the backends, not the starts: three k-means++
// starts, the default before 0.3 (half the time under compute-sanitizer of
// the six mixed ones, which also reach other optima, some flat enough that
// the backends' rounding moves pi by 7e-8).
void backend_case_starts(dirmn_mixture_options* o) {
  o->init = DIRMN_INIT_KMEANSPP;
  o->starts = 3;
}

void check_device_em_matches_host(const std::vector<double>& x, int64_t rows, int64_t cols, int clusters,
                                  const std::vector<DeviceCase>& cases) {
  std::vector<double> rw(static_cast<size_t>(rows));
  for (int64_t b = 0; b < rows; ++b) rw[static_cast<size_t>(b)] = 0.5 + static_cast<double>(b % 3);
  Context cpu = make_context(DIRMN_BACKEND_CPU);
  Context gpu = make_context(DIRMN_BACKEND_CUDA);
  REQUIRE(cpu);
  REQUIRE(gpu);
  Counts cc = counts_of(cpu.get(), x, rows, cols);
  Counts cg = counts_of(gpu.get(), x, rows, cols);
  dirmn_counts_info ci;
  ci.size = sizeof ci;
  REQUIRE(dirmn_counts_get_info(cg.get(), &ci) == DIRMN_SUCCESS);
  REQUIRE(ci.value_bits == 8);
  for (const DeviceCase& tc : cases) {
    INFO("k " << tc.k << ", objective " << tc.obj << ", weighted " << tc.weighted);
    dirmn_mixture_options o;
    dirmn_mixture_options_init(&o);
    // The classical EM on both: the device and the host take their
    // Newton steps in other orders, so partial M steps part by more
    // than full ones.
    o.m_step_iterations = 200;
    backend_case_starts(&o);
    o.objective = tc.obj;
    o.seed = 9;
    if (tc.weighted) o.weights = rw.data();
    Mixture mc = fit(cpu.get(), cc.get(), tc.k, &o);
    Mixture mg = fit(gpu.get(), cg.get(), tc.k, &o);
    dirmn_mixture_info ic, ig;
    ic.size = ig.size = sizeof ic;
    REQUIRE(dirmn_mixture_get_info(mc.get(), &ic) == DIRMN_SUCCESS);
    REQUIRE(dirmn_mixture_get_info(mg.get(), &ig) == DIRMN_SUCCESS);
    CHECK(close_to(ig.loglik, ic.loglik, 1e-10));
    CHECK(close_to(ig.objective, ic.objective, 1e-10));
    // With (nearly) empty components the Laplace value carries the log
    // determinants of Hessians of fits to almost no weight, which rounding
    // moves more than the likelihood.
    INFO("laplace cpu " << ic.laplace << ", cuda " << ig.laplace);
    const bool overfit = tc.k > clusters;
    CHECK(close_to(ig.laplace, ic.laplace, overfit ? 1e-5 : 1e-8));
    CHECK(std::abs(ig.iterations - ic.iterations) <= 1);
    std::vector<double> ac(static_cast<size_t>(tc.k * cols)), ag(ac.size()), pc(tc.k), pg(tc.k);
    std::vector<double> rc(static_cast<size_t>(rows * tc.k)), rg(rc.size());
    REQUIRE(dirmn_mixture_get_params(mc.get(), ac.data(), cols, 1, pc.data()) == DIRMN_SUCCESS);
    REQUIRE(dirmn_mixture_get_params(mg.get(), ag.data(), cols, 1, pg.data()) == DIRMN_SUCCESS);
    REQUIRE(dirmn_mixture_get_responsibilities(mc.get(), rc.data(), tc.k, 1) == DIRMN_SUCCESS);
    REQUIRE(dirmn_mixture_get_responsibilities(mg.get(), rg.data(), tc.k, 1) == DIRMN_SUCCESS);
    std::ostringstream pis;
    for (double p : pc) pis << p << " ";
    INFO("pi: " << pis.str());
    size_t worst_a = 0;
    for (size_t i = 0; i < ac.size(); ++i)
      if (std::fabs(ag[i] - ac[i]) / ac[i] > std::fabs(ag[worst_a] - ac[worst_a]) / ac[worst_a]) worst_a = i;
    INFO("worst alpha: component " << worst_a / static_cast<size_t>(cols) << ", column "
                                   << worst_a % static_cast<size_t>(cols) << std::setprecision(17)
                                   << ": cpu " << ac[worst_a] << ", cuda " << ag[worst_a]);
    // Each M step stops at a gradient of sqrt(1e-12) times its weight,
    // which leaves alpha ~1e-6 relative in its flattest directions: where
    // the host's and the device's sums round apart, their stopping points
    // do too (1.2e-6 on the pairs table below).
    for (size_t i = 0; i < ac.size(); ++i) CHECK(close_to(ag[i], ac[i], overfit ? 1e-4 : 5e-6, 1e-9));
    double worst_pi = 0;
    for (int j = 0; j < tc.k; ++j)
      worst_pi = std::max(worst_pi, std::fabs(pg[static_cast<size_t>(j)] - pc[static_cast<size_t>(j)]) /
                                        std::max(pc[static_cast<size_t>(j)], 1e-4));
    INFO("worst relative pi difference " << worst_pi);
    CHECK(worst_pi < (overfit ? 1e-5 : 1e-8));
    double worst = 0;
    for (size_t i = 0; i < rc.size(); ++i) worst = std::max(worst, std::fabs(rg[i] - rc[i]));
    CHECK(worst < (overfit ? 1e-5 : 1e-8));
  }
}

}  // namespace

TEST_CASE("mixture: the device EM agrees with the host's", "[mixture][cuda]") {
  REQUIRE(cuda_device_present());
  // Row totals 200 in 40 columns: 8-bit counts, so the CUDA backend keeps
  // the responsibilities on the device and makes its histograms there.
  const int64_t rows = 300, cols = 40;
  Simulated sim = simulate_mixture(rows, cols, 3, 23);
  for (int64_t v = 0; v < cols; ++v) sim.x[static_cast<size_t>(11 * cols + v)] = 0;  // an empty row
  // k = 7 leaves components empty, so the device state is re-seeded.
  check_device_em_matches_host(sim.x, rows, cols, 3,
                               {{3, DIRMN_MIXTURE_ML, false}, {3, DIRMN_MIXTURE_DMN, true}, {7, DIRMN_MIXTURE_ML, false}});
}

TEST_CASE("mixture: the device EM agrees with the host's on a wide sparse table", "[mixture][cuda]") {
  REQUIRE(cuda_device_present());
  // Row totals 200 over 3000 columns: stored sparse, and too wide for the
  // likelihood's tables in shared memory, so the E step reads them through
  // L2 (TablePlan::l2_tables).
  const int64_t rows = 200, cols = 3000;
  Simulated sim = simulate_mixture(rows, cols, 3, 29);
  {
    Context gpu = make_context(DIRMN_BACKEND_CUDA);
    Counts cg = counts_of(gpu.get(), sim.x, rows, cols);
    dirmn_counts_info ci;
    ci.size = sizeof ci;
    REQUIRE(dirmn_counts_get_info(cg.get(), &ci) == DIRMN_SUCCESS);
    REQUIRE(ci.storage == DIRMN_STORAGE_SPARSE);
  }
  check_device_em_matches_host(sim.x, rows, cols, 3, {{3, DIRMN_MIXTURE_ML, false}, {4, DIRMN_MIXTURE_DMN, true}});
}

TEST_CASE("mixture: M steps on the tensor cores agree with the host's", "[mixture][cuda]") {
  REQUIRE(cuda_device_present());
  // Counts below 16 in a dense 8-bit table: the device's M step takes the
  // tensor-core histograms. 70 columns leave the last group of 17 (the
  // columns a block takes at largest count 15) mostly empty, 2100 rows are
  // not a whole number of 32-row chunks, and k = 9
  // needs two groups of eight weightings. Row weights reach 2.5, above the
  // responsibilities' 1.
  const int64_t rows = 2100, cols = 70;
  Simulated sim = simulate_mixture(rows, cols, 3, 31, 150);
  for (double& v : sim.x) v = std::min(v, 15.0);
  for (int64_t v = 0; v < cols; ++v) sim.x[static_cast<size_t>(5 * cols + v)] = 0;  // an empty row
  double top = 0;
  for (double v : sim.x) top = std::max(top, v);
  REQUIRE(top == 15.0);
  check_device_em_matches_host(sim.x, rows, cols, 3,
                               {{3, DIRMN_MIXTURE_ML, false}, {3, DIRMN_MIXTURE_DMN, true}, {9, DIRMN_MIXTURE_ML, false}});
}

// Distinct row totals of a table, ascending.
std::vector<double> distinct_totals(const std::vector<double>& x, int64_t rows, int64_t cols) {
  std::vector<double> t;
  for (int64_t b = 0; b < rows; ++b) {
    double n = 0;
    for (int64_t v = 0; v < cols; ++v) n += x[static_cast<size_t>(b * cols + v)];
    t.push_back(n);
  }
  std::sort(t.begin(), t.end());
  t.erase(std::unique(t.begin(), t.end()), t.end());
  return t;
}

TEST_CASE("mixture: device M steps on banded and scattered row totals agree with the host's",
          "[mixture][cuda]") {
  REQUIRE(cuda_device_present());
  // The M step's fits run on the device once every component has a warm
  // start. Their row-total histograms take the host's forms: a dense band
  // above the smallest total where totals are close together, (value,
  // weight) pairs where they are scattered. Both are checked here (totals
  // up to 256 take the dense form from 0, as in the tests above).
  SECTION("a band") {
    const int64_t rows = 400, cols = 60;
    Simulated sim = simulate_mixture(rows, cols, 3, 41, 300, 200);
    const std::vector<double> t = distinct_totals(sim.x, rows, cols);
    REQUIRE(t.front() > 256);
    REQUIRE(t.back() - t.front() <= 8.0 * static_cast<double>(t.size()) + 256.0);
    check_device_em_matches_host(sim.x, rows, cols, 3, {{3, DIRMN_MIXTURE_ML, false}, {3, DIRMN_MIXTURE_DMN, true}});
  }
  SECTION("pairs") {
    const int64_t rows = 400, cols = 120;
    Simulated sim = simulate_mixture(rows, cols, 3, 43, 300, 6000);
    for (double& v : sim.x) v = std::min(v, 255.0);
    const std::vector<double> t = distinct_totals(sim.x, rows, cols);
    REQUIRE(t.back() - t.front() > 8.0 * static_cast<double>(t.size()) + 256.0);
    check_device_em_matches_host(sim.x, rows, cols, 3, {{3, DIRMN_MIXTURE_ML, false}, {3, DIRMN_MIXTURE_DMN, true}});
  }
}

TEST_CASE("mixture: the device hands the multinomial limit back to the host", "[mixture][cuda]") {
  REQUIRE(cuda_device_present());
  // Two groups of identical rows: no overdispersion within a group, so
  // each component's ML fit is the multinomial limit (alpha the
  // proportions at precision 1e8), which the host's fit reaches and the
  // device's M step hands back to it. The groups put their weight on
  // opposite halves of the columns: every row is certain of its component.
  const int64_t rows = 200, cols = 12;
  std::vector<double> x(static_cast<size_t>(rows * cols), 0.0);
  for (int64_t b = 0; b < rows; ++b)
    for (int64_t v = 0; v < cols; ++v)
      x[static_cast<size_t>(b * cols + v)] = (b % 2 == 0) == (v < cols / 2) ? static_cast<double>(10 + v) : 1.0;
  check_device_em_matches_host(x, rows, cols, 2, {{2, DIRMN_MIXTURE_ML, false}});
  Context gpu = make_context(DIRMN_BACKEND_CUDA);
  REQUIRE(gpu);
  Counts cg = counts_of(gpu.get(), x, rows, cols);
  dirmn_mixture_options o;
  dirmn_mixture_options_init(&o);
  // The classical EM on both: the device and the host take their
  // Newton steps in other orders, so partial M steps part by more
  // than full ones.
  o.m_step_iterations = 200;
  backend_case_starts(&o);
  o.seed = 9;
  Mixture mg = fit(gpu.get(), cg.get(), 2, &o);
  std::vector<double> a(static_cast<size_t>(2 * cols)), pi(2);
  REQUIRE(dirmn_mixture_get_params(mg.get(), a.data(), cols, 1, pi.data()) == DIRMN_SUCCESS);
  for (int j = 0; j < 2; ++j) {
    double sum = 0;
    for (int64_t v = 0; v < cols; ++v) sum += a[static_cast<size_t>(j * cols + v)];
    CHECK(close_to(sum, 1e8, 1e-12));
    CHECK(close_to(pi[static_cast<size_t>(j)], 0.5, 1e-12));
  }
}

TEST_CASE("mixture: a few tensor-core EM iterations agree with the host's", "[mixture][cuda]") {
  REQUIRE(cuda_device_present());
  // Small enough for compute-sanitizer: four iterations of one start, so
  // the fits stop in the same place on both backends whatever their
  // convergence. k = 10 takes two groups of weightings, the second one
  // mostly empty; at largest count 15, 45 columns take blocks of 17, 17
  // and 11. k = 34 takes the E step's path for more than 32 components.
  // Unit row weights take the same path and must give the same fit.
  // Counts clipped lower pack more columns into a block's MMA rows (T = 9:
  // 28 columns, so blocks of 28 and 17; T = 3 and 1: the 64-column cap,
  // most tiles unused).
  const int64_t rows = 230, cols = 45;
  const Simulated sim = simulate_mixture(rows, cols, 2, 7, 120);
  const std::vector<double> ones(static_cast<size_t>(rows), 1.0);
  Context cpu = make_context(DIRMN_BACKEND_CPU);
  Context gpu = make_context(DIRMN_BACKEND_CUDA);
  REQUIRE(cpu);
  REQUIRE(gpu);
  struct Case {
    double top;
    int k;
    bool unit_weights;
  };
  const std::vector<Case> cases = {{15, 2, false}, {15, 2, true},  {15, 10, false}, {15, 10, true},
                                   {15, 34, false}, {9, 10, false}, {3, 10, false}, {1, 10, false}};
  for (const Case& tc : cases) {
    {
      const int k = tc.k;
      const bool unit_weights = tc.unit_weights;
      INFO("largest count " << tc.top << ", k " << k << ", unit row weights " << unit_weights);
      std::vector<double> x = sim.x;
      for (double& v : x) v = std::min(v, tc.top);
      Counts cc = counts_of(cpu.get(), x, rows, cols);
      Counts cg = counts_of(gpu.get(), x, rows, cols);
      dirmn_mixture_options o;
      dirmn_mixture_options_init(&o);
      // The classical EM on both: the device and the host take their
      // Newton steps in other orders, so partial M steps part by more
      // than full ones.
      o.m_step_iterations = 200;
      backend_case_starts(&o);
      o.starts = 1;
      o.max_iterations = 4;
      o.seed = 3;
      if (unit_weights) o.weights = ones.data();
      Mixture mc = fit(cpu.get(), cc.get(), k, &o);
      Mixture mg = fit(gpu.get(), cg.get(), k, &o);
      dirmn_mixture_info ic, ig;
      ic.size = ig.size = sizeof ic;
      REQUIRE(dirmn_mixture_get_info(mc.get(), &ic) == DIRMN_SUCCESS);
      REQUIRE(dirmn_mixture_get_info(mg.get(), &ig) == DIRMN_SUCCESS);
      CHECK(ig.iterations == ic.iterations);
      std::vector<double> ac(static_cast<size_t>(k * cols)), ag(ac.size()), pc(k), pg(k);
      REQUIRE(dirmn_mixture_get_params(mc.get(), ac.data(), cols, 1, pc.data()) == DIRMN_SUCCESS);
      REQUIRE(dirmn_mixture_get_params(mg.get(), ag.data(), cols, 1, pg.data()) == DIRMN_SUCCESS);
      // Over-fitted (k = 10, 34 over two clusters: see
      // check_device_em_matches_host), alphas are compared where they are
      // determined: at least 1e-9 (near the EM's floor of 1e-10 a column's
      // alpha barely moves the likelihood), in components below precision
      // 1e6 (a handful of near-identical rows drive a component toward the
      // multinomial limit, where the likelihood is flat in the precision:
      // at k = 34 the host stopped one at alpha 1.7e10, the device at 2.8e5,
      // 2e-6 apart in log-likelihood).
      const bool overfit = k > 2;
      double worst_alpha = 0, worst_pi = 0;
      size_t worst_at = 0;
      for (int j = 0; j < k; ++j) {
        double precision = 0;
        for (int64_t v = 0; v < cols; ++v) precision += ac[static_cast<size_t>(j * cols + v)];
        if (overfit && precision >= 1e6) continue;
        for (int64_t v = 0; v < cols; ++v) {
          const size_t i = static_cast<size_t>(j * cols + v);
          if (overfit && ac[i] < 1e-9) continue;
          const double d = std::fabs(ag[i] - ac[i]) / std::fabs(ac[i]);
          if (d > worst_alpha) worst_at = i;
          worst_alpha = std::max(worst_alpha, d);
        }
      }
      INFO("loglik cpu " << std::setprecision(17) << ic.loglik << ", cuda " << ig.loglik << "; worst alpha at component "
           << worst_at / static_cast<size_t>(cols) << ", column " << worst_at % static_cast<size_t>(cols) << ": cpu "
           << ac[worst_at] << ", cuda " << ag[worst_at] << std::setprecision(6));
      CHECK(close_to(ig.loglik, ic.loglik, k > 10 ? 1e-9 : 1e-10));
      for (int j = 0; j < k; ++j)
        worst_pi = std::max(worst_pi, std::fabs(pg[static_cast<size_t>(j)] - pc[static_cast<size_t>(j)]) /
                                          pc[static_cast<size_t>(j)]);
      std::ostringstream pis;
      for (double p : pc) pis << p << " ";
      INFO("worst relative alpha difference " << worst_alpha << ", pi " << worst_pi << "; pi: " << pis.str());
      CHECK(worst_alpha < (overfit ? 1e-4 : 1e-7));
      CHECK(worst_pi < (overfit ? 1e-6 : 1e-9));
    }
  }
}

TEST_CASE("mixture: tensor-core histograms over many chunks per block agree with the host's", "[mixture][cuda]") {
  REQUIRE(cuda_device_present());
  // A tall, narrow table gives the M step's histogram blocks many 32-row
  // chunks each: 150000 rows are 4688 chunks, and with one block per split
  // (3 columns, k = 2) the split count that fills one wave of an H200
  // (264 blocks) is 261 splits of 18 chunks, the last of 8. That runs the
  // kernels' stage pipelines past their first turn (18 > 12 stages of the
  // wgmma form, 8 of the mma.sync form) and their tails (18 and 8 are not
  // whole steps).
  const int64_t rows = 150000, cols = 3;
  Simulated sim = simulate_mixture(rows, cols, 2, 11, 24);
  for (double& v : sim.x) v = std::min(v, 15.0);
  Context cpu = make_context(DIRMN_BACKEND_CPU);
  Context gpu = make_context(DIRMN_BACKEND_CUDA);
  REQUIRE(cpu);
  REQUIRE(gpu);
  Counts cc = counts_of(cpu.get(), sim.x, rows, cols);
  Counts cg = counts_of(gpu.get(), sim.x, rows, cols);
  dirmn_mixture_options o;
  dirmn_mixture_options_init(&o);
  // The classical EM on both: the device and the host take their
  // Newton steps in other orders, so partial M steps part by more
  // than full ones.
  o.m_step_iterations = 200;
  backend_case_starts(&o);
  o.starts = 1;
  o.max_iterations = 3;
  o.seed = 5;
  const int k = 2;
  Mixture mc = fit(cpu.get(), cc.get(), k, &o);
  Mixture mg = fit(gpu.get(), cg.get(), k, &o);
  dirmn_mixture_info ic, ig;
  ic.size = ig.size = sizeof ic;
  REQUIRE(dirmn_mixture_get_info(mc.get(), &ic) == DIRMN_SUCCESS);
  REQUIRE(dirmn_mixture_get_info(mg.get(), &ig) == DIRMN_SUCCESS);
  CHECK(ig.iterations == ic.iterations);
  INFO("loglik cpu " << std::setprecision(17) << ic.loglik << ", cuda " << ig.loglik << std::setprecision(6));
  CHECK(close_to(ig.loglik, ic.loglik, 1e-10));
  std::vector<double> ac(static_cast<size_t>(k * cols)), ag(ac.size()), pc(k), pg(k);
  REQUIRE(dirmn_mixture_get_params(mc.get(), ac.data(), cols, 1, pc.data()) == DIRMN_SUCCESS);
  REQUIRE(dirmn_mixture_get_params(mg.get(), ag.data(), cols, 1, pg.data()) == DIRMN_SUCCESS);
  for (size_t i = 0; i < ac.size(); ++i) {
    INFO("alpha " << i << ": cpu " << std::setprecision(17) << ac[i] << ", cuda " << ag[i]);
    CHECK(close_to(ag[i], ac[i], 1e-7));
  }
  for (int j = 0; j < k; ++j) CHECK(close_to(pg[static_cast<size_t>(j)], pc[static_cast<size_t>(j)], 1e-9));
}

TEST_CASE("mixture: M-step fits the device hands to the host show in host_steps", "[mixture][cuda]") {
  REQUIRE(cuda_device_present());
  const int64_t rows = 80, cols = 12;
  const Simulated sim = simulate_mixture(rows, cols, 2, 31);
  Context ctx = make_context(DIRMN_BACKEND_CUDA);
  REQUIRE(ctx);
  Counts c = counts_of(ctx.get(), sim.x, rows, cols);
  dirmn_counts_info info;
  info.size = sizeof info;
  REQUIRE(dirmn_counts_get_info(c.get(), &info) == DIRMN_SUCCESS);
  REQUIRE(info.value_bits == 8);
  // An 8-bit table keeps its EM and its M-step fits on the device.
  CHECK((info.host_steps & (DIRMN_STEP_MIXTURE_EM | DIRMN_STEP_MIXTURE_FITS)) == 0u);
  // Unit weights keep it so.
  std::vector<double> w(static_cast<size_t>(rows), 1.0);
  dirmn_mixture_options o;
  dirmn_mixture_options_init(&o);
  o.starts = 1;
  o.weights = w.data();
  fit(ctx.get(), c.get(), 2, &o);
  REQUIRE(dirmn_counts_get_info(c.get(), &info) == DIRMN_SUCCESS);
  CHECK((info.host_steps & DIRMN_STEP_MIXTURE_FITS) == 0u);
  // Weights of 1e-200 are rescaled by a power of two, which the device's
  // fits do not take: the host fits, and says so from then on.
  std::fill(w.begin(), w.end(), 1e-200);
  fit(ctx.get(), c.get(), 2, &o);
  REQUIRE(dirmn_counts_get_info(c.get(), &info) == DIRMN_SUCCESS);
  CHECK((info.host_steps & DIRMN_STEP_MIXTURE_FITS) != 0u);
  CHECK((info.host_steps & DIRMN_STEP_MIXTURE_EM) == 0u);
}
