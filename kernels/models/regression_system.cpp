// regression_system.cpp: -H formed whole or solved through Woodbury, and
// the covariance in the same form.
#include "regression_system.hpp"

#include <algorithm>
#include <cmath>

#include "../math/dense.hpp"
#include "../math/vector_math.hpp"

namespace dirmn {
namespace {

using math::padded;

constexpr int64_t kTile = kGramRows * kGramCols;
// Rows of u (dense form) or of S U D^-1 transposed (Woodbury) per pass of
// the Gram blocks: the cache holds them while every block reads them.
constexpr int64_t kRowsPerPass = 128;
// Columns of W = S U D^-1 per triangular solve of the covariance.
constexpr int64_t kColumnsPerSolve = 256;

// Covariates whose work vector lives on the stack.
constexpr int64_t kMaxInline = 16;

int64_t tiles_of(int64_t n, int64_t size) { return (n + size - 1) / size; }

// C -= sum_k z_k z_k' over the m rows of z (n entries each, ldz apart) into
// C's lower triangle (n x ldc), tiles of kGramRows rows on the loop.
void subtract_gram(const double* z, int64_t ldz, const double* s, int64_t m, int64_t n, double* cmat,
                   int64_t ldc, const math::TileLoop& loop) {
  loop(
      tiles_of(n, kGramRows),
      [&](int64_t rt) {
        const int64_t r0 = rt * kGramRows;
        double block[kTile];
        for (int64_t c0 = 0; c0 < r0 + kGramRows && c0 < n; c0 += kGramCols) {
          if (s != nullptr)
            gram_block(z, ldz, s, 0, m, r0, c0, block);
          else
            product_block(z, ldz, 1, z, ldz, 0, m, r0, c0, block);
          for (int64_t r = r0; r < std::min(n, r0 + kGramRows); ++r)
            for (int64_t c = c0; c < std::min(r + 1, c0 + kGramCols); ++c)
              cmat[r * ldc + c] -= block[(r - r0) * kGramCols + (c - c0)];
        }
      },
      static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(n) / 2.0);
}

// y = F^-T F^-1 x for a p x p Cholesky factor F (row-major, lower).
void block_solve(const double* f, int64_t p, double* y) { math::cholesky_solve(f, p, y); }

// The covariance formed whole (dense form).
class DenseCovariance final : public RegressionCovariance {
 public:
  // vcov: P x P; the first p V unknowns are V blocks of p.
  DenseCovariance(std::vector<double> vcov, int64_t P, int64_t p, int64_t V)
      : vcov_(std::move(vcov)), P_(P), p_(p), V_(V) {
    const int64_t P_all = P;
    variances_.resize(static_cast<size_t>(P));
    for (int64_t k = 0; k < P_all; ++k) variances_[static_cast<size_t>(k)] = vcov_[static_cast<size_t>(k * P_all + k)];
  }
  void fill(double* out, int64_t ld) const override {
    const int64_t P = P_;
    for (int64_t r = 0; r < P; ++r)
      std::copy(vcov_.begin() + r * P, vcov_.begin() + (r + 1) * P, out + r * ld);
  }
  bool wald(const double* beta, int64_t i, double* statistic) const override {
    const int64_t P = P_;
    std::vector<double> s(static_cast<size_t>(V_ * V_)), y(static_cast<size_t>(V_));
    for (int64_t v = 0; v < V_; ++v) {
      y[static_cast<size_t>(v)] = beta[i * V_ + v];
      for (int64_t u = 0; u < V_; ++u)
        s[static_cast<size_t>(v * V_ + u)] = vcov_[static_cast<size_t>((v * p_ + i) * P + u * p_ + i)];
    }
    if (math::cholesky(s.data(), V_) >= 0) return false;
    math::cholesky_solve(s.data(), V_, y.data());
    double w = 0.0;
    for (int64_t v = 0; v < V_; ++v) w += beta[i * V_ + v] * y[static_cast<size_t>(v)];
    *statistic = w;
    return true;
  }
  double block_sum_variance(int64_t i) const override {
    double sum = 0.0;
    for (int64_t v = 0; v < V_; ++v)
      for (int64_t u = 0; u < V_; ++u) sum += vcov_[static_cast<size_t>((v * p_ + i) * P_ + u * p_ + i)];
    return sum;
  }

