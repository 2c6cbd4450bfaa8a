// args.cpp: the shared argument checks.
#include "args.hpp"

#include <cinttypes>
#include <cstddef>
#include <initializer_list>
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

dirmn_status require_device_context(dirmn_context* ctx, const char* fn, const char* flag) {
  if (ctx->backend->kind() == DIRMN_BACKEND_CUDA) return DIRMN_SUCCESS;
  return fail(ctx, DIRMN_ERROR_NOT_SUPPORTED, fn, "%s needs a CUDA context; this one is on the CPU",
              flag);
}

dirmn_status fail_device_array(dirmn_context* ctx, const char* fn, const BackendResult& r,
                               const char* what, const char* flag) {
  if (r.status == DIRMN_ERROR_INVALID_ARGUMENT)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                "%s is not device memory of this context's device (%s)", what, flag);
  return fail_backend(ctx, fn, r);
}

dirmn_status stage_device_input(dirmn_context* ctx, const char* fn, const char* what,
                                const char* flag, const Strided& a, std::vector<double>* copy,
                                const double** host) {
  if (dirmn_status s = require_device_context(ctx, fn, flag)) return s;
  // Elements 0 .. last of the caller's layout (check_extent has bounded it).
  int64_t elems = 0;
  if (a.n1 > 0 && a.n2 > 0)
    elems = (a.n1 > 1 ? (a.n1 - 1) * a.s1 : 0) + (a.n2 > 1 ? (a.n2 - 1) * a.s2 : 0) + 1;
  try {
    copy->resize(static_cast<size_t>(elems));
  } catch (const std::bad_alloc&) {
    return fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, fn,
                "out of host memory for a copy of %s (%" PRId64 " bytes)", what,
                elems * static_cast<int64_t>(sizeof(double)));
  }
  const BackendResult r = ctx->backend->read_caller_device(
      copy->data(), a.base, static_cast<size_t>(elems) * sizeof(double), "");
  if (!r.ok()) return fail_device_array(ctx, fn, r, what, flag);
  *host = copy->data();
  return DIRMN_SUCCESS;
}

dirmn_status check_counts_use(dirmn_context* ctx, const char* fn, const dirmn_counts* counts) {
  if (counts == nullptr) return fail(ctx, DIRMN_ERROR_NULL_POINTER, fn, "counts is NULL");
  if (counts->context_id != ctx->id)
    return fail(ctx, DIRMN_ERROR_WRONG_CONTEXT, fn, "the counts object was created by another context");
  return DIRMN_SUCCESS;
}

