// regression.cpp: the header's Regression section.
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <vector>

#include "../../kernels/models/regression.hpp"
#include "../../kernels/models/regression_grouped.hpp"
#include "collective.hpp"
#include "guard.hpp"
#include "handles.hpp"
#include "tables.hpp"

using namespace dirmn::capi;
using dirmn::BackendResult;

namespace dirmn {
namespace capi {
namespace {

// The caller's design `name` (rows x p, strided) checked and copied
// row-major: every entry finite, else INVALID_PARAMETER naming row and
// column.
dirmn_status take_design(dirmn_context* ctx, const char* fn, const double* x, int64_t rows,
                         int64_t p, int64_t s_row, int64_t s_col, std::vector<double>* out,
                         const char* name = "x") {
  if (x == nullptr && rows > 0) return fail(ctx, DIRMN_ERROR_NULL_POINTER, fn, "%s is NULL", name);
  if (dirmn_status s = check_extent(ctx, fn, name, Strided{x, rows, p, s_row, s_col, sizeof(double)}, false))
    return s;
  out->resize(static_cast<size_t>(rows * p));
  for (int64_t b = 0; b < rows; ++b)
    for (int64_t i = 0; i < p; ++i) {
      const double v = x[b * s_row + i * s_col];
      if (!std::isfinite(v)) {
        char buf[kValueChars];
        return fail_at(ctx, DIRMN_ERROR_INVALID_PARAMETER, fn, Where::cell(name, b, i).with_value(v),
                       "%s %s is not finite", std::strcmp(name, "x") == 0 ? "covariate" : "precision covariate",
                       value_text(v, buf));
      }
      (*out)[static_cast<size_t>(b * p + i)] = v;
    }
  return DIRMN_SUCCESS;
}

dirmn_status check_reg_options(dirmn_context* ctx, const char* fn, const dirmn_reg_options& o, int64_t V) {
  if (o.max_iterations < 0 || !(o.tolerance > 0.0) || !std::isfinite(o.tolerance))
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                "max_iterations (%d) must be >= 0 and tolerance (%.17g) positive", o.max_iterations,
                o.tolerance);
  if (o.model != DIRMN_REG_LOGLINEAR && o.model != DIRMN_REG_MEAN_PRECISION)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                "model (%d) is neither DIRMN_REG_LOGLINEAR nor DIRMN_REG_MEAN_PRECISION", static_cast<int>(o.model));
  if (o.contrast != DIRMN_REG_REFERENCE && o.contrast != DIRMN_REG_SUM_TO_ZERO)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                "contrast (%d) is neither DIRMN_REG_REFERENCE nor DIRMN_REG_SUM_TO_ZERO",
                static_cast<int>(o.contrast));
  if (o.reference < 0 || o.reference >= V)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                "reference (%" PRId64 ") is not a category: the table has %" PRId64, o.reference, V);
  if (std::isinf(o.log_precision))
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn, "log_precision (%.17g) must be finite, or NaN to fit it",
                o.log_precision);
  if (o.hold_precision != 0 && o.hold_precision != 1)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn, "hold_precision (%d) must be 0 or 1", o.hold_precision);
  if (o.precision_design != nullptr) {
    if (o.model != DIRMN_REG_MEAN_PRECISION)
      return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                  "precision_design is given to a log-linear fit: only the mean/precision model "
                  "(DIRMN_REG_MEAN_PRECISION) has a precision");
    if (!std::isnan(o.log_precision))
      return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                  "precision_design is given beside a held log_precision (%.17g): hold the precision "
                  "or give it covariates, not both",
                  o.log_precision);
    if (o.precision_covariates < 1 || o.precision_covariates > (int64_t{1} << 20))
      return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                  "precision_covariates (%" PRId64 ") must be 1 .. 2^20 with a precision_design",
                  o.precision_covariates);
  }
  return DIRMN_SUCCESS;
}

