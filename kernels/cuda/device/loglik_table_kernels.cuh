// loglik_table_kernels.cuh: the kernels that run with the likelihood
// kernels of a call -- before them, the shifted tables and row terms of its
// parameter vectors and the per-row normalisers; after them, the sums of
// the column panels. Device code only; loglik_tables.cu launches them.
// finish_panels and build_row_adjust are not templates: this header is for
// that one translation unit.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "../cuda_util.cuh"
#include "loglik_rows.cuh"
#include "loglik_smem.cuh"
#include "../loglik_types.cuh"

namespace dirmn {
namespace cuda {
namespace dev {

// One thread per (k, panel, column): T[n] = sum_{i<n} (log(alpha + i) - log A),
// Kahan-compensated like the CPU backend's tables. One thread per (k, N) for
// the row terms lpoch(A, N) - N log A.
template <class TabT>
__global__ void build_tables(TableBuildArgs b) {
  const int64_t per_k = static_cast<int64_t>(b.panels) * b.panel_cols;
  // Bundled tables fill their last group: vectors past k_total get zeros.
  const int64_t k_items = b.bundle > 0 ? round_up<int64_t>(b.k_total, b.bundle) : b.k_total;
  const int64_t n_cols = per_k * k_items;
  const int64_t n_rows = b.row_term_len * b.k_total;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n_cols + n_rows;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    if (i < n_cols) {
      const int k = static_cast<int>(i / per_k);
      const int64_t rem = i % per_k;
      const int panel = static_cast<int>(rem / b.panel_cols);
      const int64_t u = rem % b.panel_cols;
      const int64_t v = static_cast<int64_t>(panel) * b.panel_cols + u;
      int64_t stride = 0;
      TabT* t = table_entry<TabT>(b, k, panel, table_pos(u, b.vec, b.lanes), &stride);
      t[0] = TabT(0);
      if (v >= b.cols || k >= b.k_total) {
        for (int n = 1; n < b.cut; ++n) t[n * stride] = TabT(0);
        continue;
      }
      const double alpha = b.alpha[static_cast<int64_t>(k) * b.cols + v];
      const double log_a = b.ksums[k].log_a;
      double sum = 0.0, comp = 0.0;
      for (int n = 1; n < b.cut; ++n) {
        const double y = (log(alpha + static_cast<double>(n - 1)) - log_a) - comp;
        const double s = sum + y;
        comp = (s - sum) - y;
        sum = s;
        t[n * stride] = static_cast<TabT>(sum);
      }
    } else {
      const int64_t j = i - n_cols;
      const int k = static_cast<int>(j / b.row_term_len);
      const double n = static_cast<double>(j % b.row_term_len);
      const KSums s = b.ksums[k];
      b.row_term[j] = shifted_norm(s.a, n, s.log_a);
    }
  }
}

// Panels > 1: sums each row's panel partials in panel order (so results do
// not depend on scheduling) and finishes the row.
__global__ void __launch_bounds__(kBlockThreads)
    finish_panels(int64_t rows, const double* row_total, const double* row_lcoef,
                  SharedAlphaArgs a) {
  const int64_t n = rows * a.k_total;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t row = i / a.k_total;
    const int k = static_cast<int>(i % a.k_total);
    double s = 0.0;
    for (int p = 0; p < a.panels; ++p) s += a.partial[(p * rows + row) * a.k_total + k];
    double v = s - row_term(a, k, row_total[row]);
    if (a.full) v += row_lcoef[row];
    a.out[row * a.out_sr + static_cast<int64_t>(k) * a.out_sk] = v;
  }
}

// Per row and parameter vector, minus the row's shifted normaliser,
// -(lpoch(A_k, N_b) - N_b log A_k): made once per alpha (and table), so the
// likelihood kernels read it beside the counts instead of looking it up by
// the row total they have just loaded.
__global__ void __launch_bounds__(kBlockThreads)
    build_row_adjust(int64_t rows, const double* row_total, SharedAlphaArgs a, double* adjust) {
  const int64_t n = rows * a.k_total;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int k = static_cast<int>(i / rows);
    adjust[i] = -row_term(a, k, row_total[i % rows]);
  }
}

}  // namespace dev
}  // namespace cuda
}  // namespace dirmn
