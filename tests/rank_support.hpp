// rank_support.hpp: the communicator tests' ranks -- threads of this
// process over an in-memory communicator (thread_world.hpp), each with its
// own context and its own rows of one table -- and what each rank got.
// Catch2's assertions run on the main thread only: the ranks record.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "support.hpp"
#include "thread_world.hpp"

namespace dirmn_ranks {

using dirmn_world::callbacks_of;
using dirmn_world::Rank;
using dirmn_world::World;

// What a rank got from a call.
struct Got {
  dirmn_status attach = DIRMN_SUCCESS, status = DIRMN_SUCCESS;
  std::string message;
  std::vector<double> alpha, se;
  dirmn_fit_result fit{};
  double value = 0.0, hessian_scalar = 0.0;
  std::vector<double> gradient, hessian_diag;
  dirmn_overdispersion_result od{};
  // Mixtures (one per k of a range): parameters, this rank's
  // responsibilities, and the fits' summaries.
  std::vector<std::vector<double>> m_alpha, m_weights, m_resp;
  std::vector<dirmn_mixture_info> m_info;
};

// Rank r's first row of n ranks: uneven parts (rank r takes r + 1 shares).
inline int64_t first_row(int r, int n, int64_t rows) {
  const int64_t shares = static_cast<int64_t>(n) * (n + 1) / 2;
  const int64_t before = static_cast<int64_t>(r) * (r + 1) / 2;
  return rows * before / shares;
}

// Runs body(rank, ctx, counts) on n threads, each with its rows of x (rows x
// cols, row-major) attached to its communicator. `cols_of(r)` may give a
// rank other columns (a mismatch test).
inline void run_ranks(World& world, const std::vector<double>& x, int64_t rows, int64_t cols,
               std::vector<Got>* got,
               const std::function<void(int, dirmn_context*, dirmn_counts*, Got*)>& body,
               std::atomic<int>* released, const std::function<int64_t(int)>& cols_of = nullptr,
               dirmn_backend backend = DIRMN_BACKEND_CPU) {
  const int n = world.ranks();
  got->assign(static_cast<size_t>(n), Got());
  std::vector<Rank> ranks(static_cast<size_t>(n));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    ranks[static_cast<size_t>(r)] = Rank{&world, r, 0, released};
    threads.emplace_back([&, r] {
      Got& g = (*got)[static_cast<size_t>(r)];
      dirmn_context* ctx = nullptr;
      dirmn_context_create(&ctx, backend, 0);
      dirmn_context_set_threads(ctx, 1 + r % 2);
      const int64_t b0 = first_row(r, n, rows), b1 = first_row(r + 1, n, rows);
      const int64_t c = cols_of ? cols_of(r) : cols;
      std::vector<double> mine(static_cast<size_t>((b1 - b0) * c), 0.0);
      for (int64_t b = b0; b < b1; ++b)
        for (int64_t v = 0; v < std::min(c, cols); ++v)
          mine[static_cast<size_t>((b - b0) * c + v)] = x[static_cast<size_t>(b * cols + v)];
      dirmn_counts* counts = nullptr;
      dirmn_counts_create_dense(ctx, &counts, b1 - b0, c, DIRMN_FLOAT64, mine.data(), c, 1, nullptr);
      const dirmn_communicator_callbacks cb = callbacks_of(&ranks[static_cast<size_t>(r)]);
      dirmn_communicator* comm = nullptr;
      dirmn_communicator_create(&comm, &cb);
      g.attach = dirmn_counts_set_communicator(ctx, counts, comm);
      dirmn_communicator_destroy(comm);  // the counts keep it
      if (g.attach == DIRMN_SUCCESS) body(r, ctx, counts, &g);
      else g.message = dirmn_last_error(ctx);
      dirmn_counts_destroy(counts);
      dirmn_context_destroy(ctx);
    });
  }
  for (std::thread& t : threads) t.join();
}

// The rows [b0, b1) of per-row weights w, or null.
inline std::vector<double> weights_of(const std::vector<double>& w, int r, int n, int64_t rows) {
  if (w.empty()) return {};
  return std::vector<double>(w.begin() + first_row(r, n, rows), w.begin() + first_row(r + 1, n, rows));
}

}  // namespace dirmn_ranks