dirmn_status reg_strides(const char* fn, const char* what, const double* out, int64_t n1, int64_t n2,
                         int64_t s1, int64_t s2) {
  return check_extent(nullptr, fn, what, Strided{out, n1, n2, s1, s2, sizeof(double)}, true);
}

dirmn_status no_vcov(const char* fn) {
  return fail(nullptr, DIRMN_ERROR_NOT_SUPPORTED, fn,
              "the fit has no covariance: its Hessian is not negative definite (see "
              "dirmn_reg_info.hessian_definite)");
}


// dirmn_reg_predict's and _with_precision's body (z: rows x q, or null for
// one precision), on a call the owner guard admitted.
dirmn_status predict(const char* fn, const dirmn_reg* reg, const double* x, int64_t rows, int64_t p,
                     int64_t x_stride_row, int64_t x_stride_col, const double* z, int64_t q, int64_t z_stride_row,
                     int64_t z_stride_col, double* alpha, int64_t stride_row, int64_t stride_category) {
  if (reg == nullptr || (rows > 0 && alpha == nullptr))
    return fail(nullptr, DIRMN_ERROR_NULL_POINTER, fn, "reg or alpha is NULL");
  if (rows < 0) return fail(nullptr, DIRMN_ERROR_INVALID_ARGUMENT, fn, "rows (%" PRId64 ") is negative", rows);
  int64_t cells = 0;
  if (__builtin_mul_overflow(rows, std::max({p, q, reg->cols}), &cells) || cells > (int64_t{1} << 56))
    return fail(nullptr, DIRMN_ERROR_OVERFLOW, fn,
                "%" PRId64 " rows of %" PRId64 " covariates and %" PRId64 " categories are beyond "
                "what a host array holds", rows, std::max(p, q), reg->cols);
  if (p != reg->p)
    return fail(nullptr, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                "x has %" PRId64 " covariates; the fit has %" PRId64, p, reg->p);
  if (dirmn_status s = reg_strides(fn, "alpha", alpha, rows, reg->cols, stride_row, stride_category))
    return s;
  try {
    std::vector<double> design, precision, out(static_cast<size_t>(rows * reg->cols));
    if (dirmn_status s = take_design(nullptr, fn, x, rows, p, x_stride_row, x_stride_col, &design))
      return s;
    if (z != nullptr)
      if (dirmn_status s = take_design(nullptr, fn, z, rows, q, z_stride_row, z_stride_col, &precision, "z"))
        return s;
    int64_t bad_row = -1, bad_cat = -1;
    const bool mp = reg->info.model == DIRMN_REG_MEAN_PRECISION;
    if (!(mp ? dirmn::regression_alpha_mp(design.data(), rows, p, z != nullptr ? precision.data() : nullptr, q,
                                          reg->beta.data(), reg->gamma.data(), reg->cols, out.data(), &bad_row,
                                          &bad_cat)
             : dirmn::regression_alpha(design.data(), rows, p, reg->beta.data(), reg->cols, nullptr, out.data(),
                                       &bad_row, &bad_cat)))
      return fail_at(nullptr, DIRMN_ERROR_OVERFLOW, fn, Where::cell("alpha", bad_row, bad_cat),
                     mp ? "phi softmax(x . beta) is not a positive finite double"
                        : "exp(x . beta) is not a positive finite double");
    for (int64_t b = 0; b < rows; ++b)
      for (int64_t v = 0; v < reg->cols; ++v)
        alpha[b * stride_row + v * stride_category] = out[static_cast<size_t>(b * reg->cols + v)];
  } catch (const std::bad_alloc&) {
    return fail(nullptr, DIRMN_ERROR_OUT_OF_MEMORY, fn, "out of host memory for %" PRId64 " rows", rows);
  }
  return DIRMN_SUCCESS;
}

}  // namespace
}  // namespace capi
}  // namespace dirmn

