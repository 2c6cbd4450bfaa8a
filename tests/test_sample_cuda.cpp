// test_sample_cuda.cpp: tables drawn on the device -- the same table as the
// host draws for a seed, whatever the method (gamma variates or the urn,
// its few-category and many-category listings), the vectors (shared, a
// mixture's, one per row), the extremes of alpha, the stored form (8, 16
// and 32 bits; dense or CSR; 16- or 32-bit column indices) and the number
// of launches; and such a table used as any other: its likelihood on the
// device, fits and copies through the host copy it gets on demand.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "support.hpp"

using namespace dirmn_test;

namespace {

struct Drawn {
  std::vector<int64_t> dense;
  std::vector<int64_t> component;
  dirmn_counts_info info{};
};

// Draws on ctx (rowwise when k is 0: one alpha per row) and copies the
// table out; c_out keeps the handle where asked.
Drawn draw_on(dirmn_context* ctx, int64_t rows, int64_t cols, int64_t k, const std::vector<double>& alpha,
              const std::vector<int64_t>& sizes, dirmn_sample_options o, Counts* c_out = nullptr) {
  Drawn d;
  d.component.assign(static_cast<size_t>(rows), -1);
  if (k > 1) o.component_out = d.component.data();
  dirmn_counts* c = nullptr;
  const int64_t stride = sizes.size() == 1 ? 0 : 1;
  const dirmn_status s =
      k == 0 ? dirmn_sample_rowwise(ctx, &c, rows, cols, alpha.data(), cols, 1, DIRMN_PARAM_ALPHA, sizes.data(),
                                    stride, &o)
             : dirmn_sample(ctx, &c, rows, cols, k, alpha.data(), cols, 1, DIRMN_PARAM_ALPHA, sizes.data(), stride,
                            &o);
  INFO(dirmn_last_error(ctx));
  REQUIRE(s == DIRMN_SUCCESS);
  Counts owned(c);
  d.info.size = sizeof d.info;
  REQUIRE(dirmn_counts_get_info(c, &d.info) == DIRMN_SUCCESS);
  d.dense.assign(static_cast<size_t>(rows * cols), -1);
  REQUIRE(dirmn_counts_copy_dense(ctx, c, DIRMN_INT64, d.dense.data(), cols, 1) == DIRMN_SUCCESS);
  if (c_out != nullptr) *c_out = std::move(owned);
  return d;
}

// The same request on the CPU and on the device: the same table, the same
// components, the same form.
void check_same(int64_t rows, int64_t cols, int64_t k, const std::vector<double>& alpha,
                const std::vector<int64_t>& sizes, const dirmn_sample_options& o, int expect_bits = 0) {
  Context cpu = make_context(DIRMN_BACKEND_CPU);
  Context gpu = make_context(DIRMN_BACKEND_CUDA);
  REQUIRE(cpu);
  REQUIRE(gpu);
  const Drawn h = draw_on(cpu.get(), rows, cols, k, alpha, sizes, o);
  const Drawn g = draw_on(gpu.get(), rows, cols, k, alpha, sizes, o);
  CHECK(g.info.backend == DIRMN_BACKEND_CUDA);
  CHECK(h.info.nnz == g.info.nnz);
  CHECK(h.info.storage == g.info.storage);
  CHECK(h.info.value_bits == g.info.value_bits);
  if (expect_bits != 0) CHECK(g.info.value_bits == expect_bits);
  CHECK(h.component == g.component);
  size_t differ = 0;
  for (size_t i = 0; i < h.dense.size(); ++i) differ += h.dense[i] != g.dense[i];
  CHECK(differ == 0);
  // Every row holds its size.
  for (int64_t b = 0; b < rows; ++b) {
    int64_t s = 0;
    for (int64_t v = 0; v < cols; ++v) s += g.dense[static_cast<size_t>(b * cols + v)];
    CHECK(s == sizes[sizes.size() == 1 ? 0 : static_cast<size_t>(b)]);
    if (s != sizes[sizes.size() == 1 ? 0 : static_cast<size_t>(b)]) break;
  }
}

dirmn_sample_options options(uint64_t seed) {
  dirmn_sample_options o;
  dirmn_sample_options_init(&o);
  o.seed = seed;
  return o;
}

}  // namespace

