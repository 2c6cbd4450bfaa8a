// regression.cpp: Dirichlet-multinomial regression by Newton's method.
//
// With eta_bv = x_b . beta_v and alpha_bv = exp(eta_bv), row b's log pmf l_b
// has, in alpha, gradient g_bv = dpoch(alpha_bv, n_bv) - dpoch(A_b, N_b)
// and Hessian diag(h_b) + c_b 11^T with h_bv = tpoch(alpha_bv, n_bv) and
// c_b = -tpoch(A_b, N_b) >= 0 (the per-row derivatives step gives all
// three). In eta the gradient is q_bv = alpha_bv g_bv and the Hessian
// diag(alpha_bv^2 h_bv + q_bv) + c_b alpha_b alpha_b^T, so in vec(beta)
// (coefficient (i, v) at index v p + i):
//   gradient  G_(v,i) = sum_b w_b q_bv x_bi
//   Hessian   H = blockdiag_v( sum_b w_b (alpha^2 h + q)_bv x_b x_b^T )
//                 + sum_b w_b c_b u_b u_b^T,   u_b = alpha_b (x) x_b,
// one p x p block per category plus a term of rank at most the rows,
// which regression_system.* solves in whichever of the two dimensions is
// smaller. Newton's step solves -H d = G, with Levenberg damping where -H
// is not positive definite, and is halved until the log-likelihood does
// not fall. Every sum over rows runs in a fixed order (chunks of
// kRowsPerChunk rows, then the chunks in order), so the results do not
// depend on the thread count.
#include "regression.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "../math/dense.hpp"
#include "../math/distributions.hpp"
#include "../math/sums.hpp"
#include "../math/vector_math.hpp"
#include "../table/table.hpp"
#include "fit.hpp"
#include "ranks.hpp"
#include "regression_eval.hpp"
#include "regression_mp.hpp"
#include "regression_system.hpp"
#include "weights.hpp"

