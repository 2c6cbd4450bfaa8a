// overdispersion.cpp: the likelihood-ratio and C(alpha) tests of the
// multinomial against the Dirichlet-multinomial.
//
// The likelihood ratio. Under the multinomial the DM's precision A = sum
// alpha is infinite: the null is on the boundary of the DM's parameter
// space (theta = 1 / (1 + A) = 0), so 2 (l_DM - l_M) is asymptotically
// 0 with probability 1/2 and chi-square(1) otherwise (Self & Liang 1987,
// case 5): p = P(chi2_1 >= stat) / 2 for stat > 0, and 1 at 0 (where the
// DM fit reaches the multinomial limit). The multinomial coefficients are
// the same in both log pmfs, so the statistic is twice the difference of
// the kernels, sum_v X_v log(X_v / X) being the multinomial's.
//
// The C(alpha) score statistic of Kim & Margolin (1992, Biometrics 48:
// 711-719), as HMP's C.alpha.multinomial computes it,
//   T = sum_j sum_i w_i (x_ij - N_i X_j / X)^2 / X_j
//     = sum_j [sum_i w_i x_ij^2] / X_j - sum_i w_i N_i^2 / X,
// over the categories with counts (X_j > 0), X = sum_j X_j, referred to
// their scaled chi-square: T / g ~ chi2_df with, for p_i = N_i / X,
//   tr M = 1 - sum_i w_i p_i^2, tr M^2 = sum w p^2 - 2 sum w p^3 + (sum w p^2)^2,
//   g = tr M^2 / tr M, df = (K - 1) (tr M)^2 / tr M^2.
// (With two categories it is Tarone's 1979 binomial test.) Every sum is a
// moment of a column's or the row totals' histogram, so the test costs
// O(distinct counts), as a fit does.
#include "overdispersion.hpp"

#include <cmath>
#include <limits>
#include <new>

#include "../math/distributions.hpp"
#include "../math/sums.hpp"
#include "ranks.hpp"
#include "weights.hpp"

namespace dirmn {
namespace {

// sum_b w_b n_b^m over a histogram's values (by parts over the dense
// form's cumulative weights: no differences of them).
double power_sum(const Histogram& h, int m) {
  math::NeumaierSum s;
  if (h.dense) {
    s.add(h.base_weight * std::pow(h.base, m));
    for (size_t k = 0; k < h.cum.size(); ++k) {
      const double lo = h.base + static_cast<double>(k);
      s.add(h.cum[k] * (std::pow(lo + 1.0, m) - std::pow(lo, m)));
    }
  } else {
    for (size_t i = 0; i < h.value.size(); ++i) s.add(h.weight[i] * std::pow(h.value[i], m));
  }
  return s.value();
}

}  // namespace

BackendResult overdispersion_test(const StoredTable& table, HistogramCache& cache,
                                  const double* weights, const FitSettings& s,
                                  OverdispersionOutcome* out) {
  BackendResult r = fit_table(table, cache, weights, s, &out->fit);
  if (!r.ok()) return r;
  const FitOutcome& f = out->fit;
  // The fit's histograms (cached on the scaled weights, as fit_table made them).
  double top = 0.0;
  if (!(r = agreed_weight_top(table, weights, &top)).ok()) return r;
  try {
    const ScaledWeights sw(weights, table.info->rows, 1 << 20, top);
    const Histograms* h = nullptr;
    // A failure here every rank has agreed on already.
    if (!(r = table_histograms(table, cache, sw.data(), s.interrupt, &h)).ok()) return r;

    math::NeumaierSum x_total, kernel_m, score_cols;
    int64_t K = 0;
    // The stored columns: any other has no weight.
    for (const Histogram& col : h->column.stored_histograms()) x_total.add(col.first_moment);
    const double X = x_total.value();
    for (const Histogram& col : h->column.stored_histograms()) {
      const double xj = col.first_moment;
      if (!(xj > 0.0)) continue;
      ++K;
      kernel_m.add(xj * std::log(xj / X));
      score_cols.add((col.second_factorial + xj) / xj);  // sum w x^2 / X_j
    }
    const double sum_n2 = h->total.second_factorial + h->total.first_moment;
    // Back on the caller's weights (every sum is linear in them).
    const double kernel_mult = sw.unscale(kernel_m.value());
    out->loglik_dm = f.loglik;
    out->loglik_multinomial = sw.unscale(kernel_m.value() + h->lcoef_sum);
    out->lrt_statistic = f.multinomial_limit ? 0.0 : std::max(0.0, 2.0 * (f.loglik_kernel - kernel_mult));
    out->lrt_p_value =
        out->lrt_statistic > 0.0 ? 0.5 * std::erfc(std::sqrt(0.5 * out->lrt_statistic)) : 1.0;

    out->score_statistic = std::max(0.0, sw.unscale(score_cols.value() - sum_n2 / X));
    // p_i = N_i / X on the caller's scale: the moments of w p^m scale by
    // 2^e / 2^(e m) = 2^(e (1 - m)).
    const double Xc = sw.unscale(X);
    const double wp2 = sw.unscale(sum_n2) / (Xc * Xc);
    const double wp3 = sw.unscale(power_sum(h->total, 3)) / (Xc * Xc * Xc);
    const double tr = 1.0 - wp2, tr2 = wp2 - 2.0 * wp3 + wp2 * wp2;
    if (K > 1 && tr > 0.0 && tr2 > 0.0) {
      out->score_scale = tr2 / tr;
      out->score_df = static_cast<double>(K - 1) * tr * tr / tr2;
      out->score_p_value = math::chisq_upper(out->score_statistic / out->score_scale, out->score_df);
    } else {
      // One category (or one row's worth of counts): nothing to test.
      out->score_scale = 1.0;
      out->score_df = 0.0;
      out->score_p_value = 1.0;
    }
    out->precision = f.precision;
    out->categories = K;
    out->observations = f.observations;
    out->converged = f.converged;
    if (!std::isfinite(out->lrt_statistic) || !std::isfinite(out->score_statistic) ||
        !std::isfinite(out->loglik_multinomial))
      r = {DIRMN_ERROR_OVERFLOW, "", 0};
  } catch (const std::bad_alloc&) {
    // Over ranks the others wait at the closing vote: it carries this.
    if (table.collective == nullptr) throw;
    r = {DIRMN_ERROR_OUT_OF_MEMORY, "host memory for the test's weights", 0};
  }
  return ranks_agree(table, r);
}

}  // namespace dirmn
