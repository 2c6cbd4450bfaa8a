// histogram_sums.hpp: the shared-alpha log-likelihood and its derivatives
// summed over count histograms (histogram.hpp): a dense entry costs a log
// and a division, a (value, weight) pair a few special functions, and
// nothing depends on the number of rows.
#pragma once

#include <cstdint>

#include "../thread_pool.hpp"
#include "histogram.hpp"

namespace dirmn {

// Columns are summed in fixed blocks of this many, so the result does not
// depend on whether (or on how many threads) the blocks run in parallel.
constexpr int64_t kSumBlockCols = 128;
// Evaluations of at least this many histogram entries (a dense entry costs
// a log and a division; a (value, weight) pair, counted as
// kPairEntryCost, several special functions) sum their column blocks on the
// given threads. Below it, waking the threads costs more than it saves.
constexpr int64_t kParallelSumEntries = 32768;
constexpr int64_t kPairEntryCost = 8;

// sum_b w_b f(a, n_b) over one histogram, for f = lpoch (l), dpoch (d) and
// tpoch (t); the parts not wanted are 0.
struct HistogramTerms {
  double l = 0.0, d = 0.0, t = 0.0;
};
HistogramTerms histogram_terms(const Histogram& h, double a, bool want_l, bool want_d,
                               bool want_t);

// Weighted sums for shared alpha (derivatives with respect to alpha): value,
// gradient (cols), Hessian diagonal (cols) and the rank-one scalar of the
// Hessian diag(d) + c 11^T. Outputs may be null. `threads` (may be null)
// runs column blocks at once; it must not be the pool the caller runs on.
void histogram_sums(const Histograms& h, const double* alpha, double* value, double* gradient,
                    double* hessian_diag, double* hessian_scalar, HostThreads* threads = nullptr);

// The full log pmf summed over the histograms, sum_b w_b [sum_v
// lpoch_lfact(alpha_v, n_bv) - lpoch_lfact(A, N_b)], in the log-beta form of
// special.hpp: not the kernel plus lcoef_sum, which are both ~N log N at
// counts ~1e6-1e7 and kept ~5e-10 relative of their sum. A dense entry costs
// a log1p and a division, a pair one lpoch_lfact; empty columns contribute
// nothing (their alpha may be 0). Used once per fit or dirmn_loglik_sum
// (DIRMN_FULL), never per Newton step. `threads` as histogram_sums.
double histogram_full_value(const Histograms& h, const double* alpha,
                            HostThreads* threads = nullptr);

}  // namespace dirmn
