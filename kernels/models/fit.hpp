// fit.hpp: the single-alpha Dirichlet-multinomial fit of a stored table --
// maximum likelihood, or MAP under a Gamma prior -- and the shared-alpha
// sums, from the table's count histograms (the Newton engine: host_fit.hpp).
#pragma once

#include <cstdint>
#include <vector>

#include "../backend.hpp"
#include "../host_fit.hpp"
#include "../stored_table.hpp"
#include "../table/cache.hpp"
#include "../table/histogram.hpp"
#include "../thread_pool.hpp"

namespace dirmn {

// The histograms of `table` for these row weights (validated; null for 1):
// the cached ones, or built in one pass by the table's histogram step and
// cached. Throws std::bad_alloc.
BackendResult table_histograms(const StoredTable& table, HistogramCache& cache,
                               const double* weights, const Interrupt& interrupt,
                               const Histograms** out);

// The shared-alpha sums of dirmn_loglik_sum: the weighted log-likelihood
// (with `full`, the log pmf), its gradient and Hessian (diagonal and
// rank-one scalar), with respect to alpha or (log_param) log alpha. alpha:
// cols validated values. The outputs (any may be null) are written only on
// success. Throws std::bad_alloc.
BackendResult loglik_sums(const StoredTable& table, HistogramCache& cache, const double* alpha,
                          const double* weights, bool log_param, bool full,
                          const Interrupt& interrupt, double* value, double* gradient,
                          double* hessian_diag, double* hessian_scalar);

// dirmn_fit: the fit of the table with these row weights (validated),
// with s.threads set to the table's host threads. INVALID_ARGUMENT when the
// table has no counts under these weights; CANCELLED when the histogram
// pass was interrupted, or (out->cancelled, out->iterations) when the
// progress callback or the interrupt stopped the fit. Throws std::bad_alloc.
BackendResult fit_table(const StoredTable& table, HistogramCache& cache, const double* weights,
                        FitSettings s, FitOutcome* out);

}  // namespace dirmn
