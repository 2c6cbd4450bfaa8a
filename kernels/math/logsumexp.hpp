// logsumexp.hpp: a mixture's responsibilities from its components' log
// densities, on the host (the CUDA E step forms them in the same order), and
// the M step's row weights made from them (host and device).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "special.hpp"  // DIRMN_HD

namespace dirmn {
namespace math {

// A responsibility below this enters the M step as weight 0. Once EM has
// separated the rows, most of a component's responsibilities are ~1e-30 or
// less, yet each kept its row in every column's histogram: the deep
// columns' histograms held every row's count for every component, and the
// M step's fits cost k times what their weight needs. A row so dropped
// moves the component's weighted sums by less than 2^-64 of that row's
// terms: below 1e-10 (the M step's tolerance) of any component that holds
// the weight of one row, for tables of up to 10^9 rows.
constexpr double kNegligibleResponsibility = 0x1p-64;

// The M step's weight of a row of weight r with responsibility z.
DIRMN_HD double m_step_weight(double r, double z) {
  return z < kNegligibleResponsibility ? 0.0 : r * z;
}

// For each row b of the rows x k log-likelihoods L (row-major): x_j =
// L_bj + log_pi_j, z_bj = exp(x_j - max x) / sum_i exp(x_i - max x) and
// lse_b = max x + log sum. Returns sum_b r_b lse_b (r the row weights, null
// for 1). The max and the sums run over j in component order.
inline double responsibilities(const double* L, const double* log_pi, int64_t rows, int k,
                               const double* row_w, double* z, double* lse) {
  double total = 0.0;
  for (int64_t b = 0; b < rows; ++b) {
    const double* l = L + b * k;
    double* zb = z + b * k;
    double m = -std::numeric_limits<double>::infinity();
    for (int j = 0; j < k; ++j) m = std::max(m, l[j] + log_pi[j]);
    double s = 0.0;
    for (int j = 0; j < k; ++j) {
      const double e = std::exp(l[j] + log_pi[j] - m);
      zb[j] = e;
      s += e;
    }
    for (int j = 0; j < k; ++j) zb[j] /= s;
    lse[b] = m + std::log(s);
    total += (row_w ? row_w[b] : 1.0) * lse[b];
  }
  return total;
}

}  // namespace math
}  // namespace dirmn
