// test_counts_device.cpp: counts a CUDA context wraps from device arrays,
// dense (in place or copied, any dtype and layout) and CSR (sorted and
// cleaned on the device), and the device's failures: bad data, bad
// arguments, out of memory. A wrapped array must evaluate exactly like the
// same table given from host memory, so the reference is the CPU backend on
// a host copy (itself checked against 50-digit references in
// test_accuracy.cpp); errors must name the cell as the host's do. Every case
// is [cuda] and needs the CUDA runtime: compiled with DIRMN_TEST_CUDA only,
// and run by ctest behind --require-cuda, which reports them as skipped
// where no device exists.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "cuda_support.hpp"
#include "support.hpp"

using namespace dirmn_test;

#if defined(DIRMN_TEST_CUDA)

namespace {

// The table laid out with strides (rs, cs) in an array of `extent` elements;
// cells outside the table hold `pad`.
template <class T>
std::vector<T> strided(const Table& t, int64_t rs, int64_t cs, int64_t extent, T pad) {
  std::vector<T> a(static_cast<size_t>(extent), pad);
  for (int64_t i = 0; i < t.rows; ++i)
    for (int64_t j = 0; j < t.cols; ++j) a[static_cast<size_t>(i * rs + j * cs)] = static_cast<T>(t.at(i, j));
  return a;
}

Counts wrap_dense(dirmn_context* ctx, int64_t rows, int64_t cols, dirmn_dtype dt, const void* p,
                  int64_t rs, int64_t cs, dirmn_storage storage = DIRMN_STORAGE_AUTO,
                  uint32_t flags = 0) {
  dirmn_counts_options o;
  dirmn_counts_options_init(&o);
  o.storage = storage;
  o.flags = flags;
  dirmn_counts* c = nullptr;
  const dirmn_status s = dirmn_counts_wrap_device(ctx, &c, rows, cols, dt, p, rs, cs, &o);
  INFO(dirmn_last_error(ctx));
  REQUIRE(s == DIRMN_SUCCESS);
  return Counts(c);
}

// The CSR form of a table, with the given index and value types.
template <class I, class V>
struct Csr {
  std::vector<I> ptr, idx;
  std::vector<V> val;
};

template <class I, class V>
Csr<I, V> to_csr(const Table& t, bool reverse_rows, bool explicit_zeros) {
  Csr<I, V> c;
  c.ptr.push_back(0);
  for (int64_t i = 0; i < t.rows; ++i) {
    std::vector<int64_t> cols;
    for (int64_t j = 0; j < t.cols; ++j)
      if (t.at(i, j) != 0.0 || (explicit_zeros && (i + j) % 5 == 0)) cols.push_back(j);
    if (reverse_rows) std::reverse(cols.begin(), cols.end());
    for (int64_t j : cols) {
      c.idx.push_back(static_cast<I>(j));
      c.val.push_back(static_cast<V>(t.at(i, j)));
    }
    c.ptr.push_back(static_cast<I>(c.idx.size()));
  }
  return c;
}

template <class I, class V>
dirmn_status wrap_csr(dirmn_context* ctx, dirmn_counts** out, const Table& t, const Csr<I, V>& h,
                      dirmn_index_type it, dirmn_dtype vt, uint32_t flags = 0,
                      dirmn_storage storage = DIRMN_STORAGE_AUTO) {
  DeviceArray<I> dp(h.ptr), di(h.idx);
  DeviceArray<V> dv(h.val);
  dirmn_counts_options o;
  dirmn_counts_options_init(&o);
  o.flags = flags;
  o.storage = storage;
  return dirmn_counts_wrap_device_sparse(ctx, out, t.rows, t.cols, static_cast<int64_t>(h.idx.size()), it,
                                         dp.p, di.p, vt, dv.p, &o);
}

}  // namespace

