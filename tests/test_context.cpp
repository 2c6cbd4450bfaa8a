// test_context.cpp: version and status strings, and contexts: creation on
// each backend, threads, precision, streams (a caller's CUDA stream
// included), interrupts, concurrency across contexts, and which counts a
// context may use. A context's settings must not change its results, so
// the references are the long-double lgamma formula (support.hpp), the same
// call under other settings, and for a CUDA context the CPU backend;
// failures are checked for the status and message a caller gets, and for
// outputs left alone; a context shared by two threads answers the second
// with CONTEXT_IN_USE. ctest runs the [cuda] cases behind --require-cuda,
// which reports them as skipped where no device exists.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cuda_support.hpp"
#include "support.hpp"

using namespace dirmn_test;

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
                              DIRMN_ERROR_CONTEXT_IN_USE,
                              DIRMN_ERROR_COMMUNICATION,
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
  CHECK(DIRMN_ERROR_CONTEXT_IN_USE == 13);
  CHECK(DIRMN_ERROR_COMMUNICATION == 14);
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

#if defined(DIRMN_TEST_CUDA)

TEST_CASE("cuda: the caller's stream is used, reported and released", "[cuda]") {
  if (!dirmn_test::cuda_device_present()) return;
  Context gpu = make(DIRMN_BACKEND_CUDA);
  void* own = nullptr;
  REQUIRE(dirmn_context_get_stream(gpu.get(), &own) == DIRMN_SUCCESS);
  CHECK(own != nullptr);
  cudaStream_t s = nullptr;
  REQUIRE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
  REQUIRE(dirmn_context_set_stream(gpu.get(), s) == DIRMN_SUCCESS);
  void* got = nullptr;
  REQUIRE(dirmn_context_get_stream(gpu.get(), &got) == DIRMN_SUCCESS);
  CHECK(got == static_cast<void*>(s));

  std::mt19937_64 rng(13);
  const Table t = random_table(rng, 500, 33, 9.0, 0.3);
  Counts c = dense_counts(gpu.get(), t, DIRMN_STORAGE_AUTO);
  const std::vector<double> alpha = random_alpha(rng, 1, 33, 0.5, 2.0);
  const std::vector<double> want = loglik(gpu.get(), c.get(), 500, 1, alpha, 33);
  DeviceArray<double> d(500);
  // Work the caller queued first (poisoning the output) is ordered before
  // dirmn's on the same stream.
  REQUIRE(cudaMemsetAsync(d.p, 0xff, 500 * sizeof(double), s) == cudaSuccess);
  REQUIRE(dirmn_loglik(gpu.get(), c.get(), 1, alpha.data(), 33, 1, DIRMN_PARAM_ALPHA,
                       DIRMN_KERNEL | DIRMN_OUTPUT_DEVICE | DIRMN_ASYNC, d.p, 1, 1) == DIRMN_SUCCESS);
  REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
  CHECK(d.to_host() == want);

  REQUIRE(dirmn_context_set_stream(gpu.get(), nullptr) == DIRMN_SUCCESS);
  REQUIRE(dirmn_context_get_stream(gpu.get(), &got) == DIRMN_SUCCESS);
  CHECK(got == own);
  REQUIRE(cudaStreamDestroy(s) == cudaSuccess);
  CHECK(loglik(gpu.get(), c.get(), 500, 1, alpha, 33) == want);

  Context cpu = make(DIRMN_BACKEND_CPU);
  CHECK(dirmn_context_set_stream(cpu.get(), nullptr) == DIRMN_ERROR_NOT_SUPPORTED);
  CHECK(dirmn_context_get_stream(cpu.get(), &got) == DIRMN_ERROR_NOT_SUPPORTED);
}

