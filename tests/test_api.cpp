// test_api.cpp: every C API function and status path, on every backend that
// exists (CPU always; CUDA where a device exists). Values are checked
// against an independent long-double lgamma formula (support.hpp); the
// 50-digit accuracy checks live in test_accuracy.cpp.
#include <catch2/catch.hpp>

#include <atomic>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support.hpp"

using namespace dirmn_test;

namespace {

// A random table of small counts with a given fraction of zeros, row-major.
std::vector<double> random_table(int64_t rows, int64_t cols, double zero_frac, int max_count,
                                 uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::uniform_int_distribution<int> c(1, max_count);
  std::vector<double> x(static_cast<size_t>(rows * cols));
  for (auto& e : x) e = u(rng) < zero_frac ? 0.0 : c(rng);
  return x;
}

std::vector<double> random_alpha(int64_t n, double lo, double hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(std::log(lo), std::log(hi));
  std::vector<double> a(static_cast<size_t>(n));
  for (auto& e : a) e = std::exp(u(rng));
  return a;
}

template <class T>
std::vector<T> cast_all(const std::vector<double>& x) {
  std::vector<T> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = static_cast<T>(x[i]);
  return y;
}

Counts make_dense(dirmn_context* ctx, const std::vector<double>& x, int64_t rows, int64_t cols,
                  dirmn_storage storage = DIRMN_STORAGE_AUTO) {
  dirmn_counts_options o;
  dirmn_counts_options_init(&o);
  o.storage = storage;
  dirmn_counts* c = nullptr;
  const dirmn_status s =
      dirmn_counts_create_dense(ctx, &c, rows, cols, DIRMN_FLOAT64, x.data(), cols, 1, &o);
  INFO(dirmn_last_error(ctx));
  REQUIRE(s == DIRMN_SUCCESS);
  return Counts(c);
}

std::vector<double> loglik(dirmn_context* ctx, const dirmn_counts* c, int64_t rows,
                           const std::vector<double>& alpha, uint32_t flags = 0) {
  std::vector<double> out(static_cast<size_t>(rows), -12345.0);
  const dirmn_status s = dirmn_loglik(ctx, c, 1, alpha.data(), 0, 1, DIRMN_PARAM_ALPHA, flags,
                                      out.data(), 1, 1);
  INFO(dirmn_last_error(ctx));
  REQUIRE(s == DIRMN_SUCCESS);
  return out;
}

void check_against_reference(const std::vector<double>& got, const std::vector<double>& x,
                             const std::vector<double>& alpha, int64_t rows, int64_t cols,
                             bool full, double rel = 1e-12) {
  for (int64_t b = 0; b < rows; ++b) {
    const double want = reference_loglik(&x[static_cast<size_t>(b * cols)], alpha.data(), cols, full);
    INFO("row " << b << " got " << got[static_cast<size_t>(b)] << " want " << want);
    CHECK(close_to(got[static_cast<size_t>(b)], want, rel, 1e-9));
  }
}

std::string last_error(const Context& ctx) { return dirmn_last_error(ctx.get()); }

}  // namespace

TEST_CASE("version macros and runtime query agree", "[api]") {
  CHECK(dirmn_version_number() == DIRMN_VERSION_NUMBER);
  CHECK(dirmn_version_number() / 10000 == DIRMN_VERSION_MAJOR);
  std::ostringstream v;
  v << DIRMN_VERSION_MAJOR << "." << DIRMN_VERSION_MINOR << "." << DIRMN_VERSION_PATCH;
  CHECK(v.str() == dirmn_version_string());
}

TEST_CASE("every status has its own string", "[api]") {
  const dirmn_status all[] = {DIRMN_SUCCESS,
                              DIRMN_ERROR_NULL_POINTER,
                              DIRMN_ERROR_INVALID_ARGUMENT,
                              DIRMN_ERROR_INVALID_COUNTS,
                              DIRMN_ERROR_INVALID_PARAMETER,
                              DIRMN_ERROR_DIMENSION_MISMATCH,
                              DIRMN_ERROR_WRONG_CONTEXT,
                              DIRMN_ERROR_OUT_OF_MEMORY,
                              DIRMN_ERROR_BACKEND_UNAVAILABLE,
                              DIRMN_ERROR_DEVICE,
                              DIRMN_ERROR_OVERFLOW,
                              DIRMN_ERROR_CANCELLED,
                              DIRMN_ERROR_NOT_SUPPORTED,
                              DIRMN_ERROR_INTERNAL};
  std::vector<std::string> seen;
  for (dirmn_status s : all) {
    const std::string str = dirmn_status_string(s);
    CHECK(!str.empty());
    CHECK(str != "unknown status");
    CHECK(std::find(seen.begin(), seen.end(), str) == seen.end());
    seen.push_back(str);
  }
  CHECK(std::string(dirmn_status_string(static_cast<dirmn_status>(12345))) == "unknown status");
  CHECK(DIRMN_SUCCESS == 0);
  CHECK(DIRMN_ERROR_INVALID_COUNTS == 3);
  CHECK(DIRMN_ERROR_INTERNAL == 99);
}

TEST_CASE("contexts: creation, backends and failures", "[api][context]") {
  CHECK(dirmn_backend_compiled(DIRMN_BACKEND_CPU) == 1);
  CHECK(dirmn_backend_compiled(DIRMN_BACKEND_AUTO) == 1);
  CHECK(dirmn_backend_compiled(static_cast<dirmn_backend>(7)) == 0);

  int n = -1;
  const dirmn_status s = dirmn_cuda_device_count(&n);
  if (dirmn_backend_compiled(DIRMN_BACKEND_CUDA)) {
    CHECK(s == DIRMN_SUCCESS);
    CHECK(n >= 0);
  } else {
    CHECK(s == DIRMN_ERROR_BACKEND_UNAVAILABLE);
    CHECK(n == 0);
    CHECK(std::string(dirmn_last_error(nullptr)).find("without CUDA") != std::string::npos);
  }
  CHECK(dirmn_cuda_device_count(nullptr) == DIRMN_ERROR_NULL_POINTER);

  SECTION("CPU") {
    Context ctx = make_context(DIRMN_BACKEND_CPU);
    REQUIRE(ctx);
    dirmn_backend b = DIRMN_BACKEND_AUTO;
    int dev = -1;
    REQUIRE(dirmn_context_backend(ctx.get(), &b, &dev) == DIRMN_SUCCESS);
    CHECK(b == DIRMN_BACKEND_CPU);
    CHECK(dev == 0);
    CHECK(dirmn_context_backend(ctx.get(), nullptr, nullptr) == DIRMN_SUCCESS);
    CHECK(std::string(dirmn_last_error(ctx.get())).empty());
  }
  SECTION("AUTO picks CUDA exactly when a device exists") {
    Context ctx = make_context(DIRMN_BACKEND_AUTO);
    REQUIRE(ctx);
    dirmn_backend b = DIRMN_BACKEND_AUTO;
    REQUIRE(dirmn_context_backend(ctx.get(), &b, nullptr) == DIRMN_SUCCESS);
    CHECK(b == (cuda_device_present() ? DIRMN_BACKEND_CUDA : DIRMN_BACKEND_CPU));
  }
  SECTION("CUDA where there is none is an error that says so") {
    if (!cuda_device_present()) {
      dirmn_context* ctx = reinterpret_cast<dirmn_context*>(0x1);
      CHECK(dirmn_context_create(&ctx, DIRMN_BACKEND_CUDA, 0) == DIRMN_ERROR_BACKEND_UNAVAILABLE);
      CHECK(ctx == reinterpret_cast<dirmn_context*>(0x1));  // untouched
      CHECK(std::string(dirmn_last_error(nullptr)).find("CUDA") != std::string::npos);
    }
    dirmn_context* ctx = nullptr;
    CHECK(dirmn_context_create(&ctx, DIRMN_BACKEND_CUDA, 1000) == DIRMN_ERROR_BACKEND_UNAVAILABLE);
    CHECK(ctx == nullptr);
  }
  SECTION("bad arguments") {
    dirmn_context* ctx = nullptr;
    CHECK(dirmn_context_create(nullptr, DIRMN_BACKEND_CPU, 0) == DIRMN_ERROR_NULL_POINTER);
    CHECK(std::string(dirmn_last_error(nullptr)).find("ctx is NULL") != std::string::npos);
    CHECK(dirmn_context_create(&ctx, static_cast<dirmn_backend>(9), 0) ==
          DIRMN_ERROR_INVALID_ARGUMENT);
    CHECK(dirmn_context_create(&ctx, DIRMN_BACKEND_CPU, -1) == DIRMN_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(dirmn_last_error(nullptr)).find("-1") != std::string::npos);
    CHECK(ctx == nullptr);
    CHECK(dirmn_context_backend(nullptr, nullptr, nullptr) == DIRMN_ERROR_NULL_POINTER);
    dirmn_context_destroy(nullptr);  // a no-op
  }
}