extern "C" {

void dirmn_reg_options_init_sized(dirmn_reg_options* options, size_t size) {
  dirmn_reg_options d;
  std::memset(&d, 0, sizeof d);
  d.tolerance = 1e-10;
  d.max_iterations = 200;
  d.log_precision = std::numeric_limits<double>::quiet_NaN();
  fill_defaults(options, size, d);
}

dirmn_status dirmn_reg_fit(dirmn_context* ctx, dirmn_counts* counts, const double* x, int64_t rows,
                           int64_t p, int64_t x_stride_row, int64_t x_stride_col,
                           const dirmn_reg_options* options, dirmn_reg** reg) {
  static const char* fn = "dirmn_reg_fit";
  return with_context(ctx, fn, [&] {
    return dirmn::capi::collective(counts, [&] {
      if (dirmn_status s = check_counts_use(ctx, fn, counts)) return s;
      if (reg == nullptr) return fail(ctx, DIRMN_ERROR_NULL_POINTER, fn, "reg is NULL");
      dirmn_reg_options o;
      dirmn_reg_options_init_sized(&o, sizeof o);
      if (dirmn_status s = copy_options(ctx, fn, options, "dirmn_reg_options_init", &o)) return s;
      const int64_t V = counts->info.cols;
      if (dirmn_status s = check_reg_options(ctx, fn, o, V)) return s;
      if (rows != counts->info.rows)
        return fail(ctx, DIRMN_ERROR_DIMENSION_MISMATCH, fn,
                    "x has %" PRId64 " rows; the table has %" PRId64, rows, counts->info.rows);
      if (p < 1) return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn, "p (%" PRId64 ") must be >= 1", p);
      if (V < 2)
        return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                    "a regression needs two categories or more; the table has %" PRId64, V);
      if (p > (int64_t{1} << 40) / std::max<int64_t>(1, V))
        return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                    "%" PRId64 " covariates x %" PRId64 " categories: too many coefficients", p, V);
      if (dirmn_status s = check_weights(ctx, fn, o.weights, rows)) return s;
      std::unique_ptr<dirmn_reg> m;
      dirmn::RegressionOutcome out;
      BackendResult r;
      std::vector<double> design, precision;
      const int64_t q = o.precision_design != nullptr ? o.precision_covariates : 1;
      try {
        if (dirmn_status s = take_design(ctx, fn, x, rows, p, x_stride_row, x_stride_col, &design))
          return s;
        if (o.precision_design != nullptr)
          if (dirmn_status s = take_design(ctx, fn, o.precision_design, rows, q, o.precision_stride_row,
                                           o.precision_stride_col, &precision, "precision_design"))
            return s;
        m = std::make_unique<dirmn_reg>();
        dirmn::RegressionSettings s;
        s.x = design.data();
        s.p = p;
        s.weights = o.weights;
        s.tolerance = o.tolerance;
        s.max_iterations = o.max_iterations;
        s.progress = o.progress;
        s.progress_data = o.progress_data;
        s.interrupt = ctx->interrupt;
        s.mean_precision = o.model == DIRMN_REG_MEAN_PRECISION;
        s.sum_to_zero = o.contrast == DIRMN_REG_SUM_TO_ZERO;
        s.reference = o.reference;
        s.log_precision = o.log_precision;
        s.z = o.precision_design != nullptr ? precision.data() : nullptr;
        s.q = q;
        if (dirmn_status hs = ensure_host_copy(ctx, fn, counts)) return hs;
        // Over ranks every rank's design has the same columns, and its fit
        // the same options.
        if (dirmn_status as = agree_on_arguments(
                ctx, fn, counts,
                {{"p", p}, {"options->model", o.model}, {"options->contrast", o.contrast},
                 {"options->reference", o.reference}, {"options->max_iterations", o.max_iterations},
                 {"options->tolerance", o.tolerance}, {"options->log_precision", o.log_precision},
                 {"options->precision_covariates", o.precision_design != nullptr ? q : 0}}))
          return as;
        r = dirmn::fit_regression(counts->stored(ctx), counts->histograms, s, &out);
        m->covariance = std::move(out.covariance);  // a shared_ptr's control block is allocated here
      } catch (const std::bad_alloc&) {
        const bool mp = o.model == DIRMN_REG_MEAN_PRECISION;
        const int64_t n = dirmn::RegressionSystem::size(out.rows_taking_part > 0 ? out.rows_taking_part : rows,
                                                        mp ? p * (V - 1) + q : p * V, !mp && !counts->comm);
        return fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, fn,
                    "out of host memory for the regression (%" PRId64 " rows, %" PRId64
                    " coefficients: per-row derivatives and a Newton system of %" PRId64 " x %" PRId64 ")",
                    rows, p * V, n, n);
      }
      if (r.status == DIRMN_ERROR_INVALID_ARGUMENT) {
        if (out.system_too_large)
          return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                      o.model == DIRMN_REG_MEAN_PRECISION
                          ? "%" PRId64 " covariates x %" PRId64 " categories = %" PRId64 " free coefficients "
                            "(and %" PRId64 " rows with counts): the mean/precision model's Newton system is beyond "
                            "the %" PRId64 " unknowns a regression takes (DIRMN_REG_MAX_SYSTEM)"
                      : counts->comm
                          ? "%" PRId64 " covariates x %" PRId64 " categories = %" PRId64 " coefficients (and %" PRId64
                            " rows with counts over the ranks): over ranks the Newton system is formed in the "
                            "coefficients, beyond the %" PRId64 " unknowns a regression takes (DIRMN_REG_MAX_SYSTEM)"
                          : "%" PRId64 " covariates x %" PRId64 " categories = %" PRId64 " coefficients and %" PRId64
                            " rows with counts: the Newton system, in the smaller of the two, is beyond the %" PRId64
                            " unknowns a regression takes (DIRMN_REG_MAX_SYSTEM)",
                      p, V, out.parameters, out.rows_taking_part, dirmn::kRegMaxSystem);
        if (out.bad_covariate >= 0)
          return fail_at(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn, Where::named_index("x column", out.bad_covariate),
                         "the design is not of full column rank: this covariate is a linear "
                         "combination of the ones before it (over the rows with counts)");
        if (out.bad_precision_covariate >= 0)
          return fail_at(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                         Where::named_index("precision_design column", out.bad_precision_covariate),
                         "the precision's design is not of full column rank: this covariate is a linear "
                         "combination of the ones before it (over the rows with counts)");
        if (out.bad_category >= 0)
          return fail_at(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn, Where::named_index("column", out.bad_category),
                         "the category has no counts (under the weights): its coefficients have no "
                         "finite maximum-likelihood estimate");
        return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                    "%" PRId64 " covariates need at least as many rows with counts (and a positive "
                    "weight); the table has fewer",
                    p);
      }
      if (r.status == DIRMN_ERROR_OVERFLOW && out.bad_category >= 0)
        return fail_at(ctx, DIRMN_ERROR_OVERFLOW, fn, Where::cell("alpha", out.bad_covariate, out.bad_category),
                       "the starting coefficients give an alpha beyond the double range (rescale the "
                       "covariates)");
      if (r.status == DIRMN_ERROR_OVERFLOW) return fail_weighted_overflow(ctx, fn, "log-likelihood");
      if (r.status == DIRMN_ERROR_CANCELLED && out.cancelled)
        return fail(ctx, DIRMN_ERROR_CANCELLED, fn, "cancelled after %d Newton steps", out.iterations);
      if (!r.ok()) return fail_backend(ctx, fn, r);
      m->use = ctx->use;
      m->p = p;
      m->cols = V;
      m->beta = std::move(out.beta);
      m->gamma = std::move(out.gamma);
      m->std_errors = std::move(out.std_errors);
      m->gamma_std_errors = std::move(out.gamma_std_errors);
      m->wald_beta = std::move(out.wald_beta);
      m->wald_df = out.wald_df;
      m->precision_design = o.precision_design != nullptr;
      dirmn_reg_info& in = m->info;
      in.size = sizeof in;
      in.rows = rows;
      in.covariates = p;
      in.categories = V;
      in.parameters = out.parameters;
      in.loglik = out.loglik;
      in.aic = -2.0 * out.loglik + 2.0 * static_cast<double>(out.parameters);
      in.bic = -2.0 * out.loglik + static_cast<double>(out.parameters) * std::log(out.observations);
      in.model = o.model;
      in.contrast = o.model == DIRMN_REG_MEAN_PRECISION ? o.contrast : DIRMN_REG_REFERENCE;
      in.reference = o.model == DIRMN_REG_MEAN_PRECISION ? o.reference : 0;
      in.precision_covariates = o.model == DIRMN_REG_MEAN_PRECISION && !std::isfinite(o.log_precision) ? q : 0;
      in.observations = out.observations;
      in.gradient_norm = out.gradient_norm;
      in.iterations = out.iterations;
      in.converged = out.converged ? 1 : 0;
      in.multinomial_limit = out.multinomial_limit ? 1 : 0;
      in.hessian_definite = out.hessian_definite ? 1 : 0;
      *reg = m.release();
      return DIRMN_SUCCESS;
    });
  });
}

