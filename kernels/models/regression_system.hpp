// regression_system.hpp: the regression's Newton system and covariance.
//
// In vec(beta) (coefficient (i, v) at index v p + i) the negative Hessian
// of the log-likelihood is
//   -H = blockdiag_v(B_v) - U' C U,
// B_v = -sum_b w_b (alpha^2 h + q)_bv x_b x_b' (p x p, see regression.cpp),
// C = diag(w_b c_b) with c_b >= 0, and U's row b is alpha_b (x) x_b: a
// block-diagonal part and a part of rank at most the rows. Where the rows
// that take part are at least the coefficients, -H is formed whole (rows x
// (p V)^2 / 2 multiply-adds) and factored. Where they are fewer -- the
// wide tables: 800 rows and 3000 coefficients, or 80000 -- the system is
// solved in the rows' dimension (Woodbury): with D = blockdiag(B_v) + mu I
// and S = C^1/2,
//   (D - U' S S U)^-1 = D^-1 + D^-1 U' S K^-1 S U D^-1,  K = I - S U D^-1 U' S,
// K rows x rows, formed in rows^2 (p V) / 2 multiply-adds. -H + mu I is
// positive definite exactly where D and K are (K is the Schur complement
// of D in [[D, U'S], [SU, I]], whose other complement is -H + mu I).
// Either way the covariance (-H)^-1 is kept in the form it was solved in:
// whole, or as the factors that give any of its entries.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "../math/dense_blocked.hpp"

namespace dirmn {

// Most unknowns of the Newton system a fit takes (the header's
// DIRMN_REG_MAX_SYSTEM): min(p V, rows that take part), whose square is
// formed and factored.
constexpr int64_t kRegMaxSystem = 8000;

// -H at one point, as regression.cpp forms it (row-major arrays). The
// log-linear model's low-rank part is given by alpha and c; another
// model's (the mean/precision one's) as `terms` rank-one terms per row,
// which `fill` writes (dense form only).
struct HessianParts {
  int64_t rows = 0, p = 0, V = 0;
  const double* x = nullptr;       // rows x p
  const double* alpha = nullptr;   // rows x V
  const double* weight = nullptr;  // rows: 0 where the row takes no part
  const double* blocks = nullptr;  // block_count x p x p: B_v, lower triangles read
  const double* c = nullptr;       // rows: w_b c_b >= 0
  int64_t terms = 0;
  // Row b's rank-one terms of -H: u[t * ldu + j] (P entries each) and
  // their weights s[t] (of either sign).
  std::function<void(int64_t b, double* u, int64_t ldu, double* s)> fill;
};

// The covariance (-H)^-1 at a fit, scaled by `unscale` (the row weights'
// power of two), in vec(beta) order.
class RegressionCovariance {
 public:
  virtual ~RegressionCovariance() = default;
  // Its diagonal (P entries).
  const std::vector<double>& variances() const { return variances_; }
  // The whole matrix, entry (r, c) to out[r * ld + c], ld >= P. Throws
  // std::bad_alloc.
  virtual void fill(double* out, int64_t ld) const = 0;
  // The Wald statistic b' S^-1 b of covariate i: b its V coefficients of
  // beta (p x V, row-major), S their V x V block. False where S is not
  // positive definite. Throws std::bad_alloc.
  virtual bool wald(const double* beta, int64_t i, double* statistic) const = 0;
  // The variance of the sum of covariate i's coefficients over the blocks
  // (a sum-to-zero contrast's implied coefficient). Throws std::bad_alloc.
  virtual double block_sum_variance(int64_t i) const = 0;

 protected:
  std::vector<double> variances_;
};

class RegressionSystem {
 public:
  // The unknowns are block_count blocks of p, one per category with a
  // block, then `extra` without one. `rows_taking_part` decides the form
  // where `structured` (the log-linear model: Woodbury where the rows are
  // fewer than the unknowns); loop runs the tiles on the fit's threads.
  RegressionSystem(int64_t rows_taking_part, int64_t p, int64_t block_count, int64_t extra, bool structured,
                   math::TileLoop loop);

  // The unknowns the system is solved in: min(P, rows taking part) where
  // structured, else P.
  static int64_t size(int64_t rows_taking_part, int64_t P, bool structured);
  bool woodbury() const { return woodbury_; }

  // Takes -H at the current point: the arrays are read until the next
  // prepare. Forms -H whole in the dense form. Throws std::bad_alloc.
  void prepare(const HessianParts& h);
  // The largest diagonal entry of -H in absolute value (Levenberg's scale).
  double largest_diagonal() const { return top_; }
  // The dense form's -H as prepare formed it (dense_size() doubles), which
  // a table split over ranks sums over them before factor; summed() then
  // takes its largest diagonal entry again.
  double* dense() { return neg_h_.data(); }
  size_t dense_size() const { return neg_h_.size(); }
  void summed();
  // Factors -H + mu I; false where it is not positive definite. Throws
  // std::bad_alloc.
  bool factor(double mu);
  // g = (-H + mu I)^-1 g for the last factor(mu) that succeeded (P entries).
  // Throws std::bad_alloc.
  void solve(double* g) const;
  // After factor(0) succeeded: the covariance on the caller's weights.
  // Throws std::bad_alloc.
  std::unique_ptr<RegressionCovariance> covariance(double unscale) const;

 private:
  void prepare_dense();
  void prepare_woodbury();
  bool factor_woodbury(double mu);

  int64_t p_, V_, P_;  // V_: the blocks
  bool woodbury_;
  math::TileLoop loop_;
  HessianParts h_;
  double top_ = 0.0;
  // Dense: -H (lower) and its factor, P x ld.
  int64_t ld_ = 0;
  std::vector<double> neg_h_, factor_;
  // Woodbury: the rows taking part, S's diagonal, the factors of B_v + mu I
  // (V x p x p) and of K (n x ldn).
  std::vector<int64_t> rows_;
  std::vector<double> s_, blocks_, k_, zt_;
  int64_t ldn_ = 0;
};

}  // namespace dirmn