TEST_CASE("cuda sample: shared alpha -- gamma and urn rows, both urn listings, every value width",
          "[cuda][sample]") {
  if (!cuda_device_present()) return;
  SECTION("gamma and urn rows in one table") {
    const std::vector<double> alpha = random_alpha(300, 1e-2, 5.0, 6);
    std::vector<int64_t> sizes(700);
    for (size_t b = 0; b < sizes.size(); ++b) sizes[b] = b % 3 == 0 ? 40 : b % 3 == 1 ? 3000 : 0;
    check_same(700, 300, 1, alpha, sizes, options(44));
  }
  SECTION("urn rows of a few categories among many (sorted listing) and of most (scanned)") {
    const std::vector<double> alpha = random_alpha(5000, 0.05, 2.0, 7);
    std::vector<int64_t> sizes(400);
    for (size_t b = 0; b < sizes.size(); ++b) sizes[b] = b % 2 == 0 ? 1 + static_cast<int64_t>(b % 50) : 9000;
    check_same(400, 5000, 1, alpha, sizes, options(45));
  }
  SECTION("counts past 8 and 16 bits") {
    const std::vector<double> alpha = {50.0, 1.0, 0.5, 2.0};
    check_same(300, 4, 1, alpha, {100000}, options(46), 32);
    check_same(300, 4, 1, alpha, {2000}, options(47), 16);
    check_same(300, 4, 1, alpha, {100}, options(48), 8);
  }
  SECTION("forced dense and forced CSR; 32-bit column indices") {
    const std::vector<double> alpha = random_alpha(70000, 0.01, 0.3, 8);
    dirmn_sample_options o = options(49);
    o.storage = DIRMN_STORAGE_SPARSE;
    check_same(60, 70000, 1, alpha, {500}, o);
    o.storage = DIRMN_STORAGE_DENSE;
    check_same(60, 70000, 1, alpha, {200000}, o);
  }
  SECTION("extreme alphas: 1e-300 beside 1e12 in one vector") {
    std::vector<double> alpha(64);
    for (size_t v = 0; v < alpha.size(); ++v) alpha[v] = v % 4 == 0 ? 1e-300 : v % 4 == 1 ? 1e12 : v % 4 == 2 ? 1e-8 : 3.0;
    check_same(500, 64, 1, alpha, {1000}, options(50));
    check_same(500, 64, 1, alpha, {20}, options(51));
  }
}

TEST_CASE("cuda sample: mixtures and one alpha per row", "[cuda][sample]") {
  if (!cuda_device_present()) return;
  SECTION("a mixture of 3, components drawn from weights") {
    const std::vector<double> alpha = random_alpha(3 * 120, 0.1, 10.0, 9);
    dirmn_sample_options o = options(52);
    const double weights[3] = {0.2, 0.5, 0.3};
    o.mixture_weights = weights;
    std::vector<int64_t> sizes(900);
    for (size_t b = 0; b < sizes.size(); ++b) sizes[b] = 50 + static_cast<int64_t>(b * 7 % 900);
    check_same(900, 120, 3, alpha, sizes, o);
  }
  SECTION("one alpha per row, tiny to huge, urn and gamma rows") {
    std::mt19937_64 rng(53);
    std::uniform_real_distribution<double> e(-300.0, 12.0);
    std::vector<double> alpha(400 * 90);
    for (double& a : alpha) a = std::pow(10.0, e(rng));
    std::vector<int64_t> sizes(400);
    for (size_t b = 0; b < sizes.size(); ++b) sizes[b] = b % 2 == 0 ? 30 : 5000;
    check_same(400, 90, 0, alpha, sizes, options(54));
  }
}

TEST_CASE("cuda sample: the two-pass path (no staging) draws the same tables", "[cuda][sample]") {
  if (!cuda_device_present()) return;
  // The device stages each row's entries where they fit; with the staging
  // limit at 0 it draws every row twice (count, then write) instead.
  struct NoStaging {
    NoStaging() { setenv("DIRMN_SAMPLE_STAGE_BYTES", "0", 1); }
    ~NoStaging() { unsetenv("DIRMN_SAMPLE_STAGE_BYTES"); }
  } no_staging;
  const std::vector<double> alpha = random_alpha(300, 1e-2, 5.0, 13);
  std::vector<int64_t> sizes(700);
  for (size_t b = 0; b < sizes.size(); ++b) sizes[b] = b % 3 == 0 ? 40 : b % 3 == 1 ? 3000 : 0;
  check_same(700, 300, 1, alpha, sizes, options(58));
  dirmn_sample_options o = options(59);
  o.storage = DIRMN_STORAGE_DENSE;
  check_same(300, 4, 1, {50.0, 1.0, 0.5, 2.0}, {100000}, o, 32);
  std::vector<double> rowwise(200 * 70000);
  std::mt19937_64 rng(60);
  std::uniform_real_distribution<double> e(-3.0, 1.0);
  for (double& a : rowwise) a = std::pow(10.0, e(rng));
  std::vector<int64_t> rs(200);
  for (size_t b = 0; b < rs.size(); ++b) rs[b] = b % 2 == 0 ? 25 : 200000;
  check_same(200, 70000, 0, rowwise, rs, options(61));
}