void dirmn_reg_destroy(dirmn_reg* reg) {
  if (reg == nullptr) return;
  const std::shared_ptr<UseFlag> use = reg->use;  // outlives reg
  if (take_for_destroy(*use) == dirmn::capi::Take::kReentered) {
    reg->deferred_free = [](dirmn::capi::Deferrable* d) { delete static_cast<dirmn_reg*>(d); };
    dirmn::capi::defer_free(*use, reg);
    return;
  }
  delete reg;
  release(*use);
}

dirmn_status dirmn_reg_get_info(const dirmn_reg* reg, dirmn_reg_info* info) {
  static const char* fn = "dirmn_reg_get_info";
  return with_owner(reg ? reg->use.get() : nullptr, fn, [&] {
    if (reg == nullptr || info == nullptr)
      return fail(nullptr, DIRMN_ERROR_NULL_POINTER, fn, "reg or info is NULL");
    if (info->size < offsetof(dirmn_reg_info, rows) + sizeof(int64_t))
      return fail(nullptr, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                  "info->size (%zu) is too small; set it to sizeof(dirmn_reg_info)", info->size);
    dirmn_reg_info full = reg->info;
    full.size = info->size;
    std::memcpy(info, &full, std::min(info->size, sizeof(dirmn_reg_info)));
    return DIRMN_SUCCESS;
  });
}

