// regression_mp.hpp: the mean/precision parametrisation of the DM
// regression (DRIMSeq's and brms's): row b's proportions are
// pi_b = softmax(eta_b), eta_bv = x_b . beta_v, and its precision
// phi_b = exp(z_b . gamma), so alpha_bv = phi_b pi_bv. Softmax leaves one
// direction of each covariate's beta free; it is fixed by a reference
// category (beta_r = 0) or by summing to zero (beta_r = -sum of the
// others). The free coefficients are the p (V - 1) betas of the other
// categories (vec order: covariate fastest, categories in order) and then
// the q gammas.
//
// With theta = log alpha = eta - lse(eta) + zeta and row b's log pmf's
// derivatives in theta (q_v = alpha_v g_v, d_v = alpha_v^2 h_v + q_v, and
// c alpha alpha' from the rank-one term), the chain rule gives, with
// Q = sum_v q_v, Sd = sum_v d_v, A = sum_v alpha_v:
//   d/deta = q - pi Q,  d/dzeta = Q,
//   d2/deta2 = diag(d - Q pi) - pi d' - d pi' + (Sd + Q) pi pi'
//   d2/deta dzeta = d - Sd pi,  d2/dzeta2 = Sd + c A^2,
// (the rank-one term drops out of eta's block: alpha is orthogonal to the
// softmax's directions). In the free coefficients the Hessian is one p x p
// block per free category plus, per row, three rank-one terms (the 3 x 3
// core over pi (x) x, d (x) x and z, diagonalised) and, with sum to zero,
// a fourth for the implied category's block.
#pragma once

#include <cstdint>

namespace dirmn {

struct MeanPrecisionLayout {
  int64_t p = 0, V = 0, q = 0;
  int64_t reference = 0;  // the reference (or implied) category
  bool sum_to_zero = false;
  double offset = 0.0;    // added to every row's log precision (a held one, with q = 0)

  int64_t parameters() const { return p * (V - 1) + q; }
  // The category of free block k (k < V - 1).
  int64_t category(int64_t k) const { return k < reference ? k : k + 1; }
  // The rank-one terms per row of -H.
  int64_t terms() const { return sum_to_zero ? 4 : 3; }
};

// beta (p x V, row-major, the implied column filled) and gamma (q) from
// the free coefficients.
void mp_expand(const MeanPrecisionLayout& l, const double* free, double* beta, double* gamma);

// alpha for n rows (x: n x p, z: n x q, row-major) at beta (p x V,
// row-major) and gamma; rows whose row_weight is 0 (row_weight may be
// null) get alpha 1. False (with *bad_row, *bad_category) where an alpha is
// not a positive finite double.
bool mp_alpha(const MeanPrecisionLayout& l, const double* x, const double* z, int64_t n,
              const double* beta, const double* gamma, const double* row_weight, double* alpha,
              int64_t* bad_row, int64_t* bad_category);

// One row's part of the gradient and of -H in the free coefficients, from
// its alpha, q = alpha g, d = alpha^2 h + q (V each), c and weight w:
// adds w times the row's gradient to grad (P entries), its blocks to
// blocks (V - 1 of p x p, lower triangles), and writes its rank-one terms
// (terms() of them: u[k * ldu + j], P entries each, and weights s[k]) --
// where u is null, only the gradient and the blocks.
void mp_row(const MeanPrecisionLayout& l, const double* x, const double* z, const double* alpha,
            const double* q, const double* d, double c, double w, double* grad, double* blocks,
            double* u, int64_t ldu, double* s);

}  // namespace dirmn
