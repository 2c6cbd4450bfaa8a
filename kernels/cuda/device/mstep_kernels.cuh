// mstep_kernels.cuh: the M step of a DM mixture on the device. Each component's
// alpha is fitted to its weighted count histograms by Newton's method on
// log alpha, warm-started from the last M step, as fit_from_histograms
// (kernels/host_fit.cpp) fits it on the host: the same objective and the
// same step rule (math/newton.hpp: the safeguards, the prior's terms, the
// diagonal-plus-rank-one solve and the gain test), so the two agree to
// rounding. Fitting on the device saves
// the histograms' download and the host's evaluations, which were most of
// an EM iteration on large tables.
//
// One block per component. Its threads share the sums over columns and
// over the row-total histogram; every decision is taken by all of them
// from the same block-wide sums (cub::BlockReduce, a fixed order), so the
// block stays in step and the fit repeats bit for bit.
//
// What the host fit does in other ways -- the multinomial limit, and
// Minka's step where Newton's direction does not ascend -- is handed back
// (EmFitOutcome::kNotFitted): the host's engine then fits that component
// from the downloaded histograms.
//
// Device code only, for mstep.cu (anonymous namespace: one unit includes it).
#pragma once

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include <cmath>

#include "../../math/newton.hpp"
#include "../../math/special.hpp"
#include "../../table/histogram.hpp"
#include "../device_table.cuh"