dirmn_status dirmn_reg_get_coef(const dirmn_reg* reg, double* coef, int64_t stride_covariate,
                                int64_t stride_category) {
  static const char* fn = "dirmn_reg_get_coef";
  return with_owner(reg ? reg->use.get() : nullptr, fn, [&] {
    if (reg == nullptr || coef == nullptr) return fail(nullptr, DIRMN_ERROR_NULL_POINTER, fn, "reg or coef is NULL");
    if (dirmn_status s = reg_strides(fn, "coef", coef, reg->p, reg->cols, stride_covariate, stride_category))
      return s;
    for (int64_t i = 0; i < reg->p; ++i)
      for (int64_t v = 0; v < reg->cols; ++v)
        coef[i * stride_covariate + v * stride_category] = reg->beta[static_cast<size_t>(i * reg->cols + v)];
    return DIRMN_SUCCESS;
  });
}

dirmn_status dirmn_reg_get_std_errors(const dirmn_reg* reg, double* se, int64_t stride_covariate,
                                      int64_t stride_category) {
  static const char* fn = "dirmn_reg_get_std_errors";
  return with_owner(reg ? reg->use.get() : nullptr, fn, [&] {
    if (reg == nullptr || se == nullptr) return fail(nullptr, DIRMN_ERROR_NULL_POINTER, fn, "reg or se is NULL");
    if (dirmn_status s = reg_strides(fn, "se", se, reg->p, reg->cols, stride_covariate, stride_category))
      return s;
    if (!reg->covariance) return no_vcov(fn);
    for (int64_t i = 0; i < reg->p; ++i)
      for (int64_t v = 0; v < reg->cols; ++v)
        se[i * stride_covariate + v * stride_category] = reg->std_errors[static_cast<size_t>(i * reg->cols + v)];
    return DIRMN_SUCCESS;
  });
}