namespace {

enum class Extent {
  kOk,
  kBadStride,  // a stride below 1 along a dimension above 1
  kOverlap,    // (outputs) two elements share a place
  kOverflow    // the byte offsets pass what a pointer holds
};

// The byte just past the last element, from the base: false when it passes
// ptrdiff_t or base plus it wraps.
bool bytes_fit(const Strided& a, int64_t s1, int64_t s2) {
  if (a.n1 <= 0 || a.n2 <= 0) return true;
  int64_t x = 0, y = 0, last = 0, end = 0, bytes = 0;
  if (__builtin_mul_overflow(a.n1 - 1, s1, &x) || __builtin_mul_overflow(a.n2 - 1, s2, &y) ||
      __builtin_add_overflow(x, y, &last) || __builtin_add_overflow(last, int64_t{1}, &end) ||
      __builtin_mul_overflow(end, static_cast<int64_t>(a.elem_bytes), &bytes) ||
      bytes > PTRDIFF_MAX)
    return false;
  uintptr_t top = 0;
  return !__builtin_add_overflow(reinterpret_cast<uintptr_t>(a.base),
                                 static_cast<uintptr_t>(bytes), &top);
}

Extent input_extent(const Strided& a) {
  const int64_t s1 = a.n1 > 1 ? a.s1 : 0, s2 = a.n2 > 1 ? a.s2 : 0;
  if ((a.n1 > 1 && s1 < 1) || (a.n2 > 1 && s2 < 1)) return Extent::kBadStride;
  return bytes_fit(a, s1, s2) ? Extent::kOk : Extent::kOverflow;
}

Extent output_extent(const Strided& a) {
  const Extent e = input_extent(a);
  if (e != Extent::kOk || a.n1 <= 1 || a.n2 <= 1) return e;
  // Row-major with a leading dimension (s1 >= n2 s2), or column-major with
  // one (s2 >= n1 s1).
  int64_t span = 0;
  if (a.s1 >= a.s2)
    return !__builtin_mul_overflow(a.n2, a.s2, &span) && a.s1 >= span ? Extent::kOk : Extent::kOverlap;
  return !__builtin_mul_overflow(a.n1, a.s1, &span) && a.s2 >= span ? Extent::kOk : Extent::kOverlap;
}

dirmn_status fail_extent(dirmn_context* ctx, const char* fn, Extent e, const char* what,
                         const Strided& a) {
  const bool matrix = a.n1 != 1 || a.s1 != 1 || a.s2 != 1;
  switch (e) {
    case Extent::kOk: return DIRMN_SUCCESS;
    case Extent::kBadStride:
      return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                  "%s: strides (%" PRId64 ", %" PRId64 ") of a %" PRId64 " x %" PRId64
                  " array must be >= 1",
                  what, a.s1, a.s2, a.n1, a.n2);
    case Extent::kOverlap:
      return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                  "%s: strides (%" PRId64 ", %" PRId64 ") for %" PRId64 " x %" PRId64
                  " results overlap (one stride must be at least the other dimension times "
                  "the other stride)",
                  what, a.s1, a.s2, a.n1, a.n2);
    case Extent::kOverflow:
      if (!matrix)
        return fail(ctx, DIRMN_ERROR_OVERFLOW, fn,
                    "%s: %" PRId64 " elements of %zu bytes from %p pass the end of the address space",
                    what, a.n2, a.elem_bytes, a.base);
      return fail(ctx, DIRMN_ERROR_OVERFLOW, fn,
                  "%s: a %" PRId64 " x %" PRId64 " array of %zu-byte elements at strides (%" PRId64
                  ", %" PRId64 ") reaches past what a pointer holds (its last byte offset "
                  "overflows, or wraps the address space from %p)",
                  what, a.n1, a.n2, a.elem_bytes, a.s1, a.s2, a.base);
  }
  return DIRMN_SUCCESS;
}

}  // namespace

dirmn_status check_extent(dirmn_context* ctx, const char* fn, const char* what, const Strided& a,
                          bool output) {
  const Extent e = output ? output_extent(a) : input_extent(a);
  return e == Extent::kOk ? DIRMN_SUCCESS : fail_extent(ctx, fn, e, what, a);
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
  if (dirmn_status s = check_extent(ctx, fn, "weights", contiguous(w, rows, sizeof(double)), false))
    return s;
  char text[kValueChars];
  for (int64_t b = 0; b < rows; ++b)
    if (!std::isfinite(w[b]) || w[b] < 0.0)
      return fail_at(ctx, DIRMN_ERROR_INVALID_PARAMETER, fn,
                     Where::row_of("weights", b).with_value(w[b]),
                     "weight %s is %s; weights must be finite and >= 0", value_text(w[b], text),
                     std::isnan(w[b]) ? "NaN" : std::isinf(w[b]) ? "infinite" : "negative");
  return DIRMN_SUCCESS;
}

namespace {

// The end of the last of `ends` (ascending field ends) at or before size.
size_t last_end(std::initializer_list<size_t> ends, size_t size) {
  size_t n = 0;
  for (size_t e : ends)
    if (e <= size) n = e;
  return n;
}

#define DIRMN_FIELD_END(T, f) (offsetof(T, f) + sizeof(T::f))

}  // namespace

size_t whole_fields(const dirmn_fit_options*, size_t size) {
  using T = dirmn_fit_options;
  return last_end({DIRMN_FIELD_END(T, size), DIRMN_FIELD_END(T, tolerance),
                   DIRMN_FIELD_END(T, max_iterations), DIRMN_FIELD_END(T, weights),
                   DIRMN_FIELD_END(T, start), DIRMN_FIELD_END(T, progress),
                   DIRMN_FIELD_END(T, progress_data), DIRMN_FIELD_END(T, flags),
                   DIRMN_FIELD_END(T, hessian_diag)},
                  size);
}

