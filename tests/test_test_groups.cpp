// test_test_groups.cpp: dirmn_test_groups -- its statistic against the
// pooled and per-group fits of dirmn_fit (row weights selecting a group: the
// library's other path to the same likelihoods), its chi-square tail, rows
// left out, relabelled groups, the parametric bootstrap (reproducible, the
// same for any thread count), its size under the null and power under an
// alternative by simulation, and its refusals.
#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "../kernels/math/distributions.hpp"
#include "../kernels/math/random.hpp"
#include "support.hpp"

using namespace dirmn_test;

namespace {

dirmn_group_test_result run_groups(dirmn_context* ctx, dirmn_counts* c, const std::vector<int64_t>& g,
                                   int64_t groups, const dirmn_group_test_options& o) {
  dirmn_group_test_result r;
  std::memset(&r, 0, sizeof r);
  r.size = sizeof r;
  const dirmn_status s = dirmn_test_groups(ctx, c, g.data(), groups, &o, &r);
  INFO(dirmn_last_error(ctx));
  REQUIRE(s == DIRMN_SUCCESS);
  return r;
}

dirmn_group_test_result run_groups(dirmn_context* ctx, dirmn_counts* c, const std::vector<int64_t>& g,
                                   int64_t groups, int64_t bootstrap = 0, uint64_t seed = 0) {
  dirmn_group_test_options o;
  dirmn_group_test_options_init(&o);
  o.bootstrap = bootstrap;
  o.seed = seed;
  return run_groups(ctx, c, g, groups, o);
}

double fit_loglik(dirmn_context* ctx, dirmn_counts* c, int64_t cols, const double* weights) {
  dirmn_fit_options o;
  dirmn_fit_options_init(&o);
  o.weights = weights;
  std::vector<double> alpha(static_cast<size_t>(cols));
  dirmn_fit_result r;
  std::memset(&r, 0, sizeof r);
  r.size = sizeof r;
  r.alpha = alpha.data();
  REQUIRE(dirmn_fit(ctx, c, &o, &r) == DIRMN_SUCCESS);
  REQUIRE(r.converged == 1);
  return r.loglik;
}

Counts sampled(dirmn_context* ctx, int64_t rows, const std::vector<double>& alpha, int64_t k,
               const std::vector<int64_t>& component, int64_t size, uint64_t seed) {
  dirmn_sample_options o;
  dirmn_sample_options_init(&o);
  o.seed = seed;
  if (k > 1) o.component = component.data();
  const int64_t cols = static_cast<int64_t>(alpha.size()) / k;
  dirmn_counts* c = nullptr;
  REQUIRE(dirmn_sample(ctx, &c, rows, cols, k, alpha.data(), cols, 1, DIRMN_PARAM_ALPHA, &size, 0, &o) ==
          DIRMN_SUCCESS);
  return Counts(c);
}

}  // namespace

