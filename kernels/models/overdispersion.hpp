// overdispersion.hpp: is the multinomial enough? Two tests of the
// multinomial against the Dirichlet-multinomial on one table: the
// likelihood ratio (with its boundary null) and Kim & Margolin's C(alpha)
// score statistic, both from the table's count histograms.
#pragma once

#include <cstdint>

#include "fit.hpp"

namespace dirmn {

struct OverdispersionOutcome {
  double lrt_statistic = 0.0, lrt_p_value = 1.0;
  double score_statistic = 0.0, score_df = 0.0, score_scale = 0.0, score_p_value = 1.0;
  double loglik_dm = 0.0, loglik_multinomial = 0.0, precision = 0.0;
  int64_t categories = 0;
  double observations = 0.0;
  bool converged = false;
  FitOutcome fit;  // the DM fit behind the likelihood ratio
};

// Both tests for the table with these row weights (validated; frequency
// weights). INVALID_ARGUMENT when the table has no counts under them;
// otherwise as fit_table. Throws std::bad_alloc.
BackendResult overdispersion_test(const StoredTable& table, HistogramCache& cache,
                                  const double* weights, const FitSettings& s,
                                  OverdispersionOutcome* out);

}  // namespace dirmn