TEST_CASE("contexts: a CUDA context's host threads", "[api][context][cuda]") {
  // Host-side work of a CUDA context (fits, histogram forms, mixture steps)
  // runs on CPU threads; the thread calls set and report those.
  REQUIRE(cuda_device_present());
  Context ctx = make_context(DIRMN_BACKEND_CUDA);
  REQUIRE(ctx);
  int t = 0;
  REQUIRE(dirmn_context_get_threads(ctx.get(), &t) == DIRMN_SUCCESS);
  const unsigned hw = std::thread::hardware_concurrency();
  CHECK(t == static_cast<int>(hw == 0 ? 1 : hw));
  REQUIRE(dirmn_context_set_threads(ctx.get(), 2) == DIRMN_SUCCESS);
  REQUIRE(dirmn_context_get_threads(ctx.get(), &t) == DIRMN_SUCCESS);
  CHECK(t == 2);
}

TEST_CASE("contexts: threads, precision, interrupt, stream", "[api][context]") {
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  int t = 0;
  REQUIRE(dirmn_context_get_threads(ctx.get(), &t) == DIRMN_SUCCESS);
  const unsigned hw = std::thread::hardware_concurrency();
  CHECK(t == static_cast<int>(hw == 0 ? 1 : hw));
  REQUIRE(dirmn_context_set_threads(ctx.get(), 3) == DIRMN_SUCCESS);
  REQUIRE(dirmn_context_get_threads(ctx.get(), &t) == DIRMN_SUCCESS);
  CHECK(t == 3);
  CHECK(dirmn_context_set_threads(ctx.get(), -2) == DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(last_error(ctx).find("-2") != std::string::npos);
  REQUIRE(dirmn_context_get_threads(ctx.get(), &t) == DIRMN_SUCCESS);
  CHECK(t == 3);  // unchanged by the failed call
  CHECK(dirmn_context_get_threads(ctx.get(), nullptr) == DIRMN_ERROR_NULL_POINTER);
  CHECK(dirmn_context_set_threads(nullptr, 1) == DIRMN_ERROR_NULL_POINTER);

  CHECK(dirmn_context_set_precision(ctx.get(), DIRMN_PRECISION_FAST) == DIRMN_SUCCESS);
  CHECK(dirmn_context_set_precision(ctx.get(), DIRMN_PRECISION_DOUBLE) == DIRMN_SUCCESS);
  CHECK(dirmn_context_set_precision(ctx.get(), static_cast<dirmn_precision>(5)) ==
        DIRMN_ERROR_INVALID_ARGUMENT);

  void* stream = reinterpret_cast<void*>(0x1);
  CHECK(dirmn_context_set_stream(ctx.get(), nullptr) == DIRMN_ERROR_NOT_SUPPORTED);
  CHECK(last_error(ctx).find("CPU") != std::string::npos);
  CHECK(dirmn_context_get_stream(ctx.get(), &stream) == DIRMN_ERROR_NOT_SUPPORTED);
  CHECK(stream == reinterpret_cast<void*>(0x1));
  CHECK(dirmn_context_synchronize(ctx.get()) == DIRMN_SUCCESS);
  CHECK(dirmn_context_set_interrupt(nullptr, nullptr, nullptr) == DIRMN_ERROR_NULL_POINTER);
}

TEST_CASE("dense input: every dtype and layout gives the same values", "[api][counts]") {
  const int64_t rows = 37, cols = 23;
  const auto x = random_table(rows, cols, 0.4, 12, 1);
  const auto alpha = random_alpha(cols, 0.05, 20.0, 2);
  for (dirmn_backend be : backends_under_test()) {
    INFO("backend " << backend_name(be));
    Context ctx = make_context(be);
    REQUIRE(ctx);
    // Layouts: row-major, column-major, and row-major inside a padded buffer.
    struct Layout {
      const char* name;
      int64_t rs, cs, extent;
    };
    const Layout layouts[] = {{"row-major", cols, 1, rows * cols},
                              {"column-major", 1, rows, rows * cols},
                              {"padded", cols + 5, 1, rows * (cols + 5)},
                              {"padded column-major", 2, rows * 2 + 3, cols * (rows * 2 + 3)}};
    for (const Layout& L : layouts) {
      std::vector<double> buf(static_cast<size_t>(L.extent), -1.0);  // padding is invalid data
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j) buf[static_cast<size_t>(i * L.rs + j * L.cs)] = x[static_cast<size_t>(i * cols + j)];
      const auto i32 = cast_all<int32_t>(buf);
      const auto i64 = cast_all<int64_t>(buf);
      const auto f32 = cast_all<float>(buf);
      const struct {
        dirmn_dtype dtype;
        const void* data;
      } inputs[] = {{DIRMN_INT32, i32.data()},
                    {DIRMN_INT64, i64.data()},
                    {DIRMN_FLOAT32, f32.data()},
                    {DIRMN_FLOAT64, buf.data()}};
      for (const auto& in : inputs) {
        INFO("layout " << L.name << ", dtype " << in.dtype);
        dirmn_counts* c = nullptr;
        REQUIRE(dirmn_counts_create_dense(ctx.get(), &c, rows, cols, in.dtype, in.data, L.rs, L.cs,
                                          nullptr) == DIRMN_SUCCESS);
        Counts counts(c);
        for (bool full : {false, true}) {
          const auto got = loglik(ctx.get(), c, rows, alpha, full ? DIRMN_FULL : 0);
          check_against_reference(got, x, alpha, rows, cols, full);
        }
      }
    }
  }
}