 private:
  std::vector<double> vcov_;  // P x P
  int64_t P_, p_, V_;
};

// The covariance as Woodbury's factors: D^-1 + Y' Y, Y = L_K^-1 W and
// W = S U D^-1 (rows x P), whose columns are formed when asked for.
class WoodburyCovariance final : public RegressionCovariance {
 public:
  WoodburyCovariance(int64_t n, int64_t p, int64_t V, double unscale, std::vector<double> blocks,
                     std::vector<double> k, int64_t ldn, std::vector<double> sa, std::vector<double> xs,
                     const math::TileLoop& loop)
      : n_(n), p_(p), V_(V), unscale_(unscale), ldn_(ldn), blocks_(std::move(blocks)), k_(std::move(k)),
        sa_(std::move(sa)), xs_(std::move(xs)) {
    const int64_t P = p * V;
    variances_.assign(static_cast<size_t>(P), 0.0);
    const int64_t per = std::max<int64_t>(1, kColumnsPerSolve / p);
    std::vector<double> w;
    for (int64_t v0 = 0; v0 < V; v0 += per) {
      const int64_t v1 = std::min(V, v0 + per), m = (v1 - v0) * p, ldw = padded(m);
      columns(v0, v1, -1, &w, ldw, loop);
      for (int64_t j = 0; j < n; ++j)
        for (int64_t c = 0; c < m; ++c) {
          const double y = w[static_cast<size_t>(j * ldw + c)];
          variances_[static_cast<size_t>(v0 * p + c)] += y * y;
        }
    }
    std::vector<double> e(static_cast<size_t>(p));
    for (int64_t v = 0; v < V; ++v)
      for (int64_t i = 0; i < p; ++i) {
        double& var = variances_[static_cast<size_t>(v * p + i)];
        var = (var + block_inverse(v, i, i, e.data())) * unscale;
      }
  }

  void fill(double* out, int64_t ld) const override {
    const int64_t P = p_ * V_, ldw = padded(P);
    std::vector<double> y, e(static_cast<size_t>(p_));  // every allocation before out is written
    columns(0, V_, -1, &y, ldw, math::serial_tiles);
    for (int64_t r = 0; r < P; ++r) std::fill(out + r * ld, out + r * ld + P, 0.0);
    // Y' Y by kRowsPerPass rows of Y at a time, then D^-1's blocks.
    for (int64_t j0 = 0; j0 < n_; j0 += kRowsPerPass) {
      const int64_t j1 = std::min(n_, j0 + kRowsPerPass);
      for (int64_t r0 = 0; r0 < P; r0 += kGramRows) {
        double block[kTile];
        for (int64_t c0 = 0; c0 < r0 + kGramRows && c0 < P; c0 += kGramCols) {
          product_block(y.data(), ldw, 1, y.data(), ldw, j0, j1, r0, c0, block);
          for (int64_t r = r0; r < std::min(P, r0 + kGramRows); ++r)
            for (int64_t c = c0; c < std::min(r + 1, c0 + kGramCols); ++c)
              out[r * ld + c] += block[(r - r0) * kGramCols + (c - c0)];
        }
      }
    }
    for (int64_t v = 0; v < V_; ++v)
      for (int64_t i = 0; i < p_; ++i)
        for (int64_t j = 0; j <= i; ++j) out[(v * p_ + i) * ld + v * p_ + j] += block_inverse(v, i, j, e.data());
    for (int64_t r = 0; r < P; ++r)
      for (int64_t c = 0; c <= r; ++c) {
        out[r * ld + c] *= unscale_;
        out[c * ld + r] = out[r * ld + c];
      }
  }

