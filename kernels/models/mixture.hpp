// mixture.hpp: Dirichlet-multinomial mixtures by EM (Holmes, Harris &
// Quince 2012), with DirichletMultinomial::dmn's MAP objective available --
// one EM loop for every backend, over the EmState steps of backend.hpp.
#pragma once

#include <cstdint>
#include <vector>

#include "../backend.hpp"
#include "../stored_table.hpp"
#include "dirmn.h"

namespace dirmn {

// A fitted mixture of k - 1 components on the same table that one start of
// a k-component fit grows from (its arrays in the library's order: alpha
// k x cols, weights k, responsibilities rows x k).
struct GrowFrom {
  int k = 0;
  const double* alpha = nullptr;
  const double* weights = nullptr;
  const double* resp = nullptr;
  double loglik = 0.0;
};

// Newton steps per warm-started component per M step (a generalized EM;
// dirmn_mixture_options.m_step_iterations), and the budget of a full one.
constexpr int kDefaultMStepIterations = 4;
constexpr int kFullMStepIterations = 200;

struct MixtureSettings {
  int k = 1;
  dirmn_mixture_objective objective = DIRMN_MIXTURE_ML;
  dirmn_mixture_init init = DIRMN_INIT_MIXED;
  int starts = 1;
  uint64_t seed = 1;
  int max_iterations = 1000;
  double tolerance = 1e-9;
  int m_step_iterations = kDefaultMStepIterations;
  const double* weights = nullptr;  // rows, validated; null for 1
  dirmn_progress_fn progress = nullptr;
  void* progress_data = nullptr;
  Interrupt interrupt;
  const GrowFrom* grow_from = nullptr;  // k - 1 components, or null
};

// A fitted mixture and its criteria (see dirmn_mixture_info), its
// components by decreasing weight.
struct MixtureFit {
  std::vector<double> alpha;    // k x cols, row-major
  std::vector<double> weights;  // k
  std::vector<double> resp;     // rows x k, row-major
  int64_t parameters = 0;
  double observations = 0.0;
  double loglik = 0.0, objective = 0.0, aic = 0.0, bic = 0.0, laplace = 0.0;
  int iterations = 0;
  bool converged = false;
  int start = 0;
};

// A failure of the EM: a backend's, or CANCELLED at `iteration` (by the
// progress callback or the interrupt).
struct MixtureResult {
  BackendResult backend;
  int iteration = -1;
  bool ok() const { return backend.ok(); }
};

// Fits the mixture from every start (s.starts of s.init's, then with
// s.grow_from one grown from it, and under ML, where none reaches its
// log-likelihood, one more that keeps it) and keeps the best objective; the
// table's rows must be on the host (table.host_rows()) for the
// initialisation, and k at most the number of rows with counts. Throws
// std::bad_alloc when host memory runs out.
MixtureResult fit_mixture(const StoredTable& table, const MixtureSettings& s, MixtureFit* out);

// The posterior probabilities of the table's rows under a fitted mixture
// (alpha k x cols, weights k): z, rows x k, row-major. Throws std::bad_alloc.
BackendResult assign_mixture(const StoredTable& table, int k, const double* alpha,
                             const double* weights, const Interrupt& interrupt, double* z);

}  // namespace dirmn
