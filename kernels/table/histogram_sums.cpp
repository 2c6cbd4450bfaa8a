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

// Dense entries whose log arguments, logs and reciprocals a batch holds,
// and as many split columns' tail arguments (on the stack: 48 KB, and at
// most two batches are live at once). Longer histograms are taken in
// pieces this long.
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
  void clear() { n_ = 0; t_ = 0; }

  // The tail part: the arguments of a split column's asymptotic terms
  // (histogram_sums.hpp), a + kSplitHead first and then a + n for each tail
  // value n, their logs and reciprocals taken in the same vectorised calls.
  size_t tail_size() const { return t_; }
  void add_tail(double a, const double* value, size_t n) {
    tx_[t_++] = a + static_cast<double>(kSplitHead);
    for (size_t i = 0; i < n; ++i) tx_[t_++] = a + value[i];
  }
  // Both, whatever the sums want: every asymptotic term reads 1/x, and the
  // value and the gradient log x.
  void transform_tail() {
    if (t_ == 0) return;
    log_many(tx_, tlx_, static_cast<int64_t>(t_));
    reciprocal_many(tx_, tr_, static_cast<int64_t>(t_));
  }
  const double* tail_log() const { return tlx_; }
  const double* tail_reciprocal() const { return tr_; }

 private:
  size_t n_ = 0, t_ = 0;
  double x_[kBatchEntries], lx_[kBatchEntries], r_[kBatchEntries];
  double tx_[kBatchEntries], tlx_[kBatchEntries], tr_[kBatchEntries];
};

// w f(a, n) added to *s for f = lpoch, dpoch, tpoch (the parts wanted).
void add_poch_terms(double w, double a, double n, bool want_l, bool want_d, bool want_t, Sums* s) {
  if (want_l) s->l += w * math::lpoch(a, n);
  if (want_d) s->d += w * math::dpoch(a, n);
  if (want_t) s->t += w * math::tpoch(a, n);
}

// w [f(x) - f(base)] added to *s for f = lgamma, digamma, trigamma, f(x)
// by its asymptotic series from lx = log x, r = 1/x and r2 = 1/x^2, and
// at_base holding f(base) (the parts wanted).
void add_asymptotic_terms(double w, double x, double lx, double r, double r2, const Sums& at_base,
                          bool want_l, bool want_d, bool want_t, Sums* s) {
  if (want_l) s->l += w * (math::lgamma_asymptotic(x, lx, r) - at_base.l);
  if (want_d) s->d += w * (math::digamma_asymptotic(lx, r, r2) - at_base.d);
  if (want_t) s->t += w * (math::trigamma_asymptotic(r) - at_base.t);
}