TEST_CASE("test_groups: the statistic is twice the gain of the groups' fits over the pooled fit", "[groups-test]") {
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  const int64_t rows = 90, cols = 9;
  std::vector<double> x = random_table(rows, cols, 0.3, 30, 41);
  for (int64_t b = 0; b < rows; ++b) x[static_cast<size_t>(b * cols + 8)] = 0.0;  // a column without counts
  Counts c = make_dense(ctx.get(), x, rows, cols);
  std::vector<int64_t> g(static_cast<size_t>(rows));
  for (int64_t b = 0; b < rows; ++b) g[static_cast<size_t>(b)] = b % 3;
  const dirmn_group_test_result r = run_groups(ctx.get(), c.get(), g, 3);
  double groups_ll = 0.0;
  for (int64_t j = 0; j < 3; ++j) {
    std::vector<double> w(static_cast<size_t>(rows));
    for (int64_t b = 0; b < rows; ++b) w[static_cast<size_t>(b)] = g[static_cast<size_t>(b)] == j ? 1.0 : 0.0;
    groups_ll += fit_loglik(ctx.get(), c.get(), cols, w.data());
  }
  const double pooled = fit_loglik(ctx.get(), c.get(), cols, nullptr);
  CHECK(close_to(r.loglik_null, pooled, 1e-10));
  CHECK(close_to(r.loglik_groups, groups_ll, 1e-10));
  CHECK(close_to(r.statistic, 2 * (groups_ll - pooled), 1e-7));
  CHECK(r.categories == 8);
  CHECK(r.groups == 3);
  CHECK(r.df == 16.0);
  CHECK(close_to(r.p_value, dirmn::math::gamma_q(8.0, r.statistic / 2), 1e-12));
  CHECK(r.converged == 1);
  CHECK(r.bootstrap == 0);
  CHECK(r.p_value_bootstrap == 1.0);

  SECTION("rows left out (-1) and relabelled groups change nothing but what they say") {
    std::vector<int64_t> h(g);
    for (int64_t b = 0; b < rows; ++b) h[static_cast<size_t>(b)] = g[static_cast<size_t>(b)] == 0 ? 5 : g[static_cast<size_t>(b)] == 1 ? 2 : 4;
    const dirmn_group_test_result rl = run_groups(ctx.get(), c.get(), h, 6);
    CHECK(rl.statistic == r.statistic);
    CHECK(rl.groups == 3);
    // Group 2's rows left out: the test of groups 0 and 1 on their rows alone.
    std::vector<int64_t> two(g);
    std::vector<double> sub;
    std::vector<int64_t> sub_g;
    for (int64_t b = 0; b < rows; ++b) {
      if (g[static_cast<size_t>(b)] == 2) {
        two[static_cast<size_t>(b)] = -1;
        continue;
      }
      sub.insert(sub.end(), x.begin() + b * cols, x.begin() + (b + 1) * cols);
      sub_g.push_back(g[static_cast<size_t>(b)]);
    }
    const dirmn_group_test_result r2 = run_groups(ctx.get(), c.get(), two, 3);
    Counts cs = make_dense(ctx.get(), sub, static_cast<int64_t>(sub_g.size()), cols);
    const dirmn_group_test_result rs = run_groups(ctx.get(), cs.get(), sub_g, 2);
    CHECK(close_to(r2.statistic, rs.statistic, 1e-12));
    CHECK(r2.groups == 2);
  }
}

TEST_CASE("test_groups: the bootstrap is reproducible, the same for any thread count", "[groups-test]") {
  std::vector<double> p_boot;
  for (int threads : {1, 2, 5}) {
    Context ctx = make_context(DIRMN_BACKEND_CPU);
    REQUIRE(ctx);
    REQUIRE(dirmn_context_set_threads(ctx.get(), threads) == DIRMN_SUCCESS);
    const std::vector<double> x = random_table(40, 5, 0.2, 20, 43);
    Counts c = make_dense(ctx.get(), x, 40, 5);
    std::vector<int64_t> g(40);
    for (int64_t b = 0; b < 40; ++b) g[static_cast<size_t>(b)] = b < 20 ? 0 : 1;
    const dirmn_group_test_result r = run_groups(ctx.get(), c.get(), g, 2, 199, 7);
    CHECK(r.bootstrap == 199);
    CHECK(r.p_value_bootstrap >= 1.0 / 200);
    CHECK(r.p_value_bootstrap <= 1.0);
    // (1 + hits) / 200: a whole number of 200ths.
    CHECK(std::fabs(r.p_value_bootstrap * 200 - std::round(r.p_value_bootstrap * 200)) < 1e-9);
    p_boot.push_back(r.p_value_bootstrap);
  }
  CHECK(p_boot[0] == p_boot[1]);
  CHECK(p_boot[0] == p_boot[2]);
}

TEST_CASE("test_groups: about 5 % of null tables rejected at 5 %; an alternative always", "[groups-test]") {
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  const int64_t rows = 80, tables = 300;
  const std::vector<double> alpha{2.0, 1.0, 0.5, 3.0, 1.5};
  std::vector<int64_t> g(static_cast<size_t>(rows));
  for (int64_t b = 0; b < rows; ++b) g[static_cast<size_t>(b)] = b % 2;
  int rejected = 0;
  for (int64_t t = 0; t < tables; ++t) {
    Counts c = sampled(ctx.get(), rows, alpha, 1, {}, 150, 1000 + static_cast<uint64_t>(t));
    if (run_groups(ctx.get(), c.get(), g, 2).p_value < 0.05) ++rejected;
  }
  // 15 expected; sd 3.8.
  CHECK(rejected >= 4);
  CHECK(rejected <= 30);
  // Two groups whose first two categories' shares differ: 0.25 and 0.125
  // against 0.42 and 0.05.
  std::vector<double> two(alpha);
  two.insert(two.end(), {4.0, 0.5, 0.5, 3.0, 1.5});
  int detected = 0;
  for (int64_t t = 0; t < 20; ++t) {
    Counts c = sampled(ctx.get(), rows, two, 2, g, 150, 5000 + static_cast<uint64_t>(t));
    if (run_groups(ctx.get(), c.get(), g, 2).p_value < 1e-3) ++detected;
  }
  CHECK(detected >= 15);
}

