// bench_full.cpp: the CPU cost of the full log pmf (DIRMN_FULL) beside the
// kernel, on a 2000 x 30000 sparse table (5% nonzero: mostly small counts,
// a few cells of 1e3-1e6), one alpha vector. Prints the best of 5 runs of
// each; not a test.
//
//   dirmn_bench_full [threads]
#include <dirmn.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

// splitmix64: the same table on every platform.
uint64_t next(uint64_t* s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
double unit(uint64_t* s) { return static_cast<double>(next(s) >> 11) * 0x1.0p-53; }

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 0;
  const int64_t rows = 2000, cols = 30000;
  uint64_t seed = 20261129;
  std::vector<int64_t> ptr{0};
  std::vector<int64_t> idx;
  std::vector<double> val;
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      if (unit(&seed) >= 0.05) continue;
      const double u = unit(&seed);
      idx.push_back(j);
      val.push_back(u < 0.99 ? 1.0 + static_cast<double>(static_cast<int>(unit(&seed) * 20))
                             : static_cast<double>(static_cast<int64_t>(1e3 + unit(&seed) * 1e6)));
    }
    ptr.push_back(static_cast<int64_t>(idx.size()));
  }
  std::vector<double> alpha(static_cast<size_t>(cols));
  for (double& a : alpha) a = 0.01 + 5.0 * unit(&seed);
  const std::vector<int64_t>& idx64 = idx;
  dirmn_context* ctx = nullptr;
  dirmn_counts* c = nullptr;
  if (dirmn_context_create(&ctx, DIRMN_BACKEND_CPU, threads) != DIRMN_SUCCESS ||
      dirmn_counts_create_sparse(ctx, &c, DIRMN_CSR, rows, cols, static_cast<int64_t>(val.size()),
                                 DIRMN_INDEX_INT64, ptr.data(), idx64.data(), DIRMN_FLOAT64,
                                 val.data(), nullptr) != DIRMN_SUCCESS) {
    std::fprintf(stderr, "counts: %s\n", dirmn_last_error(ctx));
    return 1;
  }
  std::vector<double> out(static_cast<size_t>(rows));
  std::printf("%lld x %lld sparse, %zu nonzeros\n", static_cast<long long>(rows),
              static_cast<long long>(cols), val.size());
  for (uint32_t flags : {0u, static_cast<uint32_t>(DIRMN_FULL)}) {
    double best = 1e30;
    for (int rep = 0; rep < 5; ++rep) {
      const auto t0 = std::chrono::steady_clock::now();
      if (dirmn_loglik(ctx, c, 1, alpha.data(), cols, 1, DIRMN_PARAM_ALPHA, flags, out.data(), 1,
                       1) != DIRMN_SUCCESS) {
        std::fprintf(stderr, "loglik: %s\n", dirmn_last_error(ctx));
        return 1;
      }
      const std::chrono::duration<double> d = std::chrono::steady_clock::now() - t0;
      best = std::min(best, d.count());
    }
    std::printf("%-7s best of 5: %.4f s   (row 0: %.17g)\n", flags ? "full" : "kernel", best, out[0]);
  }
  dirmn_counts_destroy(c);
  dirmn_context_destroy(ctx);
  return 0;
}