TEST_CASE("cuda sample: the row kernels' own gamma draws (no draws ahead) give the same tables",
          "[cuda][sample]") {
  if (!cuda_device_present()) return;
  // Where every row has a slot the device draws the gamma rows' variates
  // ahead, every cell at once; DIRMN_SAMPLE_PREDRAW=0 leaves them to the
  // row kernels, as for tables of more rows than slots.
  struct NoPredraw {
    NoPredraw() { setenv("DIRMN_SAMPLE_PREDRAW", "0", 1); }
    ~NoPredraw() { unsetenv("DIRMN_SAMPLE_PREDRAW"); }
  } no_predraw;
  const std::vector<double> alpha = random_alpha(300, 1e-2, 5.0, 14);
  std::vector<int64_t> sizes(700);
  for (size_t b = 0; b < sizes.size(); ++b) sizes[b] = b % 3 == 0 ? 40 : b % 3 == 1 ? 3000 : 0;
  check_same(700, 300, 1, alpha, sizes, options(62));
  std::vector<double> tiny(64);
  for (size_t v = 0; v < tiny.size(); ++v) tiny[v] = v % 4 == 0 ? 1e-300 : v % 4 == 1 ? 1e12 : v % 4 == 2 ? 1e-8 : 3.0;
  check_same(500, 64, 1, tiny, {1000}, options(63));
  std::mt19937_64 rng(64);
  std::uniform_real_distribution<double> e(-300.0, 12.0);
  std::vector<double> rowwise(400 * 90);
  for (double& x : rowwise) x = std::pow(10.0, e(rng));
  check_same(400, 90, 0, rowwise, {5000}, options(65));
}

TEST_CASE("cuda sample: rows in several launches, few rows in flight (wide rows)", "[cuda][sample]") {
  if (!cuda_device_present()) return;
  // 110000 categories take 2.2 MB of scratch per row in flight: fewer than
  // a thousand rows are in flight, so 12000 rows take two launches.
  const std::vector<double> alpha = random_alpha(110000, 0.01, 1.0, 10);
  std::vector<int64_t> sizes(12000);
  for (size_t b = 0; b < sizes.size(); ++b) sizes[b] = static_cast<int64_t>(b % 30);
  check_same(12000, 110000, 1, alpha, sizes, options(55));
}