namespace dirmn {
namespace {

using regression_detail::Point;
using regression_detail::RegressionFit;

// Halvings of a Newton step before the fit gives up rising.
constexpr int kMaxHalvings = 60;
// Levenberg damping: first mu (relative to -H's largest diagonal entry),
// its growth, and the most tries.
constexpr double kFirstDamping = 1e-12;
constexpr double kDampingGrowth = 10.0;
constexpr int kMaxDampings = 40;
// A covariate whose part of X' W X its predecessors explain to within this
// (relative to its diagonal) is taken as a combination of them.
constexpr double kRankTolerance = 1e-10;

// Factors -H, damped by mu I where it is not positive definite; *damped
// says whether it was.
bool factor_damped(RegressionSystem& sys, bool* damped) {
  double top = sys.largest_diagonal();
  if (!(top > 0.0)) top = 1.0;
  double mu = 0.0;
  for (int attempt = 0; attempt <= kMaxDampings; ++attempt) {
    if (sys.factor(mu)) {
      *damped = mu > 0.0;
      return true;
    }
    mu = mu == 0.0 ? kFirstDamping * top : mu * kDampingGrowth;
  }
  return false;
}

// X' W X (Cholesky-factored in place, lower) and X' W 1 of an n x p
// row-major design over the rows of positive weight (every rank's, where
// the table is split); *dependent the first column that is a combination
// of those before it (relative tolerance kRankTolerance), or -1.
BackendResult weighted_gram(const StoredTable& table, const double* x, int64_t n, int64_t p, const double* w,
                            std::vector<double>* xtwx, std::vector<double>* xtw1, int64_t* dependent) {
  // X' W X's entries, then X' W 1's: one sum over ranks.
  std::vector<double> sums(static_cast<size_t>(p * p + p), 0.0);
  double* const g = sums.data();
  double* const g1 = g + p * p;
  for (int64_t b = 0; b < n; ++b) {
    const double wb = w[b];
    if (wb == 0.0) continue;
    const double* xb = x + b * p;
    for (int64_t i = 0; i < p; ++i) {
      g1[i] += wb * xb[i];
      for (int64_t j = 0; j <= i; ++j) g[i * p + j] += wb * xb[i] * xb[j];
    }
  }
  if (table.collective != nullptr)
    if (const BackendResult r = sum_over_ranks(*table.collective, {}, g, sums.size()); !r.ok()) return r;
  xtwx->assign(g, g1);
  xtw1->assign(g1, g1 + p);
  *dependent = math::cholesky(xtwx->data(), p, kRankTolerance);
  return {};
}

// The largest |v|, NaN where any is.
double max_abs(const std::vector<double>& v, double scale) {
  double m = 0.0;
  for (double x : v)
    if (!(std::fabs(x) <= m)) m = std::fabs(x);
  return m * scale;
}

}  // namespace

bool regression_alpha(const double* x, int64_t rows, int64_t p, const double* beta, int64_t V,
                      const double* row_weight, double* alpha, int64_t* bad_row,
                      int64_t* bad_category) {
  for (int64_t b = 0; b < rows; ++b) {
    double* a = alpha + b * V;
    if (row_weight != nullptr && row_weight[b] == 0.0) {
      std::fill(a, a + V, 1.0);  // takes no part: any alpha will do
      continue;
    }
    std::fill(a, a + V, 0.0);
    for (int64_t i = 0; i < p; ++i) {
      const double xi = x[b * p + i];
      const double* bi = beta + i * V;
      for (int64_t v = 0; v < V; ++v) a[v] += xi * bi[v];
    }
    exp_many(a, a, V);
    for (int64_t v = 0; v < V; ++v) {
      if (!(a[v] > 0.0) || !std::isfinite(a[v])) {
        *bad_row = b;
        *bad_category = v;
        return false;
      }
    }
  }
  return true;
}

bool regression_alpha_mp(const double* x, int64_t rows, int64_t p, const double* z, int64_t q,
                         const double* beta, const double* gamma, int64_t V, double* alpha,
                         int64_t* bad_row, int64_t* bad_category) {
  MeanPrecisionLayout l;
  l.p = p;
  l.V = V;
  l.q = z != nullptr ? q : 1;
  const std::vector<double> ones(z != nullptr ? 0 : static_cast<size_t>(rows), 1.0);
  return mp_alpha(l, x, z != nullptr ? z : ones.data(), rows, beta, gamma, nullptr, alpha, bad_row,
                  bad_category);
}

namespace {

// A mean/precision fit with one precision that reached a phi beyond every
// counted row's N_b^2 (where a DM differs from the multinomial by less
// than one count's variance per row) may have stopped on the plateau
// toward phi -> infinity, where the likelihood still rises by less than
// the tolerance per step: a table without overdispersion has no finite
// MLE. The fit of the same proportions at phi e^kLimitShift times larger
// tells: if it is not lower, the supremum is the multinomial limit and the
// fit is reported as not converged (multinomial_limit).
constexpr double kLimitShift = 20.0;

BackendResult check_multinomial_limit(const StoredTable& table, HistogramCache& cache,
                                      const RegressionSettings& s, const std::vector<double>& totals,
                                      const std::vector<double>& w, RegressionOutcome* out) {
  const double gamma = out->gamma[0];
  // Over ranks: every rank's rows.
  int64_t below = 0;
  for (size_t b = 0; b < totals.size() && below == 0; ++b) below = w[b] > 0.0 && gamma < 2.0 * std::log(totals[b]);
  if (table.collective != nullptr)
    if (const BackendResult r = sum_over_ranks(*table.collective, {}, &below, 1); !r.ok()) return r;
  if (below > 0) return {};
  RegressionSettings held = s;
  held.log_precision = gamma + kLimitShift;
  held.progress = nullptr;
  RegressionOutcome limit;
  const BackendResult r = fit_regression(table, cache, held, &limit);
  if (!r.ok()) return r;
  if (limit.loglik >= out->loglik - s.tolerance * std::fabs(out->loglik)) {
    out->multinomial_limit = true;
    out->converged = false;
  }
  return {};
}

// fit_regression's body. Over ranks every phase opens with a vote, the
// Newton system is formed whole (the Woodbury form's rows are every
// rank's) and summed over the ranks with the gradient, and every decision
// is taken on the sums, so every rank takes the same steps.
BackendResult fit(const StoredTable& table, HistogramCache& cache, const RegressionSettings& s,
                  RegressionOutcome* out) {
  const int64_t rows = table.info->rows, V = table.info->cols, p = s.p;
  const bool split = table.collective != nullptr;
  MeanPrecisionLayout mp;
  mp.p = p;
  mp.V = V;
  const bool held = s.mean_precision && std::isfinite(s.log_precision);
  mp.q = !s.mean_precision || held ? 0 : s.z != nullptr ? s.q : 1;
  mp.reference = s.reference;
  mp.sum_to_zero = s.sum_to_zero;
  mp.offset = held ? s.log_precision : 0.0;
  const bool structured = !s.mean_precision && !split;
  const int64_t P = s.mean_precision ? mp.parameters() : p * V;
  out->parameters = P;
  // Row totals: rows without counts take no part (their weight is 0).
  std::vector<double> totals(static_cast<size_t>(rows));
  BackendResult r = table.backend->row_totals(*table.data, totals.data());
  double top = 0.0;
  if (!(r = ranks_agree(table, r)).ok() || !(r = agreed_weight_top(table, s.weights, &top)).ok()) return r;
  const ScaledWeights sw(s.weights, rows, 1 << 20, top);
  std::vector<double> w(static_cast<size_t>(rows));
  math::NeumaierSum n_obs;
  int64_t rows_with_counts = 0;
  for (int64_t b = 0; b < rows; ++b) {
    const double wb = sw.data() ? sw.data()[b] : 1.0;
    const bool counted = totals[static_cast<size_t>(b)] > 0.0 && wb > 0.0;
    w[static_cast<size_t>(b)] = counted ? wb : 0.0;
    if (counted) {
      ++rows_with_counts;
      n_obs.add(s.weights ? s.weights[b] : 1.0);
    }
  }
  out->observations = n_obs.value();
  if (split) {
    // Both in one sum (the rows exact in a double below 2^53).
    double n[2] = {out->observations, static_cast<double>(rows_with_counts)};
    if (!(r = sum_over_ranks(*table.collective, {}, n, 2)).ok()) return r;
    out->observations = n[0];
    rows_with_counts = static_cast<int64_t>(n[1]);
  }
  if (rows_with_counts < p) {
    out->too_few_rows = true;
    return {DIRMN_ERROR_INVALID_ARGUMENT, "", 0};
  }
  out->rows_taking_part = rows_with_counts;
  if (RegressionSystem::size(rows_with_counts, P, structured) > kRegMaxSystem) {
    out->system_too_large = true;
    return {DIRMN_ERROR_INVALID_ARGUMENT, "", 0};
  }

  // Full column rank of the designs over the rows that count: X' W X
  // (and Z' W Z), with X' W 1 (Z' W 1) for the start.
  std::vector<double> xtwx, xtw1, ztwz, ztw1;
  int64_t dependent = -1;
  if (!(r = weighted_gram(table, s.x, rows, p, w.data(), &xtwx, &xtw1, &dependent)).ok()) return r;
  if (dependent >= 0) {
    out->bad_covariate = dependent;
    return {DIRMN_ERROR_INVALID_ARGUMENT, "", 0};
  }
  if (mp.q > 0 && s.z != nullptr) {
    int64_t dz = -1;
    if (!(r = weighted_gram(table, s.z, rows, mp.q, w.data(), &ztwz, &ztw1, &dz)).ok()) return r;
    if (dz >= 0) {
      out->bad_precision_covariate = dz;
      return {DIRMN_ERROR_INVALID_ARGUMENT, "", 0};
    }
  }

  // Start: the shared-alpha fit, regressed on the design (exactly the
  // intercept where the design has one).
  FitSettings fs;
  fs.interrupt = s.interrupt;
  FitOutcome shared;
  r = fit_table(table, cache, s.weights, fs, &shared);
  if (r.status == DIRMN_ERROR_INVALID_ARGUMENT) {
    out->too_few_rows = true;
    return r;
  }
  if (!r.ok()) return r;
  for (int64_t v = 0; v < V; ++v)
    if (!(shared.alpha[static_cast<size_t>(v)] > 0.0)) {
      out->bad_category = v;
      return {DIRMN_ERROR_INVALID_ARGUMENT, "", 0};
    }
  std::vector<double> z = xtw1;
  math::cholesky_solve(xtwx.data(), p, z.data());
  std::vector<double> beta(static_cast<size_t>(P));
  if (s.mean_precision) {
    // log pi_v less the reference's (or the mean's), and log A.
    std::vector<double> la(static_cast<size_t>(V));
    double mean = 0.0, total = 0.0;
    for (int64_t v = 0; v < V; ++v) {
      la[static_cast<size_t>(v)] = std::log(shared.alpha[static_cast<size_t>(v)]);
      mean += la[static_cast<size_t>(v)] / static_cast<double>(V);
      total += shared.alpha[static_cast<size_t>(v)];
    }
    const double base = s.sum_to_zero ? mean : la[static_cast<size_t>(s.reference)];
    for (int64_t k = 0; k < V - 1; ++k)
      for (int64_t i = 0; i < p; ++i)
        beta[static_cast<size_t>(k * p + i)] = z[static_cast<size_t>(i)] * (la[static_cast<size_t>(mp.category(k))] - base);
    // gamma: log A regressed on z (exactly log A at an intercept).
    if (s.z != nullptr && mp.q > 0) {
      math::cholesky_solve(ztwz.data(), mp.q, ztw1.data());
      for (int64_t j = 0; j < mp.q; ++j)
        beta[static_cast<size_t>(P - mp.q + j)] = ztw1[static_cast<size_t>(j)] * std::log(total);
    } else if (!held) {
      beta[static_cast<size_t>(P - 1)] = std::log(total);
    }
  } else {
    for (int64_t v = 0; v < V; ++v)
      for (int64_t i = 0; i < p; ++i)
        beta[static_cast<size_t>(v * p + i)] = z[static_cast<size_t>(i)] * std::log(shared.alpha[static_cast<size_t>(v)]);
  }

  RegressionFit fit(table, s, w.data(), mp);
  Point cur, trial;
  // The model at beta, its value (and validity) over every rank's rows.
  const auto evaluate = [&](const std::vector<double>& b, Point* pt) {
    BackendResult e = fit.evaluate(b, true, pt);
    if (!split) return e;
    double v[2] = {pt->valid ? pt->value : 0.0, pt->valid ? 0.0 : 1.0};
    if (!(e = sum_over_ranks(*table.collective, e, v, 2)).ok()) return e;
    pt->value = v[0];
    pt->valid = v[1] == 0.0 && std::isfinite(v[0]);
    return e;
  };
  if (!(r = evaluate(beta, &cur)).ok()) return r;
  if (!cur.valid) {
    out->bad_covariate = fit.last_bad_row();  // the row, for the message
    out->bad_category = fit.last_bad_category();
    // Over ranks the rank that holds the row says so, the others name it.
    const BackendResult overflow{DIRMN_ERROR_OVERFLOW, "", 0};
    if (split && !(r = ranks_agree(table, out->bad_category >= 0 ? overflow : BackendResult{})).ok()) return r;
    return overflow;
  }
  RegressionSystem sys(rows_with_counts, p, s.mean_precision ? V - 1 : V, s.mean_precision ? mp.q : 0, structured,
                       [&table](int64_t n, const std::function<void(int64_t)>& body, double work) {
                         table.threads->parallel_for(n, body, work);
                       });
  std::vector<double> grad, blocks, c, step(static_cast<size_t>(P));
  // The derivatives at cur, and -H's parts handed to the system (over
  // ranks: every rank's -H and gradient summed).
  const auto update = [&]() -> BackendResult {
    fit.derivatives(&cur, &grad, &blocks, &c);
    HessianParts h;
    h.rows = rows;
    h.p = p;
    h.V = V;
    h.x = s.x;
    h.alpha = cur.alpha.data();
    h.weight = w.data();
    h.blocks = blocks.data();
    h.c = c.data();
    if (s.mean_precision) {
      h.terms = mp.terms();
      h.fill = [&](int64_t b, double* u, int64_t ldu, double* sb) { fit.terms_mp(cur, b, u, ldu, sb); };
    }
    sys.prepare(h);
    if (!split) return BackendResult{};
    BackendResult e = sum_over_ranks(*table.collective, {}, grad.data(), grad.size());
    if (!e.ok() || !(e = sum_by_broadcast(*table.collective, e, sys.dense(), sys.dense_size())).ok()) return e;
    sys.summed();
    return e;
  };
  if (!(r = update()).ok()) return r;
  int iterations = 0;
  bool converged = false;
  // The progress callback after each step; CANCELLED where it (on any
  // rank) cancels.
  const BackendResult cancel{DIRMN_ERROR_CANCELLED, "", 0};
  const auto report = [&](int iteration) {
    const bool stop = s.progress != nullptr &&
                      s.progress(iteration, sw.unscale(cur.value), max_abs(grad, std::ldexp(1.0, sw.exponent())),
                                 s.progress_data) != 0;
    const BackendResult e = ranks_agree(table, stop ? cancel : BackendResult{});
    if (e.status == DIRMN_ERROR_CANCELLED) {
      out->cancelled = true;
      out->iterations = iteration;
    }
    return e;
  };
  while (true) {
    bool damped = false;
    if (!factor_damped(sys, &damped)) break;
    step = grad;
    sys.solve(step.data());
    double gain = 0.0;
    for (int64_t k = 0; k < P; ++k) gain += 0.5 * grad[static_cast<size_t>(k)] * step[static_cast<size_t>(k)];
    if (!damped && gain <= s.tolerance * std::fabs(cur.value)) {
      converged = true;
      if (iterations >= s.max_iterations) break;
      // The last step too, where it does not lower the log-likelihood:
      // within the tolerance the value is found, but the coefficients
      // are only as close as the square root of the gain, and Newton's
      // last step takes them to the optimum's rounding.
      std::vector<double> last(static_cast<size_t>(P));
      for (int64_t k = 0; k < P; ++k)
        last[static_cast<size_t>(k)] = cur.beta[static_cast<size_t>(k)] + step[static_cast<size_t>(k)];
      if (!(r = evaluate(last, &trial)).ok()) return r;
      if (trial.valid && trial.value >= cur.value) {
        std::swap(cur, trial);
        ++iterations;
        if (!(r = update()).ok() || !(r = report(iterations)).ok()) return r;
      }
      break;
    }
    if (iterations >= s.max_iterations) break;
    if (!(r = ranks_agree(table, s.interrupt.poll() ? cancel : BackendResult{})).ok()) return r;
    bool accepted = false;
    double t = 1.0;
    std::vector<double> next(static_cast<size_t>(P));
    for (int h = 0; h <= kMaxHalvings && !accepted; ++h, t *= 0.5) {
      for (int64_t k = 0; k < P; ++k)
        next[static_cast<size_t>(k)] = cur.beta[static_cast<size_t>(k)] + t * step[static_cast<size_t>(k)];
      if (next == cur.beta) break;  // the step no longer moves beta
      if (!(r = evaluate(next, &trial)).ok()) return r;
      // A whole step may leave the value as it is (at the optimum's
      // rounding); a halved one must raise it.
      accepted = trial.valid && (trial.value > cur.value || (h == 0 && trial.value == cur.value));
    }
    if (!accepted) break;
    std::swap(cur, trial);
    ++iterations;
    if (!(r = update()).ok() || !(r = report(iterations)).ok()) return r;
  }

  out->beta.assign(static_cast<size_t>(p * V), 0.0);
  const int64_t blocks_n = s.mean_precision ? V - 1 : V;
  if (s.mean_precision) {
    out->gamma.resize(static_cast<size_t>(mp.q));
    mp_expand(mp, cur.beta.data(), out->beta.data(), out->gamma.data());
    if (held) out->gamma.assign(1, s.log_precision);
  } else {
    for (int64_t v = 0; v < V; ++v)
      for (int64_t i = 0; i < p; ++i)
        out->beta[static_cast<size_t>(i * V + v)] = cur.beta[static_cast<size_t>(v * p + i)];
  }
  out->wald_df = blocks_n;
  out->wald_beta.resize(static_cast<size_t>(p * blocks_n));
  for (int64_t k = 0; k < blocks_n; ++k)
    for (int64_t i = 0; i < p; ++i)
      out->wald_beta[static_cast<size_t>(i * blocks_n + k)] = cur.beta[static_cast<size_t>(k * p + i)];
  out->loglik = sw.unscale(cur.value);
  out->gradient_norm = max_abs(grad, std::ldexp(1.0, sw.exponent()));
  out->iterations = iterations;
  out->converged = converged;
  // The covariance: (-H)^-1 on the caller's weights, where -H is positive
  // definite at the fit.
  out->hessian_definite = sys.factor(0.0);
  if (out->hessian_definite) {
    out->covariance = sys.covariance(std::ldexp(1.0, -sw.exponent()));
    const std::vector<double>& var = out->covariance->variances();
    out->std_errors.assign(static_cast<size_t>(p * V), 0.0);
    for (int64_t k = 0; k < blocks_n; ++k) {
      const int64_t v = s.mean_precision ? mp.category(k) : k;
      for (int64_t i = 0; i < p; ++i)
        out->std_errors[static_cast<size_t>(i * V + v)] = std::sqrt(var[static_cast<size_t>(k * p + i)]);
    }
    if (s.mean_precision) {
      if (s.sum_to_zero)  // beta_r = -sum of the free ones: the variance of their sum
        for (int64_t i = 0; i < p; ++i)
          out->std_errors[static_cast<size_t>(i * V + s.reference)] = std::sqrt(out->covariance->block_sum_variance(i));
      out->gamma_std_errors.assign(static_cast<size_t>(std::max<int64_t>(mp.q, 1)), 0.0);  // held: fixed
      for (int64_t j = 0; j < mp.q; ++j)
        out->gamma_std_errors[static_cast<size_t>(j)] = std::sqrt(var[static_cast<size_t>(p * (V - 1) + j)]);
    }
  }
  // The fit's closing vote (over ranks: every rank has its outputs).
  r = std::isfinite(out->loglik) ? BackendResult{} : BackendResult{DIRMN_ERROR_OVERFLOW, "", 0};
  if (!(r = ranks_agree(table, r)).ok()) return r;
  if (s.mean_precision && !held && s.z == nullptr && converged && s.check_limit)
    return check_multinomial_limit(table, cache, s, totals, w, out);
  return {};
}

}  // namespace

BackendResult fit_regression(const StoredTable& table, HistogramCache& cache,
                             const RegressionSettings& s, RegressionOutcome* out) {
  if (table.collective == nullptr) return fit(table, cache, s, out);
  try {
    return fit(table, cache, s, out);
  } catch (const std::bad_alloc&) {
    return vote_out_of_memory(table, "host memory for the regression");
  }
}

bool regression_wald(const RegressionCovariance& cov, const double* beta, int64_t V, int64_t i,
                     double* statistic, double* p_value) {
  double w = 0.0;
  if (!cov.wald(beta, i, &w)) return false;
  *statistic = w;
  *p_value = math::chisq_upper(w, static_cast<double>(V));
  return true;
}

}  // namespace dirmn