// A split column's tail: sum_i w_i f(b, n_i - kSplitHead) for f = lpoch,
// dpoch, tpoch at b = a + kSplitHead >= kAsymptoticMin, the factors of
// its values past the head (histogram_sums.hpp). lx and r hold the logs and
// reciprocals of b and then of a + n_i (Batch::add_tail). Where n_i -
// kSplitHead >= b, each term is a difference of the asymptotic forms at a
// + n_i and at b, as pair_terms takes it at a; below, lpoch's own forms.
Sums tail_terms(double a, const double* value, const double* weight, size_t n, const double* lx,
                const double* r, bool want_l, bool want_d, bool want_t) {
  Sums s;
  const double b = a + static_cast<double>(kSplitHead);
  const double rb = r[0], lb = lx[0];
  Sums at_b;
  if (want_l) at_b.l = math::lgamma_asymptotic(b, lb, rb);
  if (want_d) at_b.d = math::digamma_asymptotic(lb, rb, rb * rb);
  if (want_t) at_b.t = math::trigamma_asymptotic(rb);
  for (size_t i = 0; i < n; ++i) {
    const double w = weight[i], m = value[i] - static_cast<double>(kSplitHead);
    if (m >= b) {
      const double ri = r[i + 1];
      add_asymptotic_terms(w, a + value[i], lx[i + 1], ri, ri * ri, at_b, want_l, want_d, want_t, &s);
    } else {
      add_poch_terms(w, b, m, want_l, want_d, want_t, &s);
    }
  }
  return s;
}

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
  Sums at_a;
  for (size_t i = 0; i < h.value.size(); ++i) {
    const double w = h.weight[i], n = h.value[i];
    const double x = a + n;
    if (n >= a && x >= math::kAsymptoticMin && a >= kPairBaseMinAlpha) {
      if (!have_base) {
        int sign = 0;  // lgamma_r: std::lgamma writes the process-wide signgam
        if (want_l) at_a.l = ::lgamma_r(a, &sign);
        if (want_d) at_a.d = math::digamma(a);
        if (want_t) at_a.t = math::trigamma(a);
        have_base = true;
      }
      add_asymptotic_terms(w, x, std::log(x), 1.0 / x, 1.0 / (x * x), at_a, want_l, want_d, want_t, &s);
      continue;
    }
    add_poch_terms(w, a, n, want_l, want_d, want_t, &s);
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

namespace {

// The split form of a column (histogram_sums.hpp): its head's kSplitHead
// entries appended to *head, its values past them to *value and *weight.
// False, appending nothing, where the column keeps its form: a dense one
// where splitting does not pay, pairs with a value in the head that is
// not a whole number, and either with more values than a batch.
bool split_column(const Histogram& c, std::vector<double>* head, std::vector<double>* value,
                  std::vector<double>* weight) {
  const size_t L = kSplitHead;
  if (c.dense) {
    // The weight of n is C[n - 1] - C[n] (C[size] = 0): C is summed from
    // the top, C[n - 1] = C[n] + w_n, so the difference is w_n as the
    // dense form's entries hold it.
    const size_t n = c.cum.size();
    if (c.base != 0.0 || n <= L) return false;
    const double* cum = c.cum.data();
    const auto w_of = [&](size_t v) { return cum[v - 1] - (v < n ? cum[v] : 0.0); };
    // Values past the head, counted until splitting no longer pays (a
    // column of many values stops early).
    const auto pays = [&](size_t t) {
      return static_cast<int64_t>(L) + kSplitValueCost * static_cast<int64_t>(t + 1) < static_cast<int64_t>(n);
    };
    size_t t = 0;
    for (size_t v = L + 1; v <= n; ++v)
      if (w_of(v) != 0.0 && !pays(++t)) return false;
    if (!pays(t) || t + 1 > kBatchEntries) return false;
    head->insert(head->end(), cum, cum + L);
    for (size_t v = L + 1; v <= n; ++v)
      if (const double w = w_of(v); w != 0.0) {
        value->push_back(static_cast<double>(v));
        weight->push_back(w);
      }
    return true;
  }
  const size_t m = c.value.size();
  size_t first_tail = 0;  // values are ascending
  while (first_tail < m && c.value[first_tail] <= static_cast<double>(L)) {
    if (c.value[first_tail] != std::floor(c.value[first_tail])) return false;
    ++first_tail;
  }
  if (first_tail == m || m - first_tail + 1 > kBatchEntries) return false;
  double by_value[kSplitHead + 1] = {};
  for (size_t i = 0; i < first_tail; ++i) by_value[static_cast<size_t>(c.value[i])] += c.weight[i];
  double above = 0.0;
  for (size_t i = first_tail; i < m; ++i) above += c.weight[i];
  const size_t at = head->size();
  head->resize(at + L);
  for (size_t k = L; k-- > 0;) {
    above += by_value[k + 1];
    (*head)[at + k] = above;
  }
  value->insert(value->end(), c.value.begin() + static_cast<std::ptrdiff_t>(first_tail), c.value.end());
  weight->insert(weight->end(), c.weight.begin() + static_cast<std::ptrdiff_t>(first_tail), c.weight.end());
  return true;
}

}  // namespace

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
  tail_offset.resize(m + 1);
  for (size_t i = 0; i < m; ++i) {
    const Histogram& c = h.column[static_cast<size_t>(column[i])];
    offset[i] = static_cast<int64_t>(cum.size());
    tail_offset[i] = static_cast<int64_t>(tail_value.size());
    if (split_column(c, &cum, &tail_value, &tail_weight)) {
      form[i] = kSplit;
      entries += static_cast<int64_t>(kSplitHead) +
                 kSplitValueCost * static_cast<int64_t>(tail_value.size() - tail_offset[i] + 1);
      continue;
    }
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
    cum.insert(cum.end(), c.cum.data(), c.cum.data() + c.cum.size());
  }
  offset[m] = static_cast<int64_t>(cum.size());
  tail_offset[m] = static_cast<int64_t>(tail_value.size());
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
  const int64_t* toff = f.tail_offset.data();
  const double* tval = f.tail_value.data();
  const double* twt = f.tail_weight.data();
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
          if (fw == F::kSplit) {
            const size_t t = static_cast<size_t>(toff[w + 1] - toff[w]);
            if (batch.tail_size() + t + 1 > kBatchEntries) break;
            batch.add_tail(alpha[w], tval + toff[w], t);
          }
          batch.add(alpha[w], fw == F::kBased ? h.column[static_cast<size_t>(col[w])].base : 0.0, n);
        }
        batch.transform(want_l, want_dt);
        batch.transform_tail();
      }
      size_t at = 0, tail_at = 0;
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
          if (fu == F::kSplit) {
            const size_t t = static_cast<size_t>(toff[u + 1] - toff[u]);
            const Sums tail = tail_terms(alpha[u], tval + toff[u], twt + toff[u], t,
                                         batch.tail_log() + tail_at, batch.tail_reciprocal() + tail_at,
                                         want_l, want_d, want_t);
            s.l += tail.l;
            s.d += tail.d;
            s.t += tail.t;
            tail_at += t + 1;
          }
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
