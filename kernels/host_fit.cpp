// host_fit.cpp: the maximum-likelihood (or, with a Gamma prior, MAP) alpha
// of a weighted table from its count histograms in host memory: Newton's
// method on log alpha with O(V) Sherman-Morrison steps, safeguarded by a
// step cap, step halving, a step of the precision alone and Minka's fixed
// point where Newton does not ascend, from any finite positive start. The
// batched component fits (fit_components_on_host) run it on the host
// threads.
#include "host_fit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <new>

#include "math/newton.hpp"
#include "math/special.hpp"
#include "math/vector_math.hpp"
#include "table/histogram_sums.hpp"

namespace dirmn {
namespace {

constexpr double kMinPrecision = 1e-6;   // start: sum of alpha at least this
constexpr double kMaxPrecision = 1e10;   // and at most this
// Every alpha of the iteration stays within these. Below ~1e-154 the
// trigamma sums (~1/alpha^2) overflow, and their chain rule to log alpha
// turns into 0 x Inf; a start of 1e308 has an infinite sum. The MLE of a
// column with counts is inside them (the log-likelihood falls to -Inf as
// its alpha goes to 0).
constexpr double kMinAlpha = 1e-150;
constexpr double kMaxAlpha = 1e150;
// Halvings of a precision step (newton()) before Minka's step is taken.
constexpr int kPrecisionHalvings = 6;
// A gradient within this many times the tolerance is stationary where the
// value no longer moves in double precision (newton()).
constexpr double kRoundingGradient = 100.0;
constexpr double kEpsilon = 2.220446049250313e-16;

// The fit works on the active columns (those with counts) only: every
// evaluation costs what they cost, not what the table's width does (a
// mixture component of a wide sparse table has counts in a few hundred of
// its columns).
struct Problem {
  const Histograms& h;
  std::vector<int64_t> active;
  FlatHistograms flat;             // h's active columns as every evaluation reads them
  double shape = 0.0, rate = 0.0;  // Gamma prior on alpha (rate 0: none)
  double prior_weight = 1.0;       // the prior's log density enters times this
  HostThreads* threads = nullptr;

  // loglik and derivatives with respect to log alpha of the active columns.
  // want_value false: derivatives only (the value, returned as 0, costs a
  // log per histogram entry that Newton's direction does not need).
  double eval(const std::vector<double>& alpha, std::vector<double>* g_theta,
              std::vector<double>* h_theta, double* c, bool want_value = true) {
    double f = 0.0, cc = 0.0;
    const bool derivs = g_theta != nullptr;
    if (derivs) {
      g_theta->resize(active.size());
      h_theta->resize(active.size());
    }
    histogram_sums(flat, alpha.data(), want_value ? &f : nullptr, derivs ? g_theta->data() : nullptr,
                   derivs ? h_theta->data() : nullptr, derivs ? &cc : nullptr, threads);
    if (rate > 0.0 && want_value)
      for (double a : alpha) f += log_prior(a);
    if (derivs) {
      for (size_t i = 0; i < active.size(); ++i) {
        const double a = alpha[i];
        double& gv = (*g_theta)[i];
        double& dv = (*h_theta)[i];
        math::to_log_alpha(a, &gv, &dv);
        if (rate > 0.0) math::add_prior_derivatives(a, shape, rate, prior_weight, &gv, &dv);
      }
      *c = cc;
    }
    return f;
  }