#endif  // DIRMN_TEST_CUDA

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
            dirmn_loglik(ctx, c, 1, alpha.data(), 0, 1, DIRMN_PARAM_ALPHA, DIRMN_KERNEL, out.data(), 1, 1) !=
                DIRMN_SUCCESS)
          ++failures;
        for (int64_t b = 0; b < rows; ++b)
          if (!close_to(out[static_cast<size_t>(b)], want[static_cast<size_t>(b)], 1e-12, 1e-10)) ++failures;
        // A failure on this context must not touch another thread's message.
        std::vector<double> bad = alpha;
        bad[static_cast<size_t>(t)] = -1.0;
        if (dirmn_loglik(ctx, c, 1, bad.data(), 0, 1, DIRMN_PARAM_ALPHA, DIRMN_KERNEL, out.data(), 1, 1) !=
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
  CHECK(dirmn_loglik(ctx.get(), c.get(), 1, alpha.data(), 0, 1, DIRMN_PARAM_ALPHA, DIRMN_KERNEL, out.data(), 1,
                     1) == DIRMN_ERROR_CANCELLED);
  CHECK(last_error(ctx).find("cancelled") != std::string::npos);
  CHECK(st.calls == 1);
  for (double v : out) REQUIRE(v == 5.0);
  // A callback that never stops is polled between chunks and the call
  // completes (one thread, so every chunk runs on the polling thread).
  REQUIRE(dirmn_context_set_threads(ctx.get(), 1) == DIRMN_SUCCESS);
  st.calls = 0;
  st.stop_after = 1 << 30;
  REQUIRE(dirmn_loglik(ctx.get(), c.get(), 1, alpha.data(), 0, 1, DIRMN_PARAM_ALPHA, DIRMN_KERNEL, out.data(),
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
  CHECK(dirmn_loglik(b.get(), c.get(), 1, alpha, 0, 1, DIRMN_PARAM_ALPHA, DIRMN_KERNEL, out, 1, 1) ==
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

TEST_CASE("cuda: contexts, counts and backends are not mixed up", "[cuda]") {
  if (!dirmn_test::cuda_device_present()) return;
  Context cpu = make(DIRMN_BACKEND_CPU);
  Context g1 = make(DIRMN_BACKEND_CUDA);
  Context g2 = make(DIRMN_BACKEND_CUDA);
  std::mt19937_64 rng(5);
  const Table t = random_table(rng, 10, 6, 9.0, 0.2);
  Counts c1 = dense_counts(g1.get(), t, DIRMN_STORAGE_AUTO);
  Counts cc = dense_counts(cpu.get(), t, DIRMN_STORAGE_AUTO);
  const std::vector<double> alpha(6, 1.5);
  std::vector<double> out(10, 7.0);
  CHECK(dirmn_loglik(g2.get(), c1.get(), 1, alpha.data(), 6, 1, DIRMN_PARAM_ALPHA, DIRMN_KERNEL, out.data(), 1, 1) ==
        DIRMN_ERROR_WRONG_CONTEXT);
  CHECK(dirmn_loglik(g1.get(), cc.get(), 1, alpha.data(), 6, 1, DIRMN_PARAM_ALPHA, DIRMN_KERNEL, out.data(), 1, 1) ==
        DIRMN_ERROR_WRONG_CONTEXT);
  CHECK(dirmn_loglik(cpu.get(), c1.get(), 1, alpha.data(), 6, 1, DIRMN_PARAM_ALPHA, DIRMN_KERNEL, out.data(), 1, 1) ==
        DIRMN_ERROR_WRONG_CONTEXT);
  CHECK(std::string(dirmn_last_error(cpu.get())).find("another context") != std::string::npos);
  CHECK(out == std::vector<double>(10, 7.0));
  CHECK(dirmn_loglik(cpu.get(), cc.get(), 1, alpha.data(), 6, 1, DIRMN_PARAM_ALPHA,
                     DIRMN_OUTPUT_DEVICE, out.data(), 1, 1) == DIRMN_ERROR_NOT_SUPPORTED);
  // Host output memory passed as device output is refused, not faulted on,
  // and the context keeps working.
  CHECK(dirmn_loglik(g1.get(), c1.get(), 1, alpha.data(), 6, 1, DIRMN_PARAM_ALPHA,
                     DIRMN_OUTPUT_DEVICE, out.data(), 1, 1) == DIRMN_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(dirmn_last_error(g1.get())).find("device memory") != std::string::npos);
  require_close(loglik(g1.get(), c1.get(), 10, 1, alpha, 6), loglik(cpu.get(), cc.get(), 10, 1, alpha, 6), 1e-12);
  // Row totals and info of a CUDA counts object.
  std::vector<double> totals(10, -1.0);
  REQUIRE(dirmn_counts_row_totals(g1.get(), c1.get(), totals.data()) == DIRMN_SUCCESS);
  for (int64_t i = 0; i < 10; ++i) {
    double s = 0.0;
    for (int64_t j = 0; j < 6; ++j) s += t.at(i, j);
    CHECK(totals[static_cast<size_t>(i)] == s);
  }
  const dirmn_counts_info info = info_of(c1.get());
  CHECK(info.backend == DIRMN_BACKEND_CUDA);
  CHECK(info.device == 0);
  // Counts outlive their context.
  g1.reset();
  c1.reset();
}

TEST_CASE("options structs: the init of an older caller's struct writes no more than it had",
          "[api][context]") {
  // A caller built against the first header calls the plain symbols (the
  // macros of this header are bypassed by the parentheses): they fill the
  // struct as that header had it, and not a byte beyond.
  unsigned char buf[sizeof(dirmn_fit_options) + 16];
  std::memset(buf, 0xab, sizeof buf);
  (dirmn_fit_options_init)(reinterpret_cast<dirmn_fit_options*>(buf));
  const size_t first = offsetof(dirmn_fit_options, progress_data) + sizeof(void*);
  dirmn_fit_options seen;
  std::memcpy(&seen, buf, sizeof seen);
  CHECK(seen.size == first);
  CHECK(seen.tolerance == 1e-10);
  CHECK(seen.max_iterations == 1000);
  for (size_t i = first; i < sizeof buf; ++i) CHECK(buf[i] == 0xab);
  // And the library reads such a struct with the later fields' defaults.
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  const std::vector<double> x = {1, 2, 3, 4, 0, 1, 2, 2, 5};
  dirmn_counts* c = nullptr;
  REQUIRE(dirmn_counts_create_dense(ctx.get(), &c, 3, 3, DIRMN_FLOAT64, x.data(), 3, 1, nullptr) ==
          DIRMN_SUCCESS);
  Counts counts(c);
  std::vector<double> a(3);
  dirmn_fit_result r;
  std::memset(&r, 0, sizeof r);
  r.size = sizeof r;
  r.alpha = a.data();
  CHECK(dirmn_fit(ctx.get(), c, reinterpret_cast<dirmn_fit_options*>(buf), &r) == DIRMN_SUCCESS);
  // Sized inits never write past the size given, nor past the library's
  // struct; NULL and sizes that cannot hold the size field are no-ops.
  unsigned char m[sizeof(dirmn_mixture_options) + 8];
  std::memset(m, 0xcd, sizeof m);
  dirmn_mixture_options_init_sized(reinterpret_cast<dirmn_mixture_options*>(m), 20);
  size_t size_field = 0;
  std::memcpy(&size_field, m, sizeof size_field);
  CHECK(size_field == 20);
  for (size_t i = 20; i < sizeof m; ++i) CHECK(m[i] == 0xcd);
  dirmn_mixture_options_init_sized(reinterpret_cast<dirmn_mixture_options*>(m), sizeof m);
  std::memcpy(&size_field, m, sizeof size_field);
  CHECK(size_field == sizeof(dirmn_mixture_options));
  CHECK(m[sizeof m - 1] == 0xcd);
  dirmn_counts_options_init_sized(nullptr, sizeof(dirmn_counts_options));
  dirmn_counts_options co;
  std::memset(&co, 0x7f, sizeof co);
  dirmn_counts_options_init_sized(&co, 4);
  CHECK(co.flags == 0x7f7f7f7fu);
}

namespace {

// Holds thread A inside a call on a context (its interrupt callback's first
// poll) until thread B has tried the same context, and meanwhile makes the
// calls a callback may and may not make on its own context.
struct Rendezvous {
  dirmn_context* ctx = nullptr;
  dirmn_counts* counts = nullptr;
  dirmn_counts* doomed = nullptr;  // destroyed from the callback
  std::atomic<bool> inside{false}, tried{false};
  bool held = false;
  dirmn_status reentrant_loglik = DIRMN_SUCCESS, reentrant_threads = DIRMN_ERROR_INTERNAL,
               reentrant_info = DIRMN_ERROR_INTERNAL;
  std::string reentrant_message;
  int threads_seen = 0;
};

int hold_until_tried(void* p) {
  auto* r = static_cast<Rendezvous*>(p);
  if (r->held) return 0;
  r->held = true;
  double a[4] = {1, 1, 1, 1}, out[2000];
  r->reentrant_loglik =
      dirmn_loglik(r->ctx, r->counts, 1, a, 0, 1, DIRMN_PARAM_ALPHA, DIRMN_KERNEL, out, 1, 1);
  r->reentrant_message = dirmn_last_error(r->ctx);
  r->reentrant_threads = dirmn_context_get_threads(r->ctx, &r->threads_seen);
  dirmn_counts_info info;
  info.size = sizeof info;
  r->reentrant_info = dirmn_counts_get_info(r->counts, &info);
  dirmn_counts_destroy(r->doomed);  // deferred: freed when the call returns
  r->inside = true;
  while (!r->tried) std::this_thread::yield();
  return 0;
}

}  // namespace

TEST_CASE("a context serves one call at a time: another thread gets CONTEXT_IN_USE",
          "[api][context][threads]") {
  const int64_t rows = 2000, cols = 4;
  const auto x = random_table(rows, cols, 0.2, 9, 61);
  const std::vector<double> alpha = {0.5, 1.5, 2.0, 3.0};
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  Counts c = make_dense(ctx.get(), x, rows, cols);
  const std::vector<double> want = loglik(ctx.get(), c.get(), rows, alpha);
  Rendezvous rv;
  rv.ctx = ctx.get();
  rv.counts = c.get();
  rv.doomed = make_dense(ctx.get(), x, rows, cols).release();
  REQUIRE(rv.doomed != nullptr);
  REQUIRE(dirmn_context_set_interrupt(ctx.get(), hold_until_tried, &rv) == DIRMN_SUCCESS);

  std::vector<double> out_a(static_cast<size_t>(rows), 7.0), out_b(static_cast<size_t>(rows), 7.0);
  dirmn_status a_status = DIRMN_ERROR_INTERNAL;
  std::thread a([&] {
    a_status = dirmn_loglik(ctx.get(), c.get(), 1, alpha.data(), 0, 1, DIRMN_PARAM_ALPHA, DIRMN_KERNEL,
                            out_a.data(), 1, 1);
  });
  while (!rv.inside) std::this_thread::yield();
  // Thread B (this one), while A is inside: every call on the context or
  // its counts is refused, its message in the thread's slot.
  const dirmn_status b_status = dirmn_loglik(ctx.get(), c.get(), 1, alpha.data(), 0, 1,
                                             DIRMN_PARAM_ALPHA, DIRMN_KERNEL, out_b.data(), 1, 1);
  const std::string b_message = dirmn_last_error(nullptr);
  int threads = -1;
  const dirmn_status b_threads = dirmn_context_get_threads(ctx.get(), &threads);
  const dirmn_status b_set = dirmn_context_set_threads(ctx.get(), 1);
  dirmn_counts_info info;
  info.size = sizeof info;
  const dirmn_status b_info = dirmn_counts_get_info(c.get(), &info);
  rv.tried = true;
  a.join();

  CHECK(b_status == DIRMN_ERROR_CONTEXT_IN_USE);
  CHECK(b_message.find("dirmn_loglik: the context is in use by a call on another thread") == 0);
  CHECK(b_threads == DIRMN_ERROR_CONTEXT_IN_USE);
  CHECK(threads == -1);
  CHECK(b_set == DIRMN_ERROR_CONTEXT_IN_USE);
  CHECK(b_info == DIRMN_ERROR_CONTEXT_IN_USE);
  for (double v : out_b) REQUIRE(v == 7.0);
  // A's call went on undisturbed.
  CHECK(a_status == DIRMN_SUCCESS);
  for (int64_t b = 0; b < rows; ++b) REQUIRE(out_a[static_cast<size_t>(b)] == want[static_cast<size_t>(b)]);
  // From A's own callback: queries are served, other calls refused with the
  // message in the context's slot (the destroy was deferred: a leak there
  // fails the sanitizer run).
  CHECK(rv.reentrant_loglik == DIRMN_ERROR_CONTEXT_IN_USE);
  CHECK(rv.reentrant_message.find("dirmn_loglik: called from a callback of a call on the same context") == 0);
  CHECK(rv.reentrant_threads == DIRMN_SUCCESS);
  CHECK(rv.threads_seen >= 1);
  CHECK(rv.reentrant_info == DIRMN_SUCCESS);
  REQUIRE(dirmn_context_set_interrupt(ctx.get(), nullptr, nullptr) == DIRMN_SUCCESS);
  CHECK(loglik(ctx.get(), c.get(), rows, alpha) == want);
}

TEST_CASE("two threads hammering one context: statuses, never a crash", "[api][context][threads]") {
  const int64_t rows = 3000, cols = 5;
  const auto x = random_table(rows, cols, 0.2, 9, 62);
  const std::vector<double> alpha = {0.5, 1.5, 2.0, 3.0, 0.25};
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  REQUIRE(dirmn_context_set_threads(ctx.get(), 2) == DIRMN_SUCCESS);
  Counts c = make_dense(ctx.get(), x, rows, cols);
  const std::vector<double> want = loglik(ctx.get(), c.get(), rows, alpha);
  std::atomic<int> ok{0}, in_use{0}, other{0}, wrong{0};
  auto hammer = [&](int id) {
    std::vector<double> out(static_cast<size_t>(rows));
    for (int i = 0; i < 400; ++i) {
      dirmn_status s;
      if (i % 10 == 3) {
        s = dirmn_context_set_threads(ctx.get(), 1 + (i + id) % 2);  // replaces the pool
      } else if (i % 10 == 7) {
        dirmn_fit_result r;
        std::memset(&r, 0, sizeof r);
        r.size = sizeof r;
        std::vector<double> a(static_cast<size_t>(cols));
        r.alpha = a.data();
        s = dirmn_fit(ctx.get(), c.get(), nullptr, &r);
      } else {
        s = dirmn_loglik(ctx.get(), c.get(), 1, alpha.data(), 0, 1, DIRMN_PARAM_ALPHA, DIRMN_KERNEL,
                         out.data(), 1, 1);
        if (s == DIRMN_SUCCESS && out != want) ++wrong;
      }
      if (s == DIRMN_SUCCESS) ++ok;
      else if (s == DIRMN_ERROR_CONTEXT_IN_USE) ++in_use;
      else ++other;
    }
  };
  std::thread t1(hammer, 0), t2(hammer, 1);
  t1.join();
  t2.join();
  CHECK(other == 0);
  CHECK(wrong == 0);
  CHECK(ok > 0);
  CHECK(ok + in_use == 800);
  // The context is whole afterwards.
  CHECK(loglik(ctx.get(), c.get(), rows, alpha) == want);
}