  // S = Delta + Y_i' Y_i, Delta the diagonal of D^-1's entries (i, i):
  // formed V x V where V <= rows, else through Woodbury again in the rows'
  // dimension: b' S^-1 b = b' Delta^-1 b - t' M^-1 t, M = I + Y_i Delta^-1
  // Y_i', t = Y_i Delta^-1 b.
  bool wald(const double* beta, int64_t i, double* statistic) const override {
    const int64_t ldv = padded(V_);
    std::vector<double> y, e(static_cast<size_t>(p_)), delta(static_cast<size_t>(V_));
    columns(0, V_, i, &y, ldv, math::serial_tiles);
    for (int64_t v = 0; v < V_; ++v) delta[static_cast<size_t>(v)] = block_inverse(v, i, i, e.data());
    const double* b = beta + i * V_;
    double w = 0.0;
    if (V_ <= n_) {
      std::vector<double> s(static_cast<size_t>(ldv * ldv), 0.0);
      subtract_gram(y.data(), ldv, nullptr, n_, V_, s.data(), ldv, math::serial_tiles);
      for (int64_t v = 0; v < V_; ++v)
        for (int64_t u = 0; u <= v; ++u) s[static_cast<size_t>(v * ldv + u)] *= -1.0;
      for (int64_t v = 0; v < V_; ++v) s[static_cast<size_t>(v * ldv + v)] += delta[static_cast<size_t>(v)];
      if (math::cholesky_blocked(s.data(), V_, ldv, math::serial_tiles) >= 0) return false;
      std::vector<double> z(b, b + V_);
      math::cholesky_solve_ld(s.data(), V_, ldv, z.data());
      for (int64_t v = 0; v < V_; ++v) w += b[v] * z[static_cast<size_t>(v)];
    } else {
      // T = Delta^-1/2 Y_i' (V x n), M = I + T' T.
      const int64_t ldt = padded(n_);
      std::vector<double> t(static_cast<size_t>(V_ * ldt), 0.0), tb(static_cast<size_t>(n_), 0.0);
      for (int64_t v = 0; v < V_; ++v) {
        const double d = delta[static_cast<size_t>(v)];
        if (!(d > 0.0)) return false;
        const double f = 1.0 / std::sqrt(d);
        for (int64_t j = 0; j < n_; ++j) t[static_cast<size_t>(v * ldt + j)] = f * y[static_cast<size_t>(j * ldv + v)];
        w += b[v] * b[v] / d;
      }
      for (int64_t j = 0; j < n_; ++j) {
        double s = 0.0;
        for (int64_t v = 0; v < V_; ++v) s += y[static_cast<size_t>(j * ldv + v)] * b[v] / delta[static_cast<size_t>(v)];
        tb[static_cast<size_t>(j)] = s;
      }
      std::vector<double> m(static_cast<size_t>(ldt * ldt), 0.0);
      for (int64_t v0 = 0; v0 < V_; v0 += kRowsPerPass)
        subtract_gram(t.data() + v0 * ldt, ldt, nullptr, std::min(kRowsPerPass, V_ - v0), n_, m.data(), ldt,
                      math::serial_tiles);
      for (int64_t r = 0; r < n_; ++r)
        for (int64_t c = 0; c <= r; ++c) m[static_cast<size_t>(r * ldt + c)] *= -1.0;
      for (int64_t r = 0; r < n_; ++r) m[static_cast<size_t>(r * ldt + r)] += 1.0;
      if (math::cholesky_blocked(m.data(), n_, ldt, math::serial_tiles) >= 0) return false;
      std::vector<double> z = tb;
      math::cholesky_solve_ld(m.data(), n_, ldt, z.data());
      for (int64_t j = 0; j < n_; ++j) w -= tb[static_cast<size_t>(j)] * z[static_cast<size_t>(j)];
    }
    *statistic = w / unscale_;
    return std::isfinite(*statistic);
  }
  // sum_v (B_v^-1)_ii + |Y_i 1|^2.
  double block_sum_variance(int64_t i) const override {
    const int64_t ldv = padded(V_);
    std::vector<double> y, e(static_cast<size_t>(p_));
    columns(0, V_, i, &y, ldv, math::serial_tiles);
    double sum = 0.0;
    for (int64_t v = 0; v < V_; ++v) sum += block_inverse(v, i, i, e.data());
    for (int64_t j = 0; j < n_; ++j) {
      double r = 0.0;
      for (int64_t v = 0; v < V_; ++v) r += y[static_cast<size_t>(j * ldv + v)];
      sum += r * r;
    }
    return sum * unscale_;
  }

