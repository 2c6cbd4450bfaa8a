// histogram.cpp: histogram construction, the shared-alpha sums over
// histograms, and the Newton fit of alpha on them.
#include "histogram.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "dirmn_math.hpp"
#include "vector_math.hpp"

namespace dirmn {

void HistogramBuilder::add(double n, double w) {
  if (n == 0.0 || w == 0.0) return;
  if (!use_pairs_ && (n > index_max_ || n != std::floor(n))) {
    use_pairs_ = true;
    for (size_t k = 1; k < indexed_.size(); ++k)
      if (indexed_[k] != 0.0) pairs_.emplace_back(static_cast<double>(k), indexed_[k]);
    indexed_.clear();
  }
  if (use_pairs_) {
    pairs_.emplace_back(n, w);
  } else {
    const size_t k = static_cast<size_t>(n);
    if (indexed_.size() <= k) indexed_.resize(k + 1, 0.0);
    indexed_[k] += w;
  }
}

Histogram HistogramBuilder::finish() {
  Histogram h;
  const size_t top = indexed_.empty() ? 0 : indexed_.size() - 1;  // largest indexed value
  size_t low = 1, distinct = 0;
  if (!use_pairs_ && static_cast<double>(top) > kHistDenseMax) {
    while (low < top && indexed_[low] == 0.0) ++low;
    for (size_t n = low; n <= top; ++n) distinct += indexed_[n] != 0.0;
  }
  if (!use_pairs_ && static_cast<double>(top) <= kHistDenseMax) {
    histogram_from_value_weights(indexed_.data(), static_cast<int>(indexed_.size()), &h);
  } else if (!use_pairs_ && static_cast<double>(top - low) <=
                                kHistBandFactor * static_cast<double>(distinct) + kHistBandSlack) {
    h = histogram_from_band(indexed_.data() + low, static_cast<int64_t>(low),
                            static_cast<int64_t>(top - low + 1));
  } else {
    h.dense = false;
    if (!use_pairs_) {
      // Indexed values come out in order: no sort needed.
      for (size_t n = 1; n <= top; ++n)
        if (indexed_[n] != 0.0) pairs_.emplace_back(static_cast<double>(n), indexed_[n]);
    } else {
      std::sort(pairs_.begin(), pairs_.end());
    }
    for (const auto& p : pairs_) {
      if (!h.value.empty() && h.value.back() == p.first) {
        h.weight.back() += p.second;
      } else {
        h.value.push_back(p.first);
        h.weight.push_back(p.second);
      }
      h.first_moment += p.second * p.first;
      h.second_factorial += p.second * p.first * (p.first - 1.0);
    }
  }
  indexed_.clear();
  pairs_.clear();
  use_pairs_ = false;
  return h;
}

void histogram_from_value_weights(const double* by_value, int bins, Histogram* h) {
  int top = 0;  // the largest value with weight (bins may be 0: an empty histogram)
  for (int n = 1; n < bins; ++n)
    if (by_value[n] != 0.0) top = n;
  h->dense = true;
  h->base = 0.0;
  h->base_weight = 0.0;
  h->value.clear();
  h->weight.clear();
  h->cum.assign(static_cast<size_t>(top), 0.0);
  double* cum = h->cum.data();
  double above = 0.0, first = 0.0, second = 0.0;
  for (int k = top; k-- > 0;) {
    const double w = by_value[k + 1], v = static_cast<double>(k + 1);
    above += w;
    cum[k] = above;
    first += w * v;
    second += w * v * (v - 1.0);
  }
  h->first_moment = first;
  h->second_factorial = second;
}

BackendResult Backend::histograms(const BackendCounts& counts, const double* weights,
                                  Histograms* out, const Interrupt& interrupt) {
  std::vector<Histograms> one(1);
  const BackendResult r = histograms_multi(counts, weights, 1, &one, interrupt);
  if (r.ok()) *out = std::move(one[0]);
  return r;
}

Histogram histogram_from_band(const double* by_value, int64_t base, int64_t len) {
  int64_t lo = 0, hi = -1;  // first and last index with weight
  for (int64_t i = 0; i < len; ++i)
    if (by_value[i] != 0.0) {
      if (hi < 0) lo = i;
      hi = i;
    }
  Histogram h;
  h.dense = true;
  if (hi < 0) return h;
  h.base = static_cast<double>(base + lo);
  h.cum.assign(static_cast<size_t>(hi - lo), 0.0);
  double above = 0.0;
  for (int64_t k = hi - lo; k-- > 0;) {
    above += by_value[lo + k + 1];
    h.cum[static_cast<size_t>(k)] = above;
  }
  h.base_weight = above + by_value[lo];
  for (int64_t i = lo; i <= hi; ++i) {
    const double v = static_cast<double>(base + i);
    h.first_moment += by_value[i] * v;
    h.second_factorial += by_value[i] * v * (v - 1.0);
  }
  return h;
}

namespace {

// sum_b w_b f(a, n_b) for f = lpoch, dpoch, tpoch at once.
struct Sums {
  double l = 0.0, d = 0.0, t = 0.0;
};

// Dense entries whose log arguments, logs and reciprocals a batch holds
// (on the stack: 24 KB, and at most two batches are live at once). Longer
// histograms are taken in pieces this long.
constexpr size_t kBatchEntries = 1024;

// The log arguments a + base + k, k in [k0, k1), of a dense histogram, and
// then their logs and reciprocals, each taken for the whole batch in one
// vectorised call (they are most of an evaluation's cost).
class Batch {
 public:
  size_t size() const { return n_; }
  // Appends entries [k0, k1) of h at alpha a; returns where they start.
  size_t add(const Histogram& h, double a, size_t k0, size_t k1) {
    const size_t at = n_;
    const double a0 = a + h.base;
    for (size_t k = k0; k < k1; ++k) x_[n_++] = a0 + static_cast<double>(k);
    return at;
  }
  void transform(bool want_l, bool want_dt) {
    if (want_l) log_many(x_, lx_, static_cast<int64_t>(n_));
    if (want_dt) reciprocal_many(x_, r_, static_cast<int64_t>(n_));
  }
  // sum_k cum[k] f(a + base + k) over entries [k0, k1) of h, which start at
  // `at` in the batch, for f = log, 1/x, -1/x^2.
  void accumulate(const Histogram& h, size_t at, size_t k0, size_t k1, bool want_l, bool want_dt,
                  Sums* s) const {
    const double* c = h.cum.data();
    if (want_l)
      for (size_t k = k0, i = at; k < k1; ++k, ++i) s->l += c[k] * lx_[i];
    if (want_dt)
      for (size_t k = k0, i = at; k < k1; ++k, ++i) {
        s->d += c[k] * r_[i];
        s->t -= c[k] * r_[i] * r_[i];
      }
  }
  void clear() { n_ = 0; }

