// regression_mp.cpp: alpha, gradient and -H's parts of the mean/precision
// regression, row by row (the algebra is in regression_mp.hpp).
#include "regression_mp.hpp"

#include <algorithm>
#include <cmath>

namespace dirmn {
namespace {

// Jacobi sweeps for a symmetric 3 x 3 matrix: its eigenvalues (lambda) and
// orthonormal eigenvectors (columns of e, row-major). Converges to
// rounding in a handful of sweeps; kSweeps bounds them.
constexpr int kSweeps = 30;

void eigen3(const double m[3][3], double lambda[3], double e[3][3]) {
  double a[3][3];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      a[i][j] = m[i][j];
      e[i][j] = i == j ? 1.0 : 0.0;
    }
  for (int sweep = 0; sweep < kSweeps; ++sweep) {
    const double off = std::fabs(a[0][1]) + std::fabs(a[0][2]) + std::fabs(a[1][2]);
    const double scale = std::fabs(a[0][0]) + std::fabs(a[1][1]) + std::fabs(a[2][2]) + off;
    if (!(off > 1e-300) || off <= 1e-17 * scale) break;
    for (int pi = 0; pi < 2; ++pi)
      for (int qi = pi + 1; qi < 3; ++qi) {
        if (a[pi][qi] == 0.0) continue;
        const double theta = (a[qi][qi] - a[pi][pi]) / (2.0 * a[pi][qi]);
        const double t = (theta >= 0 ? 1.0 : -1.0) / (std::fabs(theta) + std::sqrt(theta * theta + 1.0));
        const double cs = 1.0 / std::sqrt(t * t + 1.0), sn = t * cs;
        for (int k = 0; k < 3; ++k) {  // columns pi, qi of a
          const double akp = a[k][pi], akq = a[k][qi];
          a[k][pi] = cs * akp - sn * akq;
          a[k][qi] = sn * akp + cs * akq;
        }
        for (int k = 0; k < 3; ++k) {  // rows pi, qi
          const double apk = a[pi][k], aqk = a[qi][k];
          a[pi][k] = cs * apk - sn * aqk;
          a[qi][k] = sn * apk + cs * aqk;
        }
        for (int k = 0; k < 3; ++k) {
          const double ekp = e[k][pi], ekq = e[k][qi];
          e[k][pi] = cs * ekp - sn * ekq;
          e[k][qi] = sn * ekp + cs * ekq;
        }
      }
  }
  for (int i = 0; i < 3; ++i) lambda[i] = a[i][i];
}

}  // namespace

void mp_expand(const MeanPrecisionLayout& l, const double* free, double* beta, double* gamma) {
  for (int64_t i = 0; i < l.p; ++i) {
    double sum = 0.0;
    for (int64_t k = 0; k < l.V - 1; ++k) {
      const double b = free[k * l.p + i];
      beta[i * l.V + l.category(k)] = b;
      sum += b;
    }
    beta[i * l.V + l.reference] = l.sum_to_zero ? -sum : 0.0;
  }
  for (int64_t j = 0; j < l.q; ++j) gamma[j] = free[l.p * (l.V - 1) + j];
}

bool mp_alpha(const MeanPrecisionLayout& l, const double* x, const double* z, int64_t n,
              const double* beta, const double* gamma, const double* row_weight, double* alpha,
              int64_t* bad_row, int64_t* bad_category) {
  const int64_t V = l.V;
  for (int64_t b = 0; b < n; ++b) {
    double* a = alpha + b * V;
    if (row_weight != nullptr && row_weight[b] == 0.0) {
      std::fill(a, a + V, 1.0);
      continue;
    }
    std::fill(a, a + V, 0.0);
    for (int64_t i = 0; i < l.p; ++i) {
      const double xi = x[b * l.p + i];
      const double* bi = beta + i * V;
      for (int64_t v = 0; v < V; ++v) a[v] += xi * bi[v];
    }
    double zeta = l.offset;
    for (int64_t j = 0; j < l.q; ++j) zeta += z[b * l.q + j] * gamma[j];
    // log alpha = eta - lse(eta) + zeta, lse from the largest eta.
    double top = a[0];
    for (int64_t v = 1; v < V; ++v) top = std::max(top, a[v]);
    double sum = 0.0;
    for (int64_t v = 0; v < V; ++v) sum += std::exp(a[v] - top);
    const double shift = zeta - top - std::log(sum);
    for (int64_t v = 0; v < V; ++v) {
      a[v] = std::exp(a[v] + shift);
      if (!(a[v] > 0.0) || !std::isfinite(a[v])) {
        *bad_row = b;
        *bad_category = v;
        return false;
      }
    }
  }
  return true;
}