size_t whole_fields(const dirmn_mixture_options*, size_t size) {
  using T = dirmn_mixture_options;
  return last_end({DIRMN_FIELD_END(T, size), DIRMN_FIELD_END(T, objective),
                   DIRMN_FIELD_END(T, init), DIRMN_FIELD_END(T, starts), DIRMN_FIELD_END(T, seed),
                   DIRMN_FIELD_END(T, max_iterations), DIRMN_FIELD_END(T, tolerance),
                   DIRMN_FIELD_END(T, weights), DIRMN_FIELD_END(T, progress),
                   DIRMN_FIELD_END(T, progress_data), DIRMN_FIELD_END(T, grow_from),
                   DIRMN_FIELD_END(T, m_step_iterations)},
                  size);
}

size_t whole_fields(const dirmn_reg_options*, size_t size) {
  using T = dirmn_reg_options;
  return last_end({DIRMN_FIELD_END(T, size), DIRMN_FIELD_END(T, tolerance),
                   DIRMN_FIELD_END(T, max_iterations), DIRMN_FIELD_END(T, weights),
                   DIRMN_FIELD_END(T, progress), DIRMN_FIELD_END(T, progress_data),
                   DIRMN_FIELD_END(T, model), DIRMN_FIELD_END(T, contrast), DIRMN_FIELD_END(T, reference),
                   DIRMN_FIELD_END(T, log_precision), DIRMN_FIELD_END(T, hold_precision),
                   DIRMN_FIELD_END(T, precision_design), DIRMN_FIELD_END(T, precision_covariates),
                   DIRMN_FIELD_END(T, precision_stride_row), DIRMN_FIELD_END(T, precision_stride_col)},
                  size);
}

size_t whole_fields(const dirmn_sample_options*, size_t size) {
  using T = dirmn_sample_options;
  return last_end({DIRMN_FIELD_END(T, size), DIRMN_FIELD_END(T, seed), DIRMN_FIELD_END(T, component),
                   DIRMN_FIELD_END(T, mixture_weights), DIRMN_FIELD_END(T, component_out),
                   DIRMN_FIELD_END(T, storage), DIRMN_FIELD_END(T, first_row)},
                  size);
}

size_t whole_fields(const dirmn_group_test_options*, size_t size) {
  using T = dirmn_group_test_options;
  return last_end({DIRMN_FIELD_END(T, size), DIRMN_FIELD_END(T, bootstrap), DIRMN_FIELD_END(T, seed),
                   DIRMN_FIELD_END(T, tolerance), DIRMN_FIELD_END(T, max_iterations),
                   DIRMN_FIELD_END(T, statistic)},
                  size);
}

size_t whole_fields(const dirmn_power_options*, size_t size) {
  using T = dirmn_power_options;
  return last_end({DIRMN_FIELD_END(T, size), DIRMN_FIELD_END(T, tables), DIRMN_FIELD_END(T, level),
                   DIRMN_FIELD_END(T, seed), DIRMN_FIELD_END(T, tolerance), DIRMN_FIELD_END(T, max_iterations),
                   DIRMN_FIELD_END(T, statistic)},
                  size);
}

#undef DIRMN_FIELD_END

dirmn_status likelihood_flags(dirmn_context* ctx, const char* fn, const char* what, uint32_t flags,
                              uint32_t others, bool* full) {
  const uint32_t known = DIRMN_FULL | DIRMN_KERNEL | others;
  if (flags & ~known)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn, "unknown %s bits 0x%x", what, flags & ~known);
  if ((flags & DIRMN_FULL) && (flags & DIRMN_KERNEL))
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                "%s has both DIRMN_FULL (the log pmf) and DIRMN_KERNEL (without the multinomial "
                "coefficients); give one",
                what);
  *full = (flags & DIRMN_KERNEL) == 0;
  return DIRMN_SUCCESS;
}

dirmn_status fail_weighted_overflow(dirmn_context* ctx, const char* fn, const char* what) {
  return fail(ctx, DIRMN_ERROR_OVERFLOW, fn,
              "the weighted %s is beyond the largest double (1.8e+308) at these row weights; "
              "divide every weight by one constant (the fitted alpha does not change)",
              what);
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