TEST_CASE("dense and sparse storage and CSR/CSC input agree", "[api][counts][sparse]") {
  const int64_t rows = 50, cols = 40;
  const auto x = random_table(rows, cols, 0.85, 300, 3);  // U16 storage, mostly zeros
  const auto alpha = random_alpha(cols, 0.01, 5.0, 4);
  // Build CSR (columns deliberately in descending order within rows, plus an
  // explicit zero) and CSC from the dense table.
  std::vector<int64_t> rp{0}, ci;
  std::vector<double> rv;
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = cols - 1; j >= 0; --j) {
      const double v = x[static_cast<size_t>(i * cols + j)];
      if (v != 0.0 || (i == 3 && j == 7)) {
        ci.push_back(j);
        rv.push_back(v);
      }
    }
    rp.push_back(static_cast<int64_t>(ci.size()));
  }
  std::vector<int32_t> cp{0}, ri;
  std::vector<int32_t> cv;
  for (int64_t j = 0; j < cols; ++j) {
    for (int64_t i = 0; i < rows; ++i) {
      const double v = x[static_cast<size_t>(i * cols + j)];
      if (v != 0.0) {
        ri.push_back(static_cast<int32_t>(i));
        cv.push_back(static_cast<int32_t>(v));
      }
    }
    cp.push_back(static_cast<int32_t>(ri.size()));
  }
  for (dirmn_backend be : backends_under_test()) {
    INFO("backend " << backend_name(be));
    Context ctx = make_context(be);
    REQUIRE(ctx);
    for (dirmn_storage st : {DIRMN_STORAGE_AUTO, DIRMN_STORAGE_DENSE, DIRMN_STORAGE_SPARSE}) {
      INFO("storage " << st);
      dirmn_counts_options o;
      dirmn_counts_options_init(&o);
      o.storage = st;
      dirmn_counts *a = nullptr, *b = nullptr;
      REQUIRE(dirmn_counts_create_sparse(ctx.get(), &a, DIRMN_CSR, rows, cols,
                                         static_cast<int64_t>(ci.size()), DIRMN_INDEX_INT64,
                                         rp.data(), ci.data(), DIRMN_FLOAT64, rv.data(),
                                         &o) == DIRMN_SUCCESS);
      REQUIRE(dirmn_counts_create_sparse(ctx.get(), &b, DIRMN_CSC, rows, cols,
                                         static_cast<int64_t>(ri.size()), DIRMN_INDEX_INT32,
                                         cp.data(), ri.data(), DIRMN_INT32, cv.data(),
                                         &o) == DIRMN_SUCCESS);
      Counts ca(a), cb(b);
      Counts cd = make_dense(ctx.get(), x, rows, cols, st);
      dirmn_counts_info info;
      info.size = sizeof info;
      REQUIRE(dirmn_counts_get_info(a, &info) == DIRMN_SUCCESS);
      CHECK(info.nnz == static_cast<int64_t>(cv.size()));  // the explicit zero is dropped
      CHECK(info.value_bits == 16);
      CHECK(info.storage == (st == DIRMN_STORAGE_DENSE ? DIRMN_STORAGE_DENSE : DIRMN_STORAGE_SPARSE));
      for (bool full : {false, true}) {
        const uint32_t f = full ? DIRMN_FULL : 0;
        const auto la = loglik(ctx.get(), a, rows, alpha, f);
        const auto lb = loglik(ctx.get(), b, rows, alpha, f);
        const auto ld = loglik(ctx.get(), cd.get(), rows, alpha, f);
        check_against_reference(la, x, alpha, rows, cols, full);
        for (int64_t i = 0; i < rows; ++i) {
          CHECK(close_to(la[static_cast<size_t>(i)], lb[static_cast<size_t>(i)], 1e-14, 1e-12));
          CHECK(close_to(la[static_cast<size_t>(i)], ld[static_cast<size_t>(i)], 1e-14, 1e-12));
        }
      }
    }
  }
}

