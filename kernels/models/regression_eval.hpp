// regression_eval.hpp: the DM regression at one beta -- alpha, the per-row
// log pmf and derivatives from the table's step, and the gradient and the
// Newton matrix's blocks summed over rows (regression.cpp's Newton loop
// over them; its header comment has the formulas). Included by
// regression.cpp alone.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "../math/sums.hpp"
#include "../stored_table.hpp"
#include "../table/table.hpp"
#include "regression.hpp"
#include "regression_mp.hpp"

namespace dirmn {
namespace regression_detail {

// Rows per chunk of every sum over rows: the chunks in order, so that no
// sum depends on the thread count.
constexpr int64_t kRowsPerChunk = 256;

// The model at one beta: alpha and the per-row derivatives.
// Its rows x V arrays are written whole by each evaluation (their first
// zeroing was a tenth of a wide fit).
struct Point {
  std::vector<double> beta;  // P, index v p + i
  TableArray<double> alpha, gradient, hessian_diag;  // rows x V
  std::vector<double> loglik, scalar;                 // rows
  double value = -std::numeric_limits<double>::infinity();  // weighted, scaled weights
  bool valid = false;
};

class RegressionFit {
 public:
  RegressionFit(const StoredTable& t, const RegressionSettings& s, const double* w, const MeanPrecisionLayout& mp)
      : t_(t),
        s_(s),
        w_(w),
        rows_(t.info->rows),
        V_(t.info->cols),
        p_(s.p),
        P_(s.mean_precision ? mp.parameters() : s.p * t.info->cols),
        mp_(mp),
        ones_(s.mean_precision && s.z == nullptr ? static_cast<size_t>(t.info->rows) : 0, 1.0),
        z_(s.z != nullptr ? s.z : ones_.data()) {}

  int64_t parameters() const { return P_; }

  // alpha, then the step's log pmf and (with derivs) derivatives, at beta.
  BackendResult evaluate(const std::vector<double>& beta, bool derivs, Point* pt) const {
    pt->beta = beta;
    pt->alpha.resize(static_cast<size_t>(rows_ * V_));
    pt->loglik.resize(static_cast<size_t>(rows_));
    pt->scalar.resize(static_cast<size_t>(rows_));
    if (derivs) {
      pt->gradient.resize(static_cast<size_t>(rows_ * V_));
      pt->hessian_diag.resize(static_cast<size_t>(rows_ * V_));
    }
    // beta p x V (and gamma) for the alpha functions.
    std::vector<double> beta_pv(static_cast<size_t>(p_ * V_)), gamma(static_cast<size_t>(mp_.q));
    if (s_.mean_precision) {
      mp_expand(mp_, beta.data(), beta_pv.data(), gamma.data());
    } else {
      for (int64_t v = 0; v < V_; ++v)
        for (int64_t i = 0; i < p_; ++i) beta_pv[static_cast<size_t>(i * V_ + v)] = beta[static_cast<size_t>(v * p_ + i)];
    }
    // By chunks of rows on the threads; the first bad row of the first
    // chunk that has one is reported.
    const int64_t chunks = (rows_ + kRowsPerChunk - 1) / kRowsPerChunk;
    std::vector<int64_t> bad(static_cast<size_t>(2 * chunks), -1);
    t_.threads->parallel_for(
        chunks,
        [&](int64_t ch) {
          const int64_t b0 = ch * kRowsPerChunk, n = std::min(rows_, b0 + kRowsPerChunk) - b0;
          int64_t br = -1, bc = -1;
          const bool ok = s_.mean_precision
                              ? mp_alpha(mp_, s_.x + b0 * p_, z_ + b0 * mp_.q, n, beta_pv.data(), gamma.data(),
                                         w_ + b0, pt->alpha.data() + b0 * V_, &br, &bc)
                              : regression_alpha(s_.x + b0 * p_, n, p_, beta_pv.data(), V_, w_ + b0,
                                                 pt->alpha.data() + b0 * V_, &br, &bc);
          if (!ok) {
            bad[static_cast<size_t>(2 * ch)] = b0 + br;
            bad[static_cast<size_t>(2 * ch + 1)] = bc;
          }
        },
        static_cast<double>(rows_ * P_));
    pt->valid = true;
    last_bad_row_ = last_bad_category_ = -1;
    for (int64_t ch = 0; ch < chunks && pt->valid; ++ch)
      if (bad[static_cast<size_t>(2 * ch)] >= 0) {
        pt->valid = false;
        last_bad_row_ = bad[static_cast<size_t>(2 * ch)];
        last_bad_category_ = bad[static_cast<size_t>(2 * ch + 1)];
      }
    if (!pt->valid) return {};
    RowwiseDerivRequest req;
    req.alpha = pt->alpha.data();
    req.full = true;
    req.loglik = pt->loglik.data();
    req.gradient = derivs ? pt->gradient.data() : nullptr;
    req.hessian_diag = derivs ? pt->hessian_diag.data() : nullptr;
    req.hessian_scalar = derivs ? pt->scalar.data() : nullptr;
    const BackendResult r = t_.run(Step::kDerivativesRowwise, [&](Backend& be, const BackendCounts& d) {
      return be.rowwise_derivatives(d, req, s_.interrupt);
    });
    if (!r.ok()) return r;
    math::NeumaierSum sum;
    for (int64_t b = 0; b < rows_; ++b) sum.add(weight(b) * pt->loglik[static_cast<size_t>(b)]);
    pt->value = sum.value();
    pt->valid = std::isfinite(pt->value);
    return {};
  }