 private:
  // (B_v^-1)_ij, e a p-entry work array.
  double block_inverse(int64_t v, int64_t i, int64_t j, double* e) const {
    std::fill(e, e + p_, 0.0);
    e[j] = 1.0;
    block_solve(blocks_.data() + v * p_ * p_, p_, e);
    return e[i];
  }
  // Y's columns (v, i) for v0 <= v < v1 (every i, or covariate `only`) into
  // *y (rows x ldy, row-major, padded rows): W's, then L_K^-1 applied.
  void columns(int64_t v0, int64_t v1, int64_t only, std::vector<double>* y, int64_t ldy,
               const math::TileLoop& loop) const {
    y->assign(static_cast<size_t>(padded(n_) * ldy), 0.0);
    std::vector<double> e(static_cast<size_t>(p_));
    for (int64_t j = 0; j < n_; ++j)
      for (int64_t v = v0; v < v1; ++v) {
        std::copy(xs_.begin() + j * p_, xs_.begin() + (j + 1) * p_, e.begin());
        block_solve(blocks_.data() + v * p_ * p_, p_, e.data());
        const double f = sa_[static_cast<size_t>(j * V_ + v)];
        double* yj = y->data() + j * ldy;
        if (only >= 0)
          yj[v - v0] = f * e[static_cast<size_t>(only)];
        else
          for (int64_t i = 0; i < p_; ++i) yj[(v - v0) * p_ + i] = f * e[static_cast<size_t>(i)];
      }
    const int64_t m = only >= 0 ? v1 - v0 : (v1 - v0) * p_;
    math::forward_solve_blocked(k_.data(), n_, ldn_, y->data(), m, ldy, loop);
  }

