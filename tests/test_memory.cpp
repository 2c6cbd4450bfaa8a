// test_memory.cpp: what the library keeps in memory, observed as the
// process's resident size (/proc/self/statm) around large calls on the CPU
// backend: a context gives back large scratch when a call returns, and a
// counts object costs what the header says per row. AddressSanitizer keeps
// freed memory in quarantine, so under it these cases return at once.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdio>
#include <vector>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "support.hpp"

using namespace dirmn_test;

namespace {

// Resident memory of this process in bytes (Linux: /proc/self/statm), or -1.
// Free heap pages are handed back first (glibc's malloc_trim), so that what
// earlier cases freed but the allocator kept does not count as held.
int64_t resident_bytes() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return -1;
  long size = 0, resident = 0;
  const int n = std::fscanf(f, "%ld %ld", &size, &resident);
  std::fclose(f);
  return n == 2 ? static_cast<int64_t>(resident) * 4096 : -1;
}

int never_stop(void*) { return 0; }

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;  // ASan keeps freed memory in quarantine
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

}  // namespace

TEST_CASE("a context gives back large scratch after the call", "[api][context][memory]") {
  if (kSanitized || resident_bytes() < 0) return;
  // 2e6 rows x 4 results: 64 MB of result scratch (the interrupt callback
  // sends results through scratch), 2e6 x 2 row-wise alphas: 32 MB.
  const int64_t rows = 2000000, cols = 2, k = 4;
  std::vector<int32_t> x(static_cast<size_t>(rows * cols));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int32_t>(i % 7);
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  dirmn_counts* cp = nullptr;
  REQUIRE(dirmn_counts_create_dense(ctx.get(), &cp, rows, cols, DIRMN_INT32, x.data(), cols, 1,
                                    nullptr) == DIRMN_SUCCESS);
  Counts c(cp);
  const std::vector<double> alpha = {1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<double> out(static_cast<size_t>(rows * k), 0.0), arow(static_cast<size_t>(rows * cols), 1.5);
  REQUIRE(dirmn_context_set_interrupt(ctx.get(), never_stop, nullptr) == DIRMN_SUCCESS);
  const int64_t before = resident_bytes();
  REQUIRE(dirmn_loglik(ctx.get(), c.get(), k, alpha.data(), cols, 1, DIRMN_PARAM_ALPHA, DIRMN_FULL,
                       out.data(), k, 1) == DIRMN_SUCCESS);
  REQUIRE(dirmn_loglik_rowwise(ctx.get(), c.get(), arow.data(), cols, 1, DIRMN_PARAM_ALPHA, DIRMN_KERNEL,
                               out.data(), 1) == DIRMN_SUCCESS);
  const int64_t after = resident_bytes();
  // Kept, the two would add 96 MB; given back, what stays is noise.
  CHECK(after - before < int64_t{16} << 20);
  // The results are the ones the formula gives (row 5: counts 3, 4).
  const double n5[2] = {3, 4};
  CHECK(out[5] == Approx(reference_loglik(n5, arow.data(), 2, false)).epsilon(1e-12));
}

TEST_CASE("a counts object costs what the header says per row", "[api][counts][memory]") {
  if (kSanitized || resident_bytes() < 0) return;
  // 4e6 x 2 counts below 256: 8 MB of counts and 16 bytes a row (64 MB);
  // 32 bytes a row would add 64 MB more.
  const int64_t rows = 4000000, cols = 2;
  std::vector<int32_t> x(static_cast<size_t>(rows * cols));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int32_t>(i % 5);
  Context ctx = make_context(DIRMN_BACKEND_CPU);
  REQUIRE(ctx);
  const int64_t before = resident_bytes();
  dirmn_counts* cp = nullptr;
  REQUIRE(dirmn_counts_create_dense(ctx.get(), &cp, rows, cols, DIRMN_INT32, x.data(), cols, 1,
                                    nullptr) == DIRMN_SUCCESS);
  Counts c(cp);
  const int64_t cost = resident_bytes() - before;
  CHECK(cost > int64_t{60} << 20);  // what it holds is resident
  CHECK(cost < int64_t{96} << 20);
  // Its row data still serve: totals and the full log pmf (row 3: 1, 2).
  std::vector<double> totals(static_cast<size_t>(rows));
  REQUIRE(dirmn_counts_row_totals(ctx.get(), c.get(), totals.data()) == DIRMN_SUCCESS);
  CHECK(totals[3] == 3.0);
  const std::vector<double> alpha = {0.5, 2.0};
  const std::vector<double> ll = loglik(ctx.get(), c.get(), rows, alpha, DIRMN_FULL);
  const double n3[2] = {1, 2};
  CHECK(ll[3] == Approx(reference_loglik(n3, alpha.data(), 2, true)).epsilon(1e-12));
}
