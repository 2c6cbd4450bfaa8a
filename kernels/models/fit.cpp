// fit.cpp: the single-alpha fit of a stored table (dirmn_fit) and the
// shared-alpha sums of dirmn_loglik_sum, from the table's count histograms;
// the Newton engine itself is the host fit step (host_fit.cpp).
#include "fit.hpp"

#include <algorithm>
#include <cmath>
#include <new>

#include "../math/special.hpp"
#include "../table/histogram_sums.hpp"
#include "ranks.hpp"
#include "weights.hpp"

namespace dirmn {
namespace {

// Whether n sums (none when null) are finite: weights near the largest
// double can take the caller's sums past it.
bool finite_sums(const double* x, size_t n) {
  if (x == nullptr) return true;
  for (size_t i = 0; i < n; ++i)
    if (!std::isfinite(x[i])) return false;
  return true;
}

// A fit on weights scaled by 2^-e as it is on the caller's: the values and
// the Hessian times 2^e, standard errors times 2^(-e/2), log det plus
// (fitted columns) e log 2.
void unscale_outcome(const ScaledWeights& sw, FitOutcome* out) {
  out->loglik = sw.unscale(out->loglik);
  out->loglik_kernel = sw.unscale(out->loglik_kernel);
  out->log_prior = sw.unscale(out->log_prior);
  out->gradient_norm = sw.unscale(out->gradient_norm);
  for (double& x : out->hessian_diag) x = sw.unscale(x);
  out->hessian_scalar = sw.unscale(out->hessian_scalar);
  if (out->multinomial_limit) return;
  const int e = sw.exponent();
  const int half = e / 2;  // e = 2 half + odd, odd in {-1, 0, 1}
  const int odd = e - 2 * half;
  const double root = odd == 0 ? 1.0 : odd > 0 ? 0.70710678118654752440 : 1.41421356237309504880;
  for (double& x : out->se_alpha) x = std::ldexp(x, -half) * root;
  for (double& x : out->se_log_alpha) x = std::ldexp(x, -half) * root;
  const double fitted =
      static_cast<double>(out->alpha.size()) - static_cast<double>(out->zero_columns);
  out->log_det += fitted * sw.log_scale();
}

}  // namespace

BackendResult table_histograms(const StoredTable& table, HistogramCache& cache,
                               const double* weights, const Interrupt& interrupt,
                               const Histograms** out) {
  if (table.collective != nullptr) return rank_histograms(table, cache, weights, interrupt, out);
  if (const Histograms* h = cache.find(weights)) {
    *out = h;
    return {};
  }
  std::vector<Histograms> one(1);
  const BackendResult r = table.run(Step::kHistograms, [&](Backend& b, const BackendCounts& d) {
    return b.histograms(d, weights, 1, &one, interrupt);
  });
  if (!r.ok()) return r;
  *out = cache.store(std::move(one[0]), weights, table.info->rows);
  return {};
}

BackendResult loglik_sums(const StoredTable& table, HistogramCache& cache, const double* alpha,
                          const double* weights, bool log_param, bool full,
                          const Interrupt& interrupt, double* value, double* gradient,
                          double* hessian_diag, double* hessian_scalar) {
  const size_t V = static_cast<size_t>(table.info->cols);
  double top = 0.0;
  BackendResult r = agreed_weight_top(table, weights, &top);
  if (!r.ok()) return r;
  std::vector<double> g, d;
  double f = 0.0, c = 0.0;
  try {
    g.resize(V);
    d.resize(V);
    const ScaledWeights sw(weights, table.info->rows, 1 << 20, top);
    const Histograms* h = nullptr;
    // A failure here every rank has agreed on already.
    if (!(r = table_histograms(table, cache, sw.data(), interrupt, &h)).ok()) return r;
    // The full value has its own (log-beta) sum: the kernel plus lcoef_sum
    // cancels at deep counts (histogram_sums.hpp).
    histogram_sums(*h, alpha, value && !full ? &f : nullptr, g.data(), d.data(), &c, table.threads);
    if (value && full) f = histogram_full_value(*h, alpha, table.threads);
    if (log_param)
      for (size_t v = 0; v < V; ++v) math::to_log_alpha(alpha[v], &g[v], &d[v]);
    // Back to the caller's weights: every sum is linear in them.
    if (sw.scaled()) {
      f = sw.unscale(f);
      c = sw.unscale(c);
      for (size_t v = 0; v < V; ++v) {
        g[v] = sw.unscale(g[v]);
        d[v] = sw.unscale(d[v]);
      }
    }
    if (!finite_sums(value ? &f : nullptr, 1) || !finite_sums(gradient ? g.data() : nullptr, V) ||
        !finite_sums(hessian_diag ? d.data() : nullptr, V) ||
        !finite_sums(hessian_scalar ? &c : nullptr, 1))
      r = {DIRMN_ERROR_OVERFLOW, "", 0};
  } catch (const std::bad_alloc&) {
    // Over ranks the others wait at the closing vote: it carries this.
    if (table.collective == nullptr) throw;
    r = {DIRMN_ERROR_OUT_OF_MEMORY, "host memory for the summed derivatives", 0};
  }
  // Over ranks, every rank writes or none does.
  if (!(r = ranks_agree(table, r)).ok()) return r;
  if (value) *value = f;
  if (gradient) std::copy(g.begin(), g.end(), gradient);
  if (hessian_diag) std::copy(d.begin(), d.end(), hessian_diag);
  if (hessian_scalar) *hessian_scalar = c;
  return {};
}

BackendResult fit_table(const StoredTable& table, HistogramCache& cache, const double* weights,
                        FitSettings s, FitOutcome* out) {
  double top = 0.0;
  BackendResult r = agreed_weight_top(table, weights, &top);
  if (!r.ok()) return r;
  try {
    const ScaledWeights sw(weights, table.info->rows, 1 << 20, top);
    const Histograms* h = nullptr;
    // A failure here every rank has agreed on already.
    if (!(r = table_histograms(table, cache, sw.data(), s.interrupt, &h)).ok()) return r;
    s.threads = table.threads;
    s.weight_exponent = sw.exponent();
    if (!fit_from_histograms(*h, s, out)) {
      r = {DIRMN_ERROR_INVALID_ARGUMENT, "", 0};
    } else if (out->cancelled) {
      r = {DIRMN_ERROR_CANCELLED, "", 0};
    } else {
      if (sw.scaled()) {
        unscale_outcome(sw, out);
        out->observations = sw.unscale(out->observations);
      }
      if (!finite_sums(&out->loglik, 1) || !finite_sums(&out->loglik_kernel, 1) ||
          !finite_sums(out->hessian_diag.data(), out->hessian_diag.size()) ||
          !finite_sums(&out->hessian_scalar, 1))
        r = {DIRMN_ERROR_OVERFLOW, "", 0};
    }
  } catch (const std::bad_alloc&) {
    // Over ranks the others wait at the closing vote: it carries this.
    if (table.collective == nullptr) throw;
    r = {DIRMN_ERROR_OUT_OF_MEMORY, "host memory for the fit's Newton workspace", 0};
  }
  return ranks_agree(table, r);
}

}  // namespace dirmn