  int64_t n_, p_, V_;
  double unscale_;
  int64_t ldn_;
  std::vector<double> blocks_;  // V x p x p: the factors of B_v
  std::vector<double> k_;       // n x ldn: K's factor
  std::vector<double> sa_;      // n x V: s_j alpha_jv
  std::vector<double> xs_;      // n x p: the covariates of the rows taking part
};

}  // namespace

RegressionSystem::RegressionSystem(int64_t rows_taking_part, int64_t p, int64_t block_count, int64_t extra,
                                   bool structured, math::TileLoop loop)
    : p_(p),
      V_(block_count),
      P_(p * block_count + extra),
      woodbury_(structured && extra == 0 && rows_taking_part < p * block_count),
      loop_(std::move(loop)) {}

void RegressionSystem::summed() {
  top_ = 0.0;
  for (int64_t k = 0; k < P_; ++k) top_ = std::max(top_, std::fabs(neg_h_[static_cast<size_t>(k * ld_ + k)]));
}

int64_t RegressionSystem::size(int64_t rows_taking_part, int64_t P, bool structured) {
  return structured ? std::min(rows_taking_part, P) : P;
}

void RegressionSystem::prepare(const HessianParts& h) {
  h_ = h;
  if (woodbury_)
    prepare_woodbury();
  else
    prepare_dense();
}

// -H whole: the low-rank term by Gram blocks of kGramRows rows of -H over
// kRowsPerPass rows of u_b = alpha_b (x) x_b at a time (u's padding stays
// zero), then the categories' blocks.
void RegressionSystem::prepare_dense() {
  const int64_t P = P_, p = p_, V = V_;
  ld_ = padded(P);
  neg_h_.assign(static_cast<size_t>(ld_ * ld_), 0.0);
  const int64_t terms = h_.terms > 0 ? h_.terms : 1;
  std::vector<double> u(static_cast<size_t>(kRowsPerPass * terms * ld_), 0.0), su;
  if (h_.terms > 0) su.resize(static_cast<size_t>(kRowsPerPass * terms));
  for (int64_t b0 = 0; b0 < h_.rows; b0 += kRowsPerPass) {
    const int64_t b1 = std::min(h_.rows, b0 + kRowsPerPass);
    for (int64_t b = b0; b < b1; ++b) {
      const bool part = h_.weight[b] != 0.0;  // a row that takes no part: u_b = 0
      double* ub = u.data() + (b - b0) * terms * ld_;
      if (h_.terms > 0) {
        double* sb = su.data() + (b - b0) * terms;
        if (part) {
          h_.fill(b, ub, ld_, sb);
          for (int64_t t = 0; t < terms; ++t) sb[t] = -sb[t];  // terms of -H; subtract_gram takes H's
        } else {
          std::fill(sb, sb + terms, 0.0);
        }
        continue;
      }
      const double* xb = h_.x + b * p;
      for (int64_t v = 0; v < V; ++v) {
        const double a = part ? h_.alpha[b * h_.V + v] : 0.0;
        for (int64_t i = 0; i < p; ++i) ub[v * p + i] = a * xb[i];
      }
    }
    subtract_gram(u.data(), ld_, h_.terms > 0 ? su.data() : h_.c + b0, (b1 - b0) * terms, P, neg_h_.data(), ld_,
                  loop_);
  }
  for (int64_t v = 0; v < V; ++v) {
    const double* bv = h_.blocks + v * p * p;
    for (int64_t i = 0; i < p; ++i) {
      double* hr = neg_h_.data() + (v * p + i) * ld_ + v * p;
      for (int64_t j = 0; j <= i; ++j) hr[j] += bv[i * p + j];
    }
  }
  top_ = 0.0;
  for (int64_t k = 0; k < P; ++k) top_ = std::max(top_, std::fabs(neg_h_[static_cast<size_t>(k * ld_ + k)]));
}

// The rows taking part, S, and -H's diagonal: B_v,ii - sum_j c_j alpha_jv^2 x_ji^2.
void RegressionSystem::prepare_woodbury() {
  rows_.clear();
  s_.clear();
  for (int64_t b = 0; b < h_.rows; ++b)
    if (h_.weight[b] != 0.0) {
      rows_.push_back(b);
      s_.push_back(std::sqrt(h_.c[b]));
    }
  const int64_t n = static_cast<int64_t>(rows_.size()), p = p_, V = V_;
  std::vector<double> diag(static_cast<size_t>(P_));
  const int64_t per = std::max<int64_t>(1, kColumnsPerSolve / p);
  loop_(
      tiles_of(V, per),
      [&](int64_t t) {
        const int64_t v0 = t * per, v1 = std::min(V, v0 + per);
        for (int64_t v = v0; v < v1; ++v)
          for (int64_t i = 0; i < p; ++i) diag[static_cast<size_t>(v * p + i)] = h_.blocks[(v * p + i) * p + i];
        for (int64_t j = 0; j < n; ++j) {
          const int64_t b = rows_[static_cast<size_t>(j)];
          const double cj = h_.c[b];
          const double* xb = h_.x + b * p;
          for (int64_t v = v0; v < v1; ++v) {
            const double a = h_.alpha[b * V + v];
            for (int64_t i = 0; i < p; ++i) diag[static_cast<size_t>(v * p + i)] -= cj * (a * xb[i]) * (a * xb[i]);
          }
        }
      },
      static_cast<double>(n) * static_cast<double>(P_));
  top_ = 0.0;
  for (double d : diag) top_ = std::max(top_, std::fabs(d));
}

bool RegressionSystem::factor(double mu) {
  if (woodbury_) return factor_woodbury(mu);
  factor_ = neg_h_;
  for (int64_t r = 0; r < P_; ++r) factor_[static_cast<size_t>(r * ld_ + r)] += mu;
  return math::cholesky_blocked(factor_.data(), P_, ld_, loop_) < 0;
}

// D's blocks factored, then K = I - sum over W's columns of S U D^-1 ... as
// Gram blocks of Z' (Z = S U F^-T, F the blocks' factors: Z Z' = S U D^-1
// U' S), kRowsPerPass rows of Z' at a time.
bool RegressionSystem::factor_woodbury(double mu) {
  const int64_t n = static_cast<int64_t>(rows_.size()), p = p_, V = V_;
  blocks_.assign(h_.blocks, h_.blocks + V * p * p);
  for (int64_t v = 0; v < V; ++v) {
    double* f = blocks_.data() + v * p * p;
    for (int64_t i = 0; i < p; ++i) f[i * p + i] += mu;
    if (math::cholesky(f, p) >= 0) return false;
  }
  ldn_ = padded(n);
  k_.assign(static_cast<size_t>(ldn_ * ldn_), 0.0);
  const int64_t per = std::max<int64_t>(1, kRowsPerPass / p);
  zt_.resize(static_cast<size_t>((per * p + kGramRows) * ldn_));
  std::fill(zt_.begin(), zt_.end(), 0.0);
  for (int64_t v0 = 0; v0 < V; v0 += per) {
    const int64_t v1 = std::min(V, v0 + per);
    // Z's entry (j, (v, i)) = s_j alpha_jv (F_v^-1 x_j)_i, by forward
    // substitution; rows j by runs (each reads its alphas in a run).
    loop_(
        tiles_of(n, kRowsPerPass),
        [&](int64_t t) {
          double e[kMaxInline];
          std::vector<double> big;
          double* ev = e;
          if (p > kMaxInline) {
            big.resize(static_cast<size_t>(p));
            ev = big.data();
          }
          for (int64_t j = t * kRowsPerPass; j < std::min(n, (t + 1) * kRowsPerPass); ++j) {
            const int64_t b = rows_[static_cast<size_t>(j)];
            const double* xb = h_.x + b * p;
            const double* ab = h_.alpha + b * V;
            const double sj = s_[static_cast<size_t>(j)];
            for (int64_t v = v0; v < v1; ++v) {
              const double* f = blocks_.data() + v * p * p;
              for (int64_t i = 0; i < p; ++i) {
                double u = xb[i];
                for (int64_t k = 0; k < i; ++k) u -= f[i * p + k] * ev[k];
                ev[i] = u / f[i * p + i];
              }
              const double sa = sj * ab[v];
              double* z = zt_.data() + (v - v0) * p * ldn_ + j;
              for (int64_t i = 0; i < p; ++i) z[i * ldn_] = sa * ev[i];
            }
          }
        },
        static_cast<double>(n) * static_cast<double>((v1 - v0) * p * p));
    subtract_gram(zt_.data(), ldn_, nullptr, (v1 - v0) * p, n, k_.data(), ldn_, loop_);
  }
  for (int64_t j = 0; j < n; ++j) k_[static_cast<size_t>(j * ldn_ + j)] += 1.0;
  return math::cholesky_blocked(k_.data(), n, ldn_, loop_) < 0;
}

void RegressionSystem::solve(double* g) const {
  if (!woodbury_) {
    math::cholesky_solve_ld(factor_.data(), P_, ld_, g);
    return;
  }
  const int64_t n = static_cast<int64_t>(rows_.size()), p = p_, V = V_;
  // y = D^-1 g.
  std::vector<double> y(g, g + P_);
  for (int64_t v = 0; v < V; ++v) block_solve(blocks_.data() + v * p * p, p, y.data() + v * p);
  // t = K^-1 S U y.
  std::vector<double> t(static_cast<size_t>(n));
  loop_(
      tiles_of(n, kRowsPerPass),
      [&](int64_t c) {
        for (int64_t j = c * kRowsPerPass; j < std::min(n, (c + 1) * kRowsPerPass); ++j) {
          const int64_t b = rows_[static_cast<size_t>(j)];
          const double* xb = h_.x + b * p;
          double s = 0.0;
          for (int64_t v = 0; v < V; ++v) {
            double e = 0.0;
            for (int64_t i = 0; i < p; ++i) e += xb[i] * y[static_cast<size_t>(v * p + i)];
            s += h_.alpha[b * V + v] * e;
          }
          t[static_cast<size_t>(j)] = s_[static_cast<size_t>(j)] * s;
        }
      },
      static_cast<double>(n) * static_cast<double>(P_));
  math::cholesky_solve_ld(k_.data(), n, ldn_, t.data());
  // g = y + D^-1 U' S t.
  const int64_t per = std::max<int64_t>(1, kColumnsPerSolve / p);
  loop_(
      tiles_of(V, per),
      [&](int64_t c) {
        const int64_t v0 = c * per, v1 = std::min(V, v0 + per);
        std::fill(g + v0 * p, g + v1 * p, 0.0);
        for (int64_t j = 0; j < n; ++j) {
          const int64_t b = rows_[static_cast<size_t>(j)];
          const double* xb = h_.x + b * p;
          const double f = s_[static_cast<size_t>(j)] * t[static_cast<size_t>(j)];
          for (int64_t v = v0; v < v1; ++v) {
            const double a = f * h_.alpha[b * V + v];
            for (int64_t i = 0; i < p; ++i) g[v * p + i] += a * xb[i];
          }
        }
        for (int64_t v = v0; v < v1; ++v) {
          block_solve(blocks_.data() + v * p * p, p, g + v * p);
          for (int64_t i = 0; i < p; ++i) g[v * p + i] += y[static_cast<size_t>(v * p + i)];
        }
      },
      static_cast<double>(n) * static_cast<double>(P_));
}

std::unique_ptr<RegressionCovariance> RegressionSystem::covariance(double unscale) const {
  if (!woodbury_) {
    std::vector<double> inv(static_cast<size_t>(ld_ * ld_), 0.0);
    math::cholesky_inverse_blocked(factor_.data(), P_, ld_, inv.data(), ld_, loop_);
    std::vector<double> vcov(static_cast<size_t>(P_ * P_));
    for (int64_t r = 0; r < P_; ++r)
      for (int64_t c = 0; c < P_; ++c)
        vcov[static_cast<size_t>(r * P_ + c)] = inv[static_cast<size_t>(r * ld_ + c)] * unscale;
    return std::make_unique<DenseCovariance>(std::move(vcov), P_, p_, V_);
  }
  const int64_t n = static_cast<int64_t>(rows_.size());
  std::vector<double> sa(static_cast<size_t>(n * V_)), xs(static_cast<size_t>(n * p_));
  for (int64_t j = 0; j < n; ++j) {
    const int64_t b = rows_[static_cast<size_t>(j)];
    for (int64_t v = 0; v < V_; ++v)
      sa[static_cast<size_t>(j * V_ + v)] = s_[static_cast<size_t>(j)] * h_.alpha[b * V_ + v];
    std::copy(h_.x + b * p_, h_.x + (b + 1) * p_, xs.begin() + j * p_);
  }
  return std::make_unique<WoodburyCovariance>(n, p_, V_, unscale, blocks_, k_, ldn_, std::move(sa),
                                              std::move(xs), loop_);
}

}  // namespace dirmn