 private:
  size_t n_ = 0;
  double x_[kBatchEntries], lx_[kBatchEntries], r_[kBatchEntries];
};

// The base term of a dense histogram (all values at least base > 0):
// base_weight f(a, base) for f = lpoch, dpoch, tpoch.
Sums base_terms(const Histogram& h, double a, bool want_l, bool want_d, bool want_t) {
  Sums s;
  if (h.base > 0.0) {
    if (want_l) s.l = h.base_weight * math::lpoch(a, h.base);
    if (want_d) s.d = h.base_weight * math::dpoch(a, h.base);
    if (want_t) s.t = h.base_weight * math::tpoch(a, h.base);
  }
  return s;
}

Sums pair_terms(const Histogram& h, double a, bool want_l, bool want_d, bool want_t) {
  Sums s;
  for (size_t i = 0; i < h.value.size(); ++i) {
    const double w = h.weight[i], n = h.value[i];
    if (want_l) s.l += w * math::lpoch(a, n);
    if (want_d) s.d += w * math::dpoch(a, n);
    if (want_t) s.t += w * math::tpoch(a, n);
  }
  return s;
}

// One histogram's sums, a dense one's in pieces of at most a batch.
// lpoch(a, n) = sum_{k<n} log(a + k) and likewise for the derivatives, so
// in the dense form each k contributes once, weighted by the values above it.
Sums histogram_terms(const Histogram& h, double a, bool want_l, bool want_d, bool want_t,
                     Batch* batch) {
  if (!h.dense) return pair_terms(h, a, want_l, want_d, want_t);
  Sums s = base_terms(h, a, want_l, want_d, want_t);
  const size_t n = h.cum.size();
  for (size_t k0 = 0; k0 < n; k0 += kBatchEntries) {
    const size_t k1 = std::min(n, k0 + kBatchEntries);
    batch->clear();
    batch->add(h, a, k0, k1);
    batch->transform(want_l, want_d || want_t);
    batch->accumulate(h, 0, k0, k1, want_l, want_d || want_t, &s);
  }
  return s;
}

}  // namespace

void histogram_sums(const Histograms& h, const double* alpha, double* value, double* gradient,
                    double* hessian_diag, double* hessian_scalar, Backend* threads) {
  const bool want_l = value != nullptr;
  const bool want_d = gradient != nullptr;
  const bool want_t = hessian_diag != nullptr;
  const bool want_dt = want_d || want_t;
  double a_sum = 0.0;
  for (int64_t v = 0; v < h.cols; ++v) a_sum += alpha[v];
  Sums tot;
  {
    Batch batch;
    tot = histogram_terms(h.total, a_sum, want_l, want_d, hessian_scalar != nullptr, &batch);
  }
  const int64_t blocks = (h.cols + kSumBlockCols - 1) / kSumBlockCols;
  double one = 0.0;
  std::vector<double> many;
  if (blocks > 1) many.assign(static_cast<size_t>(blocks), 0.0);
  double* part = blocks > 1 ? many.data() : &one;
  // Columns in fixed blocks; within a block, runs of columns whose dense
  // entries fill one batch (a longer histogram is a run of its own, taken
  // in pieces). The order of additions depends on the data alone.
  const auto block = [&](int64_t q) {
    const int64_t v0 = q * kSumBlockCols, v1 = std::min(h.cols, v0 + kSumBlockCols);
    Batch batch;
    double l = 0.0;
    const auto long_dense = [](const Histogram& c) { return c.dense && c.cum.size() > kBatchEntries; };
    for (int64_t v = v0; v < v1;) {
      int64_t w = v;
      batch.clear();
      if (long_dense(h.column[static_cast<size_t>(v)])) {
        ++w;  // a run of its own: histogram_terms below takes it in pieces
      } else {
        for (; w < v1; ++w) {
          const Histogram& c = h.column[static_cast<size_t>(w)];
          if (long_dense(c) || (c.dense && batch.size() + c.cum.size() > kBatchEntries)) break;
          if (c.dense) batch.add(c, alpha[w], 0, c.cum.size());
        }
        batch.transform(want_l, want_dt);
      }
      size_t at = 0;
      for (int64_t u = v; u < w; ++u) {
        const Histogram& c = h.column[static_cast<size_t>(u)];
        Sums s;
        if (long_dense(c)) {
          s = histogram_terms(c, alpha[u], want_l, want_d, want_t, &batch);
        } else if (c.dense) {
          s = base_terms(c, alpha[u], want_l, want_d, want_t);
          batch.accumulate(c, at, 0, c.cum.size(), want_l, want_dt, &s);
          at += c.cum.size();
        } else {
          s = pair_terms(c, alpha[u], want_l, want_d, want_t);
        }
        l += s.l;
        if (gradient) gradient[u] = s.d - tot.d;
        if (hessian_diag) hessian_diag[u] = s.t;
      }
      v = w;
    }
    part[q] = l;
  };
  bool parallel = false;
  if (threads != nullptr && blocks > 1) {
    int64_t entries = 0;
    for (const Histogram& c : h.column)
      entries += c.dense ? static_cast<int64_t>(c.cum.size())
                         : kPairEntryCost * static_cast<int64_t>(c.value.size());
    parallel = entries >= kParallelSumEntries;
  }
  if (parallel) {
    threads->parallel_for(blocks, block);
  } else {
    for (int64_t q = 0; q < blocks; ++q) block(q);
  }
  double total = -tot.l;
  for (int64_t q = 0; q < blocks; ++q) total += part[q];
  if (value) *value = total;
  if (hessian_scalar) *hessian_scalar = -tot.t;
}

namespace {

constexpr double kMinPrecision = 1e-6;   // start: sum of alpha at least this
constexpr double kMaxPrecision = 1e10;   // and at most this

// The fit works on the active columns (those with counts) only.
struct Problem {
  const Histograms& h;
  std::vector<int64_t> active;
  std::vector<double> alpha_full;  // cols, zeros for inactive columns
  double shape = 0.0, rate = 0.0;  // Gamma prior on alpha (rate 0: none)
  std::vector<double> g_full, d_full;  // eval's workspace (cols), reused
  Backend* threads = nullptr;

