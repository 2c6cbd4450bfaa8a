// test_errors.cpp: what a failure tells a binding. Every status has its C
// name (dirmn_status_name), and every positioned failure gives its
// position as numbers (dirmn_last_error_location) that say what the
// message says -- the bindings word positions from these alone, 1-based, so
// a location that disagreed with the message would mislead R and Julia
// users where C users read the right cell. Each case is checked against the
// position and value the test itself put there, on every backend present.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "support.hpp"

using namespace dirmn_test;

namespace {

dirmn_error_location location_of(const dirmn_context* ctx) {
  dirmn_error_location loc;
  std::memset(&loc, 0x5a, sizeof loc);  // every field must be written
  loc.size = sizeof loc;
  REQUIRE(dirmn_last_error_location(ctx, &loc) == DIRMN_SUCCESS);
  return loc;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// The message is "<function>: <position>: <detail>" with detail the
// location's, at the message's end.
void check_detail_ends_message(const dirmn_context* ctx, const dirmn_error_location& loc) {
  const std::string msg = dirmn_last_error(ctx), detail = loc.detail;
  INFO(msg);
  REQUIRE(!detail.empty());
  REQUIRE(msg.size() >= detail.size());
  CHECK(msg.compare(msg.size() - detail.size(), detail.size(), detail) == 0);
}

}  // namespace

TEST_CASE("every status has its C name", "[api][errors]") {
  const struct {
    dirmn_status s;
    const char* name;
  } all[] = {{DIRMN_SUCCESS, "DIRMN_SUCCESS"},
             {DIRMN_ERROR_NULL_POINTER, "DIRMN_ERROR_NULL_POINTER"},
             {DIRMN_ERROR_INVALID_ARGUMENT, "DIRMN_ERROR_INVALID_ARGUMENT"},
             {DIRMN_ERROR_INVALID_COUNTS, "DIRMN_ERROR_INVALID_COUNTS"},
             {DIRMN_ERROR_INVALID_PARAMETER, "DIRMN_ERROR_INVALID_PARAMETER"},
             {DIRMN_ERROR_DIMENSION_MISMATCH, "DIRMN_ERROR_DIMENSION_MISMATCH"},
             {DIRMN_ERROR_WRONG_CONTEXT, "DIRMN_ERROR_WRONG_CONTEXT"},
             {DIRMN_ERROR_OUT_OF_MEMORY, "DIRMN_ERROR_OUT_OF_MEMORY"},
             {DIRMN_ERROR_BACKEND_UNAVAILABLE, "DIRMN_ERROR_BACKEND_UNAVAILABLE"},
             {DIRMN_ERROR_DEVICE, "DIRMN_ERROR_DEVICE"},
             {DIRMN_ERROR_OVERFLOW, "DIRMN_ERROR_OVERFLOW"},
             {DIRMN_ERROR_CANCELLED, "DIRMN_ERROR_CANCELLED"},
             {DIRMN_ERROR_NOT_SUPPORTED, "DIRMN_ERROR_NOT_SUPPORTED"},
             {DIRMN_ERROR_CONTEXT_IN_USE, "DIRMN_ERROR_CONTEXT_IN_USE"},
             {DIRMN_ERROR_COMMUNICATION, "DIRMN_ERROR_COMMUNICATION"},
             {DIRMN_ERROR_INTERNAL, "DIRMN_ERROR_INTERNAL"}};
  for (const auto& e : all) CHECK(std::string(dirmn_status_name(e.s)) == e.name);
  int named = 0;
  for (int s = -5; s < 200; ++s) {
    const std::string name = dirmn_status_name(static_cast<dirmn_status>(s));
    const std::string text = dirmn_status_string(static_cast<dirmn_status>(s));
    // A name exactly where there is a description.
    CHECK((name == "DIRMN_STATUS_UNKNOWN") == (text == "unknown status"));
    named += name != "DIRMN_STATUS_UNKNOWN";
  }
  CHECK(named == 16);
}

TEST_CASE("a bad count's location is its row, column and value", "[api][errors]") {
  for (dirmn_backend be : backends_under_test()) {
    INFO("backend " << backend_name(be));
    Context ctx = make_context(be);
    REQUIRE(ctx);
    // 3 x 4 row-major; cell (2, 1) is -7.
    std::vector<double> x = {1, 0, 2, 3, 0, 0, 1, 1, 4, -7, 0, 2};
    dirmn_counts* c = nullptr;
    REQUIRE(dirmn_counts_create_dense(ctx.get(), &c, 3, 4, DIRMN_FLOAT64, x.data(), 4, 1, nullptr) ==
            DIRMN_ERROR_INVALID_COUNTS);
    CHECK(c == nullptr);
    dirmn_error_location loc = location_of(ctx.get());
    CHECK(std::string(loc.argument) == "data");
    CHECK(loc.row == 2);
    CHECK(loc.column == 1);
    CHECK(loc.vector == -1);
    CHECK(loc.index == -1);
    CHECK(loc.has_value == 1);
    CHECK(loc.value == -7.0);
    CHECK(std::string(loc.detail) == "count -7 is negative");
    check_detail_ends_message(ctx.get(), loc);
    CHECK(contains(dirmn_last_error(ctx.get()), "row 2, column 1 (0-based): count -7"));

    // Non-finite values are written as R and Julia write them.
    x[9] = -std::numeric_limits<double>::infinity();
    REQUIRE(dirmn_counts_create_dense(ctx.get(), &c, 3, 4, DIRMN_FLOAT64, x.data(), 4, 1, nullptr) ==
            DIRMN_ERROR_INVALID_COUNTS);
    loc = location_of(ctx.get());
    CHECK(std::isinf(loc.value));
    CHECK(std::string(loc.detail) == "count -Inf is infinite");

    // A fractional count: the C flag's hint follows the detail.
    x[9] = 2.5;
    REQUIRE(dirmn_counts_create_dense(ctx.get(), &c, 3, 4, DIRMN_FLOAT64, x.data(), 4, 1, nullptr) ==
            DIRMN_ERROR_INVALID_COUNTS);
    loc = location_of(ctx.get());
    CHECK(loc.value == 2.5);
    CHECK(contains(loc.detail, "count 2.5 is not an integer"));
    CHECK(contains(loc.detail, "DIRMN_COUNTS_REAL_VALUED"));

    // CSC input (as R's dgCMatrix): the row and column of the table, not of
    // the compressed arrays.
    const int32_t ptr[] = {0, 1, 2, 2, 3};  // columns 0, 1, 3 hold one entry each
    const int32_t rows_of[] = {2, 0, 1};
    const double vals[] = {1, 3, -2};
    REQUIRE(dirmn_counts_create_sparse(ctx.get(), &c, DIRMN_CSC, 3, 4, 3, DIRMN_INDEX_INT32, ptr,
                                       rows_of, DIRMN_FLOAT64, vals, nullptr) ==
            DIRMN_ERROR_INVALID_COUNTS);
    loc = location_of(ctx.get());
    CHECK(loc.row == 1);
    CHECK(loc.column == 3);
    CHECK(loc.value == -2.0);
  }
}

TEST_CASE("a bad parameter's location is its vector or row and its index", "[api][errors]") {
  for (dirmn_backend be : backends_under_test()) {
    INFO("backend " << backend_name(be));
    Context ctx = make_context(be);
    REQUIRE(ctx);
    const std::vector<double> x = {1, 0, 2, 3, 0, 0, 1, 1, 4, 7, 0, 2};
    Counts c = make_dense(ctx.get(), x, 3, 4);
    REQUIRE(c);
    std::vector<double> out(6);
    // Two shared vectors, vector-major; vector 1, index 2 is NaN.
    std::vector<double> a(8, 1.0);
    a[6] = std::nan("");
    REQUIRE(dirmn_loglik(ctx.get(), c.get(), 2, a.data(), 4, 1, DIRMN_PARAM_ALPHA, DIRMN_KERNEL, out.data(), 2,
                         1) == DIRMN_ERROR_INVALID_PARAMETER);
    dirmn_error_location loc = location_of(ctx.get());
    CHECK(std::string(loc.argument) == "params");
    CHECK(loc.vector == 1);
    CHECK(loc.index == 2);
    CHECK(loc.row == -1);
    CHECK(loc.column == -1);
    CHECK(loc.has_value == 1);
    CHECK(std::isnan(loc.value));
    CHECK(std::string(loc.detail) == "alpha NaN is NaN");
    CHECK(contains(dirmn_last_error(ctx.get()), "vector 1, index 2 (0-based): alpha NaN is NaN"));

    // One vector per row: row 2, index 3 is zero.
    std::vector<double> per_row(12, 1.0);
    per_row[11] = 0.0;
    REQUIRE(dirmn_loglik_rowwise(ctx.get(), c.get(), per_row.data(), 4, 1, DIRMN_PARAM_ALPHA, DIRMN_KERNEL,
                                 out.data(), 1) == DIRMN_ERROR_INVALID_PARAMETER);
    loc = location_of(ctx.get());
    CHECK(loc.row == 2);
    CHECK(loc.index == 3);
    CHECK(loc.vector == -1);
    CHECK(std::string(loc.detail) == "alpha 0 is not positive");
    check_detail_ends_message(ctx.get(), loc);

    // A vector whose sum overflows: the vector alone, no value.
    std::vector<double> big(4, 1e308);
    REQUIRE(dirmn_loglik(ctx.get(), c.get(), 1, big.data(), 4, 1, DIRMN_PARAM_ALPHA, DIRMN_KERNEL, out.data(), 1,
                         1) == DIRMN_ERROR_INVALID_PARAMETER);
    loc = location_of(ctx.get());
    CHECK(loc.vector == 0);
    CHECK(loc.index == -1);
    CHECK(loc.has_value == 0);
    CHECK(std::string(loc.detail) == "the sum of alpha overflows");

    // log alpha too large for exp.
    std::vector<double> la(4, 0.0);
    la[1] = 800.0;
    REQUIRE(dirmn_loglik(ctx.get(), c.get(), 1, la.data(), 4, 1, DIRMN_PARAM_LOG_ALPHA, DIRMN_KERNEL,
                         out.data(), 1, 1) == DIRMN_ERROR_INVALID_PARAMETER);
    loc = location_of(ctx.get());
    CHECK(loc.vector == 0);
    CHECK(loc.index == 1);
    CHECK(loc.value == 800.0);
    CHECK(contains(loc.detail, "log alpha 800 is too large"));
  }
}

TEST_CASE("row weights, starts and sparse structure have their own locations", "[api][errors]") {
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  const std::vector<double> x = {1, 0, 2, 3, 0, 0, 1, 1, 4, 7, 0, 2};
  Counts c = make_dense(ctx.get(), x, 3, 4);
  REQUIRE(c);
  const std::vector<double> ones(4, 1.0);
  const std::vector<double> w = {1.0, -0.5, 1.0};
  double value = 0.0;
  REQUIRE(dirmn_loglik_sum(ctx.get(), c.get(), ones.data(), 1, DIRMN_PARAM_ALPHA, w.data(), DIRMN_KERNEL,
                           &value, nullptr, nullptr, nullptr) == DIRMN_ERROR_INVALID_PARAMETER);
  dirmn_error_location loc = location_of(ctx.get());
  CHECK(std::string(loc.argument) == "weights");
  CHECK(loc.row == 1);
  CHECK(loc.column == -1);
  CHECK(loc.value == -0.5);
  check_detail_ends_message(ctx.get(), loc);

  dirmn_fit_options o;
  dirmn_fit_options_init(&o);
  const std::vector<double> start = {1.0, 2.0, -3.0, 1.0};
  o.start = start.data();
  std::vector<double> alpha(4);
  dirmn_fit_result r;
  r.size = sizeof r;
  r.alpha = alpha.data();
  r.std_error_alpha = nullptr;
  r.std_error_log_alpha = nullptr;
  REQUIRE(dirmn_fit(ctx.get(), c.get(), &o, &r) == DIRMN_ERROR_INVALID_PARAMETER);
  loc = location_of(ctx.get());
  CHECK(std::string(loc.argument) == "start");
  CHECK(loc.index == 2);
  CHECK(loc.value == -3.0);
  CHECK(contains(dirmn_last_error(ctx.get()), "start index 2 (0-based)"));

  // CSR: entry 2's column index 9 is outside the 4 columns.
  const int64_t ptr[] = {0, 2, 3, 4};
  const int64_t cols_of[] = {0, 1, 9, 3};
  const double vals[] = {1, 2, 3, 4};
  dirmn_counts* s = nullptr;
  REQUIRE(dirmn_counts_create_sparse(ctx.get(), &s, DIRMN_CSR, 3, 4, 4, DIRMN_INDEX_INT64, ptr,
                                     cols_of, DIRMN_FLOAT64, vals, nullptr) ==
          DIRMN_ERROR_INVALID_ARGUMENT);
  loc = location_of(ctx.get());
  CHECK(std::string(loc.argument) == "indices");
  CHECK(loc.index == 2);
  CHECK(loc.row == 1);
  CHECK(loc.value == 9.0);
  CHECK(contains(dirmn_last_error(ctx.get()), "entry 2 (row 1): column index 9 is outside [0, 4)"));

  // A pointer array that goes back.
  const int64_t bad_ptr[] = {0, 3, 2, 4};
  REQUIRE(dirmn_counts_create_sparse(ctx.get(), &s, DIRMN_CSR, 3, 4, 4, DIRMN_INDEX_INT64, bad_ptr,
                                     cols_of, DIRMN_FLOAT64, vals, nullptr) ==
          DIRMN_ERROR_INVALID_ARGUMENT);
  loc = location_of(ctx.get());
  CHECK(std::string(loc.argument) == "ptr");
  CHECK(loc.index == 2);
  CHECK(loc.value == 2.0);
  CHECK(contains(dirmn_last_error(ctx.get()), "ptr[2] = 2 is below ptr[1] = 3"));

  // Counting from 1 (DIRMN_COUNTS_ONE_BASED): positions stay 0-based, values
  // are the caller's, bounds in its numbering.
  dirmn_counts_options one;
  dirmn_counts_options_init(&one);
  one.flags = DIRMN_COUNTS_ONE_BASED;
  const int32_t ptr1[] = {1, 3, 4, 5};
  const int32_t cols1[] = {1, 2, 5, 4};
  const int32_t counts1[] = {1, 2, 3, 4};
  REQUIRE(dirmn_counts_create_sparse(ctx.get(), &s, DIRMN_CSR, 3, 4, 4, DIRMN_INDEX_INT32, ptr1,
                                     cols1, DIRMN_INT32, counts1, &one) ==
          DIRMN_ERROR_INVALID_ARGUMENT);
  loc = location_of(ctx.get());
  CHECK(std::string(loc.argument) == "indices");
  CHECK(loc.index == 2);
  CHECK(loc.row == 1);
  CHECK(loc.value == 5.0);
  CHECK(contains(dirmn_last_error(ctx.get()), "entry 2 (row 1): column index 5 is outside [1, 4]"));
  const int32_t zero_start[] = {0, 2, 3, 4};
  REQUIRE(dirmn_counts_create_sparse(ctx.get(), &s, DIRMN_CSR, 3, 4, 4, DIRMN_INDEX_INT32,
                                     zero_start, cols1, DIRMN_INT32, counts1, &one) ==
          DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(contains(dirmn_last_error(ctx.get()), "ptr[0] is 0, expected 1"));
  const int32_t short_end[] = {1, 3, 4, 4};
  REQUIRE(dirmn_counts_create_sparse(ctx.get(), &s, DIRMN_CSR, 3, 4, 4, DIRMN_INDEX_INT32,
                                     short_end, cols1, DIRMN_INT32, counts1, &one) ==
          DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(contains(dirmn_last_error(ctx.get()), "ptr[3] is 4, expected nnz + 1 = 5"));
  CHECK(s == nullptr);
}

TEST_CASE("the location follows the last call, and asking does not change it", "[api][errors]") {
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  const std::vector<double> x = {1, -1};
  dirmn_counts* c = nullptr;
  REQUIRE(dirmn_counts_create_dense(ctx.get(), &c, 1, 2, DIRMN_FLOAT64, x.data(), 2, 1, nullptr) ==
          DIRMN_ERROR_INVALID_COUNTS);
  const std::string msg = dirmn_last_error(ctx.get());
  // Refused queries record nothing: the message and location stay.
  dirmn_error_location small;
  small.size = 4;
  CHECK(dirmn_last_error_location(ctx.get(), &small) == DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(dirmn_last_error_location(ctx.get(), nullptr) == DIRMN_ERROR_NULL_POINTER);
  CHECK(msg == dirmn_last_error(ctx.get()));
  CHECK(location_of(ctx.get()).column == 1);
  // A failure without a position: every position -1, the detail the
  // message without its function.
  REQUIRE(dirmn_context_set_threads(ctx.get(), -3) == DIRMN_ERROR_INVALID_ARGUMENT);
  dirmn_error_location loc = location_of(ctx.get());
  CHECK(loc.row == -1);
  CHECK(loc.column == -1);
  CHECK(loc.vector == -1);
  CHECK(loc.index == -1);
  CHECK(loc.has_value == 0);
  CHECK(std::string(loc.argument).empty());
  CHECK(std::string(loc.detail) == "threads (-3) is negative");
  CHECK(std::string(dirmn_last_error(ctx.get())) == "dirmn_context_set_threads: threads (-3) is negative");
  // A success clears both.
  REQUIRE(dirmn_context_set_threads(ctx.get(), 1) == DIRMN_SUCCESS);
  loc = location_of(ctx.get());
  CHECK(loc.row == -1);
  CHECK(std::string(loc.detail).empty());
  // Failures before a context exists: the thread's slot, which the device
  // query leaves alone where it succeeds (it is a question, and a caller
  // may ask it before reading why a context could not be made).
  dirmn_context* none = nullptr;
  REQUIRE(dirmn_context_create(&none, static_cast<dirmn_backend>(7), 0) ==
          DIRMN_ERROR_INVALID_ARGUMENT);
  int devices = -1;
  if (dirmn_cuda_device_count(&devices) == DIRMN_SUCCESS)
    CHECK(std::string(location_of(nullptr).detail) == "unknown backend 7");
  else
    CHECK(std::string(location_of(nullptr).detail) == "dirmn was built without CUDA");
  // An older caller's smaller struct: fields beyond its size untouched.
  dirmn_error_location older;
  std::memset(&older, 0x11, sizeof older);
  older.size = offsetof(dirmn_error_location, row) + sizeof(int64_t);
  REQUIRE(dirmn_last_error_location(nullptr, &older) == DIRMN_SUCCESS);
  CHECK(older.row == -1);
  int64_t untouched;
  std::memset(&untouched, 0x11, sizeof untouched);
  CHECK(std::memcmp(&older.column, &untouched, sizeof untouched) == 0);
}

TEST_CASE("a failure inside a range of mixtures keeps the location of the k that failed",
          "[api][errors][mixture]") {
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  const std::vector<double> x = {1, 0, 2, 3, 0, 1, 1, 1, 4, 7, 0, 2, 5, 5, 0, 0};
  Counts c = make_dense(ctx.get(), x, 4, 4);
  REQUIRE(c);
  dirmn_mixture_options o;
  dirmn_mixture_options_init(&o);
  const std::vector<double> w = {1.0, 1.0, std::numeric_limits<double>::infinity(), 1.0};
  o.weights = w.data();
  dirmn_mixture* m[2] = {nullptr, nullptr};
  REQUIRE(dirmn_mixture_fit_range(ctx.get(), c.get(), 1, 2, &o, m) == DIRMN_ERROR_INVALID_PARAMETER);
  const std::string msg = dirmn_last_error(ctx.get());
  INFO(msg);
  CHECK(msg.rfind("dirmn_mixture_fit_range: k = 1: dirmn_mixture_fit: row 2 (0-based): ", 0) == 0);
  const dirmn_error_location loc = location_of(ctx.get());
  CHECK(std::string(loc.argument) == "weights");
  CHECK(loc.row == 2);
  CHECK(std::isinf(loc.value));
  check_detail_ends_message(ctx.get(), loc);
}