TEST_CASE("cuda: wrapped dense device arrays match host tables", "[cuda]") {
  if (!dirmn_test::cuda_device_present()) return;
  Context cpu = make(DIRMN_BACKEND_CPU);
  Context gpu = make(DIRMN_BACKEND_CUDA);
  std::mt19937_64 rng(17);
  const Table t = random_table(rng, 41, 36, 300.0, 0.5);
  Counts cc = dense_counts(cpu.get(), t, DIRMN_STORAGE_AUTO);
  const std::vector<double> alpha = random_alpha(rng, 2, 36, 0.05, 20.0);
  const std::vector<double> want = loglik(cpu.get(), cc.get(), 41, 2, alpha, 36, DIRMN_FULL);
  // One parameter vector takes the small-table kernel, two the many-row one.
  const std::vector<double> alpha1(alpha.begin(), alpha.begin() + 36);
  const std::vector<double> want1 = loglik(cpu.get(), cc.get(), 41, 1, alpha1, 36, DIRMN_FULL);
  const auto check = [&](const dirmn_counts* g, int bits) {
    CHECK(value_bits_of(g) == bits);
    require_close(loglik(gpu.get(), g, 41, 2, alpha, 36, DIRMN_FULL), want, 1e-12);
    require_close(loglik(gpu.get(), g, 41, 1, alpha1, 36, DIRMN_FULL), want1, 1e-12);
    std::vector<double> totals(41);
    REQUIRE(dirmn_counts_row_totals(gpu.get(), g, totals.data()) == DIRMN_SUCCESS);
    for (int64_t i = 0; i < 41; ++i) {
      double s = 0.0;
      for (int64_t j = 0; j < 36; ++j) s += t.at(i, j);
      CHECK(totals[static_cast<size_t>(i)] == s);
    }
    const dirmn_counts_info info = info_of(g);
    CHECK(info.nnz > 0);
    CHECK(info.max_count == 300.0);
  };
  SECTION("float32, row-major, padded rows: referenced in place, vector reads") {
    DeviceArray<float> d(strided<float>(t, 40, 1, 41 * 40, -1.0f));
    Counts g = wrap_dense(gpu.get(), 41, 36, DIRMN_FLOAT32, d.p, 40, 1);
    check(g.get(), 0);
  }
  SECTION("float32, misaligned start: referenced in place, scalar reads") {
    DeviceArray<float> d(strided<float>(t, 37, 1, 41 * 37 + 1, -1.0f));
    // Offsetting by one element breaks 16-byte alignment; the array then
    // starts at element 1 with the table packed from there.
    std::vector<float> shifted(d.n, -1.0f);
    for (int64_t i = 0; i < 41; ++i)
      for (int64_t j = 0; j < 36; ++j) shifted[static_cast<size_t>(1 + i * 37 + j)] = static_cast<float>(t.at(i, j));
    REQUIRE(cudaMemcpy(d.p, shifted.data(), shifted.size() * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess);
    Counts g = wrap_dense(gpu.get(), 41, 36, DIRMN_FLOAT32, d.p + 1, 37, 1);
    check(g.get(), 0);
  }
  SECTION("int32, row-major: referenced in place") {
    DeviceArray<int32_t> d(strided<int32_t>(t, 36, 1, 41 * 36, 0));
    Counts g = wrap_dense(gpu.get(), 41, 36, DIRMN_INT32, d.p, 36, 1);
    check(g.get(), 0);
  }
  SECTION("float64, column-major with a leading dimension: copied") {
    DeviceArray<double> d(strided<double>(t, 1, 45, 45 * 36, -1.0));
    Counts g = wrap_dense(gpu.get(), 41, 36, DIRMN_FLOAT64, d.p, 1, 45);
    check(g.get(), 16);
  }
  SECTION("int32, column-major: copied") {
    DeviceArray<int32_t> d(strided<int32_t>(t, 1, 41, 41 * 36, 0));
    Counts g = wrap_dense(gpu.get(), 41, 36, DIRMN_INT32, d.p, 1, 41);
    check(g.get(), 16);
  }
  SECTION("float32 asked to be sparse: copied into CSR") {
    DeviceArray<float> d(strided<float>(t, 36, 1, 41 * 36, 0.0f));
    Counts g = wrap_dense(gpu.get(), 41, 36, DIRMN_FLOAT32, d.p, 36, 1, DIRMN_STORAGE_SPARSE);
    CHECK(info_of(g.get()).storage == DIRMN_STORAGE_SPARSE);
    check(g.get(), 16);
  }
  SECTION("fast mode on a wrapped array") {
    DeviceArray<float> d(strided<float>(t, 36, 1, 41 * 36, 0.0f));
    Counts g = wrap_dense(gpu.get(), 41, 36, DIRMN_FLOAT32, d.p, 36, 1);
    REQUIRE(dirmn_context_set_precision(gpu.get(), DIRMN_PRECISION_FAST) == DIRMN_SUCCESS);
    require_close(loglik(gpu.get(), g.get(), 41, 2, alpha, 36, DIRMN_FULL), want, 1e-6);
  }
}

TEST_CASE("cuda: wrapped real-valued and wide device arrays", "[cuda]") {
  if (!dirmn_test::cuda_device_present()) return;
  Context cpu = make(DIRMN_BACKEND_CPU);
  Context gpu = make(DIRMN_BACKEND_CUDA);
  std::mt19937_64 rng(19);
  {
    const Table t = random_table(rng, 20, 30, 12.0, 0.3, true);
    Counts cc = dense_counts(cpu.get(), t, DIRMN_STORAGE_AUTO, DIRMN_COUNTS_REAL_VALUED);
    const std::vector<double> alpha = random_alpha(rng, 1, 30, 0.1, 10.0);
    for (dirmn_dtype dt : {DIRMN_FLOAT32, DIRMN_FLOAT64}) {
      CAPTURE(dt);
      DeviceArray<float> f(strided<float>(t, 32, 1, 20 * 32, 0.0f));
      DeviceArray<double> dd(strided<double>(t, 30, 1, 20 * 30, 0.0));
      Counts g = dt == DIRMN_FLOAT32 ? wrap_dense(gpu.get(), 20, 30, dt, f.p, 32, 1, DIRMN_STORAGE_AUTO, DIRMN_COUNTS_REAL_VALUED)
                              : wrap_dense(gpu.get(), 20, 30, dt, dd.p, 30, 1, DIRMN_STORAGE_AUTO, DIRMN_COUNTS_REAL_VALUED);
      require_close(loglik(gpu.get(), g.get(), 20, 1, alpha, 30, DIRMN_FULL),
                    loglik(cpu.get(), cc.get(), 20, 1, alpha, 30, DIRMN_FULL), 1e-12);
    }
  }
  {
    // Wide enough for column panels, in place and copied.
    const Table t = random_table(rng, 40, 2500, 9.0, 0.5);
    Counts cc = dense_counts(cpu.get(), t, DIRMN_STORAGE_AUTO);
    const std::vector<double> alpha = random_alpha(rng, 3, 2500, 0.1, 10.0);
    const std::vector<double> want = loglik(cpu.get(), cc.get(), 40, 3, alpha, 2500);
    DeviceArray<float> f(strided<float>(t, 2500, 1, 40 * 2500, 0.0f));
    Counts g = wrap_dense(gpu.get(), 40, 2500, DIRMN_FLOAT32, f.p, 2500, 1);
    require_close(loglik(gpu.get(), g.get(), 40, 3, alpha, 2500), want, 1e-12);
    Counts gs = wrap_dense(gpu.get(), 40, 2500, DIRMN_FLOAT32, f.p, 2500, 1, DIRMN_STORAGE_SPARSE);
    require_close(loglik(gpu.get(), gs.get(), 40, 3, alpha, 2500), want, 1e-12);
    const std::vector<double> rw = random_alpha(rng, 40, 2500, 0.1, 10.0);
    require_close(loglik_rowwise(gpu.get(), g.get(), 40, rw, 2500), loglik_rowwise(cpu.get(), cc.get(), 40, rw, 2500),
                  1e-12);
  }
  {
    // The small-table kernel (one vector, few rows, one panel) on rows longer
    // than a lane's loads in flight: float32 cells keep 4 vectors of 4 per
    // lane of a warp, 512 columns a round, so 700 columns take a full round
    // and a partial one. Counts all below the tables' cut, and past it.
    for (double top : {9.0, 300.0}) {
      CAPTURE(top);
      const Table t = random_table(rng, 30, 700, top, 0.5);
      Counts cc = dense_counts(cpu.get(), t, DIRMN_STORAGE_AUTO);
      const std::vector<double> alpha = random_alpha(rng, 1, 700, 0.1, 10.0);
      DeviceArray<float> f(strided<float>(t, 700, 1, 30 * 700, 0.0f));
      Counts g = wrap_dense(gpu.get(), 30, 700, DIRMN_FLOAT32, f.p, 700, 1);
      require_close(loglik(gpu.get(), g.get(), 30, 1, alpha, 700, DIRMN_FULL),
                    loglik(cpu.get(), cc.get(), 30, 1, alpha, 700, DIRMN_FULL), 1e-12);
    }
  }
  {
    // Tall float32 and int32 arrays in place: one parameter vector on the
    // many-row kernel (past the small-table kernel's rows on 132
    // multiprocessors), in both precisions.
    const Table t = random_table(rng, 9000, 36, 9.0, 0.5);
    Counts cc = dense_counts(cpu.get(), t, DIRMN_STORAGE_AUTO);
    const std::vector<double> alpha = random_alpha(rng, 1, 36, 0.1, 10.0);
    const std::vector<double> want = loglik(cpu.get(), cc.get(), 9000, 1, alpha, 36, DIRMN_FULL);
    DeviceArray<float> f(strided<float>(t, 36, 1, 9000 * 36, 0.0f));
    DeviceArray<int32_t> i(strided<int32_t>(t, 36, 1, 9000 * 36, 0));
    Counts gf = wrap_dense(gpu.get(), 9000, 36, DIRMN_FLOAT32, f.p, 36, 1);
    Counts gi = wrap_dense(gpu.get(), 9000, 36, DIRMN_INT32, i.p, 36, 1);
    require_close(loglik(gpu.get(), gf.get(), 9000, 1, alpha, 36, DIRMN_FULL), want, 1e-12);
    require_close(loglik(gpu.get(), gi.get(), 9000, 1, alpha, 36, DIRMN_FULL), want, 1e-12);
    REQUIRE(dirmn_context_set_precision(gpu.get(), DIRMN_PRECISION_FAST) == DIRMN_SUCCESS);
    require_close(loglik(gpu.get(), gf.get(), 9000, 1, alpha, 36, DIRMN_FULL), want, 1e-6);
  }
}

TEST_CASE("cuda: wrapped CSR device arrays match host tables", "[cuda]") {
  if (!dirmn_test::cuda_device_present()) return;
  Context cpu = make(DIRMN_BACKEND_CPU);
  Context gpu = make(DIRMN_BACKEND_CUDA);
  std::mt19937_64 rng(23);
  const Table t = random_table(rng, 57, 80, 70000.0, 0.7);
  Counts cc = dense_counts(cpu.get(), t, DIRMN_STORAGE_AUTO);
  const std::vector<double> alpha = random_alpha(rng, 2, 80, 0.05, 20.0);
  const std::vector<double> want = loglik(cpu.get(), cc.get(), 57, 2, alpha, 80, DIRMN_FULL);
  // The wrap runs first (a call's arguments are evaluated in no fixed
  // order), then check() takes the handle it made.
  const auto check = [&](dirmn_status s, dirmn_counts*& made, dirmn_storage expect) {
    Counts g(made);
    made = nullptr;
    INFO(dirmn_last_error(gpu.get()));
    REQUIRE(s == DIRMN_SUCCESS);
    const dirmn_counts_info info = info_of(g.get());
    CHECK(info.storage == expect);
    CHECK(info.value_bits == 32);
    require_close(loglik(gpu.get(), g.get(), 57, 2, alpha, 80, DIRMN_FULL), want, 1e-12);
  };
  dirmn_counts* raw = nullptr;
  {
    const auto h = to_csr<int32_t, int32_t>(t, false, false);
    const dirmn_status s = wrap_csr(gpu.get(), &raw, t, h, DIRMN_INDEX_INT32, DIRMN_INT32, 0, DIRMN_STORAGE_SPARSE);
    check(s, raw, DIRMN_STORAGE_SPARSE);
  }
  {
    // Unsorted columns and explicit zeros: sorted and dropped on the device.
    const auto h = to_csr<int64_t, float>(t, true, true);
    const dirmn_status s = wrap_csr(gpu.get(), &raw, t, h, DIRMN_INDEX_INT64, DIRMN_FLOAT32);
    check(s, raw, DIRMN_STORAGE_SPARSE);
  }
  {
    const auto h = to_csr<int32_t, double>(t, true, false);
    const dirmn_status s = wrap_csr(gpu.get(), &raw, t, h, DIRMN_INDEX_INT32, DIRMN_FLOAT64, 0, DIRMN_STORAGE_DENSE);
    check(s, raw, DIRMN_STORAGE_DENSE);
  }
  {
    // An empty table.
    Table z;
    z.rows = 4;
    z.cols = 3;
    z.x.assign(12, 0.0);
    const auto h = to_csr<int32_t, float>(z, false, false);
    dirmn_counts* e = nullptr;
    REQUIRE(wrap_csr(gpu.get(), &e, z, h, DIRMN_INDEX_INT32, DIRMN_FLOAT32) == DIRMN_SUCCESS);
    Counts g(e);
    CHECK(loglik(gpu.get(), g.get(), 4, 1, std::vector<double>(3, 2.0), 3, DIRMN_FULL) ==
          std::vector<double>(4, 0.0));
  }
  {
    // Device arrays count from 0: the one-based flag is refused, by name.
    const auto h = to_csr<int32_t, int32_t>(t, false, false);
    dirmn_counts* e = nullptr;
    CHECK(wrap_csr(gpu.get(), &e, t, h, DIRMN_INDEX_INT32, DIRMN_INT32, DIRMN_COUNTS_ONE_BASED) ==
          DIRMN_ERROR_NOT_SUPPORTED);
    CHECK(std::string(dirmn_last_error(gpu.get())).find("DIRMN_COUNTS_ONE_BASED") != std::string::npos);
    CHECK(e == nullptr);
  }
}

TEST_CASE("cuda: bad device data is reported with where and what", "[cuda]") {
  if (!dirmn_test::cuda_device_present()) return;
  Context gpu = make(DIRMN_BACKEND_CUDA);
  const auto msg = [&] { return std::string(dirmn_last_error(gpu.get())); };
  Table t;
  t.rows = 6;
  t.cols = 9;
  t.x.assign(54, 1.0);
  dirmn_counts* raw = nullptr;
  SECTION("dense: negative, NaN, infinite, non-integral cells") {
    Table b = t;
    b.at(3, 5) = -2.0;
    b.at(4, 1) = -7.0;  // later in row-major order: not the one reported
    DeviceArray<int32_t> di(strided<int32_t>(b, 9, 1, 54, 0));
    CHECK(dirmn_counts_wrap_device(gpu.get(), &raw, 6, 9, DIRMN_INT32, di.p, 9, 1, nullptr) ==
          DIRMN_ERROR_INVALID_COUNTS);
    CHECK(raw == nullptr);
    CHECK(msg().find("row 3, column 5") != std::string::npos);
    CHECK(msg().find("-2") != std::string::npos);
    CHECK(msg().find("negative") != std::string::npos);
    // Column-major: the first bad cell in memory order is (4, 1).
    DeviceArray<int32_t> dc(strided<int32_t>(b, 1, 6, 54, 0));
    CHECK(dirmn_counts_wrap_device(gpu.get(), &raw, 6, 9, DIRMN_INT32, dc.p, 1, 6, nullptr) ==
          DIRMN_ERROR_INVALID_COUNTS);
    CHECK(msg().find("row 4, column 1") != std::string::npos);

    Table n = t;
    n.at(2, 2) = std::nan("");
    DeviceArray<float> dn(strided<float>(n, 9, 1, 54, 0.0f));
    CHECK(dirmn_counts_wrap_device(gpu.get(), &raw, 6, 9, DIRMN_FLOAT32, dn.p, 9, 1, nullptr) ==
          DIRMN_ERROR_INVALID_COUNTS);
    CHECK(msg().find("NaN") != std::string::npos);
    Table inf = t;
    inf.at(5, 8) = HUGE_VAL;
    DeviceArray<double> dinf(strided<double>(inf, 9, 1, 54, 0.0));
    CHECK(dirmn_counts_wrap_device(gpu.get(), &raw, 6, 9, DIRMN_FLOAT64, dinf.p, 9, 1, nullptr) ==
          DIRMN_ERROR_INVALID_COUNTS);
    CHECK(msg().find("row 5, column 8") != std::string::npos);
    CHECK(msg().find("infinite") != std::string::npos);
    Table frac = t;
    frac.at(1, 0) = 2.5;
    DeviceArray<double> df(strided<double>(frac, 9, 1, 54, 0.0));
    CHECK(dirmn_counts_wrap_device(gpu.get(), &raw, 6, 9, DIRMN_FLOAT64, df.p, 9, 1, nullptr) ==
          DIRMN_ERROR_INVALID_COUNTS);
    CHECK(msg().find("not an integer") != std::string::npos);
    CHECK(raw == nullptr);
  }
  SECTION("dense: arguments") {
    DeviceArray<float> d(54);
    std::vector<float> host(54, 1.0f);
    CHECK(dirmn_counts_wrap_device(gpu.get(), &raw, 6, 9, DIRMN_FLOAT32, host.data(), 9, 1, nullptr) ==
          DIRMN_ERROR_INVALID_ARGUMENT);
    CHECK(msg().find("not device memory") != std::string::npos);
    CHECK(dirmn_counts_wrap_device(gpu.get(), &raw, 6, 9, DIRMN_INT64, d.p, 9, 1, nullptr) ==
          DIRMN_ERROR_NOT_SUPPORTED);
    CHECK(dirmn_counts_wrap_device(gpu.get(), &raw, 0, 9, DIRMN_FLOAT32, d.p, 9, 1, nullptr) ==
          DIRMN_ERROR_INVALID_ARGUMENT);
    CHECK(dirmn_counts_wrap_device(gpu.get(), &raw, 6, 9, DIRMN_FLOAT32, d.p, 0, 1, nullptr) ==
          DIRMN_ERROR_INVALID_ARGUMENT);
    CHECK(dirmn_counts_wrap_device(gpu.get(), &raw, 6, 9, DIRMN_FLOAT32, nullptr, 9, 1, nullptr) ==
          DIRMN_ERROR_NULL_POINTER);
    CHECK(dirmn_counts_wrap_device(gpu.get(), nullptr, 6, 9, DIRMN_FLOAT32, d.p, 9, 1, nullptr) ==
          DIRMN_ERROR_NULL_POINTER);
    CHECK(raw == nullptr);
  }
  SECTION("CSR: pointers, indices, repeats and values") {
    auto h = to_csr<int32_t, float>(t, false, false);
    auto bad = h;
    bad.ptr[3] = bad.ptr[2] - 1;
    CHECK(wrap_csr(gpu.get(), &raw, t, bad, DIRMN_INDEX_INT32, DIRMN_FLOAT32) == DIRMN_ERROR_INVALID_ARGUMENT);
    CHECK(msg().find("ptr[3]") != std::string::npos);
    bad = h;
    bad.ptr[0] = 1;
    CHECK(wrap_csr(gpu.get(), &raw, t, bad, DIRMN_INDEX_INT32, DIRMN_FLOAT32) == DIRMN_ERROR_INVALID_ARGUMENT);
    CHECK(msg().find("ptr[0]") != std::string::npos);
    bad = h;
    bad.idx[20] = 9;  // row 2 (9 entries a row)
    CHECK(wrap_csr(gpu.get(), &raw, t, bad, DIRMN_INDEX_INT32, DIRMN_FLOAT32) == DIRMN_ERROR_INVALID_ARGUMENT);
    CHECK(msg().find("entry 20 (row 2)") != std::string::npos);
    bad = h;
    bad.idx[30] = bad.idx[31];  // row 3 names column 4 twice
    CHECK(wrap_csr(gpu.get(), &raw, t, bad, DIRMN_INDEX_INT32, DIRMN_FLOAT32) == DIRMN_ERROR_INVALID_ARGUMENT);
    CHECK(msg().find("row 3, column 4") != std::string::npos);
    CHECK(msg().find("more than once") != std::string::npos);
    bad = h;
    bad.val[40] = -3.0f;  // row 4, column 4
    CHECK(wrap_csr(gpu.get(), &raw, t, bad, DIRMN_INDEX_INT32, DIRMN_FLOAT32) == DIRMN_ERROR_INVALID_COUNTS);
    CHECK(msg().find("row 4, column 4") != std::string::npos);
    CHECK(msg().find("-3") != std::string::npos);
    CHECK(raw == nullptr);
    // The context is still usable.
    CHECK(wrap_csr(gpu.get(), &raw, t, h, DIRMN_INDEX_INT32, DIRMN_FLOAT32) == DIRMN_SUCCESS);
    Counts g(raw);
    CHECK(info_of(g.get()).nnz == 54);
  }
}

TEST_CASE("cuda: an absurd table fails with OUT_OF_MEMORY and the context survives", "[cuda]") {
  if (!dirmn_test::cuda_device_present()) return;
  Context cpu = make(DIRMN_BACKEND_CPU);
  Context gpu = make(DIRMN_BACKEND_CUDA);
  // 2^20 x 2^22 cells over a small array (overlapping strides are valid
  // input): a dense copy needs 4 TiB.
  DeviceArray<double> d(size_t{1} << 23);
  REQUIRE(cudaMemset(d.p, 0, d.n * sizeof(double)) == cudaSuccess);
  dirmn_counts_options o;
  dirmn_counts_options_init(&o);
  o.storage = DIRMN_STORAGE_DENSE;
  dirmn_counts* raw = nullptr;
  CHECK(dirmn_counts_wrap_device(gpu.get(), &raw, int64_t{1} << 20, int64_t{1} << 22, DIRMN_FLOAT64, d.p,
                                 1, 1, &o) == DIRMN_ERROR_OUT_OF_MEMORY);
  CHECK(raw == nullptr);
  CHECK(std::string(dirmn_last_error(gpu.get())).find("out of memory") != std::string::npos);
  std::mt19937_64 rng(29);
  const Table t = random_table(rng, 25, 12, 9.0, 0.3);
  Counts g = dense_counts(gpu.get(), t, DIRMN_STORAGE_AUTO);
  Counts c = dense_counts(cpu.get(), t, DIRMN_STORAGE_AUTO);
  const std::vector<double> alpha = random_alpha(rng, 1, 12, 0.5, 2.0);
  require_close(loglik(gpu.get(), g.get(), 25, 1, alpha, 12), loglik(cpu.get(), c.get(), 25, 1, alpha, 12), 1e-12);
}

// Kept apart ([hog]) so memory checkers, which track every allocation, can
// leave it out.
TEST_CASE("cuda: a full device gives OUT_OF_MEMORY, nothing leaks, and work resumes", "[cuda][hog]") {
  if (!dirmn_test::cuda_device_present()) return;
  Context cpu = make(DIRMN_BACKEND_CPU);
  Context gpu = make(DIRMN_BACKEND_CUDA);
  std::mt19937_64 rng(31);
  const Table t = random_table(rng, 4000, 512, 9.0, 0.0);  // 2 MB compact
  Counts c = dense_counts(cpu.get(), t, DIRMN_STORAGE_DENSE);
  const std::vector<double> alpha = random_alpha(rng, 1, 512, 0.5, 2.0);
  const std::vector<double> want = loglik(cpu.get(), c.get(), 4000, 1, alpha, 512);
  size_t free_b = 0, total_b = 0;
  REQUIRE(cudaMemGetInfo(&free_b, &total_b) == cudaSuccess);
  // Take all but 256 KB of what is free, in large blocks.
  std::vector<void*> hog;
  const size_t keep = size_t{1} << 18;
  size_t block = size_t{1} << 32;
  while (block >= keep) {
    size_t f = 0, tt = 0;
    REQUIRE(cudaMemGetInfo(&f, &tt) == cudaSuccess);
    if (f <= keep + block) {
      block /= 2;
      continue;
    }
    void* p = nullptr;
    if (cudaMalloc(&p, block) != cudaSuccess) {
      (void)cudaGetLastError();
      block /= 2;
      continue;
    }
    hog.push_back(p);
  }
  dirmn_counts* raw = nullptr;
  const dirmn_status s = dirmn_counts_create_dense(gpu.get(), &raw, t.rows, t.cols, DIRMN_FLOAT64,
                                                   t.x.data(), t.cols, 1, nullptr);
  for (void* p : hog) cudaFree(p);
  CHECK(s == DIRMN_ERROR_OUT_OF_MEMORY);
  CHECK(raw == nullptr);
  CHECK(std::string(dirmn_last_error(gpu.get())).find("out of memory") != std::string::npos);
  size_t after = 0;
  REQUIRE(cudaMemGetInfo(&after, &total_b) == cudaSuccess);
  CHECK(after + (size_t{16} << 20) >= free_b);  // the failed call left nothing allocated
  Counts g = dense_counts(gpu.get(), t, DIRMN_STORAGE_DENSE);
  require_close(loglik(gpu.get(), g.get(), 4000, 1, alpha, 512), want, 1e-12);
}

#endif  // DIRMN_TEST_CUDA

#if DIRMN_TEST_CUDA
TEST_CASE("cuda: counts info says which steps run on the host", "[cuda]") {
  REQUIRE(cuda_device_present());
  Context gpu = make_context(DIRMN_BACKEND_CUDA);
  REQUIRE(gpu);
  const uint32_t histogram_steps =
      DIRMN_STEP_HISTOGRAMS | DIRMN_STEP_MIXTURE_EM | DIRMN_STEP_MIXTURE_FITS;
  const auto info = [](const dirmn_counts* c) {
    dirmn_counts_info i;
    i.size = sizeof i;
    REQUIRE(dirmn_counts_get_info(c, &i) == DIRMN_SUCCESS);
    return i;
  };
  // 8-bit counts: the device has every step but per-row derivatives.
  std::vector<double> small = {1, 0, 2, 3, 0, 0, 1, 1, 4, 7, 0, 2};
  Counts c8 = make_dense(gpu.get(), small, 3, 4);
  CHECK(info(c8.get()).host_steps == DIRMN_STEP_DERIVATIVES_ROWWISE);
  CHECK(info(c8.get()).unavailable_steps == 0u);
  // 16-bit counts: the histograms (and the EM's state) run on the host copy.
  std::vector<double> deep = small;
  deep[5] = 3000;
  Counts c16 = make_dense(gpu.get(), deep, 3, 4);
  CHECK(info(c16.get()).value_bits == 16);
  CHECK(info(c16.get()).host_steps == (DIRMN_STEP_DERIVATIVES_ROWWISE | histogram_steps));
  // A caller's float32 device array, referenced in place: no host copy, so
  // the host's steps run nowhere.
  std::vector<float> f(small.begin(), small.end());
  DeviceArray<float> d(f);
  dirmn_counts* w = nullptr;
  REQUIRE(dirmn_counts_wrap_device(gpu.get(), &w, 3, 4, DIRMN_FLOAT32, d.p, 4, 1, nullptr) ==
          DIRMN_SUCCESS);
  Counts wrapped(w);
  REQUIRE(info(w).value_bits == 0);
  CHECK(info(w).host_steps == 0u);
  CHECK(info(w).unavailable_steps == (DIRMN_STEP_DERIVATIVES_ROWWISE | histogram_steps));
  // And the library says so when asked for one of them.
  const std::vector<double> alpha(4, 1.0);
  double value = 0.0;
  CHECK(dirmn_loglik_sum(gpu.get(), w, alpha.data(), 1, DIRMN_PARAM_ALPHA, nullptr, DIRMN_KERNEL, &value,
                         nullptr, nullptr, nullptr) == DIRMN_ERROR_NOT_SUPPORTED);
  // A float64 device array is copied into the compact 8-bit form: the
  // device makes its histograms, but with no rows on the host a mixture
  // has no initialisation.
  DeviceArray<double> dd(small);
  dirmn_counts* copied = nullptr;
  REQUIRE(dirmn_counts_wrap_device(gpu.get(), &copied, 3, 4, DIRMN_FLOAT64, dd.p, 4, 1, nullptr) ==
          DIRMN_SUCCESS);
  Counts cc(copied);
  REQUIRE(info(copied).value_bits == 8);
  CHECK(info(copied).host_steps == 0u);
  CHECK(info(copied).unavailable_steps ==
        (DIRMN_STEP_DERIVATIVES_ROWWISE | DIRMN_STEP_MIXTURE_EM | DIRMN_STEP_MIXTURE_FITS));
  CHECK(dirmn_loglik_sum(gpu.get(), copied, alpha.data(), 1, DIRMN_PARAM_ALPHA, nullptr, DIRMN_KERNEL, &value,
                         nullptr, nullptr, nullptr) == DIRMN_SUCCESS);
  dirmn_mixture* m = nullptr;
  CHECK(dirmn_mixture_fit(gpu.get(), copied, 2, nullptr, &m) == DIRMN_ERROR_NOT_SUPPORTED);
  CHECK(m == nullptr);
}
#endif  // DIRMN_TEST_CUDA