dirmn_status dirmn_reg_get_vcov(const dirmn_reg* reg, double* out, int64_t ld) {
  static const char* fn = "dirmn_reg_get_vcov";
  return with_owner(reg ? reg->use.get() : nullptr, fn, [&] {
    if (reg == nullptr || out == nullptr) return fail(nullptr, DIRMN_ERROR_NULL_POINTER, fn, "reg or out is NULL");
    const int64_t P = reg->info.parameters;
    if (ld < P)
      return fail(nullptr, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                  "ld (%" PRId64 ") is below the %" PRId64 " free coefficients", ld, P);
    if (dirmn_status s = reg_strides(fn, "out", out, P, P, ld, 1)) return s;
    if (!reg->covariance) return no_vcov(fn);
    try {
      reg->covariance->fill(out, ld);
    } catch (const std::bad_alloc&) {
      return fail(nullptr, DIRMN_ERROR_OUT_OF_MEMORY, fn,
                  "out of host memory for the covariance's factors (%" PRId64 " coefficients)", P);
    }
    return DIRMN_SUCCESS;
  });
}

dirmn_status dirmn_reg_wald_test(const dirmn_reg* reg, int64_t covariate, double* statistic,
                                 double* df, double* p_value) {
  static const char* fn = "dirmn_reg_wald_test";
  return with_owner(reg ? reg->use.get() : nullptr, fn, [&] {
    if (reg == nullptr || statistic == nullptr || df == nullptr || p_value == nullptr)
      return fail(nullptr, DIRMN_ERROR_NULL_POINTER, fn, "reg, statistic, df or p_value is NULL");
    if (covariate < 0 || covariate >= reg->p)
      return fail(nullptr, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                  "covariate %" PRId64 " is outside 0 .. %" PRId64, covariate, reg->p - 1);
    if (!reg->covariance) return no_vcov(fn);
    const int64_t V = reg->wald_df;
    double w = 0.0, pv = 1.0;
    try {
      if (!dirmn::regression_wald(*reg->covariance, reg->wald_beta.data(), V, covariate, &w, &pv))
        return fail(nullptr, DIRMN_ERROR_NOT_SUPPORTED, fn,
                    "the covariance block of covariate %" PRId64 " is not positive definite", covariate);
    } catch (const std::bad_alloc&) {
      return fail(nullptr, DIRMN_ERROR_OUT_OF_MEMORY, fn, "out of host memory for a %" PRId64 " x %" PRId64
                  " block", V, V);
    }
    *statistic = w;
    *df = static_cast<double>(V);
    *p_value = pv;
    return DIRMN_SUCCESS;
  });
}

dirmn_status dirmn_reg_get_precision(const dirmn_reg* reg, double* gamma, double* se) {
  static const char* fn = "dirmn_reg_get_precision";
  return with_owner(reg ? reg->use.get() : nullptr, fn, [&] {
    if (reg == nullptr || gamma == nullptr) return fail(nullptr, DIRMN_ERROR_NULL_POINTER, fn, "reg or gamma is NULL");
    if (reg->info.model != DIRMN_REG_MEAN_PRECISION)
      return fail(nullptr, DIRMN_ERROR_NOT_SUPPORTED, fn,
                  "a log-linear fit has no precision coefficient (its alpha is not normalised)");
    for (size_t j = 0; j < reg->gamma.size(); ++j) {
      gamma[j] = reg->gamma[j];
      if (se != nullptr)
        se[j] = reg->covariance ? reg->gamma_std_errors[j] : std::numeric_limits<double>::quiet_NaN();
    }
    return DIRMN_SUCCESS;
  });
}