  // Gamma(shape, rate) log density of log alpha at alpha, times the
  // prior's weight.
  double log_prior(double a) const {
    return prior_weight *
           (shape * std::log(a) - rate * a + shape * std::log(rate) - std::lgamma(shape));
  }
};

// Solves (diag(hd) + c u u^T) x = b by Sherman-Morrison. Returns false when
// the matrix is not negative definite (then Newton is not an ascent method).
bool solve_dpr1(const std::vector<double>& hd, double c, const std::vector<double>& u,
                const std::vector<double>& b, std::vector<double>* x) {
  math::RankOneSums sums;
  for (size_t i = 0; i < hd.size() && sums.definite; ++i)
    math::add_rank_one_terms(hd[i], u[i], b[i], &sums);
  const double denom = math::rank_one_denominator(c, sums.uDu);
  if (!math::rank_one_usable(sums.definite, denom)) return false;
  x->resize(hd.size());
  for (size_t i = 0; i < hd.size(); ++i)
    (*x)[i] = math::rank_one_solution(hd[i], u[i], b[i], c, sums.uDb, denom);
  return true;
}

double clamp_alpha(double a) { return std::min(std::max(a, kMinAlpha), kMaxAlpha); }

// trial = alpha * exp(t step): a step of t along step in log alpha, kept
// inside the iteration's range.
void move_alpha(const std::vector<double>& alpha, const std::vector<double>& step, double t,
                std::vector<double>* trial) {
  const size_t m = alpha.size();
  for (size_t i = 0; i < m; ++i) (*trial)[i] = t * step[i];
  exp_many(trial->data(), trial->data(), static_cast<int64_t>(m));
  for (size_t i = 0; i < m; ++i) (*trial)[i] = clamp_alpha((*trial)[i] * alpha[i]);
}

// The max-norm; NaN when an entry is NaN (std::max would drop it, and a
// NaN gradient would read as a stationary point).
double max_abs(const std::vector<double>& v) {
  double m = 0.0;
  for (double x : v) {
    if (std::isnan(x)) return x;
    m = std::max(m, std::fabs(x));
  }
  return m;
}

// A caller's start (or a warm start), inside [kMinAlpha, kMaxAlpha] and
// with a sum of alpha in [kMinPrecision, kMaxPrecision]; its proportions
// are kept. A start already there is left bit for bit as it is.
void bring_into_range(std::vector<double>* alpha) {
  double top = 0.0;
  for (double a : *alpha) top = std::max(top, a);
  double rel = 0.0;  // the sum relative to the largest: no overflow at 1e308
  bool inside = true;
  for (double a : *alpha) {
    rel += a / top;
    inside = inside && a >= kMinAlpha && a <= kMaxAlpha;
  }
  const double sum = top * rel;
  const double target = std::min(std::max(sum, kMinPrecision), kMaxPrecision);
  if (inside && target == sum) return;
  for (double& a : *alpha) a = clamp_alpha(target * ((a / top) / rel));
}

// The total weight of the rows with counts: the scale of the gradient.
double rows_weight(const Histogram& total) {
  if (!total.dense) {
    double w = 0.0;
    for (double x : total.weight) w += x;
    return w;
  }
  if (total.base > 0.0) return total.base_weight;
  return total.cum.empty() ? 0.0 : total.cum[0];
}


// Where Newton's iteration ended.
enum class Newton { kConverged, kStopped, kCancelled };

// The iterate and its derivatives in log alpha (diag(hd) + c alpha alpha^T).
struct Iterate {
  std::vector<double> g, hd;
  double c = 0.0, f = 0.0;
  int iterations = 0;
};

// Method-of-moments alpha from the proportions p (sum of squares q) and the
// second factorial moments.
void moments_start(const std::vector<double>& p, double q, double pair_same, double pair_all,
                   std::vector<double>* alpha) {
  const size_t m = p.size();
  const double F = pair_all > 0.0 ? pair_same / pair_all : 1.0;
  double A = (F > q) ? (1.0 - F) / (F - q) : kMaxPrecision;
  A = std::min(std::max(A, kMinPrecision), kMaxPrecision);
  // Under a prior, empty columns start at a small share instead of 0.
  for (size_t i = 0; i < m; ++i) (*alpha)[i] = A * std::max(p[i], 1e-3 / static_cast<double>(m));
}

// Newton's method on log alpha from *alpha, safeguarded by a step cap and
// step halving; where Newton does not ascend, a step of the precision alone
// (every log alpha moved together: at a start far above the optimum the
// likelihood is convex in log A and Newton heads for the multinomial limit),
// then Minka's fixed point. Converged when the step's predicted gain is
// below tolerance x |f| and the gradient below sqrt(tolerance) x g_scale,
// at finite values: a gain test alone passes where the quadratic model is
// flat, far from the optimum (alpha ~1e-200).
Newton newton(Problem& P, const Histograms& h, const FitSettings& s, double g_scale,
              int max_iterations, int counted_before, std::vector<double>* alpha_io,
              Iterate* out) {
  std::vector<double>& alpha = *alpha_io;
  const size_t m = alpha.size();
  const double g_tol = std::sqrt(s.tolerance) * g_scale;
  std::vector<double>& g = out->g;
  std::vector<double>& hd = out->hd;
  std::vector<double> step, trial(m), neg_g, g_try, hd_try;
  const std::vector<double> ones(m, 1.0);  // the precision's direction in log alpha
  double c = 0.0, c_try = 0.0;
  double f = P.eval(alpha, &g, &hd, &c);
  double f_before = f;  // the value an iteration before
  Newton result = Newton::kStopped;
  // After each iteration (not at the start): the caller's count of
  // iterations, the value after it; true cancels.
  const auto report = [&](int done_steps, double gnorm) {
    if (!s.progress) return false;
    const double reported = std::ldexp(s.progress_full ? f + h.lcoef_sum : f, s.weight_exponent);
    return s.progress(counted_before + done_steps, reported,
                      std::ldexp(gnorm, s.weight_exponent), s.progress_data) != 0;
  };
  int it = 0;
  for (;; ++it) {
    const double gnorm = max_abs(g);
    if (it > 0 && report(it, gnorm)) {
      result = Newton::kCancelled;
      break;
    }
    if (s.interrupt.poll()) {
      result = Newton::kCancelled;
      break;
    }
    neg_g.resize(m);
    for (size_t i = 0; i < m; ++i) neg_g[i] = -g[i];
    const bool newton_ok = std::isfinite(f) && solve_dpr1(hd, c, alpha, neg_g, &step);
    double gain = 0.0;  // predicted increase: half the Newton decrement squared
    if (newton_ok)
      for (size_t i = 0; i < m; ++i) gain += math::gain_term(g[i], step[i]);
    // Converged when the Newton step's predicted gain is below tolerance;
    // that last step is still taken (it costs O(V)), since where the
    // prediction is that small the step is accurate to its square.
    // The gradient of a table of deep counts cannot be resolved below the
    // rounding of its sums (each a difference of digammas summed over
    // rows): where the last Newton step no longer changed the value in
    // double precision, a gradient within kRoundingGradient times the
    // tolerance is stationary too (an M step on 26 rows of counts to 1e6
    // otherwise ran 200 iterations at a gradient of 1.3 g_tol).
    const bool at_rounding = it > 0 && std::fabs(f - f_before) <= 4.0 * kEpsilon * std::fabs(f) &&
                             gnorm <= kRoundingGradient * g_tol;
    const bool done = newton_ok && math::gain_converged(gain, f, s.tolerance) &&
                      (gnorm <= g_tol || at_rounding);
    if (done) {
      move_alpha(alpha, step, 1.0, &trial);
      std::vector<double> g2, hd2;
      double c2 = 0.0;
      const double f2 = P.eval(trial, &g2, &hd2, &c2);
      if (f2 >= f) {
        alpha.swap(trial);
        g.swap(g2);
        hd.swap(hd2);
        c = c2;
        f = f2;
      }
      result = Newton::kConverged;
      break;
    }
    if (it >= max_iterations) break;

    bool moved = false, moved_with_derivs = false;
    double f_moved = f;
    if (newton_ok && gain > 0.0) {
      double t = math::first_step_length(max_abs(step));
      for (int k = 0; k < math::kMaxHalvings && !moved; ++k, t *= 0.5) {
        move_alpha(alpha, step, t, &trial);
        // The first, full step is usually taken: its derivatives come in the
        // same pass as its value (one pass instead of two).
        const double ft = k == 0 ? P.eval(trial, &g_try, &hd_try, &c_try)
                                 : P.eval(trial, nullptr, nullptr, nullptr);
        if (ft >= f) {
          moved = true;
          moved_with_derivs = k == 0;
          f_moved = ft;
        }
      }
    }
    if (!moved) {
      // The precision alone, f(t) = f(alpha e^t) with f' = sum g and
      // f'' = 1^T H 1, where f is convex along it: there Newton heads for
      // the multinomial limit and Minka's step crawls (a start far above
      // the optimum). A full step of kMaxLogStep the way the slope rises,
      // halved a few times; elsewhere Minka's step does better.
      double d1 = 0.0, d2 = 0.0, a_sum = 0.0;
      for (size_t i = 0; i < m; ++i) {
        d1 += g[i];
        d2 += hd[i];
        a_sum += alpha[i];
      }
      d2 += c * a_sum * a_sum;
      if (std::isfinite(d1) && d2 >= 0.0 && std::isfinite(d2) && d1 != 0.0) {
        double t = std::copysign(math::kMaxLogStep, d1);
        for (int k = 0; k < kPrecisionHalvings && !moved; ++k, t *= 0.5) {
          move_alpha(alpha, ones, t, &trial);
          const double ft = P.eval(trial, nullptr, nullptr, nullptr);
          if (ft > f) {
            moved = true;
            f_moved = ft;
          }
        }
      }
    }
    if (!moved) {
      // Minka's fixed point (an MM step, so it never lowers the likelihood):
      // alpha_v <- alpha_v * sum_b w dpoch(alpha_v, n_bv) / sum_b w dpoch(A, N_b)
      // (math::minka_step).
      double a_sum = 0.0;
      for (double a : alpha) a_sum += a;
      const double denom = histogram_terms(h.total, a_sum, false, true, false).d;
      for (size_t i = 0; i < m; ++i) {
        // numer = sum_b w dpoch(alpha_v, n_bv), formed directly: as the
        // gradient plus denom it cancelled to 0 or below for a column whose
        // weight is tiny beside the table's (alpha 0 or negative, a log of
        // it -inf or NaN, and the fit "converged" there). The step stays in
        // the range the iteration keeps, so every log and trigamma stays
        // finite.
        const HistogramTerms col = histogram_terms(h.column[static_cast<size_t>(P.active[i])],
                                                   alpha[i], false, true, false);
        trial[i] = clamp_alpha(math::minka_step(alpha[i], col.d, denom, s.prior_shape,
                                                s.prior_rate, P.prior_weight));
      }
    }
    alpha.swap(trial);
    // An accepted Newton step's value (and for a full step its derivatives)
    // is known from its trial.
    double f_new;
    if (moved_with_derivs) {
      g.swap(g_try);
      hd.swap(hd_try);
      c = c_try;
      f_new = f_moved;
    } else if (moved) {
      P.eval(alpha, &g, &hd, &c, false);
      f_new = f_moved;
    } else {
      f_new = P.eval(alpha, &g, &hd, &c);
    }
    const bool stalled = !moved && !(f_new > f);
    f_before = f;
    f = f_new;
    if (stalled && max_abs(g) == 0.0 && std::isfinite(f)) {
      result = report(++it, 0.0) ? Newton::kCancelled : Newton::kConverged;
      break;
    }
  }
  out->c = c;
  out->f = f;
  out->iterations = it;
  return result;
}

}  // namespace

bool fit_from_histograms(const Histograms& h, const FitSettings& s, FitOutcome* out) {
  const size_t V = static_cast<size_t>(h.cols);
  const bool prior = s.prior_rate > 0.0;
  std::vector<int64_t> active;
  double n_total = 0.0;
  // Without a prior only the columns with weight take part: from the
  // histograms' list where they keep one (the others' are empty, first
  // moment 0: the same sum), else from every column.
  const auto consider = [&](size_t v) {
    if (prior || !h.column[v].empty()) active.push_back(static_cast<int64_t>(v));
    n_total += h.column[v].first_moment;
  };
  if (!h.column.all_stored() && !prior) {
    for (int64_t v : h.column.listed()) consider(static_cast<size_t>(v));
  } else {
    for (size_t v = 0; v < V; ++v) consider(v);
  }
  FlatHistograms flat(h, active);
  Problem P{h, std::move(active), std::move(flat), s.prior_shape, s.prior_rate,
            std::ldexp(1.0, -s.weight_exponent), s.threads};
  if (P.active.empty() || !(n_total > 0.0)) return false;
  const size_t m = P.active.size();
  out->zero_columns = static_cast<int64_t>(V - m);
  out->parameters = static_cast<int64_t>(m);
  out->observations = rows_weight(h.total);
  out->alpha.assign(V, 0.0);
  if (s.want_se) {
    out->se_alpha.assign(V, 0.0);
    out->se_log_alpha.assign(V, 0.0);
  }

  // Multinomial proportions, and the second-factorial-moment statistics that
  // give both the method-of-moments start and the test for overdispersion:
  // under DM, sum_bv w n(n-1) = [sum_b w N(N-1)] (A q + 1) / (A + 1), q = sum p^2.
  std::vector<double> p(m);
  double q = 0.0, pair_same = 0.0, limit_slope = 0.0;
  for (size_t i = 0; i < m; ++i) {
    const Histogram& col = h.column[static_cast<size_t>(P.active[i])];
    p[i] = col.first_moment / n_total;
    q += p[i] * p[i];
    pair_same += col.second_factorial;
    if (p[i] > 0.0) limit_slope += col.second_factorial / p[i];
  }
  const double pair_all = h.total.second_factorial;
  // d loglik / d(1/A) at A -> infinity with alpha = A p: positive means the
  // likelihood still rises toward the multinomial limit (no overdispersion).
  limit_slope -= pair_all;
  if (!prior && (m == 1 || !(limit_slope > 0.0))) {
    // One category, or no overdispersion: the supremum is the multinomial.
    out->multinomial_limit = m > 1;
    double f = 0.0;
    for (size_t i = 0; i < m; ++i)
      f += h.column[static_cast<size_t>(P.active[i])].first_moment * std::log(p[i]);
    for (size_t i = 0; i < m; ++i) out->alpha[static_cast<size_t>(P.active[i])] = p[i];
    out->loglik_kernel = f;
    // The multinomial log pmf keeps kernel + coefficients: its terms do not
    // cancel within a cell as the DM's do (n log p - log n! ~ -n log n; the
    // ~N log N parts cancel only across a row's cells, which the histograms
    // no longer pair), and its value moves by n_v ulp(1) when p_v moves by an
    // ulp, so ~N eps absolute is all the returned p determine anyway.
    out->loglik = f + h.lcoef_sum;
    out->precision = std::numeric_limits<double>::infinity();
    out->converged = true;
    if (m == 1) {
      // A single category has probability one whatever alpha: any alpha is
      // an MLE; report the proportions (1) and a finite precision.
      out->precision = 1.0;
      out->multinomial_limit = false;
    }
    return true;
  }

  std::vector<double> alpha(m);
  const bool from_caller = s.start != nullptr;
  if (from_caller) {
    for (size_t i = 0; i < m; ++i) alpha[i] = s.start[P.active[i]];
    bring_into_range(&alpha);
  } else {
    moments_start(p, q, pair_same, pair_all, &alpha);
  }
  // The gradient's scale: its entries are sums over the rows with counts
  // of terms below 1 each (and the prior's, below its shape).
  const double g_scale =
      rows_weight(h.total) + (prior ? P.prior_weight * s.prior_shape * static_cast<double>(m) : 0.0);
  Iterate st;
  Newton run = newton(P, h, s, g_scale, s.max_iterations, 0, &alpha, &st);
  int it = st.iterations;
  // A start of the caller's that ends nowhere (a flat stretch Newton and
  // Minka crawl along, the limits of the range) is given up for the
  // method of moments' start, with a new budget.
  if (from_caller && s.restart && run == Newton::kStopped) {
    Iterate again;
    std::vector<double> mom(m);
    moments_start(p, q, pair_same, pair_all, &mom);
    const Newton run2 = newton(P, h, s, g_scale, s.max_iterations, it, &mom, &again);
    if (run2 == Newton::kCancelled || run2 == Newton::kConverged || again.f > st.f) {
      alpha.swap(mom);
      st = std::move(again);
      run = run2;
    }
    it += again.iterations;
  }
  if (run == Newton::kCancelled) {
    out->cancelled = true;
    out->iterations = it;
    return true;
  }
  out->converged = run == Newton::kConverged;
  std::vector<double>& g = st.g;
  std::vector<double>& hd = st.hd;
  const double c = st.c;
  const double f = st.f;

  out->iterations = it;
  out->loglik_kernel = f;
  out->gradient_norm = max_abs(g);
  double a_sum = 0.0;
  for (size_t i = 0; i < m; ++i) {
    out->alpha[static_cast<size_t>(P.active[i])] = alpha[i];
    a_sum += alpha[i];
  }
  out->precision = a_sum;
  if (prior) {
    for (size_t i = 0; i < m; ++i) out->log_prior += P.log_prior(alpha[i]);
    out->loglik_kernel -= out->log_prior;
  }
  // The log pmf (no prior term) in the log-beta form, from the histograms
  // already in host memory: f + lcoef_sum cancelled to ~5e-10 relative at
  // counts ~1e6-1e7 (histogram_sums.hpp). One evaluation, not per iteration.
  if (s.want_loglik) {
    std::vector<double> alpha_full(V, 0.0);
    for (size_t i = 0; i < m; ++i) alpha_full[static_cast<size_t>(P.active[i])] = alpha[i];
    out->loglik = histogram_full_value(h, alpha_full.data(), s.threads);
  } else {
    out->loglik = out->loglik_kernel + h.lcoef_sum;
  }
  // Standard errors from the inverse observed information on the log scale,
  // whose diagonal Sherman-Morrison gives in O(V):
  // [H^-1]_ii = 1/h_i - c (u_i/h_i)^2 / (1 + c sum u^2/h).
  math::RankOneSums sums;
  for (size_t i = 0; i < m; ++i) math::add_rank_one_terms(hd[i], alpha[i], 0.0, &sums);
  const double denom = math::rank_one_denominator(c, sums.uDu);
  if (math::rank_one_usable(sums.definite, denom)) {
    double sum_log = 0.0;
    for (size_t i = 0; i < m; ++i) sum_log += std::log(-hd[i]);
    out->log_det = math::rank_one_log_det(sum_log, denom);
    for (size_t i = 0; i < m && s.want_se; ++i) {
      const double se = std::sqrt(math::rank_one_variance(hd[i], alpha[i], c, denom));
      out->se_log_alpha[static_cast<size_t>(P.active[i])] = se;
      out->se_alpha[static_cast<size_t>(P.active[i])] = se * alpha[i];
    }
  }
  if (s.want_hessian) {
    // With respect to alpha, at the fit: columns outside it at the
    // smallest normal alpha (their entries are 0, and the sum of alpha is
    // unchanged).
    std::vector<double> at(V, std::numeric_limits<double>::min());
    for (size_t i = 0; i < m; ++i) at[static_cast<size_t>(P.active[i])] = alpha[i];
    std::vector<double> gradient(V);
    out->hessian_diag.assign(V, 0.0);
    histogram_sums(h, at.data(), nullptr, gradient.data(), out->hessian_diag.data(),
                   &out->hessian_scalar, s.threads);
  }
  return true;
}


BackendResult fit_components_on_host(const std::vector<Histograms>& hist, const EmFitSettings& s,
                                     const char* fit, const char* warm, int64_t cols,
                                     HostThreads& threads, double* alpha, EmFitOutcome* out) {
  const int64_t k = static_cast<int64_t>(hist.size());
  std::vector<FitOutcome> fo;
  std::vector<char> state;  // per component: 0 not fitted, 1 fitted, 2 no counts, 3 no room
  try {
    fo.resize(static_cast<size_t>(k));
    state.assign(static_cast<size_t>(k), 0);
  } catch (const std::bad_alloc&) {
    return {DIRMN_ERROR_OUT_OF_MEMORY, "host memory for the M-step fits", 0};
  }
  const auto fit_one = [&](int64_t jj) {
    const size_t j = static_cast<size_t>(jj);
    if (!fit[j]) return;
    FitSettings fs;
    fs.tolerance = s.tolerance;
    fs.max_iterations = warm[j] ? s.warm_iterations : s.full_iterations;
    fs.want_loglik = false;  // the EM's loglik comes from its E step
    fs.want_se = false;      // nor does it read standard errors
    fs.restart = false;      // the EM iterates on anyway
    fs.weight_exponent = s.weight_exponent;
    fs.prior_shape = s.prior_shape;
    fs.prior_rate = s.prior_rate;
    if (warm[j]) fs.start = alpha + jj * cols;
    try {
      state[j] = fit_from_histograms(hist[j], fs, &fo[j]) ? 1 : 2;
    } catch (const std::bad_alloc&) {
      state[j] = 3;
    }
  };
  // A fit's Newton step costs about a few passes over its columns and
  // histogram entries (a small table's k fits run on this thread).
  double entries = static_cast<double>(k * cols);
  for (const Histograms& h : hist)
    entries += static_cast<double>(h.total.dense ? h.total.cum.size() : h.total.value.size());
  threads.parallel_for(k, fit_one, 8.0 * entries);
  for (size_t j = 0; j < state.size(); ++j)
    if (state[j] == 3) return {DIRMN_ERROR_OUT_OF_MEMORY, "host memory for an M-step fit", 0};
  for (int64_t jj = 0; jj < k; ++jj) {
    const size_t j = static_cast<size_t>(jj);
    if (state[j] == 2) out->status[j] = EmFitOutcome::kNoCounts;
    if (state[j] != 1) continue;
    const FitOutcome& f = fo[j];
    double* a = alpha + jj * cols;
    // Under ML a column this component never sees has its MLE at 0, and
    // the multinomial limit has no finite alpha: keep every alpha positive
    // and finite (tiny, or the proportions at a large precision) so the
    // E step stays defined.
    const double scale = f.multinomial_limit ? s.limit_precision : 1.0;
    for (int64_t v = 0; v < cols; ++v)
      a[v] = std::max(f.alpha[static_cast<size_t>(v)] * scale, s.alpha_floor);
    out->status[j] = EmFitOutcome::kFitted;
    out->converged[j] = f.converged ? 1 : 0;
    out->log_prior[j] = f.log_prior;
    out->log_det[j] = f.log_det + static_cast<double>(cols - f.zero_columns) *
                                      (s.weight_exponent * 0.69314718055994530942);
  }
  return {};
}

}  // namespace dirmn
