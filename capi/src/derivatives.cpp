// derivatives.cpp: the header's Derivatives section.
#include <cinttypes>
#include <new>
#include <vector>

#include "../../kernels/models/fit.hpp"
#include "collective.hpp"
#include "guard.hpp"
#include "handles.hpp"
#include "tables.hpp"

using namespace dirmn::capi;
using dirmn::BackendResult;

namespace {

// What both derivative entry points check first (`others`: the flags
// besides DIRMN_FULL and DIRMN_KERNEL the entry point takes).
dirmn_status check_derivative_call(dirmn_context* ctx, const char* fn, const dirmn_counts* counts,
                                   const double* params, dirmn_param param, uint32_t flags,
                                   uint32_t others, bool* full) {
  using namespace dirmn::capi;
  if (dirmn_status s = check_counts_use(ctx, fn, counts)) return s;
  if (params == nullptr) return fail(ctx, DIRMN_ERROR_NULL_POINTER, fn, "params is NULL");
  if (dirmn_status s = check_param_kind(ctx, fn, param)) return s;
  return likelihood_flags(ctx, fn, "flag", flags, others, full);
}

// One of dirmn_loglik_sum's outputs, and where it lands in host memory
// first under DIRMN_OUTPUT_DEVICE.
struct SumOutput {
  const char* what;
  double* caller;
  size_t n;
  size_t at;  // in the host copy: value, hessian_scalar, gradient, hessian_diag
};

}  // namespace

extern "C" {

dirmn_status dirmn_loglik_sum(dirmn_context* ctx, dirmn_counts* counts, const double* params,
                              int64_t params_stride, dirmn_param param, const double* weights,
                              uint32_t flags, double* value, double* gradient,
                              double* hessian_diag, double* hessian_scalar) {
  static const char* fn = "dirmn_loglik_sum";
  return with_context(ctx, fn, [&] {
    return dirmn::capi::collective(counts, [&] {
      using namespace dirmn::capi;
      bool full = true;
      if (dirmn_status s = check_derivative_call(
              ctx, fn, counts, params, param, flags,
              DIRMN_PARAMS_DEVICE | DIRMN_WEIGHTS_DEVICE | DIRMN_OUTPUT_DEVICE, &full))
        return s;
      const int64_t V = counts->info.cols, rows = counts->info.rows;
      const Strided params_extent{params, 1, V, 1, params_stride, sizeof(double)};
      if (dirmn_status s = check_extent(ctx, fn, "params", params_extent, false)) return s;
      for (double* outv : {gradient, hessian_diag})
        if (dirmn_status s = check_extent(ctx, fn, outv == gradient ? "gradient" : "hessian_diag",
                                          contiguous(outv, outv ? V : 0, sizeof(double)), true))
          return s;
      // Under DIRMN_OUTPUT_DEVICE the results land in host memory first; each
      // output given is checked before anything is computed, so that a bad
      // pointer fails the call with the caller's arrays as they were.
      const bool out_device = (flags & DIRMN_OUTPUT_DEVICE) != 0;
      std::vector<double> host_out;
      try {
        if (out_device) host_out.resize(2 + 2 * static_cast<size_t>(V));
      } catch (const std::bad_alloc&) {
        return fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, fn,
                    "out of host memory for the %" PRId64 " results' scratch", V);
      }
      const size_t nv = static_cast<size_t>(V);
      const SumOutput outs[] = {{"value", value, 1, 0},
                                {"gradient", gradient, nv, 2},
                                {"hessian_diag", hessian_diag, nv, 2 + nv},
                                {"hessian_scalar", hessian_scalar, 1, 1}};
      if (out_device) {
        if (dirmn_status s = require_device_context(ctx, fn, "DIRMN_OUTPUT_DEVICE")) return s;
        for (const SumOutput& o : outs) {
          if (o.caller == nullptr) continue;
          const BackendResult r = ctx->backend->check_caller_device(o.caller, "");
          if (!r.ok()) return fail_device_array(ctx, fn, r, o.what, "DIRMN_OUTPUT_DEVICE");
        }
      }
      const auto target = [&](const SumOutput& o) {
        return out_device && o.caller ? host_out.data() + o.at : o.caller;
      };
      // Device inputs are read through host copies in the caller's layout:
      // the checks and messages below are the host's.
      std::vector<double> params_copy, weights_copy;
      if (flags & DIRMN_PARAMS_DEVICE)
        if (dirmn_status s = stage_device_input(ctx, fn, "params", "DIRMN_PARAMS_DEVICE",
                                                params_extent, &params_copy, &params))
          return s;
      if ((flags & DIRMN_WEIGHTS_DEVICE) && weights != nullptr)
        if (dirmn_status s = stage_device_input(ctx, fn, "weights", "DIRMN_WEIGHTS_DEVICE",
                                                contiguous(weights, rows, sizeof(double)),
                                                &weights_copy, &weights))
          return s;
      std::vector<double> alpha;
      try {
        alpha.resize(static_cast<size_t>(V));
      } catch (const std::bad_alloc&) {
        return fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, fn, "out of host memory for the %" PRId64 " alphas",
                    V);
      }
      if (dirmn_status s = convert_params(ctx, fn, false, params, 1, V, 0, V > 1 ? params_stride : 0,
                                          param, alpha.data()))
        return s;
      if (dirmn_status s = check_weights(ctx, fn, weights, rows)) return s;
      BackendResult r;
      try {
        if (dirmn_status hs = ensure_host_copy(ctx, fn, counts)) return hs;
        r = dirmn::loglik_sums(counts->stored(ctx), counts->histograms, alpha.data(), weights,
                               param == DIRMN_PARAM_LOG_ALPHA, full, ctx->interrupt, target(outs[0]),
                               target(outs[1]), target(outs[2]), target(outs[3]));
      } catch (const std::bad_alloc&) {
        return fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, fn,
                    "out of host memory for the count histograms of %" PRId64 " columns", V);
      }
      if (r.status == DIRMN_ERROR_OVERFLOW)
        return fail_weighted_overflow(ctx, fn, "log-likelihood, gradient or Hessian");
      if (!r.ok()) return fail_backend(ctx, fn, r);
      if (out_device)
        for (const SumOutput& o : outs) {
          if (o.caller == nullptr) continue;
          const BackendResult w = ctx->backend->write_caller_device(o.caller, host_out.data() + o.at,
                                                                    o.n * sizeof(double), "");
          if (!w.ok()) return fail_device_array(ctx, fn, w, o.what, "DIRMN_OUTPUT_DEVICE");
        }
      return DIRMN_SUCCESS;
    });
  });
}