dirmn_status dirmn_reg_predict(const dirmn_reg* reg, const double* x, int64_t rows, int64_t p,
                               int64_t x_stride_row, int64_t x_stride_col, double* alpha,
                               int64_t stride_row, int64_t stride_category) {
  static const char* fn = "dirmn_reg_predict";
  return with_owner(reg ? reg->use.get() : nullptr, fn, [&] {
    if (reg != nullptr && reg->precision_design)
      return fail(nullptr, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                  "the fit's precision has %" PRId64 " covariates: give the new rows' to "
                  "dirmn_reg_predict_with_precision",
                  reg->info.precision_covariates);
    return predict(fn, reg, x, rows, p, x_stride_row, x_stride_col, nullptr, 0, 0, 0, alpha, stride_row,
                   stride_category);
  });
}

dirmn_status dirmn_reg_predict_with_precision(const dirmn_reg* reg, const double* x, int64_t rows, int64_t p,
                                              int64_t x_stride_row, int64_t x_stride_col, const double* z,
                                              int64_t q, int64_t z_stride_row, int64_t z_stride_col,
                                              double* alpha, int64_t stride_row, int64_t stride_category) {
  static const char* fn = "dirmn_reg_predict_with_precision";
  return with_owner(reg ? reg->use.get() : nullptr, fn, [&] {
    if (reg != nullptr && reg->info.model != DIRMN_REG_MEAN_PRECISION)
      return fail(nullptr, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                  "a log-linear fit has no precision: use dirmn_reg_predict");
    if (reg != nullptr && reg->precision_design && z == nullptr && rows > 0)
      return fail(nullptr, DIRMN_ERROR_NULL_POINTER, fn,
                  "z is NULL; the fit's precision has %" PRId64 " covariates", reg->info.precision_covariates);
    if (reg != nullptr && !reg->precision_design && z != nullptr)
      return fail(nullptr, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                  "z is given, but the fit has one precision for every row (no precision_design)");
    if (reg != nullptr && reg->precision_design && q != reg->info.precision_covariates)
      return fail(nullptr, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                  "z has %" PRId64 " covariates; the fit's precision has %" PRId64, q,
                  reg->info.precision_covariates);
    return predict(fn, reg, x, rows, p, x_stride_row, x_stride_col, reg && reg->precision_design ? z : nullptr, q,
                   z_stride_row, z_stride_col, alpha, stride_row, stride_category);
  });
}