  // At pt (derivatives): the gradient G, -H's blocks B_v (V x p x p,
  // symmetric) and its low-rank weights w_b c_b (rows). pt's gradient and
  // Hessian diagonal become q = alpha g and dd = alpha^2 h + q.
  void derivatives(Point* pt, std::vector<double>* grad, std::vector<double>* blocks,
                   std::vector<double>* c) const {
    const int64_t chunks = (rows_ + kRowsPerChunk - 1) / kRowsPerChunk;
    double* q = pt->gradient.data();
    double* dd = pt->hessian_diag.data();
    c->resize(static_cast<size_t>(rows_));
    t_.threads->parallel_for(
        chunks,
        [&](int64_t ch) {
          const int64_t b1 = std::min(rows_, (ch + 1) * kRowsPerChunk);
          for (int64_t b = ch * kRowsPerChunk; b < b1; ++b) {
            (*c)[static_cast<size_t>(b)] = weight(b) * pt->scalar[static_cast<size_t>(b)];
            for (int64_t v = 0; v < V_; ++v) {
              const size_t k = static_cast<size_t>(b * V_ + v);
              const double a = pt->alpha[k];
              q[k] = a * q[k];
              dd[k] = a * (a * dd[k]) + q[k];
            }
          }
        },
        static_cast<double>(rows_ * P_));
    if (s_.mean_precision) {
      derivatives_mp(*pt, grad, blocks);
      return;
    }
    // The gradient: per chunk, then the chunks in order.
    std::vector<double>& partial = partial_;
    partial.assign(static_cast<size_t>(chunks * P_), 0.0);
    t_.threads->parallel_for(
        chunks,
        [&](int64_t ch) {
          double* g = partial.data() + ch * P_;
          const int64_t b1 = std::min(rows_, (ch + 1) * kRowsPerChunk);
          for (int64_t b = ch * kRowsPerChunk; b < b1; ++b) {
            const double wb = weight(b);
            if (wb == 0.0) continue;
            const double* xb = s_.x + b * p_;
            for (int64_t v = 0; v < V_; ++v) {
              const double f = wb * q[static_cast<size_t>(b * V_ + v)];
              for (int64_t i = 0; i < p_; ++i) g[v * p_ + i] += f * xb[i];
            }
          }
        },
        static_cast<double>(rows_ * P_));
    grad->assign(static_cast<size_t>(P_), 0.0);
    for (int64_t ch = 0; ch < chunks; ++ch)
      for (int64_t r = 0; r < P_; ++r) (*grad)[static_cast<size_t>(r)] += partial[static_cast<size_t>(ch * P_ + r)];
    // B_v = -sum_b w_b dd_bv x_b x_b', the rows in order; by blocks of
    // categories, so that each row's dd is read in runs.
    blocks->assign(static_cast<size_t>(V_ * p_ * p_), 0.0);
    const int64_t per = std::max<int64_t>(1, kRowsPerChunk / p_);
    t_.threads->parallel_for(
        (V_ + per - 1) / per,
        [&](int64_t ch) {
          const int64_t v0 = ch * per, v1 = std::min(V_, v0 + per);
          for (int64_t b = 0; b < rows_; ++b) {
            const double wb = weight(b);
            if (wb == 0.0) continue;
            const double* xb = s_.x + b * p_;
            for (int64_t v = v0; v < v1; ++v) {
              double* bv = blocks->data() + v * p_ * p_;
              const double e = wb * dd[b * V_ + v];
              for (int64_t i = 0; i < p_; ++i)
                for (int64_t j = 0; j <= i; ++j) bv[i * p_ + j] -= e * xb[i] * xb[j];
            }
          }
          for (int64_t v = v0; v < v1; ++v) {
            double* bv = blocks->data() + v * p_ * p_;
            for (int64_t i = 0; i < p_; ++i)
              for (int64_t j = 0; j < i; ++j) bv[j * p_ + i] = bv[i * p_ + j];
          }
        },
        static_cast<double>(rows_ * V_ * p_ * p_));
  }

