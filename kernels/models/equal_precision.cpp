// equal_precision.cpp: the groups' fit under one shared precision (see the
// header for the method).
#include "equal_precision.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "../table/histogram_sums.hpp"
#include "group_test_parts.hpp"

namespace dirmn {
namespace {

// A group's columns with counts.
std::vector<int64_t> active_columns(const Histograms& h) {
  std::vector<int64_t> a;
  for (int64_t v = 0; v < h.cols; ++v)
    if (h.column[static_cast<size_t>(v)].first_moment > 0.0) a.push_back(v);
  return a;
}

// A group at precision A: its best proportions (alpha, warm-started from
// and written to `alpha`), its log-likelihood there, the multiplier and
// d multiplier / dA.
struct GroupAt {
  double value = 0.0, lambda = 0.0, dlambda = 0.0;
  bool converged = false;
};

// Newton steps on the alphas with the sum held to A: from f' + t step =
// lambda and sum step = A - sum alpha, lambda = (A - sum alpha + sum f'/t)
// / sum 1/t. Each step is taken multiplicatively (alpha exp(step / alpha)),
// which keeps every alpha positive and agrees with Newton's to first order.
// Converged below kGroupTolerance, or below kGroupRounding once a step no
// longer shrinks (the derivatives' rounding then sets the steps' size).
constexpr int kGroupIterations = 200;
constexpr double kGroupTolerance = 1e-13;
constexpr double kGroupRounding = 1e-9;
constexpr double kMaxLogStep = 2.0;

GroupAt solve_group(const Histograms& h, const std::vector<int64_t>& active, double A, double* alpha) {
  GroupAt out;
  double sum = 0.0;
  for (int64_t v : active) sum += alpha[v];
  for (int64_t v : active) alpha[v] *= A / sum;
  if (active.size() == 1) {  // one column: alpha = A, any lambda
    const HistogramTerms c = histogram_terms(h.column[static_cast<size_t>(active[0])], A, true, true, true);
    out.value = c.l;
    out.lambda = c.d;
    out.dlambda = c.t;
    out.converged = true;
  } else {
    double inv_t = 0.0, lambda = 0.0, last_worst = std::numeric_limits<double>::infinity();
    std::vector<double> d(active.size()), t(active.size());
    for (int it = 0; it < kGroupIterations; ++it) {
      double s_alpha = 0.0, s_dt = 0.0;
      inv_t = 0.0;
      for (size_t i = 0; i < active.size(); ++i) {
        const double a = alpha[active[i]];
        const HistogramTerms c = histogram_terms(h.column[static_cast<size_t>(active[i])], a, false, true, true);
        d[i] = c.d;
        t[i] = c.t;
        s_alpha += a;
        s_dt += c.d / c.t;
        inv_t += 1.0 / c.t;
      }
      lambda = (A - s_alpha + s_dt) / inv_t;
      double worst = 0.0;
      for (size_t i = 0; i < active.size(); ++i) {
        double& a = alpha[active[i]];
        const double rel = std::clamp((lambda - d[i]) / t[i] / a, -kMaxLogStep, kMaxLogStep);
        worst = std::max(worst, std::fabs(rel));
        a *= std::exp(rel);
      }
      if (worst < kGroupTolerance || (worst < kGroupRounding && worst >= last_worst)) {
        out.converged = true;
        break;
      }
      last_worst = worst;
    }
    out.lambda = lambda;
    out.dlambda = 1.0 / inv_t;
    for (int64_t v : active) out.value += histogram_terms(h.column[static_cast<size_t>(v)], alpha[v], true, false, false).l;
  }
  const HistogramTerms tot = histogram_terms(h.total, A, true, true, true);
  out.value += h.lcoef_sum - tot.l;
  out.lambda -= tot.d;     // now d value / dA
  out.dlambda -= tot.t;    // and d^2 value / dA^2
  return out;
}

// sum_v m_v log(m_v / M) + the coefficients: the multinomial's log-likelihood.
double multinomial_loglik(const Histograms& h) {
  double total = 0.0, f = 0.0;
  for (int64_t v = 0; v < h.cols; ++v) total += h.column[static_cast<size_t>(v)].first_moment;
  for (int64_t v = 0; v < h.cols; ++v) {
    const double m = h.column[static_cast<size_t>(v)].first_moment;
    if (m > 0.0) f += m * std::log(m / total);
  }
  return f + h.lcoef_sum;
}

constexpr int kBacktracks = 40;
constexpr double kFlatValue = 1e-15;
constexpr double kFlatStep = 1e-6;

}  // namespace

void fit_equal_precision(const Histograms* h, size_t groups, const std::vector<FitOutcome>& own,
                         double tolerance, int max_iterations, EqualPrecisionFit* out) {
  const int64_t cols = groups == 0 ? 0 : h[0].cols;
  std::vector<std::vector<int64_t>> active(groups);
  out->alpha.assign(groups * static_cast<size_t>(cols), 0.0);
  double log_a = 0.0;
  int finite = 0;
  for (size_t g = 0; g < groups; ++g) {
    active[g] = active_columns(h[g]);
    double* a = out->alpha.data() + g * static_cast<size_t>(cols);
    for (int64_t v : active[g]) a[v] = own[g].alpha[static_cast<size_t>(v)] > 0.0 ? own[g].alpha[static_cast<size_t>(v)] : 1e-3;
    if (!own[g].multinomial_limit && std::isfinite(own[g].precision) && own[g].precision > 0.0) {
      log_a += std::log(own[g].precision);
      ++finite;
    }
  }
  const auto limit = [&] {
    out->multinomial_limit = true;
    out->converged = true;
    out->precision = std::numeric_limits<double>::infinity();
    out->loglik = 0.0;
    for (size_t g = 0; g < groups; ++g) {
      out->loglik += multinomial_loglik(h[g]);
      double* a = out->alpha.data() + g * static_cast<size_t>(cols);
      double s = 0.0;
      for (int64_t v : active[g]) s += h[g].column[static_cast<size_t>(v)].first_moment;
      for (int64_t v : active[g]) a[v] = h[g].column[static_cast<size_t>(v)].first_moment / s;
    }
  };
  if (finite == 0) return limit();
  double u = log_a / finite;
  const double u_max = std::log(group_parts::kLimitPrecision);
  const auto evaluate = [&](double uu, std::vector<double>* alpha, double* value, double* slope, double* curve) {
    const double A = std::exp(uu);
    *value = *slope = *curve = 0.0;
    bool ok = true;
    for (size_t g = 0; g < groups; ++g) {
      const GroupAt r = solve_group(h[g], active[g], A, alpha->data() + g * static_cast<size_t>(cols));
      *value += r.value;
      *slope += r.lambda;
      *curve += r.dlambda;
      ok = ok && r.converged;
    }
    // In log A: d/du = A d/dA, d2/du2 = A d/dA + A^2 d2/dA2.
    *curve = A * *slope + A * A * *curve;
    *slope *= A;
    return ok;
  };
  std::vector<double> trial(out->alpha);
  double value = 0.0, slope = 0.0, curve = 0.0;
  bool inner_ok = evaluate(u, &out->alpha, &value, &slope, &curve);
  for (out->iterations = 0; out->iterations < max_iterations; ++out->iterations) {
    double du = curve < 0.0 ? -slope / curve : (slope > 0.0 ? 1.0 : -1.0);
    du = std::clamp(du, -kMaxLogStep, kMaxLogStep);
    if (std::fabs(du) < tolerance) {
      out->converged = inner_ok;
      break;
    }
    double v2 = 0.0, s2 = 0.0, c2 = 0.0;
    bool taken = false;
    for (int k = 0; k < kBacktracks; ++k, du *= 0.5) {
      trial = out->alpha;
      const bool ok = evaluate(u + du, &trial, &v2, &s2, &c2);
      if (v2 >= value) {
        // A step that moves the value by no more than its rounding, from a
        // Newton step already small: the maximum, at the precision the
        // value has.
        const bool flat = v2 - value <= kFlatValue * std::fabs(value) && std::fabs(du) < kFlatStep;
        u += du;
        out->alpha.swap(trial);
        value = v2;
        slope = s2;
        curve = c2;
        inner_ok = ok;
        taken = true;
        if (flat) {
          out->converged = inner_ok;
          out->precision = std::exp(u);
          out->loglik = value;
          return;
        }
        break;
      }
    }
    if (!taken) {  // no ascent left at the rounding level: a maximum
      out->converged = inner_ok;
      break;
    }
    if (u > u_max && slope > 0.0) return limit();
  }
  out->precision = std::exp(u);
  out->loglik = value;
}

}  // namespace dirmn