dirmn_status dirmn_reg_test_groups(dirmn_context* ctx, dirmn_counts* counts, const int64_t* group, int64_t groups,
                                   const double* x, int64_t rows, int64_t p, int64_t x_stride_row,
                                   int64_t x_stride_col, int64_t p_null, const dirmn_reg_options* options,
                                   dirmn_reg_groups_result* result) {
  static const char* fn = "dirmn_reg_test_groups";
  return with_context(ctx, fn, [&] {
    if (dirmn_status s = check_counts_use(ctx, fn, counts)) return s;
    if (dirmn_status s = refuse_split(ctx, fn, counts)) return s;
    if (group == nullptr || result == nullptr)
      return fail(ctx, DIRMN_ERROR_NULL_POINTER, fn, "group or result is NULL");
    if (result->size < sizeof(size_t) || result->size > sizeof(dirmn_reg_groups_result))
      return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                  "result->size (%zu) is not sizeof(dirmn_reg_groups_result) (%zu)", result->size,
                  sizeof(dirmn_reg_groups_result));
    dirmn_reg_groups_result res;
    std::memset(&res, 0, sizeof res);
    std::memcpy(&res, result, result->size);
    dirmn_reg_options o;
    dirmn_reg_options_init_sized(&o, sizeof o);
    if (dirmn_status s = copy_options(ctx, fn, options, "dirmn_reg_options_init", &o)) return s;
    const int64_t V = counts->info.cols;
    if (dirmn_status s = check_reg_options(ctx, fn, o, std::numeric_limits<int64_t>::max())) return s;
    if (rows != counts->info.rows)
      return fail(ctx, DIRMN_ERROR_DIMENSION_MISMATCH, fn,
                  "x has %" PRId64 " rows; the table has %" PRId64, rows, counts->info.rows);
    if (groups < 1) return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn, "groups (%" PRId64 ") must be >= 1", groups);
    if (p < 2 || p_null < 1 || p_null >= p)
      return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                  "p (%" PRId64 ") must be >= 2 and p_null (%" PRId64 ") 1 .. p - 1", p, p_null);
    for (int64_t v = 0; v < V; ++v)
      if (group[v] < -1 || group[v] >= groups)
        return fail_at(ctx, DIRMN_ERROR_INVALID_PARAMETER, fn, Where::bracket("group", v),
                       "group %" PRId64 " is outside -1 .. %" PRId64, group[v], groups - 1);
    if (o.precision_design != nullptr)
      return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                  "precision_design is not taken here: each group's fit has one precision (DRIMSeq's)");
    if (o.model == DIRMN_REG_MEAN_PRECISION && o.reference != 0)
      return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                  "reference (%" PRId64 ") must be 0 here: each group's first column with counts is its "
                  "reference", o.reference);
    if (dirmn_status s = check_weights(ctx, fn, o.weights, rows)) return s;
    std::vector<dirmn::GroupOutcome> out;
    BackendResult r;
    try {
      std::vector<double> design;
      if (dirmn_status s = take_design(ctx, fn, x, rows, p, x_stride_row, x_stride_col, &design)) return s;
      dirmn::GroupedSettings gs;
      gs.group = group;
      gs.groups = groups;
      gs.p_null = p_null;
      gs.fit.x = design.data();
      gs.fit.p = p;
      gs.fit.weights = o.weights;
      gs.fit.tolerance = o.tolerance;
      gs.fit.max_iterations = o.max_iterations;
      gs.fit.interrupt = ctx->interrupt;
      gs.fit.mean_precision = o.model == DIRMN_REG_MEAN_PRECISION;
      gs.fit.sum_to_zero = o.contrast == DIRMN_REG_SUM_TO_ZERO;
      gs.fit.log_precision = o.log_precision;
      gs.hold_precision = o.hold_precision == 1 && gs.fit.mean_precision;
      if (dirmn_status hs = ensure_host_copy(ctx, fn, counts)) return hs;
      r = dirmn::test_groups(counts->stored(ctx), gs, &out);
    } catch (const std::bad_alloc&) {
      return fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, fn,
                  "out of host memory for %" PRId64 " groups' tables and fits (%" PRId64 " rows)", groups, rows);
    }
    if (r.status == DIRMN_ERROR_CANCELLED) return fail(ctx, DIRMN_ERROR_CANCELLED, fn, "cancelled");
    if (!r.ok()) return fail_backend(ctx, fn, r);
    int64_t tested = 0;
    for (int64_t g = 0; g < groups; ++g) {
      const dirmn::GroupOutcome& go = out[static_cast<size_t>(g)];
      tested += go.status == DIRMN_SUCCESS ? 1 : 0;
      if (res.loglik_full) res.loglik_full[g] = go.loglik_full;
      if (res.loglik_null) res.loglik_null[g] = go.loglik_null;
      if (res.statistic) res.statistic[g] = go.statistic;
      if (res.df) res.df[g] = go.df;
      if (res.p_value) res.p_value[g] = go.p_value;
      if (res.p_adjusted) res.p_adjusted[g] = go.p_adjusted;
      if (res.status) res.status[g] = static_cast<int32_t>(go.status);
      if (res.converged) res.converged[g] = go.converged ? 1 : 0;
      if (res.categories) res.categories[g] = go.categories;
    }
    res.tested = tested;
    std::memcpy(result, &res, result->size);
    return DIRMN_SUCCESS;
  });
}

}  // extern "C"
