// loglik.cpp: the header's Log-likelihood section.
#include <cinttypes>
#include <new>
#include <vector>

#include "guard.hpp"
#include "handles.hpp"

using namespace dirmn::capi;
using dirmn::BackendResult;

namespace dirmn {
namespace capi {
namespace {

// The body of both likelihood entry points.
dirmn_status run_loglik(dirmn_context* ctx, const char* fn, const dirmn_counts* counts,
                        bool rowwise, int64_t k, const double* params, int64_t sj, int64_t si,
                        dirmn_param param, uint32_t flags, double* out, int64_t out_sr,
                        int64_t out_sk) {
  if (dirmn_status s = check_counts_use(ctx, fn, counts)) return s;
  if (params == nullptr) return fail(ctx, DIRMN_ERROR_NULL_POINTER, fn, "params is NULL");
  if (out == nullptr) return fail(ctx, DIRMN_ERROR_NULL_POINTER, fn, "out is NULL");
  if (dirmn_status s = check_param_kind(ctx, fn, param)) return s;
  bool full = true;
  if (dirmn_status s = likelihood_flags(ctx, fn, "flag", flags,
                                        DIRMN_OUTPUT_DEVICE | DIRMN_ASYNC | DIRMN_PARAMS_DEVICE, &full))
    return s;
  const bool on_device = (flags & DIRMN_OUTPUT_DEVICE) != 0;
  if (on_device)
    if (dirmn_status s = require_device_context(ctx, fn, "DIRMN_OUTPUT_DEVICE")) return s;
  if ((flags & DIRMN_ASYNC) && !on_device)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn,
                "DIRMN_ASYNC requires DIRMN_OUTPUT_DEVICE (host results must be waited for)");
  const int64_t rows = counts->info.rows, v = counts->info.cols;
  const int64_t n_vec = rowwise ? rows : k;
  if (!rowwise && k <= 0)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, fn, "k (%" PRId64 ") must be positive", k);
  const Strided params_extent{params, n_vec, v, sj, si, sizeof(double)};
  if (dirmn_status s = check_extent(ctx, fn, "params", params_extent, false)) return s;
  const int64_t kk = rowwise ? 1 : k;
  if (dirmn_status s = check_extent(ctx, fn, "out",
                                    Strided{out, rows, kk, out_sr, out_sk, sizeof(double)}, true))
    return s;
  int64_t n_alpha = 0, n_out = 0;
  if (__builtin_mul_overflow(n_vec, v, &n_alpha) || __builtin_mul_overflow(rows, kk, &n_out))
    return fail(ctx, DIRMN_ERROR_OVERFLOW, fn, "parameter or result size overflows");
  const int64_t psj = n_vec > 1 ? sj : 0, psi = v > 1 ? si : 0;
  // Device parameters are read through a host copy in the caller's layout:
  // the checks, the conversion and the memo below are the host's.
  std::vector<double> params_copy;
  if (flags & DIRMN_PARAMS_DEVICE)
    if (dirmn_status s = stage_device_input(ctx, fn, "params", "DIRMN_PARAMS_DEVICE", params_extent,
                                            &params_copy, &params))
      return s;
  // Results go straight into the caller's array where it has the layout
  // the backends write (row-major, contiguous) and nothing can fail once
  // they start writing -- the CPU backend without an interrupt callback --
  // since a failed call must leave the array as it was. Elsewhere they land
  // in scratch first and are copied out on success.
  const bool direct = !on_device && ctx->backend->kind() == DIRMN_BACKEND_CPU &&
                      ctx->interrupt.fn == nullptr && (rows <= 1 || out_sr == kk) &&
                      (kk <= 1 || out_sk == 1);
  // Row-wise parameters (a table's worth) are converted every call; shared
  // vectors are remembered (ParamMemo).
  ParamMemo& memo = ctx->shared_params;
  const bool reuse = !rowwise && memo.matches(params, n_vec, v, psj, psi, param);
  std::vector<double>& alpha = rowwise ? ctx->rowwise_alpha : memo.alpha;
  if (!rowwise && !reuse) {
    memo.valid = false;  // memo.alpha is about to change
    ++memo.version;
  }
  struct Trim {
    dirmn_context* c;
    ~Trim() { c->trim(); }
  } trim{ctx};
  try {
    if (!reuse) alpha.resize(static_cast<size_t>(n_alpha));
  } catch (const std::bad_alloc&) {
    return fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, fn,
                "out of host memory for the %" PRId64 " x %" PRId64 " alphas (%" PRId64 " bytes)",
                n_vec, v, n_alpha * static_cast<int64_t>(sizeof(double)));
  }
  try {
    if (!on_device && !direct) ctx->out_scratch.resize(static_cast<size_t>(n_out));
  } catch (const std::bad_alloc&) {
    return fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, fn,
                "out of host memory for the %" PRId64 " x %" PRId64 " results' scratch (%" PRId64
                " bytes)",
                rows, kk, n_out * static_cast<int64_t>(sizeof(double)));
  }
  if (!reuse) {
    if (dirmn_status s = convert_params(ctx, fn, rowwise, params, n_vec, v, psj, psi, param,
                                        alpha.data()))
      return s;
    // Without room for the copy the next call converts again.
    if (!rowwise) (void)memo.remember(params, n_vec, v, psj, psi, param);
  }

  LoglikRequest req;
  req.alpha = alpha.data();
  req.alpha_version = !rowwise && memo.valid ? memo.version : 0;
  req.k = kk;
  req.rowwise = rowwise;
  req.full = full;
  req.fast = ctx->precision == DIRMN_PRECISION_FAST;
  req.out_on_device = on_device;
  req.async = (flags & DIRMN_ASYNC) != 0;
  if (on_device || direct) {
    req.out = out;
    req.out_stride_row = on_device ? out_sr : kk;
    req.out_stride_k = on_device ? out_sk : 1;
  } else {
    // Results land in scratch first so a cancelled or failed call leaves the
    // caller's array as it was.
    req.out = ctx->out_scratch.data();
    req.out_stride_row = kk;
    req.out_stride_k = 1;
  }
  const StoredTable table = counts->stored(ctx);
  const Step step = rowwise ? Step::kLoglikRowwise : Step::kLoglik;
  const BackendResult r = table.run(step, [&](Backend& b, const BackendCounts& d) {
    return b.loglik(d, req, ctx->interrupt);
  });
  if (!r.ok()) return fail_backend(ctx, fn, r);
  if (!on_device && !direct) {
    const double* src = ctx->out_scratch.data();
    for (int64_t b = 0; b < rows; ++b)
      for (int64_t j = 0; j < kk; ++j) out[b * out_sr + j * out_sk] = src[b * kk + j];
  }
  return DIRMN_SUCCESS;
}

}  // namespace
}  // namespace capi
}  // namespace dirmn

extern "C" {

dirmn_status dirmn_loglik(dirmn_context* ctx, const dirmn_counts* counts, int64_t k,
                          const double* params, int64_t params_stride_k, int64_t params_stride_v,
                          dirmn_param param, uint32_t flags, double* out, int64_t out_stride_row,
                          int64_t out_stride_k) {
  static const char* fn = "dirmn_loglik";
  return with_context(ctx, fn, [&] {
    return dirmn::capi::run_loglik(ctx, fn, counts, false, k, params, params_stride_k,
                                   params_stride_v, param, flags, out, out_stride_row, out_stride_k);
  });
}

dirmn_status dirmn_loglik_rowwise(dirmn_context* ctx, const dirmn_counts* counts,
                                  const double* params, int64_t params_stride_row,
                                  int64_t params_stride_v, dirmn_param param, uint32_t flags,
                                  double* out, int64_t out_stride) {
  static const char* fn = "dirmn_loglik_rowwise";
  return with_context(ctx, fn, [&] {
    return dirmn::capi::run_loglik(ctx, fn, counts, true, 1, params, params_stride_row,
                                   params_stride_v, param, flags, out, out_stride, 1);
  });
}

}  // extern "C"
