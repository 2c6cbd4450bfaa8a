// criteria.hpp: model-selection criteria of a fitted mixture.
#pragma once

#include <cstdint>
#include <vector>

#include "../backend.hpp"
#include "../stored_table.hpp"
#include "dirmn.h"
#include "weights.hpp"

namespace dirmn {

// Gamma(0.1, 0.1) on every alpha: DirichletMultinomial::dmn's prior.
constexpr double kDmnShape = 0.1;
constexpr double kDmnRate = 0.1;

// The log-determinant term of dmn's Laplace value for a k-component fit
// (alpha k x cols; z rows x k the responsibilities the last M step fitted
// to), from 2k weighted histograms made in one pass, as it is at the
// caller's weights (row_weights' scale undone). See criteria.cpp.
BackendResult dmn_log_det(const StoredTable& table, int k, const ScaledWeights& row_weights,
                          const Interrupt& interrupt, const std::vector<double>& alpha,
                          const std::vector<double>& z, double* log_det);

struct MixtureCriteriaInput {
  dirmn_mixture_objective objective_kind = DIRMN_MIXTURE_ML;
  int64_t parameters = 0;  // P = k V + k - 1
  double log_n_rows = 0.0; // log of the rows, or of the sum of the row weights
  double loglik = 0.0;
  double objective = 0.0;
  double log_det = 0.0;    // sum over components (ML), or dmn_log_det's (DMN)
};

// AIC, BIC and the Laplace value as dirmn_mixture_info defines them.
void mixture_criteria(const MixtureCriteriaInput& in, double* aic, double* bic, double* laplace);

}  // namespace dirmn
