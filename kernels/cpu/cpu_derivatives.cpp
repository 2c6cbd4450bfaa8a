// cpu_derivatives.cpp: per-row log-likelihoods with their gradients and
// Hessians, one parameter vector per row (the building block of DM
// regression), on the host threads.
#include <algorithm>
#include <cmath>
#include <functional>

#include "cpu_rows.hpp"

namespace dirmn {
namespace cpu {
namespace {

template <class T>
BackendResult rowwise_derivatives_typed(const HostTable& t, const RowwiseDerivRequest& req,
                                        HostThreads& threads, const Interrupt& interrupt) {
  const int64_t rows = t.rows, cols = t.cols;
  const int64_t rows_per_chunk = std::max<int64_t>(1, kCellsPerChunk / std::max<int64_t>(1, cols));
  const int64_t chunks = (rows + rows_per_chunk - 1) / rows_per_chunk;
  std::function<void(int64_t)> body = [&](int64_t c) {
    const int64_t r1 = std::min(rows, (c + 1) * rows_per_chunk);
    for (int64_t b = c * rows_per_chunk; b < r1; ++b) {
      const double* a = req.alpha + b * cols;
      const double n_total = t.row_total[static_cast<size_t>(b)];
      const RowPeak peak = row_peak(t, b);
      const int64_t arg = peak.column;
      const bool big = peak.count >= kRegroupMinCount;
      const double a_rest = big ? math::compensated_sum(a, arg) + math::compensated_sum(a + arg + 1, cols - arg - 1) : 0.0;
      const bool rg = big && regroup_helps(a_rest, peak.count);
      const int64_t star = rg ? arg : -1;
      const double a_sum = math::compensated_sum(a, cols);
      const double log_a_sum = std::log(a_sum);
      const double d_tot = math::dpoch(a_sum, n_total);
      const double t_tot = math::tpoch(a_sum, n_total);
      double* g = req.gradient ? req.gradient + b * cols : nullptr;
      double* h = req.hessian_diag ? req.hessian_diag + b * cols : nullptr;
      if (g)
        for (int64_t v = 0; v < cols; ++v) g[v] = -d_tot;
      if (h)
        for (int64_t v = 0; v < cols; ++v) h[v] = 0.0;
      // The full value is summed in its own (log-beta) form, cpu_rows.hpp.
      double rest = 0.0, rest_full = 0.0;
      const bool full = req.loglik && req.full;
      for_each_nonzero<T>(t, b, [&](int64_t v, double n) {
        if (full) rest_full += math::lpoch_lfact(a[v], n);
        else if (v != star) rest += centred_lpoch(a[v], n, log_a_sum);
        if (g) g[v] += math::dpoch(a[v], n);
        if (h) h[v] = math::tpoch(a[v], n);
      });
      if (req.log_param && g) {
        // d/dlog a = a d/da; d2/dlog a2 = a^2 d2/da2 + a d/da (u becomes alpha).
        for (int64_t v = 0; v < cols; ++v) math::to_log_alpha(a[v], &g[v], h ? &h[v] : nullptr);
      }
      if (req.loglik && full && one_cell_row(t, b)) {
        const int64_t at = one_cell_column<T>(t, b);
        const double a_one =
            math::compensated_sum(a, at) + math::compensated_sum(a + at + 1, cols - at - 1);
        req.loglik[b] = one_cell_full(a[at], a_one, a_sum, n_total);
      } else if (req.loglik) {
        req.loglik[b] = full ? full_row<true>(rest_full, a_sum, n_total)
                             : finish_row(rest, a_sum, log_a_sum, n_total, rg, rg ? a[star] : 0.0,
                                          peak.count, a_rest);
      }
      if (req.hessian_scalar) req.hessian_scalar[b] = -t_tot;
    }
  };
  const bool finished = threads.run(chunks, body, [&] { return interrupt.poll(); });
  if (!finished) return {DIRMN_ERROR_CANCELLED, "", 0};
  return {};
}

}  // namespace

BackendResult rowwise_derivatives(const HostTable& t, const RowwiseDerivRequest& req,
                                  HostThreads& threads, const Interrupt& interrupt) {
  return with_value_type(t.vtype, [&](auto tag) {
    return rowwise_derivatives_typed<decltype(tag)>(t, req, threads, interrupt);
  });
}

}  // namespace cpu
}  // namespace dirmn