  // loglik and derivatives with respect to log alpha of the active columns.
  // want_value false: derivatives only (the value, returned as 0, costs a
  // log per histogram entry that Newton's direction does not need).
  double eval(const std::vector<double>& alpha, std::vector<double>* g_theta,
              std::vector<double>* h_theta, double* c, bool want_value = true) {
    for (size_t i = 0; i < active.size(); ++i) alpha_full[static_cast<size_t>(active[i])] = alpha[i];
    std::vector<double>& g = g_full;
    std::vector<double>& d = d_full;
    g.resize(static_cast<size_t>(h.cols));
    d.resize(static_cast<size_t>(h.cols));
    double f = 0.0, cc = 0.0;
    const bool derivs = g_theta != nullptr;
    histogram_sums(h, alpha_full.data(), want_value ? &f : nullptr, derivs ? g.data() : nullptr,
                   derivs ? d.data() : nullptr, derivs ? &cc : nullptr, threads);
    if (rate > 0.0 && want_value)
      for (double a : alpha) f += log_prior(a);
    if (derivs) {
      g_theta->resize(active.size());
      h_theta->resize(active.size());
      for (size_t i = 0; i < active.size(); ++i) {
        const size_t v = static_cast<size_t>(active[i]);
        const double a = alpha[i];
        (*g_theta)[i] = a * g[v] + (rate > 0.0 ? shape - rate * a : 0.0);
        (*h_theta)[i] = a * a * d[v] + a * g[v] - rate * a;
      }
      *c = cc;
    }
    return f;
  }

