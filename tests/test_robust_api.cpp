// test_robust_api.cpp: the C ABI's promises at its edges -- every extent
// checked in bytes before an offset is formed (strides near 2^61 and 2^62,
// pointers near the end of the address space), integer values reported as
// the caller wrote them, loading that the interrupt callback stops at once
// and part-way, and handles destroyed from a callback or another thread.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "support.hpp"

using namespace dirmn_test;

namespace {

bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

dirmn_error_location location_of(const dirmn_context* ctx) {
  dirmn_error_location loc;
  std::memset(&loc, 0, sizeof loc);
  loc.size = sizeof loc;
  REQUIRE(dirmn_last_error_location(ctx, &loc) == DIRMN_SUCCESS);
  return loc;
}

// An address this close to the end of the address space: never read (the
// checks refuse it first), only compared.
const void* near_the_end(size_t bytes_left) {
  return reinterpret_cast<const void*>(std::numeric_limits<uintptr_t>::max() - bytes_left);
}

}  // namespace

TEST_CASE("strides and extents are checked in bytes: OVERFLOW, not memory never passed",
          "[api][robust]") {
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  const int64_t rows = 3, cols = 4;
  const std::vector<double> x = {1, 0, 2, 3, 0, 1, 1, 1, 4, 2, 0, 2};
  Counts c = counts_of(ctx.get(), x, rows, cols);
  const std::vector<double> alpha = {0.5, 1.0, 2.0, 0.25};
  const int64_t big61 = int64_t{1} << 61, big62 = int64_t{1} << 62;

  // dirmn_loglik_sum's params stride: (V - 1) x 2^61 elements of 8 bytes.
  for (int64_t stride : {big61, big62}) {
    double value = 7.0;
    CHECK(dirmn_loglik_sum(ctx.get(), c.get(), alpha.data(), stride, DIRMN_PARAM_ALPHA, nullptr, DIRMN_KERNEL,
                           &value, nullptr, nullptr, nullptr) == DIRMN_ERROR_OVERFLOW);
    CHECK(value == 7.0);
    CHECK(contains(last_error(ctx), "params: a 1 x 4 array of 8-byte elements"));
  }
  // int64 counts whose row stride of 2^61 elements is 2^64 bytes: the
  // offset would wrap to the base pointer itself.
  const std::vector<int64_t> xi = {1, 2, 3, 4};
  dirmn_counts* made = nullptr;
  CHECK(dirmn_counts_create_dense(ctx.get(), &made, 2, 2, DIRMN_INT64, xi.data(), big61, 1,
                                  nullptr) == DIRMN_ERROR_OVERFLOW);
  CHECK(made == nullptr);
  CHECK(contains(last_error(ctx), "data: a 2 x 2 array of 8-byte elements at strides (2305843009213693952, 1)"));
  // A small array at the very end of the address space wraps past it.
  CHECK(dirmn_counts_create_dense(ctx.get(), &made, 2, 2, DIRMN_INT32, near_the_end(8), 2, 1,
                                  nullptr) == DIRMN_ERROR_OVERFLOW);
  CHECK(made == nullptr);
  const int32_t ptr[2] = {0, 1};
  CHECK(dirmn_counts_create_sparse(ctx.get(), &made, DIRMN_CSR, 1, 4, 1, DIRMN_INDEX_INT32, ptr,
                                   near_the_end(2), DIRMN_FLOAT64, x.data(), nullptr) ==
        DIRMN_ERROR_OVERFLOW);
  CHECK(contains(last_error(ctx), "indices: 1 elements of 4 bytes"));
  CHECK(made == nullptr);

  // Outputs: an extent past a pointer's reach is OVERFLOW, an overlap is
  // INVALID_ARGUMENT, each said so.
  std::vector<double> out(16, 7.0);
  CHECK(dirmn_loglik(ctx.get(), c.get(), 1, alpha.data(), 0, 1, DIRMN_PARAM_ALPHA, DIRMN_KERNEL, out.data(),
                     big62, 1) == DIRMN_ERROR_OVERFLOW);
  CHECK(contains(last_error(ctx), "out: a 3 x 1 array of 8-byte elements"));
  std::vector<double> rowwise(12);  // alpha on every row, and two vectors of it
  for (int64_t b = 0; b < rows; ++b)
    for (int64_t v = 0; v < cols; ++v) rowwise[static_cast<size_t>(b * cols + v)] = alpha[static_cast<size_t>(v)];
  CHECK(dirmn_loglik(ctx.get(), c.get(), 2, rowwise.data(), cols, 1, DIRMN_PARAM_ALPHA, DIRMN_KERNEL,
                     out.data(), 1, 1) == DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(contains(last_error(ctx), "out: strides (1, 1) for 3 x 2 results overlap"));
  CHECK(dirmn_loglik_rowwise(ctx.get(), c.get(), rowwise.data(), cols, 1, DIRMN_PARAM_ALPHA, DIRMN_KERNEL,
                             out.data(), big61) == DIRMN_ERROR_OVERFLOW);
  CHECK(contains(last_error(ctx), "out: a 3 x 1 array"));
  CHECK(dirmn_loglik_rowwise_derivatives(ctx.get(), c.get(), rowwise.data(), cols, 1,
                                         DIRMN_PARAM_ALPHA, DIRMN_KERNEL, nullptr, out.data(), nullptr,
                                         nullptr, big62, 1) == DIRMN_ERROR_OVERFLOW);
  CHECK(contains(last_error(ctx), "gradient: a 3 x 4 array"));
  CHECK(dirmn_loglik_rowwise_derivatives(ctx.get(), c.get(), rowwise.data(), big61, 1,
                                         DIRMN_PARAM_ALPHA, DIRMN_KERNEL, out.data(), nullptr, nullptr,
                                         nullptr, cols, 1) == DIRMN_ERROR_OVERFLOW);
  for (double v : out) CHECK(v == 7.0);

  // A mixture's parameters and responsibilities through wrapped strides.
  dirmn_mixture* m = nullptr;
  REQUIRE(dirmn_mixture_fit(ctx.get(), c.get(), 1, nullptr, &m) == DIRMN_SUCCESS);
  Mixture owned(m);
  CHECK(dirmn_mixture_get_params(m, out.data(), big62, 1, nullptr) == DIRMN_SUCCESS);  // k = 1
  CHECK(dirmn_mixture_get_params(m, out.data(), 1, big62, nullptr) == DIRMN_ERROR_OVERFLOW);
  CHECK(contains(dirmn_last_error(nullptr), "alpha: a 1 x 4 array of 8-byte elements"));
  CHECK(dirmn_mixture_get_responsibilities(m, out.data(), big61, 1) == DIRMN_ERROR_OVERFLOW);
  CHECK(dirmn_mixture_assign(ctx.get(), m, c.get(), out.data(), big62, 1) == DIRMN_ERROR_OVERFLOW);
  // The fit's arrays, and weights near the end of the address space.
  dirmn_fit_result r;
  std::memset(&r, 0, sizeof r);
  r.size = sizeof r;
  r.alpha = const_cast<double*>(static_cast<const double*>(near_the_end(16)));
  CHECK(dirmn_fit(ctx.get(), c.get(), nullptr, &r) == DIRMN_ERROR_OVERFLOW);
  CHECK(contains(last_error(ctx), "result->alpha: 4 elements of 8 bytes"));
  double value = 0;
  CHECK(dirmn_loglik_sum(ctx.get(), c.get(), alpha.data(), 1, DIRMN_PARAM_ALPHA,
                         static_cast<const double*>(near_the_end(8)), DIRMN_KERNEL, &value, nullptr, nullptr,
                         nullptr) == DIRMN_ERROR_OVERFLOW);
  CHECK(contains(last_error(ctx), "weights: 3 elements"));
}

TEST_CASE("integer counts and indices are reported exactly", "[api][errors][robust]") {
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  const int64_t above = (int64_t{1} << 53) + 1;  // a double would read 2^53
  const int64_t top = std::numeric_limits<int64_t>::max();
  for (int64_t bad : {above, top, int64_t{-9007199254740993}}) {
    INFO(bad);
    const std::vector<int64_t> x = {1, 2, bad, 4};
    dirmn_counts* c = nullptr;
    REQUIRE(dirmn_counts_create_dense(ctx.get(), &c, 2, 2, DIRMN_INT64, x.data(), 2, 1, nullptr) ==
            DIRMN_ERROR_INVALID_COUNTS);
    const std::string text = "count " + std::to_string(bad);
    CHECK(contains(last_error(ctx), text.c_str()));
    dirmn_error_location loc = location_of(ctx.get());
    CHECK(loc.has_integer_value == 1);
    CHECK(loc.integer_value == bad);
    CHECK(loc.has_value == 1);
    CHECK(loc.value == static_cast<double>(bad));
    CHECK(loc.row == 1);
    CHECK(loc.column == 0);
    // The same value through a CSR table.
    const int64_t ptr[3] = {0, 1, 2}, idx[2] = {0, 1};
    const int64_t vals[2] = {3, bad};
    REQUIRE(dirmn_counts_create_sparse(ctx.get(), &c, DIRMN_CSR, 2, 2, 2, DIRMN_INDEX_INT64, ptr,
                                       idx, DIRMN_INT64, vals, nullptr) == DIRMN_ERROR_INVALID_COUNTS);
    CHECK(contains(last_error(ctx), text.c_str()));
    loc = location_of(ctx.get());
    CHECK(loc.integer_value == bad);
    CHECK(loc.row == 1);
    CHECK(loc.column == 1);
  }
  // A pointer entry beyond a double's integers.
  const int64_t ptr[3] = {0, above, 2}, idx[2] = {0, 1};
  const double vals[2] = {1, 1};
  dirmn_counts* c = nullptr;
  REQUIRE(dirmn_counts_create_sparse(ctx.get(), &c, DIRMN_CSR, 2, 2, 2, DIRMN_INDEX_INT64, ptr, idx,
                                     DIRMN_FLOAT64, vals, nullptr) == DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(contains(last_error(ctx), "ptr[1] = 9007199254740993"));
  const dirmn_error_location loc = location_of(ctx.get());
  CHECK(loc.has_integer_value == 1);
  CHECK(loc.integer_value == above);
  // Doubles in the fewest digits that read back.
  {
    Counts ok = counts_of(ctx.get(), {1, 2, 3, 4}, 2, 2);
    const double bad_alpha[2] = {-0.1, 1.0};
    double out[2];
    REQUIRE(dirmn_loglik(ctx.get(), ok.get(), 1, bad_alpha, 0, 1, DIRMN_PARAM_ALPHA, DIRMN_KERNEL, out, 1, 1) ==
            DIRMN_ERROR_INVALID_PARAMETER);
    CHECK(contains(last_error(ctx), "alpha -0.1 is not positive"));
    const double third[2] = {1.0 / 3.0, -1e300};
    REQUIRE(dirmn_loglik(ctx.get(), ok.get(), 1, third, 0, 1, DIRMN_PARAM_ALPHA, DIRMN_KERNEL, out, 1, 1) ==
            DIRMN_ERROR_INVALID_PARAMETER);
    CHECK(contains(last_error(ctx), "alpha -1e+300 is not positive"));
  }
  // Doubles stay doubles.
  const std::vector<double> xd = {1, -2.5, 0, 1};
  REQUIRE(dirmn_counts_create_dense(ctx.get(), &c, 2, 2, DIRMN_FLOAT64, xd.data(), 2, 1, nullptr) ==
          DIRMN_ERROR_INVALID_COUNTS);
  CHECK(location_of(ctx.get()).has_integer_value == 0);
}

namespace {

struct PollCount {
  int polls = 0;
  int stop_at = 0;  // the poll that asks to stop (1: the first)
};

int count_polls(void* p) {
  auto* s = static_cast<PollCount*>(p);
  return ++s->polls >= s->stop_at ? 1 : 0;
}

}  // namespace

TEST_CASE("loading a table polls the interrupt callback, at once and part-way",
          "[api][counts][robust]") {
  for (dirmn_backend be : backends_under_test()) {
    INFO(backend_name(be));
    Context ctx = make_context(be);
    REQUIRE(ctx);
    REQUIRE(dirmn_context_set_threads(ctx.get(), 2) == DIRMN_SUCCESS);
    // 16 M cells of int32 (64 MB): several row blocks.
    const int64_t rows = 4096, cols = 4096;
    std::vector<int32_t> x(static_cast<size_t>(rows * cols));
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int32_t>((i * 2654435761u) % 5 == 0 ? 1 + i % 299 : 0);
    // CSR of the same table.
    std::vector<int64_t> ptr(1, 0), idx;
    std::vector<int32_t> vals;
    for (int64_t b = 0; b < rows; ++b) {
      for (int64_t v = 0; v < cols; ++v)
        if (int32_t n = x[static_cast<size_t>(b * cols + v)]) {
          idx.push_back(v);
          vals.push_back(n);
        }
      ptr.push_back(static_cast<int64_t>(idx.size()));
    }
    REQUIRE(idx.size() > (size_t{3} << 20));
    // The same cells below 256: the one-pass 8-bit path.
    std::vector<int32_t> x8(x);
    for (int32_t& n : x8) n %= 256;
    const auto dense = [&](dirmn_counts** out) {
      return dirmn_counts_create_dense(ctx.get(), out, rows, cols, DIRMN_INT32, x.data(), cols, 1, nullptr);
    };
    const auto dense8 = [&](dirmn_counts** out) {
      return dirmn_counts_create_dense(ctx.get(), out, rows, cols, DIRMN_INT32, x8.data(), cols, 1, nullptr);
    };
    const auto sparse = [&](dirmn_counts** out) {
      return dirmn_counts_create_sparse(ctx.get(), out, DIRMN_CSR, rows, cols,
                                        static_cast<int64_t>(idx.size()), DIRMN_INDEX_INT64,
                                        ptr.data(), idx.data(), DIRMN_INT32, vals.data(), nullptr);
    };
    const auto load = [&](int form, dirmn_counts** out) {
      return form == 0 ? dense(out) : form == 1 ? dense8(out) : sparse(out);
    };
    for (int form = 0; form < 3; ++form) {
      INFO((form == 0 ? "dense" : form == 1 ? "dense, 8-bit" : "sparse"));
      for (int stop_at : {1, 3}) {
        INFO("stop at poll " << stop_at);
        PollCount pc;
        pc.stop_at = stop_at;
        REQUIRE(dirmn_context_set_interrupt(ctx.get(), count_polls, &pc) == DIRMN_SUCCESS);
        dirmn_counts* sentinel = reinterpret_cast<dirmn_counts*>(&pc);
        dirmn_counts* out = sentinel;
        CHECK(load(form, &out) == DIRMN_ERROR_CANCELLED);
        CHECK(out == sentinel);  // untouched
        CHECK(pc.polls == stop_at);
        CHECK(contains(last_error(ctx), "cancelled by the interrupt callback while the table was loaded"));
      }
      // Never asked to stop: loaded, after polling more than once.
      PollCount pc;
      pc.stop_at = std::numeric_limits<int>::max();
      REQUIRE(dirmn_context_set_interrupt(ctx.get(), count_polls, &pc) == DIRMN_SUCCESS);
      dirmn_counts* out = nullptr;
      REQUIRE(load(form, &out) == DIRMN_SUCCESS);
      Counts owned(out);
      CHECK(pc.polls >= 3);
      REQUIRE(dirmn_context_set_interrupt(ctx.get(), nullptr, nullptr) == DIRMN_SUCCESS);
    }
  }
}

namespace {

// A progress callback that destroys what it is given: the counts the fit
// is using and a mixture of the same context.
struct Doomed {
  dirmn_counts* counts = nullptr;
  dirmn_mixture* mixture = nullptr;
  dirmn_context* ctx = nullptr;
  bool done = false;
};

int destroy_from_progress(int, double, double, void* p) {
  auto* d = static_cast<Doomed*>(p);
  if (d->done) return 0;
  d->done = true;
  dirmn_counts_destroy(d->counts);
  dirmn_mixture_destroy(d->mixture);
  dirmn_context_destroy(d->ctx);  // kept: the call holds it
  return 0;
}

}  // namespace

TEST_CASE("handles destroyed from a callback are freed when the call returns",
          "[api][context][robust]") {
  const int64_t rows = 60, cols = 5;
  const auto x = simulate_dm(rows, {0.8, 0.4, 1.5, 0.3, 0.9}, 40, 31);
  dirmn_context* ctx = nullptr;
  REQUIRE(dirmn_context_create(&ctx, DIRMN_BACKEND_CPU, 0) == DIRMN_SUCCESS);
  Context owned_ctx(ctx);
  dirmn_counts* c = counts_of(ctx, x, rows, cols).release();
  Counts reference = counts_of(ctx, x, rows, cols);
  dirmn_mixture* m = nullptr;
  REQUIRE(dirmn_mixture_fit(ctx, reference.get(), 2, nullptr, &m) == DIRMN_SUCCESS);
  // The fit on the counts being destroyed finishes on them, with the
  // reference's answer; a leak or an early free fails the sanitizer run.
  Doomed d{c, m, ctx, false};
  std::vector<double> a(static_cast<size_t>(cols)), want(static_cast<size_t>(cols));
  dirmn_fit_options o;
  dirmn_fit_options_init(&o);
  o.progress = destroy_from_progress;
  o.progress_data = &d;
  dirmn_fit_result r;
  std::memset(&r, 0, sizeof r);
  r.size = sizeof r;
  r.alpha = a.data();
  REQUIRE(dirmn_fit(ctx, c, &o, &r) == DIRMN_SUCCESS);
  CHECK(d.done);
  CHECK(contains(dirmn_last_error(nullptr), "dirmn_context_destroy: called from a callback"));
  r.alpha = want.data();
  REQUIRE(dirmn_fit(ctx, reference.get(), nullptr, &r) == DIRMN_SUCCESS);  // the context lives
  CHECK(a == want);
}

namespace {

struct Holder {
  std::atomic<bool> inside{false}, release{false};
};

int hold(void* p) {
  auto* h = static_cast<Holder*>(p);
  h->inside = true;
  while (!h->release) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return 0;
}

double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

}  // namespace

TEST_CASE("a destroy on another thread sleeps until the call returns", "[api][context][robust]") {
  const int64_t rows = 200, cols = 4;
  const auto x = random_table(rows, cols, 0.2, 9, 63);
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  Counts c = make_dense(ctx.get(), x, rows, cols);
  dirmn_counts* other = make_dense(ctx.get(), x, rows, cols).release();
  Holder h;
  REQUIRE(dirmn_context_set_interrupt(ctx.get(), hold, &h) == DIRMN_SUCCESS);
  const std::vector<double> alpha = {0.5, 1.5, 2.0, 3.0};
  std::vector<double> out(static_cast<size_t>(rows));
  dirmn_status a_status = DIRMN_ERROR_INTERNAL;
  std::thread a([&] {
    a_status = dirmn_loglik(ctx.get(), c.get(), 1, alpha.data(), 0, 1, DIRMN_PARAM_ALPHA, DIRMN_KERNEL,
                            out.data(), 1, 1);
  });
  while (!h.inside) std::this_thread::yield();
  std::atomic<bool> destroyed{false};
  double cpu = 0.0;
  std::thread b([&] {
    const double t0 = thread_cpu_seconds();
    dirmn_counts_destroy(other);
    cpu = thread_cpu_seconds() - t0;
    destroyed = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  CHECK_FALSE(destroyed);  // still waiting for A's call
  h.release = true;
  a.join();
  b.join();
  CHECK(a_status == DIRMN_SUCCESS);
  CHECK(destroyed);
  // A spinning wait burns about the 300 ms it waited; a sleeping one next
  // to nothing.
  CHECK(cpu < 0.05);
}

TEST_CASE("an options size that ends inside a field leaves that field at its default",
          "[api][robust]") {
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  const auto x = simulate_dm(30, {0.8, 0.4, 1.5, 0.3}, 20, 41);
  Counts c = counts_of(ctx.get(), x, 30, 4);
  std::vector<double> want(4), got(4);
  dirmn_fit_result r;
  std::memset(&r, 0, sizeof r);
  r.size = sizeof r;
  r.alpha = want.data();
  REQUIRE(dirmn_fit(ctx.get(), c.get(), nullptr, &r) == DIRMN_SUCCESS);
  // Half of `start` inside the size: its low bytes alone would make a
  // pointer to memory never passed.
  dirmn_fit_options o;
  dirmn_fit_options_init(&o);
  o.start = static_cast<const double*>(near_the_end(64));
  o.size = offsetof(dirmn_fit_options, start) + 4;
  r.alpha = got.data();
  REQUIRE(dirmn_fit(ctx.get(), c.get(), &o, &r) == DIRMN_SUCCESS);
  CHECK(got == want);
  // The same for a mixture's weights.
  dirmn_mixture_options mo;
  dirmn_mixture_options_init(&mo);
  mo.weights = static_cast<const double*>(near_the_end(64));
  mo.size = offsetof(dirmn_mixture_options, weights) + 2;
  dirmn_mixture* m = nullptr;
  REQUIRE(dirmn_mixture_fit(ctx.get(), c.get(), 2, &mo, &m) == DIRMN_SUCCESS);
  dirmn_mixture_destroy(m);
}
