// sample.hpp: tables drawn from the Dirichlet-multinomial (dirmn_sample),
// and its moments. The draws themselves (gamma, binomial, the library's own
// log and exp) are math/sampling.hpp's; this file decides each row's
// vector, size and method, and gathers the rows into a compressed table.
#pragma once

#include <cstdint>
#include <vector>

#include "../backend.hpp"
#include "../thread_pool.hpp"

namespace dirmn {

// The smallest and largest alpha the sampler takes: the gamma boost's
// log(U) / alpha must be finite for every U of 53 bits (|log U| < 37, so
// alpha above 2.1e-307), and so must Marsaglia-Tsang's 9 alpha (below 2e307).
// 1e-306 and 1e306 leave room for an alpha of 1e-300 or 1e300 that a
// caller's arithmetic (or R's strtod under valgrind) rounded a few ulp out.
constexpr double kSampleAlphaMin = 1e-306;
constexpr double kSampleAlphaMax = 1e306;
// Sizes are below this (a row's counts are int32 in the table made).
constexpr int64_t kSampleSizeLimit = int64_t{1} << 31;

// Each row's vector of a mixture of k (rows entries) where the caller gave
// none: drawn from cum_weights (k ascending cumulative weights ending at 1;
// null: equal) by counter 0 of each row's stream (math/dm_draw.hpp), on the
// host for every backend. Throws std::bad_alloc.
std::vector<int64_t> resolve_components(int64_t rows, int64_t k, const double* cum_weights,
                                        uint64_t seed, int64_t first_row = 0);

// Draws the table (SampleRequest: backend.hpp) on the host threads, or
// with threads null on the calling thread alone (rows in blocks; each
// row's draws depend only on the seed, its index and its inputs).
// OUT_OF_MEMORY; CANCELLED (the interrupt, polled between blocks). Throws
// std::bad_alloc (the vectors' set-up).
BackendResult sample_rows(const SampleRequest& req, HostThreads* threads,
                          const Interrupt& interrupt, CsrRows* out);

// The moments of DM(alpha, size) (alpha: cols validated values); any
// output may be null. covariance: cols x cols, row u at covariance + u * ld.
// Throws std::bad_alloc (cols doubles of working memory).
void dm_moments(const double* alpha, int64_t cols, double size, double* mean, double* variance,
                double* covariance, int64_t ld);

}  // namespace dirmn