  // The mean/precision model's gradient and blocks (regression_mp.hpp), per
  // chunk of rows, then the chunks in order.
  void derivatives_mp(const Point& pt, std::vector<double>* grad, std::vector<double>* blocks) const {
    const int64_t chunks = (rows_ + kRowsPerChunk - 1) / kRowsPerChunk, F = V_ - 1;
    const int64_t width = P_ + F * p_ * p_;
    std::vector<double>& partial = partial_;
    partial.assign(static_cast<size_t>(chunks * width), 0.0);
    t_.threads->parallel_for(
        chunks,
        [&](int64_t ch) {
          double* g = partial.data() + ch * width;
          const int64_t b1 = std::min(rows_, (ch + 1) * kRowsPerChunk);
          for (int64_t b = ch * kRowsPerChunk; b < b1; ++b) {
            const double wb = weight(b);
            if (wb == 0.0) continue;
            const size_t k = static_cast<size_t>(b * V_);
            mp_row(mp_, s_.x + b * p_, z_ + b * mp_.q, pt.alpha.data() + k, pt.gradient.data() + k,
                   pt.hessian_diag.data() + k, pt.scalar[static_cast<size_t>(b)], wb, g, g + P_, nullptr, 0,
                   nullptr);
          }
        },
        static_cast<double>(rows_ * (P_ + F * p_ * p_)));
    grad->assign(static_cast<size_t>(P_), 0.0);
    blocks->assign(static_cast<size_t>(F * p_ * p_), 0.0);
    for (int64_t ch = 0; ch < chunks; ++ch) {
      const double* g = partial.data() + ch * width;
      for (int64_t r = 0; r < P_; ++r) (*grad)[static_cast<size_t>(r)] += g[r];
      for (int64_t r = 0; r < F * p_ * p_; ++r) (*blocks)[static_cast<size_t>(r)] += g[P_ + r];
    }
    for (int64_t k = 0; k < F; ++k) {
      double* bk = blocks->data() + k * p_ * p_;
      for (int64_t i = 0; i < p_; ++i)
        for (int64_t j = 0; j < i; ++j) bk[j * p_ + i] = bk[i * p_ + j];
    }
  }

  // Row b's rank-one terms of -H (mean/precision), at pt after derivatives.
  void terms_mp(const Point& pt, int64_t b, double* u, int64_t ldu, double* s) const {
    const size_t k = static_cast<size_t>(b * V_);
    mp_row(mp_, s_.x + b * p_, z_ + b * mp_.q, pt.alpha.data() + k, pt.gradient.data() + k,
           pt.hessian_diag.data() + k, pt.scalar[static_cast<size_t>(b)], weight(b), nullptr, nullptr, u, ldu, s);
  }

  // The rows' weight (0 for rows without counts).
  double weight(int64_t b) const { return w_[static_cast<size_t>(b)]; }

  int64_t last_bad_row() const { return last_bad_row_; }
  int64_t last_bad_category() const { return last_bad_category_; }

 private:
  const StoredTable& t_;
  const RegressionSettings& s_;
  const double* w_;
  int64_t rows_, V_, p_, P_;
  MeanPrecisionLayout mp_;
  std::vector<double> ones_;  // the precision's design where none is given (an intercept)
  const double* z_;           // rows x q
  mutable int64_t last_bad_row_ = -1, last_bad_category_ = -1;
  mutable std::vector<double> partial_;  // derivatives()'s work array
};

}  // namespace regression_detail
}  // namespace dirmn