TEST_CASE("cuda sample: a drawn table is used as any other", "[cuda][sample]") {
  if (!cuda_device_present()) return;
  Context cpu = make_context(DIRMN_BACKEND_CPU);
  Context gpu = make_context(DIRMN_BACKEND_CUDA);
  REQUIRE(cpu);
  REQUIRE(gpu);
  const int64_t rows = 800, cols = 40;
  const std::vector<double> alpha = random_alpha(cols, 0.2, 4.0, 11);
  const std::vector<int64_t> sizes = {600};
  Counts hc, gc;
  (void)draw_on(cpu.get(), rows, cols, 1, alpha, sizes, options(56), &hc);
  dirmn_sample_options o = options(56);
  dirmn_counts* c = nullptr;
  REQUIRE(dirmn_sample(gpu.get(), &c, rows, cols, 1, alpha.data(), cols, 1, DIRMN_PARAM_ALPHA, sizes.data(), 0, &o) ==
          DIRMN_SUCCESS);
  gc = Counts(c);
  dirmn_counts_info info;
  info.size = sizeof info;
  REQUIRE(dirmn_counts_get_info(c, &info) == DIRMN_SUCCESS);
  CHECK(info.backend == DIRMN_BACKEND_CUDA);
  CHECK((info.unavailable_steps & DIRMN_STEP_MIXTURE_EM) == 0);  // a host copy comes when needed
  CHECK((info.host_steps & DIRMN_STEP_DERIVATIVES_ROWWISE) != 0);
  // The likelihood, on the device, before any host copy exists.
  const std::vector<double> lh = loglik(cpu.get(), hc.get(), rows, alpha, 1);
  const std::vector<double> lg = loglik(gpu.get(), gc.get(), rows, alpha, 1);
  for (int64_t b = 0; b < rows; ++b) CHECK(lg[static_cast<size_t>(b)] == Approx(lh[static_cast<size_t>(b)]).epsilon(1e-12));
  // A fit (histograms: the host copy for a 16-bit table) and the per-row
  // derivatives (the host's step) agree with the CPU's.
  std::vector<double> fh(cols), fg(cols);
  dirmn_fit_result rh, rg;
  std::memset(&rh, 0, sizeof rh);
  rh.size = sizeof rh;
  rg = rh;
  rh.alpha = fh.data();
  rg.alpha = fg.data();
  REQUIRE(dirmn_fit(cpu.get(), hc.get(), nullptr, &rh) == DIRMN_SUCCESS);
  const dirmn_status fs = dirmn_fit(gpu.get(), gc.get(), nullptr, &rg);
  INFO(dirmn_last_error(gpu.get()));
  REQUIRE(fs == DIRMN_SUCCESS);
  for (int64_t v = 0; v < cols; ++v) CHECK(fg[static_cast<size_t>(v)] == Approx(fh[static_cast<size_t>(v)]).epsilon(1e-9));
  std::vector<double> rowwise(static_cast<size_t>(rows * cols));
  for (int64_t b = 0; b < rows; ++b)
    std::memcpy(&rowwise[static_cast<size_t>(b * cols)], alpha.data(), static_cast<size_t>(cols) * sizeof(double));
  std::vector<double> gh(static_cast<size_t>(rows * cols)), gg(gh.size()), llh(rows), llg(rows);
  REQUIRE(dirmn_loglik_rowwise_derivatives(cpu.get(), hc.get(), rowwise.data(), cols, 1, DIRMN_PARAM_ALPHA, 0,
                                           llh.data(), gh.data(), nullptr, nullptr, cols, 1) == DIRMN_SUCCESS);
  REQUIRE(dirmn_loglik_rowwise_derivatives(gpu.get(), gc.get(), rowwise.data(), cols, 1, DIRMN_PARAM_ALPHA, 0,
                                           llg.data(), gg.data(), nullptr, nullptr, cols, 1) == DIRMN_SUCCESS);
  CHECK(gg == gh);
  CHECK(llg == llh);
  // CSR copies out of the host copy.
  std::vector<int64_t> ph(rows + 1), pg(rows + 1), ih(rows * cols), ig(rows * cols);
  std::vector<int32_t> xh(rows * cols), xg(rows * cols);
  REQUIRE(dirmn_counts_copy_sparse(cpu.get(), hc.get(), DIRMN_CSR, DIRMN_INDEX_INT64, ph.data(), ih.data(),
                                   DIRMN_INT32, xh.data()) == DIRMN_SUCCESS);
  REQUIRE(dirmn_counts_copy_sparse(gpu.get(), gc.get(), DIRMN_CSR, DIRMN_INDEX_INT64, pg.data(), ig.data(),
                                   DIRMN_INT32, xg.data()) == DIRMN_SUCCESS);
  CHECK(ph == pg);
  CHECK(ih == ig);
  CHECK(xh == xg);
}

namespace {
int stop_now(void*) { return 1; }
}  // namespace

TEST_CASE("cuda sample: the interrupt stops a draw and leaves no handle", "[cuda][sample]") {
  if (!cuda_device_present()) return;
  Context gpu = make_context(DIRMN_BACKEND_CUDA);
  REQUIRE(gpu);
  REQUIRE(dirmn_context_set_interrupt(gpu.get(), stop_now, nullptr) == DIRMN_SUCCESS);
  const std::vector<double> alpha = random_alpha(100, 0.5, 2.0, 12);
  const int64_t size = 1000;
  dirmn_sample_options o = options(57);
  dirmn_counts* c = nullptr;
  CHECK(dirmn_sample(gpu.get(), &c, 5000, 100, 1, alpha.data(), 100, 1, DIRMN_PARAM_ALPHA, &size, 0, &o) ==
        DIRMN_ERROR_CANCELLED);
  CHECK(c == nullptr);
}