TEST_CASE("sparse input errors name the entry", "[api][counts][sparse]") {
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  dirmn_counts* c = reinterpret_cast<dirmn_counts*>(0x1);
  const int64_t ptr[] = {0, 2, 3};
  const int64_t dup_idx[] = {1, 1, 0};
  const int64_t bad_idx[] = {0, 5, 0};
  const double val[] = {1, 2, 3};
  const double neg[] = {1, 2, -3};
  CHECK(dirmn_counts_create_sparse(ctx.get(), &c, DIRMN_CSR, 2, 3, 3, DIRMN_INDEX_INT64, ptr,
                                   dup_idx, DIRMN_FLOAT64, val, nullptr) == DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(last_error(ctx).find("row 0, column 1") != std::string::npos);
  CHECK(last_error(ctx).find("more than once") != std::string::npos);
  CHECK(dirmn_counts_create_sparse(ctx.get(), &c, DIRMN_CSR, 2, 3, 3, DIRMN_INDEX_INT64, ptr,
                                   bad_idx, DIRMN_FLOAT64, val, nullptr) == DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(last_error(ctx).find("column index 5") != std::string::npos);
  const int64_t dec_ptr[] = {0, 3, 2};
  CHECK(dirmn_counts_create_sparse(ctx.get(), &c, DIRMN_CSR, 2, 3, 3, DIRMN_INDEX_INT64, dec_ptr,
                                   dup_idx, DIRMN_FLOAT64, val, nullptr) == DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(last_error(ctx).find("ptr[2]") != std::string::npos);
  const int64_t short_ptr[] = {0, 1, 2};
  CHECK(dirmn_counts_create_sparse(ctx.get(), &c, DIRMN_CSR, 2, 3, 3, DIRMN_INDEX_INT64, short_ptr,
                                   dup_idx, DIRMN_FLOAT64, val, nullptr) == DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(last_error(ctx).find("expected nnz") != std::string::npos);
  const int64_t idx[] = {0, 2, 1};
  CHECK(dirmn_counts_create_sparse(ctx.get(), &c, DIRMN_CSR, 2, 3, 3, DIRMN_INDEX_INT64, ptr, idx,
                                   DIRMN_FLOAT64, neg, nullptr) == DIRMN_ERROR_INVALID_COUNTS);
  CHECK(last_error(ctx).find("row 1, column 1") != std::string::npos);
  CHECK(last_error(ctx).find("-3") != std::string::npos);
  CHECK(dirmn_counts_create_sparse(ctx.get(), &c, DIRMN_CSC, 3, 2, 3, DIRMN_INDEX_INT64, ptr, idx,
                                   DIRMN_FLOAT64, neg, nullptr) == DIRMN_ERROR_INVALID_COUNTS);
  CHECK(last_error(ctx).find("row 1, column 1") != std::string::npos);
  CHECK(dirmn_counts_create_sparse(ctx.get(), &c, DIRMN_CSR, 2, 3, 3, DIRMN_INDEX_INT64, nullptr,
                                   idx, DIRMN_FLOAT64, val, nullptr) == DIRMN_ERROR_NULL_POINTER);
  CHECK(dirmn_counts_create_sparse(ctx.get(), &c, static_cast<dirmn_sparse_format>(4), 2, 3, 3,
                                   DIRMN_INDEX_INT64, ptr, idx, DIRMN_FLOAT64, val,
                                   nullptr) == DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(dirmn_counts_create_sparse(ctx.get(), &c, DIRMN_CSR, 2, 3, -1, DIRMN_INDEX_INT64, ptr, idx,
                                   DIRMN_FLOAT64, val, nullptr) == DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(c == reinterpret_cast<dirmn_counts*>(0x1));  // never written on failure
  // nnz = 0 is a valid all-zero table.
  const int64_t zptr[] = {0, 0, 0};
  dirmn_counts* z = nullptr;
  REQUIRE(dirmn_counts_create_sparse(ctx.get(), &z, DIRMN_CSR, 2, 3, 0, DIRMN_INDEX_INT64, zptr,
                                     nullptr, DIRMN_FLOAT64, nullptr, nullptr) == DIRMN_SUCCESS);
  Counts zc(z);
  const auto ll = loglik(ctx.get(), z, 2, {1.0, 2.0, 3.0}, DIRMN_FULL);
  CHECK(ll[0] == 0.0);
  CHECK(ll[1] == 0.0);
}

TEST_CASE("invalid counts are reported with row, column and value", "[api][counts]") {
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  const int64_t rows = 3, cols = 4;
  std::vector<double> x(rows * cols, 1.0);
  dirmn_counts* c = reinterpret_cast<dirmn_counts*>(0x1);
  struct Bad {
    double value;
    const char* says;
  };
  const Bad bads[] = {{-2.0, "negative"},
                      {std::nan(""), "NaN"},
                      {std::numeric_limits<double>::infinity(), "infinite"},
                      {2.5, "not an integer"},
                      {1e17, "2^53"}};
  for (const Bad& bad : bads) {
    x[static_cast<size_t>(2 * cols + 1)] = bad.value;
    CHECK(dirmn_counts_create_dense(ctx.get(), &c, rows, cols, DIRMN_FLOAT64, x.data(), cols, 1,
                                    nullptr) == DIRMN_ERROR_INVALID_COUNTS);
    const std::string msg = last_error(ctx);
    INFO(msg);
    CHECK(msg.find("row 2, column 1") != std::string::npos);
    CHECK(msg.find(bad.says) != std::string::npos);
  }
  CHECK(c == reinterpret_cast<dirmn_counts*>(0x1));
  // Integer inputs: negative values, in column-major order too.
  std::vector<int32_t> xi(rows * cols, 0);
  xi[static_cast<size_t>(1 + 3 * rows)] = -7;  // row 1, column 3, column-major
  CHECK(dirmn_counts_create_dense(ctx.get(), &c, rows, cols, DIRMN_INT32, xi.data(), 1, rows,
                                  nullptr) == DIRMN_ERROR_INVALID_COUNTS);
  CHECK(last_error(ctx).find("row 1, column 3") != std::string::npos);
  CHECK(last_error(ctx).find("-7") != std::string::npos);

  // Real-valued counts are accepted with the flag, and evaluated by lgamma.
  x[static_cast<size_t>(2 * cols + 1)] = 2.5;
  dirmn_counts_options o;
  dirmn_counts_options_init(&o);
  o.flags = DIRMN_COUNTS_REAL_VALUED;
  REQUIRE(dirmn_counts_create_dense(ctx.get(), &c, rows, cols, DIRMN_FLOAT64, x.data(), cols, 1,
                                    &o) == DIRMN_SUCCESS);
  Counts real(c);
  dirmn_counts_info info;
  info.size = sizeof info;
  REQUIRE(dirmn_counts_get_info(c, &info) == DIRMN_SUCCESS);
  CHECK(info.flags == DIRMN_COUNTS_REAL_VALUED);
  CHECK(info.value_bits == 64);
  const std::vector<double> alpha{0.5, 1.5, 2.5, 3.5};
  const auto got = loglik(ctx.get(), c, rows, alpha, DIRMN_FULL);
  check_against_reference(got, x, alpha, rows, cols, true);
}

TEST_CASE("bad sizes, strides, options and pointers", "[api][counts]") {
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  const double x[4] = {1, 2, 3, 4};
  dirmn_counts* c = nullptr;
  CHECK(dirmn_counts_create_dense(nullptr, &c, 2, 2, DIRMN_FLOAT64, x, 2, 1, nullptr) ==
        DIRMN_ERROR_NULL_POINTER);
  CHECK(std::string(dirmn_last_error(nullptr)).find("context is NULL") != std::string::npos);
  CHECK(dirmn_counts_create_dense(ctx.get(), nullptr, 2, 2, DIRMN_FLOAT64, x, 2, 1, nullptr) ==
        DIRMN_ERROR_NULL_POINTER);
  CHECK(dirmn_counts_create_dense(ctx.get(), &c, 2, 2, DIRMN_FLOAT64, nullptr, 2, 1, nullptr) ==
        DIRMN_ERROR_NULL_POINTER);
  CHECK(dirmn_counts_create_dense(ctx.get(), &c, 0, 2, DIRMN_FLOAT64, x, 2, 1, nullptr) ==
        DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(dirmn_counts_create_dense(ctx.get(), &c, 2, -1, DIRMN_FLOAT64, x, 2, 1, nullptr) ==
        DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(dirmn_counts_create_dense(ctx.get(), &c, 2, 2, static_cast<dirmn_dtype>(17), x, 2, 1,
                                  nullptr) == DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(dirmn_counts_create_dense(ctx.get(), &c, 2, 2, DIRMN_FLOAT64, x, 0, 1, nullptr) ==
        DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(dirmn_counts_create_dense(ctx.get(), &c, 2, 2, DIRMN_FLOAT64, x, 2, -1, nullptr) ==
        DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(dirmn_counts_create_dense(ctx.get(), &c, INT64_MAX, 2, DIRMN_FLOAT64, x, 2, 1, nullptr) ==
        DIRMN_ERROR_OVERFLOW);
  CHECK(dirmn_counts_create_dense(ctx.get(), &c, 4, 2, DIRMN_FLOAT64, x, INT64_MAX / 2, 1,
                                  nullptr) == DIRMN_ERROR_OVERFLOW);
  CHECK(last_error(ctx).find("overflows") != std::string::npos);
  dirmn_counts_options o;
  dirmn_counts_options_init(&o);
  o.size = 4;
  CHECK(dirmn_counts_create_dense(ctx.get(), &c, 2, 2, DIRMN_FLOAT64, x, 2, 1, &o) ==
        DIRMN_ERROR_INVALID_ARGUMENT);
  dirmn_counts_options_init(&o);
  o.flags = 0x80;
  CHECK(dirmn_counts_create_dense(ctx.get(), &c, 2, 2, DIRMN_FLOAT64, x, 2, 1, &o) ==
        DIRMN_ERROR_INVALID_ARGUMENT);
  dirmn_counts_options_init(&o);
  o.storage = static_cast<dirmn_storage>(9);
  CHECK(dirmn_counts_create_dense(ctx.get(), &c, 2, 2, DIRMN_FLOAT64, x, 2, 1, &o) ==
        DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(c == nullptr);
  dirmn_counts_options_init(nullptr);  // a no-op
  dirmn_counts_destroy(nullptr);       // a no-op
  // A stride is ignored where its dimension is 1.
  REQUIRE(dirmn_counts_create_dense(ctx.get(), &c, 1, 4, DIRMN_FLOAT64, x, 0, 1, nullptr) ==
          DIRMN_SUCCESS);
  dirmn_counts_destroy(c);
  // Older callers with a smaller options struct (size up to flags) still work.
  dirmn_counts_options_init(&o);
  o.size = offsetof(dirmn_counts_options, flags) + sizeof(uint32_t);
  o.storage = static_cast<dirmn_storage>(9);  // beyond size: must be ignored
  REQUIRE(dirmn_counts_create_dense(ctx.get(), &c, 2, 2, DIRMN_FLOAT64, x, 2, 1, &o) ==
          DIRMN_SUCCESS);
  dirmn_counts_destroy(c);
}

TEST_CASE("counts info, storage choice and row totals", "[api][counts]") {
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  SECTION("narrowest value type") {
    const struct {
      double max;
      int bits;
    } cases[] = {{255, 8}, {256, 16}, {65535, 16}, {65536, 32}, {16777216, 32}, {5e9, 64}};
    for (const auto& cs : cases) {
      const std::vector<double> x{1, cs.max, 0, 3};
      Counts c = make_dense(ctx.get(), x, 2, 2);
      dirmn_counts_info info;
      info.size = sizeof info;
      REQUIRE(dirmn_counts_get_info(c.get(), &info) == DIRMN_SUCCESS);
      CHECK(info.value_bits == cs.bits);
      CHECK(info.max_count == cs.max);
      CHECK(info.rows == 2);
      CHECK(info.cols == 2);
      CHECK(info.nnz == 3);
      CHECK(info.total == 4 + cs.max);
      CHECK(info.backend == DIRMN_BACKEND_CPU);
      CHECK(info.storage == DIRMN_STORAGE_DENSE);
    }
  }
  SECTION("mostly zeros are stored sparse") {
    auto x = random_table(100, 200, 0.95, 9, 9);
    Counts c = make_dense(ctx.get(), x, 100, 200);
    dirmn_counts_info info;
    info.size = sizeof info;
    REQUIRE(dirmn_counts_get_info(c.get(), &info) == DIRMN_SUCCESS);
    CHECK(info.storage == DIRMN_STORAGE_SPARSE);
    std::vector<double> totals(100, -1);
    REQUIRE(dirmn_counts_row_totals(ctx.get(), c.get(), totals.data()) == DIRMN_SUCCESS);
    for (int64_t i = 0; i < 100; ++i) {
      double s = 0;
      for (int64_t j = 0; j < 200; ++j) s += x[static_cast<size_t>(i * 200 + j)];
      CHECK(totals[static_cast<size_t>(i)] == s);
    }
    CHECK(dirmn_counts_row_totals(ctx.get(), c.get(), nullptr) == DIRMN_ERROR_NULL_POINTER);
  }
  SECTION("info size handling") {
    Counts c = make_dense(ctx.get(), {1, 2}, 1, 2);
    dirmn_counts_info info;
    std::memset(&info, 0x5a, sizeof info);
    info.size = offsetof(dirmn_counts_info, cols);  // room for rows only
    REQUIRE(dirmn_counts_get_info(c.get(), &info) == DIRMN_SUCCESS);
    CHECK(info.rows == 1);
    int64_t untouched;
    std::memset(&untouched, 0x5a, sizeof untouched);
    CHECK(info.cols == untouched);
    info.size = 3;
    CHECK(dirmn_counts_get_info(c.get(), &info) == DIRMN_ERROR_INVALID_ARGUMENT);
    CHECK(dirmn_counts_get_info(nullptr, &info) == DIRMN_ERROR_NULL_POINTER);
    CHECK(dirmn_counts_get_info(c.get(), nullptr) == DIRMN_ERROR_NULL_POINTER);
  }
}

TEST_CASE("K parameter vectors at once, any output layout", "[api][loglik]") {
  const int64_t rows = 29, cols = 17, K = 5;
  const auto x = random_table(rows, cols, 0.3, 20, 11);
  const auto alpha = random_alpha(K * cols, 0.1, 50.0, 12);  // K x cols, row-major
  for (dirmn_backend be : backends_under_test()) {
    INFO("backend " << backend_name(be));
    Context ctx = make_context(be);
    REQUIRE(ctx);
    Counts c = make_dense(ctx.get(), x, rows, cols);
    // Parameters column-major (cols x K as in R's t(alpha)), output row-major
    // rows x K, then parameters row-major with output column-major.
    std::vector<double> alpha_cm(static_cast<size_t>(K * cols));
    for (int64_t j = 0; j < K; ++j)
      for (int64_t v = 0; v < cols; ++v) alpha_cm[static_cast<size_t>(v * K + j)] = alpha[static_cast<size_t>(j * cols + v)];
    std::vector<double> out_rm(static_cast<size_t>(rows * K)), out_cm(static_cast<size_t>(rows * K));
    REQUIRE(dirmn_loglik(ctx.get(), c.get(), K, alpha_cm.data(), 1, K, DIRMN_PARAM_ALPHA, DIRMN_FULL,
                         out_rm.data(), K, 1) == DIRMN_SUCCESS);
    REQUIRE(dirmn_loglik(ctx.get(), c.get(), K, alpha.data(), cols, 1, DIRMN_PARAM_ALPHA, DIRMN_FULL,
                         out_cm.data(), 1, rows) == DIRMN_SUCCESS);
    for (int64_t j = 0; j < K; ++j)
      for (int64_t b = 0; b < rows; ++b) {
        const double want = reference_loglik(&x[static_cast<size_t>(b * cols)], &alpha[static_cast<size_t>(j * cols)], cols, true);
        CHECK(close_to(out_rm[static_cast<size_t>(b * K + j)], want, 1e-12, 1e-10));
        CHECK(close_to(out_cm[static_cast<size_t>(b + j * rows)], want, 1e-12, 1e-10));
      }
    // log alpha gives the same values.
    std::vector<double> log_alpha(alpha.size()), out_log(static_cast<size_t>(rows * K));
    for (size_t i = 0; i < alpha.size(); ++i) log_alpha[i] = std::log(alpha[i]);
    REQUIRE(dirmn_loglik(ctx.get(), c.get(), K, log_alpha.data(), cols, 1, DIRMN_PARAM_LOG_ALPHA,
                         DIRMN_FULL, out_log.data(), 1, rows) == DIRMN_SUCCESS);
    for (size_t i = 0; i < out_log.size(); ++i) CHECK(close_to(out_log[i], out_cm[i], 1e-12, 1e-10));
    // Overlapping output layouts are refused before anything is written.
    std::vector<double> sentinel(static_cast<size_t>(rows * K), 7.0);
    CHECK(dirmn_loglik(ctx.get(), c.get(), K, alpha.data(), cols, 1, DIRMN_PARAM_ALPHA, 0,
                       sentinel.data(), 2, 1) == DIRMN_ERROR_INVALID_ARGUMENT);
    CHECK(dirmn_loglik(ctx.get(), c.get(), K, alpha.data(), cols, 1, DIRMN_PARAM_ALPHA, 0,
                       sentinel.data(), 0, 1) == DIRMN_ERROR_INVALID_ARGUMENT);
    CHECK(dirmn_loglik(ctx.get(), c.get(), 0, alpha.data(), cols, 1, DIRMN_PARAM_ALPHA, 0,
                       sentinel.data(), 1, 1) == DIRMN_ERROR_INVALID_ARGUMENT);
    for (double s : sentinel) CHECK(s == 7.0);
  }
}

TEST_CASE("one parameter vector per row", "[api][loglik]") {
  const int64_t rows = 41, cols = 13;
  const auto x = random_table(rows, cols, 0.5, 30, 21);
  const auto alpha = random_alpha(rows * cols, 0.02, 100.0, 22);  // rows x cols row-major
  for (dirmn_backend be : backends_under_test()) {
    INFO("backend " << backend_name(be));
    Context ctx = make_context(be);
    REQUIRE(ctx);
    Counts c = make_dense(ctx.get(), x, rows, cols, DIRMN_STORAGE_SPARSE);
    // Column-major parameters (R's matrix), padded output.
    std::vector<double> alpha_cm(alpha.size());
    for (int64_t b = 0; b < rows; ++b)
      for (int64_t v = 0; v < cols; ++v) alpha_cm[static_cast<size_t>(b + v * rows)] = alpha[static_cast<size_t>(b * cols + v)];
    std::vector<double> out(static_cast<size_t>(2 * rows), -1.0);
    for (bool full : {false, true}) {
      REQUIRE(dirmn_loglik_rowwise(ctx.get(), c.get(), alpha_cm.data(), 1, rows, DIRMN_PARAM_ALPHA,
                                   full ? DIRMN_FULL : 0, out.data(), 2) == DIRMN_SUCCESS);
      for (int64_t b = 0; b < rows; ++b) {
        const double want = reference_loglik(&x[static_cast<size_t>(b * cols)], &alpha[static_cast<size_t>(b * cols)], cols, full);
        CHECK(close_to(out[static_cast<size_t>(2 * b)], want, 1e-12, 1e-10));
        CHECK(out[static_cast<size_t>(2 * b + 1)] == -1.0);  // the gaps are not written
      }
    }
    // A bad alpha names its row and column.
    alpha_cm[static_cast<size_t>(5 + 3 * rows)] = 0.0;
    CHECK(dirmn_loglik_rowwise(ctx.get(), c.get(), alpha_cm.data(), 1, rows, DIRMN_PARAM_ALPHA, 0,
                               out.data(), 1) == DIRMN_ERROR_INVALID_PARAMETER);
    CHECK(last_error(ctx).find("row 5, index 3") != std::string::npos);
  }
}

TEST_CASE("invalid parameters name vector and index, and change nothing", "[api][loglik]") {
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  Counts c = make_dense(ctx.get(), {1, 2, 3, 0, 0, 4}, 2, 3);
  std::vector<double> out{42.0, 43.0};
  const double inf = std::numeric_limits<double>::infinity();
  const struct {
    std::vector<double> p;
    dirmn_param kind;
    const char* says;
  } cases[] = {{{1, -1, 2}, DIRMN_PARAM_ALPHA, "index 1"},
               {{1, 0, 2}, DIRMN_PARAM_ALPHA, "not positive"},
               {{1, 2, std::nan("")}, DIRMN_PARAM_ALPHA, "NaN"},
               {{inf, 2, 3}, DIRMN_PARAM_ALPHA, "infinite"},
               {{0, 800, 0}, DIRMN_PARAM_LOG_ALPHA, "overflows"},
               {{0, -800, 0}, DIRMN_PARAM_LOG_ALPHA, "underflows"},
               {{0, std::nan(""), 0}, DIRMN_PARAM_LOG_ALPHA, "NaN"},
               {{1e308, 1e308, 1e308}, DIRMN_PARAM_ALPHA, "sum of alpha overflows"}};
  for (const auto& cs : cases) {
    CHECK(dirmn_loglik(ctx.get(), c.get(), 1, cs.p.data(), 3, 1, cs.kind, 0, out.data(), 1, 1) ==
          DIRMN_ERROR_INVALID_PARAMETER);
    INFO(last_error(ctx));
    CHECK(last_error(ctx).find(cs.says) != std::string::npos);
    CHECK(out[0] == 42.0);
    CHECK(out[1] == 43.0);
  }
  const double a[3] = {1, 1, 1};
  CHECK(dirmn_loglik(ctx.get(), c.get(), 1, nullptr, 3, 1, DIRMN_PARAM_ALPHA, 0, out.data(), 1, 1) ==
        DIRMN_ERROR_NULL_POINTER);
  CHECK(dirmn_loglik(ctx.get(), c.get(), 1, a, 3, 1, DIRMN_PARAM_ALPHA, 0, nullptr, 1, 1) ==
        DIRMN_ERROR_NULL_POINTER);
  CHECK(dirmn_loglik(ctx.get(), nullptr, 1, a, 3, 1, DIRMN_PARAM_ALPHA, 0, out.data(), 1, 1) ==
        DIRMN_ERROR_NULL_POINTER);
  CHECK(dirmn_loglik(nullptr, c.get(), 1, a, 3, 1, DIRMN_PARAM_ALPHA, 0, out.data(), 1, 1) ==
        DIRMN_ERROR_NULL_POINTER);
  CHECK(dirmn_loglik(ctx.get(), c.get(), 1, a, 3, 1, static_cast<dirmn_param>(3), 0, out.data(), 1,
                     1) == DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(dirmn_loglik(ctx.get(), c.get(), 1, a, 3, 1, DIRMN_PARAM_ALPHA, 0x100, out.data(), 1, 1) ==
        DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(dirmn_loglik(ctx.get(), c.get(), 1, a, 3, 0, DIRMN_PARAM_ALPHA, 0, out.data(), 1, 1) ==
        DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(dirmn_loglik(ctx.get(), c.get(), 1, a, 3, 1, DIRMN_PARAM_ALPHA, DIRMN_ASYNC, out.data(), 1,
                     1) == DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(dirmn_loglik(ctx.get(), c.get(), 1, a, 3, 1, DIRMN_PARAM_ALPHA, DIRMN_OUTPUT_DEVICE,
                     out.data(), 1, 1) == DIRMN_ERROR_NOT_SUPPORTED);
  CHECK(out[0] == 42.0);
  CHECK(out[1] == 43.0);
  // The context stays usable after failures.
  REQUIRE(dirmn_loglik(ctx.get(), c.get(), 1, a, 3, 1, DIRMN_PARAM_ALPHA, 0, out.data(), 1, 1) ==
          DIRMN_SUCCESS);
  CHECK(std::string(dirmn_last_error(ctx.get())).empty());
}

TEST_CASE("parameters edited in place, or given as the other kind, are never stale", "[api][loglik]") {
  // dirmn_loglik remembers the last shared parameters it converted; a call
  // with other values at the same address must see them.
  const int64_t rows = 23, cols = 9, K = 2;
  const auto x = random_table(rows, cols, 0.4, 12, 31);
  for (dirmn_backend be : backends_under_test()) {
    INFO("backend " << backend_name(be));
    Context ctx = make_context(be);
    REQUIRE(ctx);
    Counts c = make_dense(ctx.get(), x, rows, cols);
    // K vectors with stride 2 between entries, inside a padded buffer.
    std::vector<double> buf(static_cast<size_t>(K * 2 * cols), -99.0);
    const auto alpha = random_alpha(K * cols, 0.2, 5.0, 32);  // exp of them stays below 4e6
    for (int64_t j = 0; j < K; ++j)
      for (int64_t v = 0; v < cols; ++v)
        buf[static_cast<size_t>(j * 2 * cols + 2 * v)] = alpha[static_cast<size_t>(j * cols + v)];
    const auto run = [&](dirmn_param kind, std::vector<double>& out) {
      out.assign(static_cast<size_t>(rows * K), 0.0);
      const dirmn_status s =
          dirmn_loglik(ctx.get(), c.get(), K, buf.data(), 2 * cols, 2, kind, 0, out.data(), K, 1);
      INFO(last_error(ctx));
      REQUIRE(s == DIRMN_SUCCESS);
    };
    const auto check = [&](const std::vector<double>& out, const std::vector<double>& a) {
      for (int64_t j = 0; j < K; ++j)
        for (int64_t b = 0; b < rows; ++b) {
          const double want = reference_loglik(&x[static_cast<size_t>(b * cols)], &a[static_cast<size_t>(j * cols)], cols, false);
          INFO("vector " << j << ", row " << b);
          CHECK(close_to(out[static_cast<size_t>(b * K + j)], want, 1e-12, 1e-10));
        }
    };
    std::vector<double> out, again;
    run(DIRMN_PARAM_ALPHA, out);
    check(out, alpha);
    // The padding between entries is not a parameter: changing it changes nothing.
    buf[1] = 12345.0;
    run(DIRMN_PARAM_ALPHA, again);
    CHECK(again == out);
    // One entry of the second vector edited in place.
    auto edited = alpha;
    edited[static_cast<size_t>(cols + 4)] *= 3.0;
    buf[static_cast<size_t>(2 * cols + 8)] = edited[static_cast<size_t>(cols + 4)];
    run(DIRMN_PARAM_ALPHA, out);
    check(out, edited);
    // The same bits read as log alpha.
    std::vector<double> exp_alpha(edited.size());
    for (size_t i = 0; i < edited.size(); ++i) exp_alpha[i] = std::exp(edited[i]);
    run(DIRMN_PARAM_LOG_ALPHA, out);
    check(out, exp_alpha);
    // An edit that is valid in entry 1 and invalid in entry 3 is refused
    // every time it is passed (its conversion stops part-way, after entry 1),
    // and the values before it still evaluate afterwards, with entry 1 as
    // it was.
    run(DIRMN_PARAM_ALPHA, out);
    check(out, edited);
    const double keep1 = buf[2], keep3 = buf[6];
    buf[2] = 2.0 * keep1;
    buf[6] = -1.0;
    std::vector<double> sentinel(static_cast<size_t>(rows * K), 7.0);
    for (int pass = 0; pass < 2; ++pass)
      CHECK(dirmn_loglik(ctx.get(), c.get(), K, buf.data(), 2 * cols, 2, DIRMN_PARAM_ALPHA, 0,
                         sentinel.data(), K, 1) == DIRMN_ERROR_INVALID_PARAMETER);
    for (double v : sentinel) CHECK(v == 7.0);
    buf[2] = keep1;
    buf[6] = keep3;
    run(DIRMN_PARAM_ALPHA, out);
    check(out, edited);
  }
}

TEST_CASE("zero rows, one category and huge counts", "[api][loglik]") {
  for (dirmn_backend be : backends_under_test()) {
    INFO("backend " << backend_name(be));
    Context ctx = make_context(be);
    REQUIRE(ctx);
    SECTION("a row of zeros has log-likelihood 0") {
      const std::vector<double> x{0, 0, 0, 1, 2, 3, 0, 0, 0};
      for (dirmn_storage st : {DIRMN_STORAGE_DENSE, DIRMN_STORAGE_SPARSE}) {
        Counts c = make_dense(ctx.get(), x, 3, 3, st);
        const auto ll = loglik(ctx.get(), c.get(), 3, {0.3, 0.4, 0.5}, DIRMN_FULL);
        CHECK(ll[0] == 0.0);
        CHECK(ll[2] == 0.0);
        CHECK(ll[1] < 0.0);
      }
    }
    SECTION("one category: the density is 1") {
      const std::vector<double> x{5, 0, 123456};
      Counts c = make_dense(ctx.get(), x, 3, 1);
      const auto ll = loglik(ctx.get(), c.get(), 3, {2.5}, DIRMN_FULL);
      for (double v : ll) CHECK(std::fabs(v) < 1e-9);
      const auto ll0 = loglik(ctx.get(), c.get(), 3, {2.5}, 0);
      for (double v : ll0) CHECK(std::fabs(v) < 1e-9);
    }
    SECTION("counts up to 2^24") {
      const double big = 16777216.0;
      const std::vector<double> x{big, 1, 0, 70000, big - 1, 3, 12, 0, 1e6};
      const std::vector<double> alpha{0.7, 3.0, 1e-3};
      Counts c = make_dense(ctx.get(), x, 3, 3);
      for (bool full : {false, true}) {
        const auto ll = loglik(ctx.get(), c.get(), 3, alpha, full ? DIRMN_FULL : 0);
        check_against_reference(ll, x, alpha, 3, 3, full, 1e-12);
      }
    }
  }
}

TEST_CASE("the same results whatever the thread count", "[api][threads]") {
  const int64_t rows = 3000, cols = 64;
  const auto x = random_table(rows, cols, 0.2, 9, 31);
  const auto alpha = random_alpha(cols, 0.1, 10, 32);
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  Counts c = make_dense(ctx.get(), x, rows, cols);
  REQUIRE(dirmn_context_set_threads(ctx.get(), 1) == DIRMN_SUCCESS);
  const auto one = loglik(ctx.get(), c.get(), rows, alpha);
  REQUIRE(dirmn_context_set_threads(ctx.get(), 4) == DIRMN_SUCCESS);
  const auto four = loglik(ctx.get(), c.get(), rows, alpha);
  CHECK(one == four);  // each row is summed by one thread in a fixed order
  check_against_reference(four, x, alpha, rows, cols, false);
}

TEST_CASE("independent contexts run concurrently from several threads", "[api][threads]") {
  const int64_t rows = 500, cols = 40;
  const auto x = random_table(rows, cols, 0.3, 15, 41);
  const auto alpha = random_alpha(cols, 0.2, 5, 42);
  std::vector<double> want(static_cast<size_t>(rows));
  for (int64_t b = 0; b < rows; ++b)
    want[static_cast<size_t>(b)] = reference_loglik(&x[static_cast<size_t>(b * cols)], alpha.data(), cols, false);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 10; ++rep) {
        dirmn_context* ctx = nullptr;
        if (dirmn_context_create(&ctx, DIRMN_BACKEND_CPU, 0) != DIRMN_SUCCESS) {
          ++failures;
          return;
        }
        dirmn_context_set_threads(ctx, 1 + (t + rep) % 3);
        dirmn_counts* c = nullptr;
        std::vector<double> out(static_cast<size_t>(rows));
        if (dirmn_counts_create_dense(ctx, &c, rows, cols, DIRMN_FLOAT64, x.data(), cols, 1,
                                      nullptr) != DIRMN_SUCCESS ||
            dirmn_loglik(ctx, c, 1, alpha.data(), 0, 1, DIRMN_PARAM_ALPHA, 0, out.data(), 1, 1) !=
                DIRMN_SUCCESS)
          ++failures;
        for (int64_t b = 0; b < rows; ++b)
          if (!close_to(out[static_cast<size_t>(b)], want[static_cast<size_t>(b)], 1e-12, 1e-10)) ++failures;
        // A failure on this context must not touch another thread's message.
        std::vector<double> bad = alpha;
        bad[static_cast<size_t>(t)] = -1.0;
        if (dirmn_loglik(ctx, c, 1, bad.data(), 0, 1, DIRMN_PARAM_ALPHA, 0, out.data(), 1, 1) !=
            DIRMN_ERROR_INVALID_PARAMETER)
          ++failures;
        dirmn_counts_destroy(c);
        dirmn_context_destroy(ctx);
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(failures.load() == 0);
}

namespace {
struct InterruptState {
  int calls = 0;
  int stop_after = 0;
};
int count_and_stop(void* p) {
  auto* s = static_cast<InterruptState*>(p);
  return ++s->calls > s->stop_after ? 1 : 0;
}
}  // namespace

TEST_CASE("the interrupt callback cancels long calls and leaves outputs alone", "[api][interrupt]") {
  const int64_t rows = 20000, cols = 64;
  const auto x = random_table(rows, cols, 0.2, 9, 51);
  const auto alpha = random_alpha(cols, 0.1, 10, 52);
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  Counts c = make_dense(ctx.get(), x, rows, cols);
  InterruptState st;
  st.stop_after = 0;  // the first poll, before any chunk runs, stops the call
  REQUIRE(dirmn_context_set_interrupt(ctx.get(), count_and_stop, &st) == DIRMN_SUCCESS);
  std::vector<double> out(static_cast<size_t>(rows), 5.0);
  CHECK(dirmn_loglik(ctx.get(), c.get(), 1, alpha.data(), 0, 1, DIRMN_PARAM_ALPHA, 0, out.data(), 1,
                     1) == DIRMN_ERROR_CANCELLED);
  CHECK(last_error(ctx).find("cancelled") != std::string::npos);
  CHECK(st.calls == 1);
  for (double v : out) REQUIRE(v == 5.0);
  // A callback that never stops is polled between chunks and the call
  // completes (one thread, so every chunk runs on the polling thread).
  REQUIRE(dirmn_context_set_threads(ctx.get(), 1) == DIRMN_SUCCESS);
  st.calls = 0;
  st.stop_after = 1 << 30;
  REQUIRE(dirmn_loglik(ctx.get(), c.get(), 1, alpha.data(), 0, 1, DIRMN_PARAM_ALPHA, 0, out.data(),
                       1, 1) == DIRMN_SUCCESS);
  CHECK(st.calls > 1);
  REQUIRE(dirmn_context_set_interrupt(ctx.get(), nullptr, nullptr) == DIRMN_SUCCESS);
}

TEST_CASE("counts belong to their context and may outlive it", "[api][context]") {
  Context a = make_context(DIRMN_BACKEND_CPU);
  Context b = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(a);
  REQUIRE(b);
  Counts c = make_dense(a.get(), {1, 2, 3, 4}, 2, 2);
  const double alpha[2] = {1, 1};
  double out[2] = {9, 9};
  CHECK(dirmn_loglik(b.get(), c.get(), 1, alpha, 0, 1, DIRMN_PARAM_ALPHA, 0, out, 1, 1) ==
        DIRMN_ERROR_WRONG_CONTEXT);
  CHECK(std::string(dirmn_last_error(b.get())).find("another context") != std::string::npos);
  CHECK(dirmn_counts_row_totals(b.get(), c.get(), out) == DIRMN_ERROR_WRONG_CONTEXT);
  CHECK(out[0] == 9);
  // Destroy the context first: the counts object is still safely destroyed
  // (the sanitizer build checks for leaks and use-after-free here).
  a.reset();
  dirmn_counts_info info;
  info.size = sizeof info;
  CHECK(dirmn_counts_get_info(c.get(), &info) == DIRMN_SUCCESS);
  c.reset();
}

TEST_CASE("device arrays cannot be wrapped by a CPU context", "[api][counts]") {
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  dirmn_counts* c = nullptr;
  float x[4] = {1, 2, 3, 4};
  CHECK(dirmn_counts_wrap_device(ctx.get(), &c, 2, 2, DIRMN_FLOAT32, x, 2, 1, nullptr) ==
        DIRMN_ERROR_NOT_SUPPORTED);
  CHECK(last_error(ctx).find("CUDA") != std::string::npos);
  const int32_t p[3] = {0, 1, 2}, i[2] = {0, 1};
  CHECK(dirmn_counts_wrap_device_sparse(ctx.get(), &c, 2, 2, 2, DIRMN_INDEX_INT32, p, i,
                                        DIRMN_FLOAT32, x, nullptr) == DIRMN_ERROR_NOT_SUPPORTED);
  CHECK(c == nullptr);
}

TEST_CASE("a real table: BCI tree counts", "[api][data]") {
  // examples/data/bci.csv: 50 plots x 225 species (vegan's BCI data).
  std::ifstream in(std::string(DIRMN_TEST_DATA_DIR) + "/../../examples/data/bci.csv");
  REQUIRE(in.good());
  std::string line;
  std::getline(in, line);  // header
  std::vector<double> x;
  int64_t rows = 0, cols = -1;
  while (std::getline(in, line)) {
    std::stringstream ss(line);
    std::string cell;
    std::getline(ss, cell, ',');  // row name
    int64_t n = 0;
    while (std::getline(ss, cell, ',')) {
      x.push_back(std::stod(cell));
      ++n;
    }
    if (cols < 0) cols = n;
    REQUIRE(n == cols);
    ++rows;
  }
  REQUIRE(rows == 50);
  REQUIRE(cols == 225);
  // A fitted-looking alpha: column means scaled to a total of 50.
  std::vector<double> alpha(static_cast<size_t>(cols), 0.0);
  double total = 0;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      alpha[static_cast<size_t>(j)] += x[static_cast<size_t>(i * cols + j)];
      total += x[static_cast<size_t>(i * cols + j)];
    }
  for (auto& a : alpha) a = 50.0 * (a + 0.5) / (total + 0.5 * static_cast<double>(cols));
  for (dirmn_backend be : backends_under_test()) {
    Context ctx = make_context(be);
    REQUIRE(ctx);
    Counts c = make_dense(ctx.get(), x, rows, cols);
    const auto ll = loglik(ctx.get(), c.get(), rows, alpha, DIRMN_FULL);
    check_against_reference(ll, x, alpha, rows, cols, true, 1e-11);
  }
}
