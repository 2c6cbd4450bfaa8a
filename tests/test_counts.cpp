// test_counts.cpp: counts objects built from host arrays: every dtype and
// layout, dense and CSR/CSC input, the storage and value width chosen, row
// totals, and the errors bad input gets. Each input form reaches its own
// conversion path, so each is held to the same per-row values from the
// long-double lgamma formula (support.hpp) on every backend present; an
// error must name the row, column and value a caller needs to find the bad
// cell, and leave the caller's handle unwritten. Arrays a CUDA context wraps
// from device memory are in test_counts_device.cpp.
#include <catch2/catch.hpp>

#include <climits>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "support.hpp"

using namespace dirmn_test;

namespace {

template <class T>
std::vector<T> cast_all(const std::vector<double>& x) {
  std::vector<T> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = static_cast<T>(x[i]);
  return y;
}

}  // namespace

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
          const auto got = loglik(ctx.get(), c, rows, alpha, full ? DIRMN_FULL : DIRMN_KERNEL);
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
  // The same CSC counting from 1, as Julia keeps it.
  std::vector<int32_t> cp1(cp), ri1(ri);
  for (int32_t& p : cp1) ++p;
  for (int32_t& i : ri1) ++i;
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
      dirmn_counts_options o1 = o;
      o1.flags = DIRMN_COUNTS_ONE_BASED;
      dirmn_counts* b1 = nullptr;
      REQUIRE(dirmn_counts_create_sparse(ctx.get(), &b1, DIRMN_CSC, rows, cols,
                                         static_cast<int64_t>(ri1.size()), DIRMN_INDEX_INT32,
                                         cp1.data(), ri1.data(), DIRMN_INT32, cv.data(),
                                         &o1) == DIRMN_SUCCESS);
      Counts ca(a), cb(b), cb1(b1);
      Counts cd = make_dense(ctx.get(), x, rows, cols, st);
      CHECK(info_of(b1).flags == 0u);  // the table keeps no trace of the input's numbering
      CHECK(info_of(b1).nnz == info_of(b).nnz);
      dirmn_counts_info info;
      info.size = sizeof info;
      REQUIRE(dirmn_counts_get_info(a, &info) == DIRMN_SUCCESS);
      CHECK(info.nnz == static_cast<int64_t>(cv.size()));  // the explicit zero is dropped
      CHECK(info.value_bits == 16);
      CHECK(info.storage == (st == DIRMN_STORAGE_DENSE ? DIRMN_STORAGE_DENSE : DIRMN_STORAGE_SPARSE));
      for (bool full : {false, true}) {
        const uint32_t f = full ? DIRMN_FULL : DIRMN_KERNEL;
        const auto la = loglik(ctx.get(), a, rows, alpha, f);
        const auto lb = loglik(ctx.get(), b, rows, alpha, f);
        CHECK(loglik(ctx.get(), b1, rows, alpha, f) == lb);
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

TEST_CASE("counts and row totals stay below 2^53, integer and real-valued",
          "[api][counts]") {
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  dirmn_counts* c = reinterpret_cast<dirmn_counts*>(0x1);
  const int64_t two52 = int64_t{1} << 52, two53 = int64_t{1} << 53;
  // 2^53 + 1 as a double is 2^53, so the int64 bound is checked as integers.
  for (int64_t bad : {two53, two53 + 1, INT64_MAX}) {
    INFO("count " << bad);
    const std::vector<int64_t> x{1, 2, 3, bad, 0, 1};
    CHECK(dirmn_counts_create_dense(ctx.get(), &c, 2, 3, DIRMN_INT64, x.data(), 3, 1, nullptr) ==
          DIRMN_ERROR_INVALID_COUNTS);
    CHECK(last_error(ctx).find("row 1, column 0") != std::string::npos);
    CHECK(last_error(ctx).find("2^53 or more") != std::string::npos);
    const int64_t ptr[] = {0, 3, 5}, idx[] = {0, 1, 2, 0, 2};
    const int64_t vals[] = {1, 2, 3, bad, 1};
    CHECK(dirmn_counts_create_sparse(ctx.get(), &c, DIRMN_CSR, 2, 3, 5, DIRMN_INDEX_INT64, ptr, idx,
                                     DIRMN_INT64, vals, nullptr) == DIRMN_ERROR_INVALID_COUNTS);
    CHECK(last_error(ctx).find("row 1, column 0") != std::string::npos);
  }
  // Row totals: 2^52 + 2^52 reaches 2^53 at column 1 of row 1 (the row of
  // 2^52, 2^52, 2^53, 1 was once accepted and its log pmf off by 74); one
  // less is accepted and its total is exact.
  const std::vector<int64_t> over{5, 0, 0, two52, two52, 1};
  const std::vector<double> over_d(over.begin(), over.end());
  const std::vector<float> over_f(over.begin(), over.end());
  CHECK(dirmn_counts_create_dense(ctx.get(), &c, 2, 3, DIRMN_INT64, over.data(), 3, 1, nullptr) ==
        DIRMN_ERROR_INVALID_COUNTS);
  CHECK(last_error(ctx).find("row 1, column 1") != std::string::npos);
  CHECK(last_error(ctx).find("row's total to 2^53 or more") != std::string::npos);
  // Column-major float64 and float32: the same cell.
  const std::vector<double> over_cm{5, two52, 0, two52, 0, 1};
  CHECK(dirmn_counts_create_dense(ctx.get(), &c, 2, 3, DIRMN_FLOAT64, over_cm.data(), 1, 2, nullptr) ==
        DIRMN_ERROR_INVALID_COUNTS);
  CHECK(last_error(ctx).find("row 1, column 1") != std::string::npos);
  CHECK(dirmn_counts_create_dense(ctx.get(), &c, 2, 3, DIRMN_FLOAT32, over_f.data(), 3, 1, nullptr) ==
        DIRMN_ERROR_INVALID_COUNTS);
  CHECK(last_error(ctx).find("row 1, column 1") != std::string::npos);
  {  // CSC: row 1's entries arrive column by column.
    const int32_t ptr[] = {0, 2, 3, 4}, idx[] = {0, 1, 1, 1};
    const double vals[] = {5, static_cast<double>(two52), static_cast<double>(two52), 1};
    CHECK(dirmn_counts_create_sparse(ctx.get(), &c, DIRMN_CSC, 2, 3, 4, DIRMN_INDEX_INT32, ptr, idx,
                                     DIRMN_FLOAT64, vals, nullptr) == DIRMN_ERROR_INVALID_COUNTS);
    CHECK(last_error(ctx).find("row 1, column 1") != std::string::npos);
    CHECK(last_error(ctx).find("row's total") != std::string::npos);
  }
  CHECK(c == reinterpret_cast<dirmn_counts*>(0x1));
  const std::vector<int64_t> edge{5, 0, 0, two52, two52 - 2, 1};  // total 2^53 - 1
  REQUIRE(dirmn_counts_create_dense(ctx.get(), &c, 2, 3, DIRMN_INT64, edge.data(), 3, 1, nullptr) ==
          DIRMN_SUCCESS);
  Counts ok(c);
  std::vector<double> totals(2, -1.0);
  REQUIRE(dirmn_counts_row_totals(ctx.get(), ok.get(), totals.data()) == DIRMN_SUCCESS);
  CHECK(totals[1] == 9007199254740991.0);

  // Real-valued counts: not whole, but below 2^53 as well, with their row
  // totals (a total near DBL_MAX once made the log pmf -Inf).
  dirmn_counts_options o;
  dirmn_counts_options_init(&o);
  o.flags = DIRMN_COUNTS_REAL_VALUED;
  const std::vector<double> deep{1e15, 3.5e15, 2.5, 4.0e15, 0.0, 7.25};
  REQUIRE(dirmn_counts_create_dense(ctx.get(), &c, 2, 3, DIRMN_FLOAT64, deep.data(), 3, 1, &o) ==
          DIRMN_SUCCESS);
  Counts real(c);
  const std::vector<double> alpha{0.5, 1.5, 2.5};
  for (uint32_t flags : {static_cast<uint32_t>(DIRMN_KERNEL), static_cast<uint32_t>(DIRMN_FULL)}) {
    const auto ll = loglik(ctx.get(), c, 2, alpha, flags);
    for (double v : ll) CHECK(std::isfinite(v));
  }
  c = reinterpret_cast<dirmn_counts*>(0x1);
  const std::vector<double> big{1.0, 2.0, 3.0, 0.5, 1e20, 1.0};
  CHECK(dirmn_counts_create_dense(ctx.get(), &c, 2, 3, DIRMN_FLOAT64, big.data(), 3, 1, &o) ==
        DIRMN_ERROR_INVALID_COUNTS);
  CHECK(last_error(ctx).find("row 1, column 1") != std::string::npos);
  CHECK(last_error(ctx).find("2^53 or more") != std::string::npos);
  const std::vector<int64_t> big_i{1, 3, 0, two53 + 1, 1, 1};
  CHECK(dirmn_counts_create_dense(ctx.get(), &c, 2, 3, DIRMN_INT64, big_i.data(), 3, 1, &o) ==
        DIRMN_ERROR_INVALID_COUNTS);
  CHECK(last_error(ctx).find("row 1, column 0") != std::string::npos);
  const std::vector<double> total{1.0, 1.0, 1.0, 1.0, 5e15, 5e15};
  CHECK(dirmn_counts_create_dense(ctx.get(), &c, 2, 3, DIRMN_FLOAT64, total.data(), 3, 1, &o) ==
        DIRMN_ERROR_INVALID_COUNTS);
  CHECK(last_error(ctx).find("row 1, column 2") != std::string::npos);
  CHECK(last_error(ctx).find("row's total to 2^53 or more") != std::string::npos);
  CHECK(c == reinterpret_cast<dirmn_counts*>(0x1));
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

TEST_CASE("counts info says where each step runs", "[api][counts]") {
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  const std::vector<double> x = {1, 0, 2, 300, 0, 0, 1, 1};
  Counts c = make_dense(ctx.get(), x, 2, 4);
  dirmn_counts_info info;
  info.size = sizeof info;
  REQUIRE(dirmn_counts_get_info(c.get(), &info) == DIRMN_SUCCESS);
  // On the CPU every step runs on the host, and every step runs.
  CHECK(info.host_steps == DIRMN_STEPS_ALL);
  CHECK(info.unavailable_steps == 0u);
  // An older caller's struct, which ends before these fields.
  dirmn_counts_info older;
  std::memset(&older, 0x33, sizeof older);
  older.size = offsetof(dirmn_counts_info, host_steps);
  REQUIRE(dirmn_counts_get_info(c.get(), &older) == DIRMN_SUCCESS);
  CHECK(older.device == 0);
  CHECK(older.host_steps == 0x33333333u);
}