dirmn_status dirmn_loglik_rowwise_derivatives(dirmn_context* ctx, const dirmn_counts* counts,
                                              const double* params, int64_t params_stride_row,
                                              int64_t params_stride_v, dirmn_param param,
                                              uint32_t flags, double* loglik, double* gradient,
                                              double* hessian_diag, double* hessian_scalar,
                                              int64_t out_stride_row, int64_t out_stride_v) {
  static const char* fn = "dirmn_loglik_rowwise_derivatives";
  return with_context(ctx, fn, [&] {
    using namespace dirmn::capi;
    bool full = true;
    if (dirmn_status s = check_derivative_call(ctx, fn, counts, params, param, flags, 0, &full))
      return s;
    const int64_t rows = counts->info.rows, V = counts->info.cols;
    if (dirmn_status s = check_extent(
            ctx, fn, "params",
            Strided{params, rows, V, params_stride_row, params_stride_v, sizeof(double)}, false))
      return s;
    for (double* m : {gradient, hessian_diag})
      if (m != nullptr)
        if (dirmn_status s = check_extent(
                ctx, fn, m == gradient ? "gradient" : "hessian_diag",
                Strided{m, rows, V, out_stride_row, out_stride_v, sizeof(double)}, true))
          return s;
    for (double* r : {loglik, hessian_scalar})
      if (dirmn_status s = check_extent(ctx, fn, r == loglik ? "loglik" : "hessian_scalar",
                                        contiguous(r, r ? rows : 0, sizeof(double)), true))
        return s;
    int64_t cells = 0;
    if (__builtin_mul_overflow(rows, V, &cells))
      return fail(ctx, DIRMN_ERROR_OVERFLOW, fn, "rows x cols overflows");
    std::vector<double> ll, g, d, c;
    struct Trim {
      dirmn_context* cx;
      ~Trim() { cx->trim(); }
    } trim{ctx};
    try {
      ctx->rowwise_alpha.resize(static_cast<size_t>(cells));
      ll.resize(static_cast<size_t>(rows));
      c.resize(static_cast<size_t>(rows));
      g.resize(static_cast<size_t>(cells));
      if (hessian_diag) d.resize(static_cast<size_t>(cells));
    } catch (const std::bad_alloc&) {
      return fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, fn,
                  "out of host memory for the %" PRId64 " x %" PRId64
                  " alphas and derivatives' scratch (%" PRId64 " bytes)",
                  rows, V,
                  ((hessian_diag ? 3 : 2) * cells + 2 * rows) * static_cast<int64_t>(sizeof(double)));
    }
    if (dirmn_status s = convert_params(ctx, fn, true, params, rows, V,
                                        rows > 1 ? params_stride_row : 0,
                                        V > 1 ? params_stride_v : 0, param, ctx->rowwise_alpha.data()))
      return s;
    dirmn::RowwiseDerivRequest req;
    req.alpha = ctx->rowwise_alpha.data();
    req.full = full;
    req.log_param = param == DIRMN_PARAM_LOG_ALPHA;
    req.loglik = ll.data();
    req.gradient = g.data();
    req.hessian_diag = hessian_diag ? d.data() : nullptr;
    req.hessian_scalar = c.data();
    if (dirmn_status hs = ensure_host_copy(ctx, fn, counts)) return hs;
    const BackendResult r = counts->stored(ctx).run(
        dirmn::Step::kDerivativesRowwise, [&](dirmn::Backend& be, const dirmn::BackendCounts& data) {
          return be.rowwise_derivatives(data, req, ctx->interrupt);
        });
    if (!r.ok()) return fail_backend(ctx, fn, r);
    for (int64_t b = 0; b < rows; ++b) {
      if (loglik) loglik[b] = ll[static_cast<size_t>(b)];
      if (hessian_scalar) hessian_scalar[b] = c[static_cast<size_t>(b)];
      for (int64_t v = 0; v < V; ++v) {
        if (gradient) gradient[b * out_stride_row + v * out_stride_v] = g[static_cast<size_t>(b * V + v)];
        if (hessian_diag)
          hessian_diag[b * out_stride_row + v * out_stride_v] = d[static_cast<size_t>(b * V + v)];
      }
    }
    return DIRMN_SUCCESS;
  });
}

}  // extern "C"
