// args.cpp: the shared argument checks.
#include "args.hpp"

#include <cinttypes>
#include <cmath>
#include <new>

#include "errors.hpp"
#include "handles.hpp"

namespace dirmn {
namespace capi {
namespace {

// exp(x) must be a positive finite double: -745.13 underflows to 0 and
// 709.78 overflows.
constexpr double kLogAlphaMax = 709.782712893384;
constexpr double kLogAlphaMin = -745.1332191019411;

}  // namespace

dirmn_status check_counts_use(dirmn_context* ctx, const char* fn, const dirmn_counts* counts) {
  if (counts == nullptr) return fail(ctx, DIRMN_ERROR_NULL_POINTER, fn, "counts is NULL");
  if (counts->context_id != ctx->id)
    return fail(ctx, DIRMN_ERROR_WRONG_CONTEXT, fn, "the counts object was created by another context");
  return DIRMN_SUCCESS;
}

bool extent_ok(int64_t n1, int64_t s1, int64_t n2, int64_t s2) {
  int64_t a = 0, b = 0, c = 0;
  return !__builtin_mul_overflow(n1 - 1, s1, &a) && !__builtin_mul_overflow(n2 - 1, s2, &b) &&
         !__builtin_add_overflow(a, b, &c);
}

bool layout_ok(int64_t n1, int64_t n2, int64_t s1, int64_t s2) {
  if (!extent_ok(n1, n1 > 1 ? s1 : 0, n2, n2 > 1 ? s2 : 0)) return false;
  if (n2 == 1) return n1 == 1 || s1 >= 1;
  if (n1 == 1) return s2 >= 1;
  if (s1 < 1 || s2 < 1) return false;
  int64_t span = 0;
  if (s1 >= s2) return !__builtin_mul_overflow(n2, s2, &span) && s1 >= span;
  return !__builtin_mul_overflow(n1, s1, &span) && s2 >= span;
}

dirmn_status check_param_kind(dirmn_context* ctx, const char* fn, dirmn_param param) {
  if (param != DIRMN_PARAM_ALPHA && param != DIRMN_PARAM_LOG_ALPHA)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn, "unknown param kind %d", static_cast<int>(param));
  return DIRMN_SUCCESS;
}

dirmn_status convert_params(dirmn_context* ctx, const char* fn, bool rowwise, const double* params,
                            int64_t n_vec, int64_t v, int64_t sj, int64_t si, dirmn_param param,
                            double* dst) {
  char text[kValueChars];
  // Where a bad parameter is (made only for the failure: this loop runs
  // over every parameter of every call).
  const auto at = [&](int64_t j, int64_t i, double p) {
    return (rowwise ? Where::row_param(j, i) : Where::param(j, i)).with_value(p);
  };
  for (int64_t j = 0; j < n_vec; ++j) {
    double a_sum = 0.0;
    for (int64_t i = 0; i < v; ++i) {
      const double p = params[j * sj + i * si];
      double a = p;
      if (param == DIRMN_PARAM_LOG_ALPHA) {
        if (!std::isfinite(p) || p > kLogAlphaMax || p < kLogAlphaMin)
          return fail_at(ctx, DIRMN_ERROR_INVALID_PARAMETER, fn, at(j, i, p), "log alpha %s is %s",
                         value_text(p, text),
                         std::isnan(p)      ? "NaN"
                         : std::isinf(p)    ? "infinite"
                         : p > kLogAlphaMax ? "too large (exp overflows)"
                                            : "too small (exp underflows to 0)");
        a = std::exp(p);
      } else if (!(p > 0.0) || !std::isfinite(p)) {
        return fail_at(ctx, DIRMN_ERROR_INVALID_PARAMETER, fn, at(j, i, p), "alpha %s is %s",
                       value_text(p, text),
                       std::isnan(p) ? "NaN" : std::isinf(p) ? "infinite" : "not positive");
      }
      a_sum += a;
      dst[j * v + i] = a;
    }
    if (!std::isfinite(a_sum))
      return fail_at(ctx, DIRMN_ERROR_INVALID_PARAMETER, fn,
                     rowwise ? Where::row_of("params", j) : Where::vector_of(j),
                     "the sum of alpha overflows");
  }
  return DIRMN_SUCCESS;
}

dirmn_status check_weights(dirmn_context* ctx, const char* fn, const double* w, int64_t rows) {
  if (w == nullptr) return DIRMN_SUCCESS;
  char text[kValueChars];
  for (int64_t b = 0; b < rows; ++b)
    if (!std::isfinite(w[b]) || w[b] < 0.0)
      return fail_at(ctx, DIRMN_ERROR_INVALID_PARAMETER, fn,
                     Where::row_of("weights", b).with_value(w[b]),
                     "weight %s is %s; weights must be finite and >= 0", value_text(w[b], text),
                     std::isnan(w[b]) ? "NaN" : std::isinf(w[b]) ? "infinite" : "negative");
  return DIRMN_SUCCESS;
}

dirmn_status fail_options_size(dirmn_context* ctx, const char* fn, size_t size, const char* init) {
  return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn, "options->size (%zu) is invalid; call %s", size,
              init);
}

bool ParamMemo::matches(const double* params, int64_t n_vec_, int64_t v_, int64_t sj, int64_t si,
                        dirmn_param kind_) const {
  if (!valid || kind_ != kind || n_vec_ != n_vec || v_ != v) return false;
  const bool contiguous = (n_vec == 1 || sj == v) && (v == 1 || si == 1);
  if (contiguous) return std::memcmp(params, input.data(), input.size() * sizeof(double)) == 0;
  for (int64_t j = 0; j < n_vec; ++j)
    for (int64_t i = 0; i < v; ++i)
      if (std::memcmp(&params[j * sj + i * si], &input[static_cast<size_t>(j * v + i)], sizeof(double)) != 0)
        return false;
  return true;
}

bool ParamMemo::remember(const double* params, int64_t n_vec_, int64_t v_, int64_t sj, int64_t si,
                         dirmn_param kind_) {
  valid = false;
  try {
    input.resize(static_cast<size_t>(n_vec_ * v_));
  } catch (const std::bad_alloc&) {
    return false;
  }
  for (int64_t j = 0; j < n_vec_; ++j)
    for (int64_t i = 0; i < v_; ++i) input[static_cast<size_t>(j * v_ + i)] = params[j * sj + i * si];
  kind = kind_;
  n_vec = n_vec_;
  v = v_;
  valid = true;
  return true;
}

}  // namespace capi
}  // namespace dirmn