void mp_row(const MeanPrecisionLayout& l, const double* x, const double* z, const double* alpha,
            const double* q, const double* d, double c, double w, double* grad, double* blocks,
            double* u, int64_t ldu, double* s) {
  const int64_t p = l.p, V = l.V, r = l.reference, F = V - 1, base = p * F;
  double Q = 0.0, Sd = 0.0, A = 0.0;
  for (int64_t v = 0; v < V; ++v) {
    Q += q[v];
    Sd += d[v];
    A += alpha[v];
  }
  const double pr = alpha[r] / A;
  if (grad != nullptr) {
    // d/deta_v = q_v - pi_v Q; a free block's is its category's, less
    // the implied category's with sum to zero.
    const double gr = q[r] - pr * Q;
    for (int64_t k = 0; k < F; ++k) {
      const int64_t v = l.category(k);
      double g = q[v] - alpha[v] / A * Q;
      if (l.sum_to_zero) g -= gr;
      for (int64_t i = 0; i < p; ++i) grad[k * p + i] += w * g * x[i];
    }
    for (int64_t j = 0; j < l.q; ++j) grad[base + j] += w * Q * z[j];
  }
  if (blocks != nullptr) {
    // -H's blocks: -w (d_v - Q pi_v) x x'.
    for (int64_t k = 0; k < F; ++k) {
      const int64_t v = l.category(k);
      const double e = -w * (d[v] - Q * alpha[v] / A);
      double* bk = blocks + k * p * p;
      for (int64_t i = 0; i < p; ++i)
        for (int64_t j = 0; j <= i; ++j) bk[i * p + j] += e * x[i] * x[j];
    }
  }
  if (u == nullptr) return;
  // -H's low-rank part: -w W C W' over W = [pi' (x) x, d' (x) x, z] (the
  // primes: in the free categories), C as in the header, diagonalised.
  const double m[3][3] = {{-w * (Sd + Q), w, w * Sd}, {w, 0.0, -w}, {w * Sd, -w, -w * (Sd + c * A * A)}};
  double lambda[3], e[3][3];
  eigen3(m, lambda, e);
  const double dr = d[r];
  for (int t = 0; t < 3; ++t) {
    double* ut = u + t * ldu;
    for (int64_t k = 0; k < F; ++k) {
      const int64_t v = l.category(k);
      double pv = alpha[v] / A, dv = d[v];
      if (l.sum_to_zero) {
        pv -= pr;
        dv -= dr;
      }
      const double f = e[0][t] * pv + e[1][t] * dv;
      for (int64_t i = 0; i < p; ++i) ut[k * p + i] = f * x[i];
    }
    for (int64_t j = 0; j < l.q; ++j) ut[base + j] = e[2][t] * z[j];
    s[t] = lambda[t];
  }
  if (l.sum_to_zero) {
    // The implied category's block, -w (d_r - Q pi_r) x x', reaches every
    // pair of free blocks: one more term over 1 (x) x.
    double* ut = u + 3 * ldu;
    for (int64_t k = 0; k < F; ++k)
      for (int64_t i = 0; i < p; ++i) ut[k * p + i] = x[i];
    for (int64_t j = 0; j < l.q; ++j) ut[base + j] = 0.0;
    s[3] = -w * (dr - Q * pr);
  }
}

}  // namespace dirmn