  // Gamma(shape, rate) log density of log alpha at alpha.
  double log_prior(double a) const {
    return shape * std::log(a) - rate * a + shape * std::log(rate) - std::lgamma(shape);
  }
};

// Solves (diag(hd) + c u u^T) x = b by Sherman-Morrison. Returns false when
// the matrix is not negative definite (then Newton is not an ascent method).
bool solve_dpr1(const std::vector<double>& hd, double c, const std::vector<double>& u,
                const std::vector<double>& b, std::vector<double>* x) {
  double uDu = 0.0, uDb = 0.0;
  for (size_t i = 0; i < hd.size(); ++i) {
    if (!(hd[i] < 0.0)) return false;
    uDu += u[i] * u[i] / hd[i];
    uDb += u[i] * b[i] / hd[i];
  }
  const double denom = 1.0 + c * uDu;
  if (!(denom > 0.0)) return false;
  x->resize(hd.size());
  for (size_t i = 0; i < hd.size(); ++i) (*x)[i] = (b[i] - c * u[i] * uDb / denom) / hd[i];
  return true;
}

// trial = alpha * exp(t step): a step of t along step in log alpha.
void move_alpha(const std::vector<double>& alpha, const std::vector<double>& step, double t,
                std::vector<double>* trial) {
  const size_t m = alpha.size();
  for (size_t i = 0; i < m; ++i) (*trial)[i] = t * step[i];
  exp_many(trial->data(), trial->data(), static_cast<int64_t>(m));
  for (size_t i = 0; i < m; ++i) (*trial)[i] *= alpha[i];
}

double max_abs(const std::vector<double>& v) {
  double m = 0.0;
  for (double x : v) m = std::max(m, std::fabs(x));
  return m;
}

}  // namespace

bool fit_from_histograms(const Histograms& h, const FitSettings& s, FitOutcome* out,
                         const char** why) {
  const size_t V = static_cast<size_t>(h.cols);
  Problem P{h, {}, std::vector<double>(V, 0.0), s.prior_shape, s.prior_rate, {}, {}, s.threads};
  const bool prior = s.prior_rate > 0.0;
  double n_total = 0.0;
  for (size_t v = 0; v < V; ++v) {
    if (prior || !h.column[v].empty()) P.active.push_back(static_cast<int64_t>(v));
    n_total += h.column[v].first_moment;
  }
  if (P.active.empty() || !(n_total > 0.0)) {
    *why = "the table (with these weights) has no counts";
    return false;
  }
  const size_t m = P.active.size();
  out->zero_columns = static_cast<int64_t>(V - m);
  out->alpha.assign(V, 0.0);
  out->se_alpha.assign(V, 0.0);
  out->se_log_alpha.assign(V, 0.0);

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
    out->loglik = f;
    out->loglik_full = f + h.lcoef_sum;
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
  if (s.start) {
    for (size_t i = 0; i < m; ++i) alpha[i] = s.start[P.active[i]];
  } else {
    const double F = pair_all > 0.0 ? pair_same / pair_all : 1.0;
    double A = (F > q) ? (1.0 - F) / (F - q) : kMaxPrecision;
    A = std::min(std::max(A, kMinPrecision), kMaxPrecision);
    // Under a prior, empty columns start at a small share instead of 0.
    for (size_t i = 0; i < m; ++i) alpha[i] = A * std::max(p[i], 1e-3 / static_cast<double>(m));
  }

  std::vector<double> g, hd, step, trial(m), neg_g, g_try, hd_try;
  double c = 0.0, c_try = 0.0;
  double f = P.eval(alpha, &g, &hd, &c);
  int it = 0;
  for (;; ++it) {
    const double gnorm = max_abs(g);
    if (s.progress && s.progress(it, f, gnorm, s.progress_data) != 0) {
      out->cancelled = true;
      return true;
    }
    if (s.interrupt.poll()) {
      out->cancelled = true;
      return true;
    }
    neg_g.resize(m);
    for (size_t i = 0; i < m; ++i) neg_g[i] = -g[i];
    const bool newton_ok = solve_dpr1(hd, c, alpha, neg_g, &step);
    double gain = 0.0;  // predicted increase: half the Newton decrement squared
    if (newton_ok)
      for (size_t i = 0; i < m; ++i) gain += 0.5 * g[i] * step[i];
    // Converged when the Newton step's predicted gain is below tolerance;
    // that last step is still taken (it costs O(V)), since where the
    // prediction is that small the step is accurate to its square.
    const bool done = newton_ok && gain >= 0.0 && gain <= s.tolerance * std::fabs(f);
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
      out->converged = true;
      break;
    }
    if (it >= s.max_iterations) break;

    bool moved = false, moved_with_derivs = false;
    double f_moved = f;
    if (newton_ok && gain > 0.0) {
      double t = 1.0;
      const double big = max_abs(step);
      if (big > kMaxLogStep) t = kMaxLogStep / big;
      for (int k = 0; k < kMaxHalvings && !moved; ++k, t *= 0.5) {
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
      // Minka's fixed point (an MM step, so it never lowers the likelihood):
      // alpha_v <- alpha_v * sum_b w dpoch(alpha_v, n_bv) / sum_b w dpoch(A, N_b).
      double a_sum = 0.0;
      for (double a : alpha) a_sum += a;
      Batch batch;
      const double denom = histogram_terms(h.total, a_sum, false, true, false, &batch).d;
      for (size_t i = 0; i < m; ++i) {
        // numer = sum_b w dpoch(alpha_v, n_bv), formed directly: as the
        // gradient plus denom it cancelled to 0 or below for a column whose
        // weight is tiny beside the table's (alpha 0 or negative, a log of
        // it -inf or NaN, and the fit "converged" there). Under a prior the
        // update becomes alpha (numer + shape/alpha) / (denom + rate), which
        // is again a minorise-maximise step (the prior is concave in alpha
        // on this scale and separable). A step past the smallest normal
        // double stops there, so every log stays finite.
        const Sums col = histogram_terms(h.column[static_cast<size_t>(P.active[i])], alpha[i], false, true,
                                         false, &batch);
        const double num = col.d + (prior ? s.prior_shape / alpha[i] : 0.0);
        trial[i] = std::max(alpha[i] * num / (denom + (prior ? s.prior_rate : 0.0)),
                            std::numeric_limits<double>::min());
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
    f = f_new;
    if (stalled && max_abs(g) == 0.0) {
      out->converged = true;
      ++it;
      break;
    }
  }

  out->iterations = it;
  out->loglik = f;
  out->loglik_full = f + h.lcoef_sum;
  out->gradient_norm = max_abs(g);
  double a_sum = 0.0;
  for (size_t i = 0; i < m; ++i) {
    out->alpha[static_cast<size_t>(P.active[i])] = alpha[i];
    a_sum += alpha[i];
  }
  out->precision = a_sum;
  if (prior) {
    for (size_t i = 0; i < m; ++i) out->log_prior += P.log_prior(alpha[i]);
    out->loglik -= out->log_prior;
    out->loglik_full -= out->log_prior;
  }
  // Standard errors from the inverse observed information on the log scale,
  // whose diagonal Sherman-Morrison gives in O(V):
  // [H^-1]_ii = 1/h_i - c (u_i/h_i)^2 / (1 + c sum u^2/h).
  double uDu = 0.0;
  bool definite = true;
  for (size_t i = 0; i < m; ++i) {
    if (!(hd[i] < 0.0)) definite = false;
    uDu += alpha[i] * alpha[i] / hd[i];
  }
  const double denom = 1.0 + c * uDu;
  // det(-(diag(h) + c u u^T)) = prod(-h) (1 + c u^T diag(h)^-1 u).
  if (definite && denom > 0.0) {
    double ld = std::log(denom);
    for (size_t i = 0; i < m; ++i) ld += std::log(-hd[i]);
    out->log_det = ld;
  }
  if (definite && denom > 0.0) {
    for (size_t i = 0; i < m; ++i) {
      const double r = alpha[i] / hd[i];
      const double var = -(1.0 / hd[i] - c * r * r / denom);
      const double se = var > 0.0 ? std::sqrt(var) : 0.0;
      out->se_log_alpha[static_cast<size_t>(P.active[i])] = se;
      out->se_alpha[static_cast<size_t>(P.active[i])] = se * alpha[i];
    }
  }
  return true;
}

}  // namespace dirmn
