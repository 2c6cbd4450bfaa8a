// histogram_sums.cpp: the shared-alpha log-likelihood and its derivatives
// summed over count histograms: O(distinct counts), independent of rows.
#include "histogram_sums.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "../math/special.hpp"
#include "../math/vector_math.hpp"

namespace dirmn {
namespace {

using Sums = HistogramTerms;

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
  // The same for entries [0, n) of a histogram of base `base`.
  void add(double a, double base, size_t n) {
    const double a0 = a + base;
    for (size_t k = 0; k < n; ++k) x_[n_++] = a0 + static_cast<double>(k);
  }
  void transform(bool want_l, bool want_dt) {
    if (want_l) log_many(x_, lx_, static_cast<int64_t>(n_));
    if (want_dt) reciprocal_many(x_, r_, static_cast<int64_t>(n_));
  }
  // sum_k cum[k] f(a + base + k) over entries [k0, k1) of h, which start at
  // `at` in the batch, for f = log, 1/x, -1/x^2.
  void accumulate(const Histogram& h, size_t at, size_t k0, size_t k1, bool want_l, bool want_dt,
                  Sums* s) const {
    accumulate(h.cum.data(), at, k0, k1, want_l, want_dt, s);
  }
  void accumulate(const double* c, size_t at, size_t k0, size_t k1, bool want_l, bool want_dt,
                  Sums* s) const {
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

// Below this alpha the pairs' sums keep the per-value functions (the
// documented range of special.hpp's accuracy starts here).
constexpr double kPairBaseMinAlpha = 1e-8;

// The pairs form: large or scattered values (a deep column's, the row
// totals'). Where a value n is at least a and a + n reaches
// kAsymptoticMin, lpoch, dpoch and tpoch are differences of lgamma, digamma
// and trigamma at a + n (by their asymptotic series, one log for the first
// two) and at a (once per histogram): the term at a + n then dominates the
// one at a (lgamma: both ~x log x at worst, x = a + n >= 2a; digamma and
// trigamma: at least twice apart), so the difference keeps its digits, and
// a value costs a log instead of up to kAsymptoticMin shift steps in each
// of the three functions.
Sums pair_terms(const Histogram& h, double a, bool want_l, bool want_d, bool want_t) {
  Sums s;
  bool have_base = false;
  double la = 0.0, da = 0.0, ta = 0.0;
  for (size_t i = 0; i < h.value.size(); ++i) {
    const double w = h.weight[i], n = h.value[i];
    const double x = a + n;
    if (n >= a && x >= math::kAsymptoticMin && a >= kPairBaseMinAlpha) {
      if (!have_base) {
        int sign = 0;  // lgamma_r: std::lgamma writes the process-wide signgam
        la = want_l ? ::lgamma_r(a, &sign) : 0.0;
        da = want_d ? math::digamma(a) : 0.0;
        ta = want_t ? math::trigamma(a) : 0.0;
        have_base = true;
      }
      const double lx = std::log(x), r = 1.0 / x;
      if (want_l) s.l += w * (((x - 0.5) * lx - x + math::kHalfLog2Pi + math::stirling_tail(x)) - la);
      if (want_d) s.d += w * ((lx - 0.5 * r - math::digamma_tail(x)) - da);
      if (want_t) s.t += w * ((r + 0.5 * r * r + math::trigamma_tail(x)) - ta);
      continue;
    }
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

HistogramTerms histogram_terms(const Histogram& h, double a, bool want_l, bool want_d,
                               bool want_t) {
  Batch batch;
  return histogram_terms(h, a, want_l, want_d, want_t, &batch);
}

namespace {

// Runs block(q) for q < blocks, over the threads where the histograms hold
// enough entries to pay for them.
template <class F>
void run_blocks(int64_t entries, HostThreads* threads, int64_t blocks, const F& block) {
  if (threads != nullptr && blocks > 1 && entries >= kParallelSumEntries) {
    threads->parallel_for(blocks, block);
  } else {
    for (int64_t q = 0; q < blocks; ++q) block(q);
  }
}

}  // namespace

FlatHistograms::FlatHistograms(const Histograms& h) : source(&h) {
  column.resize(static_cast<size_t>(h.cols));
  for (int64_t v = 0; v < h.cols; ++v) column[static_cast<size_t>(v)] = v;
  build();
}

FlatHistograms::FlatHistograms(const Histograms& h, const std::vector<int64_t>& columns)
    : source(&h), column(columns) {
  build();
}

void FlatHistograms::build() {
  const Histograms& h = *source;
  const size_t m = column.size();
  const int64_t blocks = (h.cols + kSumBlockCols - 1) / kSumBlockCols;
  block.assign(static_cast<size_t>(blocks) + 1, static_cast<int64_t>(m));
  for (size_t i = m; i-- > 0;) block[static_cast<size_t>(column[i] / kSumBlockCols)] = static_cast<int64_t>(i);
  for (int64_t q = blocks; q-- > 0;)
    block[static_cast<size_t>(q)] = std::min(block[static_cast<size_t>(q)], block[static_cast<size_t>(q) + 1]);
  form.resize(m);
  offset.resize(m + 1);
  int64_t n = 0;
  for (size_t i = 0; i < m; ++i) {
    const Histogram& c = h.column[static_cast<size_t>(column[i])];
    offset[i] = n;
    if (!c.dense) {
      form[i] = kPairs;
      entries += kPairEntryCost * static_cast<int64_t>(c.value.size());
      continue;
    }
    entries += static_cast<int64_t>(c.cum.size());
    if (c.cum.size() > kBatchEntries) {
      form[i] = kLong;
      continue;
    }
    form[i] = c.base > 0.0 ? kBased : kPlain;
    n += static_cast<int64_t>(c.cum.size());
  }
  offset[m] = n;
  cum.resize(static_cast<size_t>(n));
  for (size_t i = 0; i < m; ++i)
    if (form[i] <= kBased) {
      const Histogram& c = h.column[static_cast<size_t>(column[i])];
      std::copy(c.cum.data(), c.cum.data() + c.cum.size(), cum.begin() + offset[i]);
    }
}

void histogram_sums(const Histograms& h, const double* alpha, double* value, double* gradient,
                    double* hessian_diag, double* hessian_scalar, HostThreads* threads) {
  histogram_sums(FlatHistograms(h), alpha, value, gradient, hessian_diag, hessian_scalar, threads);
}

void histogram_sums(const FlatHistograms& f, const double* alpha, double* value,
                    double* gradient, double* hessian_diag, double* hessian_scalar,
                    HostThreads* threads) {
  const Histograms& h = *f.source;
  const bool want_l = value != nullptr;
  const bool want_d = gradient != nullptr;
  const bool want_t = hessian_diag != nullptr;
  const bool want_dt = want_d || want_t;
  const int64_t m = f.size();
  double a_sum = 0.0;
  for (int64_t i = 0; i < m; ++i) a_sum += alpha[i];
  Sums tot;
  {
    Batch batch;
    tot = histogram_terms(h.total, a_sum, want_l, want_d, hessian_scalar != nullptr, &batch);
  }
  const int64_t blocks = static_cast<int64_t>(f.block.size()) - 1;
  double one = 0.0;
  std::vector<double> many;
  if (blocks > 1) many.assign(static_cast<size_t>(blocks), 0.0);
  double* part = blocks > 1 ? many.data() : &one;
  const int64_t* col = f.column.data();
  const unsigned char* form = f.form.data();
  const int64_t* off = f.offset.data();
  const double* cum = f.cum.data();
  using F = FlatHistograms;
  // Columns in fixed blocks; within a block, runs of columns whose dense
  // entries fill one batch (a longer histogram is a run of its own, taken
  // in pieces). The order of additions depends on the data alone.
  const auto block = [&](int64_t q) {
    const int64_t i0 = f.block[static_cast<size_t>(q)], i1 = f.block[static_cast<size_t>(q) + 1];
    Batch batch;
    double l = 0.0;
    for (int64_t i = i0; i < i1;) {
      int64_t w = i;
      batch.clear();
      if (form[i] == F::kLong) {
        ++w;  // a run of its own: histogram_terms below takes it in pieces
      } else {
        for (; w < i1; ++w) {
          const unsigned char fw = form[w];
          if (fw == F::kLong) break;
          if (fw == F::kPairs) continue;
          const size_t n = static_cast<size_t>(off[w + 1] - off[w]);
          if (batch.size() + n > kBatchEntries) break;
          batch.add(alpha[w], fw == F::kBased ? h.column[static_cast<size_t>(col[w])].base : 0.0, n);
        }
        batch.transform(want_l, want_dt);
      }
      size_t at = 0;
      for (int64_t u = i; u < w; ++u) {
        Sums s;
        const unsigned char fu = form[u];
        const Histogram& c = h.column[static_cast<size_t>(col[u])];
        if (fu == F::kLong) {
          s = histogram_terms(c, alpha[u], want_l, want_d, want_t, &batch);
        } else if (fu == F::kPairs) {
          s = pair_terms(c, alpha[u], want_l, want_d, want_t);
        } else {
          if (fu == F::kBased) s = base_terms(c, alpha[u], want_l, want_d, want_t);
          const size_t n = static_cast<size_t>(off[u + 1] - off[u]);
          batch.accumulate(cum + off[u], at, 0, n, want_l, want_dt, &s);
          at += n;
        }
        l += s.l;
        if (gradient) gradient[u] = s.d - tot.d;
        if (hessian_diag) hessian_diag[u] = s.t;
      }
      i = w;
    }
    part[q] = l;
  };
  run_blocks(f.entries, threads, blocks, block);
  double total = -tot.l;
  for (int64_t q = 0; q < blocks; ++q) total += part[q];
  if (value) *value = total;
  if (hessian_scalar) *hessian_scalar = -tot.t;
}

namespace {

// sum_b w_b lpoch_lfact(a, n_b) over one histogram. Dense: lpoch_lfact(a, n)
// = sum_{j<n} log((a + j) / (j + 1)), so entry k (j = base + k) contributes
// cum[k] log1p((a - 1) / (j + 1)); where that factor is at or below 1/2
// (a small, j = 0) 1 + (a - 1) would cancel, and the quotient's own log is
// exact to rounding.
double full_terms(const Histogram& h, double a) {
  double s = 0.0;
  if (!h.dense) {
    for (size_t i = 0; i < h.value.size(); ++i) s += h.weight[i] * math::lpoch_lfact(a, h.value[i]);
    return s;
  }
  if (h.base > 0.0) s = h.base_weight * math::lpoch_lfact(a, h.base);
  const double am1 = a - 1.0;
  const double* c = h.cum.data();
  for (size_t k = 0; k < h.cum.size(); ++k) {
    const double j1 = h.base + static_cast<double>(k) + 1.0;
    const double q = am1 / j1;
    s += c[k] * (q >= -0.5 ? std::log1p(q) : std::log((a + (j1 - 1.0)) / j1));
  }
  return s;
}

}  // namespace

double histogram_full_value(const Histograms& h, const double* alpha, HostThreads* threads) {
  double a_sum = 0.0;
  for (int64_t v = 0; v < h.cols; ++v) a_sum += alpha[v];
  const int64_t blocks = (h.cols + kSumBlockCols - 1) / kSumBlockCols;
  std::vector<double> part(static_cast<size_t>(std::max<int64_t>(blocks, 1)), 0.0);
  // Fixed blocks of columns, as histogram_sums: the order of additions
  // depends on the data alone, not on the threads.
  // The listed form visits its listed columns only, in the same order.
  const ColumnHistograms& cols = h.column;
  const std::vector<int64_t>& listed = cols.listed();
  const auto block = [&](int64_t q) {
    const int64_t v0 = q * kSumBlockCols, v1 = std::min(h.cols, v0 + kSumBlockCols);
    double l = 0.0;
    const auto add = [&](int64_t v) {
      const Histogram& c = cols[static_cast<size_t>(v)];
      if (!c.empty()) l += full_terms(c, alpha[v]);
    };
    if (cols.all_stored()) {
      for (int64_t v = v0; v < v1; ++v) add(v);
    } else {
      for (auto i = std::lower_bound(listed.begin(), listed.end(), v0); i != listed.end() && *i < v1; ++i)
        add(*i);
    }
    part[static_cast<size_t>(q)] = l;
  };
  int64_t entries = 0;
  for (const Histogram& c : cols.stored_histograms())
    entries += c.dense ? static_cast<int64_t>(c.cum.size())
                       : kPairEntryCost * static_cast<int64_t>(c.value.size());
  run_blocks(entries, threads, blocks, block);
  double total = h.total.empty() ? 0.0 : -full_terms(h.total, a_sum);
  for (int64_t q = 0; q < blocks; ++q) total += part[static_cast<size_t>(q)];
  return total;
}

}  // namespace dirmn