namespace dirmn {
namespace cuda {
namespace {

using namespace mstep_tuning;

struct Sums {
  double a = 0.0, b = 0.0, c = 0.0, d = 0.0;
};
struct AddSums {
  __device__ Sums operator()(const Sums& x, const Sums& y) const {
    return {x.a + y.a, x.b + y.b, x.c + y.c, x.d + y.d};
  }
};
// a, b: sums; c: maximum; d: minimum.
struct MixSums {
  __device__ Sums operator()(const Sums& x, const Sums& y) const {
    return {x.a + y.a, x.b + y.b, fmax(x.c, y.c), fmin(x.d, y.d)};
  }
};

using BlockReduce = cub::BlockReduce<Sums, kFitThreads>;
using BlockScan = cub::BlockScan<double, kFitThreads>;

struct Shared {
  union {
    BlockReduce::TempStorage reduce;
    BlockScan::TempStorage scan;
  } temp;
  Sums result;
};

// The block's reduction of v under op; every thread receives it.
template <typename Op>
__device__ Sums block_all(Shared& sh, const Sums& v, Op op) {
  const Sums r = BlockReduce(sh.temp.reduce).Reduce(v, op);
  if (threadIdx.x == 0) sh.result = r;
  __syncthreads();
  const Sums out = sh.result;
  __syncthreads();  // the storage is reused by the next reduction
  return out;
}

// One component's histograms. Row totals are in the host's form
// (HistogramBuilder for kHistTotalIndexMax): dense from 0 up to
// kHistDenseMax, a band from the smallest total where the totals are
// dense enough, otherwise (value, weight) pairs.
struct Component {
  int64_t cols = 0;
  int bins = 0;
  const double* hist = nullptr;  // cols x bins: weight by count
  const double* top = nullptr;   // cols: each column's largest count with weight
  bool pairs = false;
  double base = 0.0, base_weight = 0.0;
  int64_t len = 0;
  const double* cum = nullptr;   // len: weight of totals above base + i
  const uint32_t* run_value = nullptr;
  const double* run_weight = nullptr;
  int64_t runs = 0;
  bool prior = false;
  double shape = 0.0, rate = 0.0, prior_const = 0.0;
};

// base_weight times lpoch, dpoch and tpoch at (a, n): out of line, so the
// special functions' registers are not every thread's.
__device__ __noinline__ Sums poch_terms(double w, double a, double n, bool want_l, bool want_dt) {
  Sums s;
  if (want_l) s.a = w * math::lpoch(a, n);
  if (want_dt) {
    s.b = w * math::dpoch(a, n);
    s.c = w * math::tpoch(a, n);
  }
  return s;
}

__device__ __forceinline__ double log_prior(const Component& c, double a) {
  return c.shape * log(a) - c.rate * a + c.prior_const;
}

// A column outside the fit is marked by alpha 0 (the host keeps a list):
// a fitted column's alpha never is 0. Warm starts are at least the EM's
// floor, and a step that took one to 0 would make the objective -inf (a
// log of it, from its counts or its prior), so it is never accepted.
// The objective at alpha a (cols; 0 marks a column outside the fit) and,
// with want_dt, its gradient and Hessian diagonal in log alpha (g, h) and
// the Hessian's rank-one scalar *c_out. Without want_value the value is not
// formed (0 returned): Newton's direction needs only the derivatives.
__device__ __noinline__ double evaluate(const Component& C, Shared& sh, const double* a, bool want_value,
                           bool want_dt, double* g, double* h, double* c_out) {
  Sums part;
  for (int64_t v = threadIdx.x; v < C.cols; v += blockDim.x) part.a += a[v];
  const double A = block_all(sh, part, AddSums()).a;

  // Row totals: l = sum w lpoch(A, N), d = sum w dpoch, t = sum w tpoch.
  Sums tot;
  if (C.pairs) {
    for (int64_t r = threadIdx.x; r < C.runs; r += blockDim.x) {
      const double n = static_cast<double>(C.run_value[r]), w = C.run_weight[r];
      if (n == 0.0 || w == 0.0) continue;
      const Sums s = poch_terms(w, A, n, want_value, want_dt);
      tot.a += s.a;
      tot.b += s.b;
      tot.c += s.c;
    }
  } else {
    for (int64_t i = threadIdx.x; i < C.len; i += blockDim.x) {
      const double x = A + C.base + static_cast<double>(i), w = C.cum[i];
      if (want_value) tot.a += w * log(x);
      if (want_dt) {
        const double r = 1.0 / x;
        tot.b += w * r;
        tot.c -= w * r * r;
      }
    }
    if (threadIdx.x == 0 && C.base > 0.0) {
      const Sums s = poch_terms(C.base_weight, A, C.base, want_value, want_dt);
      tot.a += s.a;
      tot.b += s.b;
      tot.c += s.c;
    }
  }
  tot = block_all(sh, tot, AddSums());

  // Columns: per column v, C[m] = weight of counts >= m, and
  // sum_b w lpoch(a, n_b) = sum_m C[m] log(a + m - 1).
  Sums f;
  for (int64_t v = threadIdx.x; v < C.cols; v += blockDim.x) {
    const double av = a[v];
    if (av == 0.0) continue;
    const double* bv = C.hist + v * C.bins;
    double above = 0.0, sl = 0.0, sd = 0.0, st = 0.0;
    for (int m = static_cast<int>(C.top[v]); m >= 1; --m) {
      above += bv[m];
      const double x = av + static_cast<double>(m - 1);
      if (want_value) sl += above * log(x);
      if (want_dt) {
        const double r = 1.0 / x;
        sd += above * r;
        st -= above * r * r;
      }
    }
    if (want_value) f.a += sl + (C.prior ? log_prior(C, av) : 0.0);
    if (want_dt) {
      double gv = sd - tot.b, hv = st;
      math::to_log_alpha(av, &gv, &hv);
      if (C.prior) math::add_prior_derivatives(av, C.shape, C.rate, 1.0, &gv, &hv);
      g[v] = gv;
      h[v] = hv;
    }
  }
  if (want_dt) *c_out = -tot.c;
  if (!want_value) return 0.0;
  return block_all(sh, f, AddSums()).a - tot.a;
}

// trial = alpha exp(t step) on the fitted columns.
__device__ void move_alpha(const Component& C, const double* alpha, const double* step, double t,
                           double* trial) {
  for (int64_t v = threadIdx.x; v < C.cols; v += blockDim.x)
    trial[v] = alpha[v] == 0.0 ? 0.0 : alpha[v] * exp(t * step[v]);
  __syncthreads();
}

// The row-total histogram of component j in the host's form; false when
// its band would not fit the work area (the host fits it then).
__device__ bool totals_form(const EmFitArgs& p, int64_t j, double* band, Shared& sh, Component* C) {
  const double* w = p.run_weight + j * p.runs;
  // Smallest and largest total with weight, and how many distinct.
  Sums s;
  s.c = 0.0;
  s.d = INFINITY;
  for (int64_t r = threadIdx.x; r < p.runs; r += blockDim.x) {
    const double n = static_cast<double>(p.run_value[r]);
    if (n == 0.0 || w[r] == 0.0) continue;
    s.a += 1.0;
    s.c = fmax(s.c, n);
    s.d = fmin(s.d, n);
  }
  s = block_all(sh, s, MixSums());
  const double distinct = s.a, top = s.c, low = s.d;
  C->run_value = p.run_value;
  C->run_weight = w;
  C->runs = p.runs;
  if (distinct == 0.0) {
    C->pairs = false;
    C->len = 0;
    return true;
  }
  if (top > kHistTotalIndexMax ||
      (top > kHistDenseMax && top - low > kHistBandFactor * distinct + kHistBandSlack)) {
    C->pairs = true;
    return true;
  }
  C->pairs = false;
  C->base = top > kHistDenseMax ? low : 0.0;
  C->len = static_cast<int64_t>(top - C->base);
  // The host keeps a band only within kHistBandFactor of its distinct
  // totals, which em_fit_band_max allows for: a longer one would be a bug.
  if (C->len > p.band_max) return false;
  // cum[i] = weight of totals above base + i: run r (value n_r) fills
  // [n_{r-1}, n_r) - base with the weight of runs r and above, their
  // suffix sums, scanned a block of runs at a time from the top.
  double* suffix = band + p.band_max;
  double carry = 0.0;
  for (int64_t end = p.runs; end > 0; end -= blockDim.x) {
    const int64_t r = end - 1 - static_cast<int64_t>(threadIdx.x);
    const double x = r >= 0 && p.run_value[r] > 0u ? w[r] : 0.0;
    double upto = 0.0;
    BlockScan(sh.temp.scan).InclusiveSum(x, upto);
    if (r >= 0) suffix[r] = carry + upto;
    if (threadIdx.x == blockDim.x - 1) sh.result.a = upto;
    __syncthreads();
    carry += sh.result.a;
    __syncthreads();
  }
  for (int64_t r = threadIdx.x; r < p.runs; r += blockDim.x) {
    const double n = fmin(static_cast<double>(p.run_value[r]), top);
    const double prev = r > 0 ? fmax(static_cast<double>(p.run_value[r - 1]), C->base) : C->base;
    for (double m = prev; m < n; m += 1.0) band[static_cast<int64_t>(m - C->base)] = suffix[r];
  }
  C->cum = band;
  // The base term's weight is every total's (all are >= base).
  Sums bw;
  for (int64_t r = threadIdx.x; r < p.runs; r += blockDim.x)
    if (static_cast<double>(p.run_value[r]) > 0.0) bw.a += w[r];
  C->base_weight = block_all(sh, bw, AddSums()).a;
  return true;
}

__global__ void __launch_bounds__(kFitThreads) em_fit_kernel(EmFitArgs p) {
  __shared__ Shared sh;
  const int64_t j = blockIdx.x;
  const int64_t V = p.cols;
  EmFitOut* out = p.out + j;
  if (!p.fit[j]) return;
  double* work = p.work + j * em_fit_work_doubles(V, p.runs);
  double* alpha = work;
  double* trial = work + V;
  double* g = work + 2 * V;
  double* h = work + 3 * V;
  double* g_try = work + 4 * V;
  double* h_try = work + 5 * V;
  double* step = work + 6 * V;
  double* top = work + 7 * V;
  double* band = work + kEmFitArrays * V;

  Component C;
  C.cols = V;
  C.bins = p.bins;
  C.hist = p.hist + j * V * p.bins;
  C.top = top;
  C.prior = p.prior_rate > 0.0;
  C.shape = p.prior_shape;
  C.rate = p.prior_rate;
  C.prior_const = p.prior_const;

  // The fitted columns (those with counts, or all under a prior), the
  // moments behind the multinomial-limit test, and the warm start.
  Sums mom;  // a: fitted columns, b: sum of first moments, c: sum second factorial / first moment
  for (int64_t v = threadIdx.x; v < V; v += blockDim.x) {
    const double* bv = C.hist + v * C.bins;
    double first = 0.0, second = 0.0;
    int largest = 0;
    for (int m = 1; m < C.bins; ++m) {
      const double x = static_cast<double>(m);
      if (bv[m] != 0.0) largest = m;
      first += bv[m] * x;
      second += bv[m] * x * (x - 1.0);
    }
    top[v] = static_cast<double>(largest);
    const bool fitted = C.prior || largest > 0;
    alpha[v] = fitted ? p.alpha[j * V + v] : 0.0;
    mom.a += fitted ? 1.0 : 0.0;
    mom.b += first;
    if (fitted && first > 0.0) mom.c += second / first;
  }
  mom = block_all(sh, mom, AddSums());
  if (mom.a == 0.0 || !(mom.b > 0.0)) {
    if (threadIdx.x == 0) out->status = EmFitOutcome::kNoCounts;
    return;
  }
  if (!totals_form(p, j, band, sh, &C)) {
    if (threadIdx.x == 0) out->status = EmFitOutcome::kNotFitted;
    return;
  }
  // The multinomial limit test of fit_from_histograms: sum_v s_v / p_v -
  // sum_b w N(N - 1), p_v = first_v / n_total.
  {
    Sums pair;
    const double* w = p.run_weight + j * p.runs;
    for (int64_t r = threadIdx.x; r < p.runs; r += blockDim.x) {
      const double n = static_cast<double>(p.run_value[r]);
      pair.a += w[r] * n * (n - 1.0);
    }
    const double pair_all = block_all(sh, pair, AddSums()).a;
    const double limit_slope = mom.c * mom.b - pair_all;
    if (!C.prior && (mom.a == 1.0 || !(limit_slope > 0.0))) {
      if (threadIdx.x == 0) out->status = EmFitOutcome::kNotFitted;
      return;
    }
  }
  __syncthreads();

  double c = 0.0, c_try = 0.0;
  double f = evaluate(C, sh, alpha, true, true, g, h, &c);
  int it = 0;
  bool handed_back = false;
  for (;; ++it) {
    // Newton's direction in log alpha: (diag(h) + c alpha alpha^T) step =
    // -g by Sherman-Morrison; usable where the matrix is negative definite.
    Sums q;  // a: sum alpha^2 / h, b: sum alpha (-g) / h, c: columns with h >= 0
    for (int64_t v = threadIdx.x; v < V; v += blockDim.x) {
      if (alpha[v] == 0.0) continue;
      math::RankOneSums t;
      math::add_rank_one_terms(h[v], alpha[v], -g[v], &t);
      q.a += t.uDu;
      q.b += t.uDb;
      q.c += t.definite ? 0.0 : 1.0;
    }
    q = block_all(sh, q, AddSums());
    const double denom = math::rank_one_denominator(c, q.a);
    const bool newton_ok = math::rank_one_usable(q.c == 0.0, denom);
    Sums gs;  // a: predicted gain, c: largest |step|
    if (newton_ok) {
      for (int64_t v = threadIdx.x; v < V; v += blockDim.x) {
        if (alpha[v] == 0.0) {
          step[v] = 0.0;
          continue;
        }
        const double s = math::rank_one_solution(h[v], alpha[v], -g[v], c, q.b, denom);
        step[v] = s;
        gs.a += math::gain_term(g[v], s);
        gs.c = fmax(gs.c, fabs(s));
      }
      gs = block_all(sh, gs, MixSums());
    }
    const double gain = gs.a;
    if (newton_ok && math::gain_converged(gain, f, p.tolerance)) {
      // Converged; the last, tiny step is kept where it does not lower f.
      move_alpha(C, alpha, step, 1.0, trial);
      const double f2 = evaluate(C, sh, trial, true, true, g_try, h_try, &c_try);
      if (f2 >= f) {
        double* x = alpha; alpha = trial; trial = x;
        x = g; g = g_try; g_try = x;
        x = h; h = h_try; h_try = x;
        c = c_try;
        f = f2;
      }
      break;
    }
    if (it >= p.max_iterations) break;
    bool moved = false, with_derivs = false;
    double f_moved = f;
    if (newton_ok && gain > 0.0) {
      double t = math::first_step_length(gs.c);
      for (int k = 0; k < math::kMaxHalvings && !moved; ++k, t *= 0.5) {
        move_alpha(C, alpha, step, t, trial);
        const double ft = evaluate(C, sh, trial, true, k == 0, g_try, h_try, &c_try);
        if (ft >= f) {
          moved = true;
          with_derivs = k == 0;
          f_moved = ft;
        }
      }
    }
    if (!moved) {
      handed_back = true;  // Minka's step: the host's
      break;
    }
    double* x = alpha; alpha = trial; trial = x;
    if (with_derivs) {
      x = g; g = g_try; g_try = x;
      x = h; h = h_try; h_try = x;
      c = c_try;
    } else {
      __syncthreads();
      evaluate(C, sh, alpha, false, true, g, h, &c);
    }
    f = f_moved;
    __syncthreads();
  }
  if (handed_back) {
    if (threadIdx.x == 0) out->status = EmFitOutcome::kNotFitted;
    return;
  }
  __syncthreads();
  // The prior at alpha, and log det of minus the Hessian in log alpha:
  // prod(-h) (1 + c alpha^T diag(h)^-1 alpha).
  Sums d;  // a: sum alpha^2 / h, b: sum log(-h), c: columns with h >= 0, d: log prior
  for (int64_t v = threadIdx.x; v < V; v += blockDim.x) {
    const double av = alpha[v];
    if (av != 0.0) {
      math::RankOneSums t;
      math::add_rank_one_terms(h[v], av, 0.0, &t);
      d.a += t.uDu;
      d.c += t.definite ? 0.0 : 1.0;
      d.b += log(-h[v]);
      if (C.prior) d.d += log_prior(C, av);
    }
    p.alpha[j * V + v] = fmax(av, p.alpha_floor);
  }
  d = block_all(sh, d, AddSums());
  if (threadIdx.x == 0) {
    const double den = math::rank_one_denominator(c, d.a);
    out->status = EmFitOutcome::kFitted;
    out->iterations = it;
    out->log_prior = d.d;
    out->log_det = math::rank_one_usable(d.c == 0.0, den) ? math::rank_one_log_det(d.b, den) : 0.0;
  }
}

}  // namespace
}  // namespace cuda
}  // namespace dirmn