TEST_CASE("test_groups: refusals name what is wrong", "[groups-test]") {
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  const std::vector<double> x = random_table(10, 4, 0.2, 9, 44);
  Counts c = make_dense(ctx.get(), x, 10, 4);
  std::vector<int64_t> g(10, 0);
  g[3] = 1;
  dirmn_group_test_result r;
  std::memset(&r, 0, sizeof r);
  r.size = sizeof r;
  CHECK(dirmn_test_groups(ctx.get(), c.get(), g.data(), 1, nullptr, &r) == DIRMN_ERROR_INVALID_ARGUMENT);
  g[5] = 2;
  CHECK(dirmn_test_groups(ctx.get(), c.get(), g.data(), 2, nullptr, &r) == DIRMN_ERROR_INVALID_PARAMETER);
  dirmn_error_location loc;
  loc.size = sizeof loc;
  REQUIRE(dirmn_last_error_location(ctx.get(), &loc) == DIRMN_SUCCESS);
  CHECK(loc.row == 5);
  CHECK(std::string(loc.argument) == "group");
  std::vector<int64_t> one(10, 1);
  one[0] = -1;
  CHECK(dirmn_test_groups(ctx.get(), c.get(), one.data(), 2, nullptr, &r) == DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(last_error(ctx).find("two groups") != std::string::npos);
  g[5] = 0;
  dirmn_group_test_options o;
  dirmn_group_test_options_init(&o);
  o.bootstrap = -1;
  CHECK(dirmn_test_groups(ctx.get(), c.get(), g.data(), 2, &o, &r) == DIRMN_ERROR_INVALID_ARGUMENT);
  r.size = 4;
  CHECK(dirmn_test_groups(ctx.get(), c.get(), g.data(), 2, nullptr, &r) == DIRMN_ERROR_INVALID_ARGUMENT);
  r.size = sizeof r;
  CHECK(dirmn_test_groups(ctx.get(), c.get(), nullptr, 2, nullptr, &r) == DIRMN_ERROR_NULL_POINTER);
  CHECK(dirmn_test_groups(ctx.get(), c.get(), g.data(), 2, nullptr, nullptr) == DIRMN_ERROR_NULL_POINTER);
}

TEST_CASE("power_groups: each table is dirmn_test_groups of dirmn_sample's table from stream t", "[groups-test]") {
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  const std::vector<double> alpha{3.0, 1.0, 0.5, 2.0, 1.5,   // group 0
                                  2.0, 1.5, 0.5, 2.0, 1.5};  // group 1
  const int64_t rows_per_group[2] = {12, 9};
  std::vector<int64_t> sizes(21);
  for (size_t b = 0; b < sizes.size(); ++b) sizes[b] = 50 + static_cast<int64_t>(b) * 7;
  dirmn_power_options o;
  dirmn_power_options_init(&o);
  o.tables = 60;
  o.seed = 17;
  dirmn_power_result r;
  std::memset(&r, 0, sizeof r);
  r.size = sizeof r;
  REQUIRE(dirmn_power_groups(ctx.get(), 2, 5, alpha.data(), 5, 1, DIRMN_PARAM_ALPHA, rows_per_group, sizes.data(),
                             &o, &r) == DIRMN_SUCCESS);
  CHECK(r.tables == 60);
  // The same tables through the public functions.
  std::vector<int64_t> component(21);
  for (size_t b = 0; b < 21; ++b) component[b] = b < 12 ? 0 : 1;
  int64_t rejected = 0;
  double stat_sum = 0.0;
  for (int64_t t = 0; t < 60; ++t) {
    dirmn_sample_options so;
    dirmn_sample_options_init(&so);
    so.seed = dirmn::math::derived_key(17, dirmn::math::kFamilyPower, static_cast<uint64_t>(t));
    so.component = component.data();
    dirmn_counts* c = nullptr;
    REQUIRE(dirmn_sample(ctx.get(), &c, 21, 5, 2, alpha.data(), 5, 1, DIRMN_PARAM_ALPHA, sizes.data(), 1, &so) ==
            DIRMN_SUCCESS);
    Counts owned(c);
    const dirmn_group_test_result g = run_groups(ctx.get(), c, component, 2);
    rejected += g.p_value < 0.05 ? 1 : 0;
    stat_sum += g.statistic;
  }
  CHECK(r.rejected == rejected);
  CHECK(close_to(r.mean_statistic, stat_sum / 60, 1e-9));
  CHECK(r.power == static_cast<double>(rejected) / 60);
  CHECK(close_to(r.std_error, std::sqrt(r.power * (1 - r.power) / 60), 1e-15, 1e-300));

  SECTION("the same for any thread count; equal alphas give about the level") {
    REQUIRE(dirmn_context_set_threads(ctx.get(), 3) == DIRMN_SUCCESS);
    dirmn_power_result r3;
    std::memset(&r3, 0, sizeof r3);
    r3.size = sizeof r3;
    REQUIRE(dirmn_power_groups(ctx.get(), 2, 5, alpha.data(), 5, 1, DIRMN_PARAM_ALPHA, rows_per_group, sizes.data(),
                               &o, &r3) == DIRMN_SUCCESS);
    CHECK(r3.rejected == r.rejected);
    CHECK(r3.mean_statistic == r.mean_statistic);
    std::vector<double> same(alpha.begin(), alpha.begin() + 5);
    same.insert(same.end(), alpha.begin(), alpha.begin() + 5);
    o.tables = 400;
    REQUIRE(dirmn_power_groups(ctx.get(), 2, 5, same.data(), 5, 1, DIRMN_PARAM_ALPHA, rows_per_group, sizes.data(),
                               &o, &r3) == DIRMN_SUCCESS);
    // 20 of 400 expected at 5 % (sd 4.4); small samples make the LRT a
    // little liberal.
    CHECK(r3.rejected >= 6);
    CHECK(r3.rejected <= 45);
  }
  SECTION("refusals") {
    const int64_t one_group[2] = {21, 0};
    CHECK(dirmn_power_groups(ctx.get(), 2, 5, alpha.data(), 5, 1, DIRMN_PARAM_ALPHA, one_group, sizes.data(), &o,
                             &r) == DIRMN_ERROR_INVALID_ARGUMENT);
    const int64_t negative[2] = {-1, 22};
    CHECK(dirmn_power_groups(ctx.get(), 2, 5, alpha.data(), 5, 1, DIRMN_PARAM_ALPHA, negative, sizes.data(), &o,
                             &r) == DIRMN_ERROR_INVALID_ARGUMENT);
    o.level = 1.0;
    CHECK(dirmn_power_groups(ctx.get(), 2, 5, alpha.data(), 5, 1, DIRMN_PARAM_ALPHA, rows_per_group, sizes.data(),
                             &o, &r) == DIRMN_ERROR_INVALID_ARGUMENT);
    o.level = 0.05;
    o.tables = 0;
    CHECK(dirmn_power_groups(ctx.get(), 2, 5, alpha.data(), 5, 1, DIRMN_PARAM_ALPHA, rows_per_group, sizes.data(),
                             &o, &r) == DIRMN_ERROR_INVALID_ARGUMENT);
    o.tables = 10;
    sizes[3] = -4;
    CHECK(dirmn_power_groups(ctx.get(), 2, 5, alpha.data(), 5, 1, DIRMN_PARAM_ALPHA, rows_per_group, sizes.data(),
                             &o, &r) == DIRMN_ERROR_INVALID_ARGUMENT);
    dirmn_error_location loc;
    loc.size = sizeof loc;
    REQUIRE(dirmn_last_error_location(ctx.get(), &loc) == DIRMN_SUCCESS);
    CHECK(loc.row == 3);
    sizes[3] = 5;
    std::vector<double> bad(alpha);
    bad[7] = 0.0;
    CHECK(dirmn_power_groups(ctx.get(), 2, 5, bad.data(), 5, 1, DIRMN_PARAM_ALPHA, rows_per_group, sizes.data(), &o,
                             &r) == DIRMN_ERROR_INVALID_PARAMETER);
    REQUIRE(dirmn_last_error_location(ctx.get(), &loc) == DIRMN_SUCCESS);
    CHECK(loc.vector == 1);
    CHECK(loc.index == 2);
  }
}

TEST_CASE("test_groups: HMP's Xdc on its saliva, throat and tonsils tables", "[groups-test]") {
  // HMP 2.0.1's Xdc.sevsample(..., epsilon = 1e-12, est = "mle"): the same
  // likelihood-ratio statistic from dirmult's fits (tests/data/README.md).
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  std::vector<double> x;
  std::vector<int64_t> group;
  int64_t cols = 0;
  int g = 0;
  for (const char* name : {"hmp_saliva.csv", "hmp_throat.csv", "hmp_tonsils.csv"}) {
    int64_t r = 0, c = 0;
    const std::vector<double> t = read_csv(test_data_path(name), &r, &c);
    cols = c;
    x.insert(x.end(), t.begin(), t.end());
    group.insert(group.end(), static_cast<size_t>(r), g++);
  }
  REQUIRE(cols == 21);
  const int64_t rows = static_cast<int64_t>(group.size());
  Counts c = counts_of(ctx.get(), x, rows, cols);
  const dirmn_group_test_result all = run_groups(ctx.get(), c.get(), group, 3);
  CHECK(close_to(all.statistic, 529.509073461, 1e-9));
  CHECK(all.df == 42.0);
  // Saliva against throat, tonsils left out.
  std::vector<int64_t> two(group);
  for (int64_t& v : two)
    if (v == 2) v = -1;
  const dirmn_group_test_result st = run_groups(ctx.get(), c.get(), two, 3);
  CHECK(close_to(st.statistic, 367.617064644, 1e-9));
  CHECK(st.df == 21.0);
}

// HMP 2.0.1's saliva, throat and tonsils tables (21 taxa) stacked, their
// rows in groups 0, 1 and 2.
static void hmp_tables(std::vector<double>* x, std::vector<int64_t>* group) {
  int g = 0;
  for (const char* name : {"hmp_saliva.csv", "hmp_throat.csv", "hmp_tonsils.csv"}) {
    int64_t r = 0, c = 0;
    const std::vector<double> t = read_csv(test_data_path(name), &r, &c);
    REQUIRE(c == 21);
    x->insert(x->end(), t.begin(), t.end());
    group->insert(group->end(), static_cast<size_t>(r), g++);
  }
}

TEST_CASE("test_groups: HMP's Xmcupo on its saliva, throat and tonsils tables", "[groups-test]") {
  // HMP 2.0.1's Xmcupo.sevsample (deterministic: method-of-moments
  // estimates; its row totals carry a +1e-6 that moves nothing at 1e-9).
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  std::vector<double> x;
  std::vector<int64_t> group;
  hmp_tables(&x, &group);
  const int64_t rows = static_cast<int64_t>(group.size());
  Counts c = counts_of(ctx.get(), x, rows, 21);
  dirmn_group_test_options o;
  dirmn_group_test_options_init(&o);
  o.statistic = DIRMN_GROUP_XMCUPO;
  const auto run = [&](const std::vector<int64_t>& grp) { return run_groups(ctx.get(), c.get(), grp, 3, o); };
  const dirmn_group_test_result all = run(group);
  CHECK(close_to(all.statistic, 150.443851750275, 1e-9));
  CHECK(all.df == 40.0);
  std::vector<int64_t> st(group), tt(group);
  for (size_t b = 0; b < group.size(); ++b) {
    if (st[b] == 2) st[b] = -1;
    if (tt[b] == 0) tt[b] = -1;
  }
  CHECK(close_to(run(st).statistic, 98.3973853587345, 1e-9));
  const dirmn_group_test_result r_tt = run(tt);
  CHECK(close_to(r_tt.statistic, 3.24781427884673, 1e-9));
  CHECK(close_to(r_tt.p_value, 0.99999189153229, 1e-9));
  // Its bootstrap: a whole number of 100ths, reproducible.
  o.bootstrap = 99;
  o.seed = 3;
  const dirmn_group_test_result b1 = run(tt), b2 = run(tt);
  CHECK(b1.p_value_bootstrap == b2.p_value_bootstrap);
  CHECK(b1.p_value_bootstrap > 0.5);  // throat and tonsils do not differ
  o.statistic = static_cast<dirmn_group_statistic>(7);
  dirmn_group_test_result r;
  r.size = sizeof r;
  CHECK(dirmn_test_groups(ctx.get(), c.get(), group.data(), 3, &o, &r) == DIRMN_ERROR_INVALID_ARGUMENT);
}

TEST_CASE("test_proportions: HMP's Xsc on its saliva, throat and tonsils tables", "[groups-test]") {
  // HMP 2.0.1's Xsc.onesample(data, pi0) with pi0 = DM.MoM(other)$pi, the
  // other table's pooled proportions (deterministic: method of moments).
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  std::map<std::string, std::vector<double>> tab;
  std::map<std::string, int64_t> nrow;
  for (const char* name : {"saliva", "throat", "tonsils"}) {
    int64_t r = 0, c = 0;
    tab[name] = read_csv(test_data_path((std::string("hmp_") + name + ".csv").c_str()), &r, &c);
    REQUIRE(c == 21);
    nrow[name] = r;
  }
  const auto pooled = [&](const std::vector<double>& x) {
    std::vector<double> p(21, 0.0);
    double total = 0.0;
    for (size_t i = 0; i < x.size(); ++i) {
      p[i % 21] += x[i];
      total += x[i];
    }
    for (double& v : p) v /= total;
    return p;
  };
  const auto run = [&](const std::string& name, const std::vector<double>& pi0, int64_t stride,
                       dirmn_proportion_test_result* r) {
    Counts c = counts_of(ctx.get(), tab[name], nrow[name], 21);
    std::memset(r, 0, sizeof *r);
    r->size = sizeof *r;
    return dirmn_test_proportions(ctx.get(), c.get(), pi0.data(), stride, r);
  };
  const std::vector<double> throat = pooled(tab["throat"]);
  dirmn_proportion_test_result r;
  REQUIRE(run("saliva", throat, 1, &r) == DIRMN_SUCCESS);
  CHECK(close_to(r.statistic, 366.142260583136, 1e-9));
  CHECK(r.df == 20.0);
  CHECK(r.p_value < 1e-60);
  CHECK(r.rows == 24);
  CHECK(r.categories == 21);
  REQUIRE(run("tonsils", throat, 1, &r) == DIRMN_SUCCESS);
  CHECK(close_to(r.statistic, 5.17206513999273, 1e-9));
  CHECK(close_to(r.p_value, 0.999639605330565, 1e-9));
  std::vector<double> all(tab["saliva"]);
  all.insert(all.end(), tab["throat"].begin(), tab["throat"].end());
  all.insert(all.end(), tab["tonsils"].begin(), tab["tonsils"].end());
  const std::vector<double> pooled_all = pooled(all);
  REQUIRE(run("throat", pooled_all, 1, &r) == DIRMN_SUCCESS);
  CHECK(close_to(r.statistic, 12.7067487387809, 1e-9));
  CHECK(close_to(r.p_value, 0.889608634576809, 1e-9));
  // A strided vector reads the same entries.
  std::vector<double> spread(42, -7.0);
  for (size_t v = 0; v < 21; ++v) spread[2 * v] = pooled_all[v];
  dirmn_proportion_test_result rs;
  REQUIRE(run("throat", spread, 2, &rs) == DIRMN_SUCCESS);
  CHECK(rs.statistic == r.statistic);

  // A category pi0 rules out but the rows hold: +Inf, p-value 0.
  std::vector<double> zeroed(throat);
  const double moved = zeroed[0];
  zeroed[0] = 0.0;
  zeroed[1] += moved;
  REQUIRE(run("saliva", zeroed, 1, &r) == DIRMN_SUCCESS);
  CHECK(std::isinf(r.statistic));
  CHECK(r.p_value == 0.0);
  CHECK(r.df == 19.0);

  // Bad proportions: each named, nothing computed.
  std::vector<double> bad(throat);
  bad[4] = -0.01;
  CHECK(run("saliva", bad, 1, &r) == DIRMN_ERROR_INVALID_PARAMETER);
  CHECK(std::string(dirmn_last_error(ctx.get())).find("proportions index 4") != std::string::npos);
  bad = throat;
  bad[3] = std::nan("");
  CHECK(run("saliva", bad, 1, &r) == DIRMN_ERROR_INVALID_PARAMETER);
  bad = throat;
  bad[0] += 0.01;
  CHECK(run("saliva", bad, 1, &r) == DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(dirmn_last_error(ctx.get())).find("sum to") != std::string::npos);
  std::vector<double> one(21, 0.0);
  one[2] = 1.0;
  CHECK(run("saliva", one, 1, &r) == DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(run("saliva", throat, 0, &r) == DIRMN_ERROR_INVALID_ARGUMENT);
  Counts c = counts_of(ctx.get(), tab["saliva"], nrow["saliva"], 21);
  CHECK(dirmn_test_proportions(ctx.get(), c.get(), nullptr, 1, &r) == DIRMN_ERROR_NULL_POINTER);
  r.size = 4;
  CHECK(dirmn_test_proportions(ctx.get(), c.get(), throat.data(), 1, &r) == DIRMN_ERROR_INVALID_ARGUMENT);
  // No row with counts.
  Counts empty = counts_of(ctx.get(), std::vector<double>(42, 0.0), 2, 21);
  r.size = sizeof r;
  CHECK(dirmn_test_proportions(ctx.get(), empty.get(), throat.data(), 1, &r) == DIRMN_ERROR_INVALID_ARGUMENT);
}

TEST_CASE("test_groups: HMP's Xoc on its saliva, throat and tonsils tables", "[groups-test]") {
  // HMP 2.0.1's Xoc.sevsample(list(...), epsilon = 1e-10) (dirmult's fits
  // and equalTheta, run to convergence): the likelihood ratio of one
  // shared overdispersion against one per group.
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  std::vector<double> x;
  std::vector<int64_t> group;
  hmp_tables(&x, &group);
  const int64_t rows = static_cast<int64_t>(group.size());
  Counts c = counts_of(ctx.get(), x, rows, 21);
  dirmn_group_test_options o;
  dirmn_group_test_options_init(&o);
  o.statistic = DIRMN_GROUP_XOC;
  const auto run = [&](const std::vector<int64_t>& grp) { return run_groups(ctx.get(), c.get(), grp, 3, o); };
  const dirmn_group_test_result all = run(group);
  CHECK(close_to(all.statistic, 107.907114781439, 1e-8));
  CHECK(all.df == 2.0);
  CHECK(all.converged == 1);
  CHECK(all.loglik_groups > all.loglik_null);
  std::vector<int64_t> st(group), tt(group);
  for (size_t b = 0; b < group.size(); ++b) {
    if (st[b] == 2) st[b] = -1;
    if (tt[b] == 0) tt[b] = -1;
  }
  const dirmn_group_test_result r_st = run(st);
  CHECK(close_to(r_st.statistic, 27.9373973570764, 1e-8));
  CHECK(close_to(r_st.p_value, 1.25304413067795e-07, 1e-7));
  const dirmn_group_test_result r_tt = run(tt);
  CHECK(close_to(r_tt.statistic, 25.5870610596612, 1e-8));
  CHECK(close_to(r_tt.p_value, 4.22865448324039e-07, 1e-7));
  CHECK(r_tt.df == 1.0);
  // Its bootstrap draws each group's rows from the shared-precision fit:
  // reproducible, and far from the observed statistic here.
  o.bootstrap = 49;
  o.seed = 9;
  const dirmn_group_test_result b1 = run(tt), b2 = run(tt);
  CHECK(b1.p_value_bootstrap == b2.p_value_bootstrap);
  CHECK(b1.p_value_bootstrap == 1.0 / 50.0);
  CHECK(b1.statistic == r_tt.statistic);
}

TEST_CASE("test_groups: Xoc's null rejection rate and its power", "[groups-test]") {
  // Three groups of one DM (equal overdispersion): the chi-square test at
  // 5 % rejects about 5 % of 400 tables; groups of different precision
  // (same proportions) are rejected far more often.
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  const int64_t groups = 3, cols = 6;
  std::vector<double> alpha(static_cast<size_t>(groups * cols));
  for (int64_t j = 0; j < groups; ++j)
    for (int64_t v = 0; v < cols; ++v) alpha[static_cast<size_t>(j * cols + v)] = 2.0 + static_cast<double>(v);
  const std::vector<int64_t> per_group(3, 25);
  const std::vector<int64_t> sizes(75, 200);
  dirmn_power_options o;
  dirmn_power_options_init(&o);
  o.statistic = DIRMN_GROUP_XOC;
  o.tables = 400;
  o.seed = 17;
  dirmn_power_result r;
  std::memset(&r, 0, sizeof r);
  r.size = sizeof r;
  REQUIRE(dirmn_power_groups(ctx.get(), groups, cols, alpha.data(), cols, 1, DIRMN_PARAM_ALPHA,
                             per_group.data(), sizes.data(), &o, &r) == DIRMN_SUCCESS);
  // 400 tables: sd of the rate 0.011.
  CHECK(std::fabs(r.power - 0.05) < 0.04);
  for (int64_t v = 0; v < cols; ++v) alpha[static_cast<size_t>(2 * cols + v)] *= 6.0;  // group 3: less overdispersed
  REQUIRE(dirmn_power_groups(ctx.get(), groups, cols, alpha.data(), cols, 1, DIRMN_PARAM_ALPHA,
                             per_group.data(), sizes.data(), &o, &r) == DIRMN_SUCCESS);
  CHECK(r.power > 0.5);
}

TEST_CASE("power_proportions: Xsc's size, its power and the tables it draws", "[groups-test]") {
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  const int64_t cols = 8, rows = 30;
  std::vector<double> pi0(cols), alpha(cols);
  double s = 0.0;
  for (int64_t v = 0; v < cols; ++v) s += pi0[static_cast<size_t>(v)] = 1.0 + static_cast<double>(v);
  for (double& p : pi0) p /= s;
  const std::vector<int64_t> sizes(rows, 500);
  dirmn_power_options o;
  dirmn_power_options_init(&o);
  o.tables = 400;
  o.seed = 23;
  dirmn_power_result r;
  const auto run = [&](const std::vector<double>& a, const dirmn_power_options* opt) {
    std::memset(&r, 0, sizeof r);
    r.size = sizeof r;
    return dirmn_power_proportions(ctx.get(), cols, a.data(), 1, DIRMN_PARAM_ALPHA, rows, sizes.data(),
                                   pi0.data(), 1, opt, &r);
  };
  // alpha proportional to pi0: the test's size, 5 % (sd 1.1 % over 400 tables).
  for (int64_t v = 0; v < cols; ++v) alpha[static_cast<size_t>(v)] = 20.0 * pi0[static_cast<size_t>(v)];
  REQUIRE(run(alpha, &o) == DIRMN_SUCCESS);
  CHECK(r.tables == 400);
  CHECK(std::fabs(r.power - 0.05) < 0.04);
  // Xsc's mean under the null is its df, 7 (within Monte Carlo error).
  CHECK(std::fabs(r.mean_statistic - 7.0) < 1.0);
  // The first and last categories' shares swapped: rejected almost always.
  std::swap(alpha[0], alpha[cols - 1]);
  REQUIRE(run(alpha, &o) == DIRMN_SUCCESS);
  CHECK(r.power > 0.9);
  CHECK(r.std_error == Approx(std::sqrt(r.power * (1 - r.power) / 400)));
  // Table t is dirmn_sample's table of seed derived_key(seed, kFamilyPower, t),
  // tested by dirmn_test_proportions.
  o.tables = 30;
  REQUIRE(run(alpha, &o) == DIRMN_SUCCESS);
  int64_t rejected = 0;
  for (int64_t t = 0; t < 30; ++t) {
    dirmn_sample_options so;
    dirmn_sample_options_init(&so);
    so.seed = dirmn::math::derived_key(23, dirmn::math::kFamilyPower, static_cast<uint64_t>(t));
    dirmn_counts* c = nullptr;
    REQUIRE(dirmn_sample(ctx.get(), &c, rows, cols, 1, alpha.data(), cols, 1, DIRMN_PARAM_ALPHA, sizes.data(), 1,
                         &so) == DIRMN_SUCCESS);
    dirmn_proportion_test_result pr;
    std::memset(&pr, 0, sizeof pr);
    pr.size = sizeof pr;
    REQUIRE(dirmn_test_proportions(ctx.get(), c, pi0.data(), 1, &pr) == DIRMN_SUCCESS);
    rejected += pr.p_value < 0.05 ? 1 : 0;
    dirmn_counts_destroy(c);
  }
  CHECK(r.rejected == rejected);
  // Bad input: named, nothing run.
  std::vector<double> bad(pi0);
  bad[2] = -0.1;
  CHECK(dirmn_power_proportions(ctx.get(), cols, alpha.data(), 1, DIRMN_PARAM_ALPHA, rows, sizes.data(), bad.data(),
                                1, &o, &r) == DIRMN_ERROR_INVALID_PARAMETER);
  CHECK(std::string(dirmn_last_error(ctx.get())).find("proportions index 2") != std::string::npos);
  std::vector<double> neg(alpha);
  neg[1] = -1.0;
  CHECK(run(neg, &o) == DIRMN_ERROR_INVALID_PARAMETER);
  o.tables = 0;
  CHECK(run(alpha, &o) == DIRMN_ERROR_INVALID_ARGUMENT);
  o.tables = 10;
  o.level = 1.0;
  CHECK(run(alpha, &o) == DIRMN_ERROR_INVALID_ARGUMENT);
  o.level = 0.05;
  CHECK(dirmn_power_proportions(ctx.get(), 1, alpha.data(), 1, DIRMN_PARAM_ALPHA, rows, sizes.data(), pi0.data(),
                                1, &o, &r) == DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(dirmn_power_proportions(ctx.get(), cols, alpha.data(), 1, DIRMN_PARAM_ALPHA, 0, sizes.data(), pi0.data(),
                                1, &o, &r) == DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(dirmn_power_proportions(ctx.get(), cols, alpha.data(), 1, DIRMN_PARAM_ALPHA, rows, sizes.data(), nullptr,
                                1, &o, &r) == DIRMN_ERROR_NULL_POINTER);
}
