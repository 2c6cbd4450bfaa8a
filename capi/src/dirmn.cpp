// dirmn.cpp: the C ABI. Every entry point checks its arguments completely
// before anything is written, dispatches to the context's backend, and turns
// every failure into a status plus a message. No exception crosses it.
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <algorithm>
#include <cstring>
#include <limits>
#include <new>

#include "internal.hpp"

namespace dirmn {
namespace capi {
namespace {

thread_local std::string t_error;  // failures before a context exists

std::string vformat(const char* fmt, va_list ap) {
  va_list copy;
  va_copy(copy, ap);
  char small[512];
  const int n = std::vsnprintf(small, sizeof small, fmt, copy);
  va_end(copy);
  if (n < 0) return std::string("(message formatting failed)");
  if (static_cast<size_t>(n) < sizeof small) return std::string(small, static_cast<size_t>(n));
  std::string big(static_cast<size_t>(n) + 1, '\0');
  std::vsnprintf(&big[0], big.size(), fmt, ap);
  big.resize(static_cast<size_t>(n));
  return big;
}

std::atomic<uint64_t> g_context_ids{1};

}  // namespace

dirmn_status fail(dirmn_context* ctx, dirmn_status status, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  try {
    (ctx ? ctx->last_error : t_error) = vformat(fmt, ap);
  } catch (...) {
    // Out of memory while reporting: keep the status, lose the detail.
  }
  va_end(ap);
  return status;
}

dirmn_status fail_backend(dirmn_context* ctx, const char* fn, const BackendResult& r) {
  switch (r.status) {
    case DIRMN_ERROR_CANCELLED:
      return fail(ctx, r.status, "%s: cancelled by the interrupt callback", fn);
    case DIRMN_ERROR_OUT_OF_MEMORY:
      return fail(ctx, r.status, "%s: out of memory (%s)", fn, r.what);
    case DIRMN_ERROR_DEVICE:
      return fail(ctx, r.status, "%s: CUDA error %d in %s", fn, r.code, r.what);
    default:
      return fail(ctx, r.status, "%s: %s%s%s", fn, dirmn_status_string(r.status),
                  r.what[0] ? ": " : "", r.what);
  }
}

void clear_error(dirmn_context* ctx) {
  if (ctx) ctx->last_error.clear();
}

uint64_t next_context_id() { return g_context_ids.fetch_add(1); }

// Validates row weights (finite, >= 0).
dirmn_status check_weights(dirmn_context* ctx, const char* fn, const double* w, int64_t rows) {
  if (w == nullptr) return DIRMN_SUCCESS;
  for (int64_t b = 0; b < rows; ++b)
    if (!std::isfinite(w[b]) || w[b] < 0.0)
      return fail(ctx, DIRMN_ERROR_INVALID_PARAMETER,
                  "%s: weight of row %" PRId64 " (0-based) is %.17g; weights must be finite and >= 0",
                  fn, b, w[b]);
  return DIRMN_SUCCESS;
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

namespace {

// Layouts of a rows x k output that never write one element twice: row-major
// with a leading dimension, or column-major with one.
bool output_layout_ok(int64_t rows, int64_t k, int64_t sr, int64_t sk) {
  if (k == 1) return rows == 1 || sr >= 1;
  if (rows == 1) return sk >= 1;
  if (sr < 1 || sk < 1) return false;
  int64_t span = 0;
  if (sr >= sk) return !__builtin_mul_overflow(k, sk, &span) && sr >= span;
  return !__builtin_mul_overflow(rows, sr, &span) && sk >= span;
}

bool extent_ok(int64_t n1, int64_t s1, int64_t n2, int64_t s2) {
  int64_t a = 0, b = 0, c = 0;
  return !__builtin_mul_overflow(n1 - 1, s1, &a) && !__builtin_mul_overflow(n2 - 1, s2, &b) &&
         !__builtin_add_overflow(a, b, &c);
}

// exp(x) must be a positive finite double: -745.13 underflows to 0 and
// 709.78 overflows.
constexpr double kLogAlphaMax = 709.782712893384;
constexpr double kLogAlphaMin = -745.1332191019411;

// Validates n_vec parameter vectors of length v (vector j, element i at
// params[j * sj + i * si]) and writes alpha into dst contiguously. `what`
// names the vector kind in messages ("vector" or "row").
dirmn_status convert_params(dirmn_context* ctx, const char* fn, const char* what,
                            const double* params, int64_t n_vec, int64_t v, int64_t sj,
                            int64_t si, dirmn_param param, double* dst) {
  for (int64_t j = 0; j < n_vec; ++j) {
    double a_sum = 0.0;
    for (int64_t i = 0; i < v; ++i) {
      const double p = params[j * sj + i * si];
      double a = p;
      if (param == DIRMN_PARAM_LOG_ALPHA) {
        if (!std::isfinite(p) || p > kLogAlphaMax || p < kLogAlphaMin)
          return fail(ctx, DIRMN_ERROR_INVALID_PARAMETER,
                      "%s: %s %" PRId64 ", index %" PRId64
                      " (0-based): log alpha %.17g is %s",
                      fn, what, j, i, p,
                      std::isnan(p)              ? "NaN"
                      : std::isinf(p)            ? "infinite"
                      : p > kLogAlphaMax         ? "too large (exp overflows)"
                                                 : "too small (exp underflows to 0)");
        a = std::exp(p);
      } else if (!(p > 0.0) || !std::isfinite(p)) {
        return fail(ctx, DIRMN_ERROR_INVALID_PARAMETER,
                    "%s: %s %" PRId64 ", index %" PRId64 " (0-based): alpha %.17g is %s", fn,
                    what, j, i, p,
                    std::isnan(p) ? "NaN" : std::isinf(p) ? "infinite" : "not positive");
      }
      a_sum += a;
      dst[j * v + i] = a;
    }
    if (!std::isfinite(a_sum))
      return fail(ctx, DIRMN_ERROR_INVALID_PARAMETER,
                  "%s: %s %" PRId64 " (0-based): the sum of alpha overflows", fn, what, j);
  }
  return DIRMN_SUCCESS;
}

dirmn_status check_counts_use(dirmn_context* ctx, const char* fn, const dirmn_counts* counts) {
  if (counts == nullptr) return fail(ctx, DIRMN_ERROR_NULL_POINTER, "%s: counts is NULL", fn);
  if (counts->context_id != ctx->id)
    return fail(ctx, DIRMN_ERROR_WRONG_CONTEXT,
                "%s: the counts object was created by another context", fn);
  return DIRMN_SUCCESS;
}

dirmn_status finish_counts(dirmn_context* ctx, const char* fn, HostTable&& table,
                           uint32_t flags, dirmn_counts** out) {
  auto c = std::unique_ptr<dirmn_counts>(new (std::nothrow) dirmn_counts);
  if (!c) return fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, "%s: out of host memory", fn);
  c->context_id = ctx->id;
  c->backend = ctx->backend;
  c->rows = table.rows;
  c->cols = table.cols;
  c->nnz = table.nnz;
  c->max_count = table.max_count;
  c->total = table.total;
  c->flags = flags;
  c->storage = table.sparse ? DIRMN_STORAGE_SPARSE : DIRMN_STORAGE_DENSE;
  c->value_bits = value_bits(table.vtype);
  if (ctx->host_backend) {
    try {
      HostTable copy(table);
      const BackendResult rh = ctx->host_backend->adopt(std::move(copy), &c->host_data);
      if (!rh.ok()) return fail_backend(ctx, fn, rh);
      c->host_backend = ctx->host_backend;
    } catch (const std::bad_alloc&) {
      return fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, "%s: out of host memory", fn);
    }
  }
  const BackendResult r = ctx->backend->adopt(std::move(table), &c->data);
  if (!r.ok()) return fail_backend(ctx, fn, r);
  *out = c.release();
  return DIRMN_SUCCESS;
}

dirmn_status check_options(dirmn_context* ctx, const char* fn, const dirmn_counts_options* o,
                           uint32_t* flags, dirmn_storage* storage) {
  *flags = 0;
  *storage = DIRMN_STORAGE_AUTO;
  if (o == nullptr) return DIRMN_SUCCESS;
  if (o->size < offsetof(dirmn_counts_options, flags) + sizeof(uint32_t))
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT,
                "%s: options->size (%zu) is too small; call dirmn_counts_options_init", fn,
                o->size);
  if (o->flags & ~DIRMN_COUNTS_REAL_VALUED)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, "%s: unknown options->flags bits 0x%x", fn,
                o->flags & ~DIRMN_COUNTS_REAL_VALUED);
  *flags = o->flags;
  if (o->size >= offsetof(dirmn_counts_options, storage) + sizeof(dirmn_storage)) {
    if (o->storage != DIRMN_STORAGE_AUTO && o->storage != DIRMN_STORAGE_DENSE &&
        o->storage != DIRMN_STORAGE_SPARSE)
      return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, "%s: unknown options->storage %d", fn,
                  static_cast<int>(o->storage));
    *storage = o->storage;
  }
  return DIRMN_SUCCESS;
}

// Shared body of the likelihood entry points.
dirmn_status run_loglik(dirmn_context* ctx, const char* fn, const dirmn_counts* counts,
                        bool rowwise, int64_t k, const double* params, int64_t sj, int64_t si,
                        dirmn_param param, uint32_t flags, double* out, int64_t out_sr,
                        int64_t out_sk) {
  if (dirmn_status s = check_counts_use(ctx, fn, counts)) return s;
  if (params == nullptr) return fail(ctx, DIRMN_ERROR_NULL_POINTER, "%s: params is NULL", fn);
  if (out == nullptr) return fail(ctx, DIRMN_ERROR_NULL_POINTER, "%s: out is NULL", fn);
  if (param != DIRMN_PARAM_ALPHA && param != DIRMN_PARAM_LOG_ALPHA)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, "%s: unknown param kind %d", fn,
                static_cast<int>(param));
  const uint32_t known = DIRMN_FULL | DIRMN_OUTPUT_DEVICE | DIRMN_ASYNC;
  if (flags & ~known)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, "%s: unknown flag bits 0x%x", fn,
                flags & ~known);
  const bool on_device = (flags & DIRMN_OUTPUT_DEVICE) != 0;
  if (on_device && ctx->backend->kind() != DIRMN_BACKEND_CUDA)
    return fail(ctx, DIRMN_ERROR_NOT_SUPPORTED,
                "%s: DIRMN_OUTPUT_DEVICE needs a CUDA context; this one is on the CPU", fn);
  if ((flags & DIRMN_ASYNC) && !on_device)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT,
                "%s: DIRMN_ASYNC requires DIRMN_OUTPUT_DEVICE (host results must be waited for)",
                fn);
  const int64_t rows = counts->rows, v = counts->cols;
  const int64_t n_vec = rowwise ? rows : k;
  if (!rowwise && k <= 0)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, "%s: k (%" PRId64 ") must be positive", fn, k);
  if ((n_vec > 1 && sj < 1) || (v > 1 && si < 1))
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT,
                "%s: parameter strides must be >= 1 (got %" PRId64 ", %" PRId64 ")", fn, sj, si);
  if (!extent_ok(n_vec, n_vec > 1 ? sj : 0, v, v > 1 ? si : 0))
    return fail(ctx, DIRMN_ERROR_OVERFLOW, "%s: the parameter array's strided extent overflows",
                fn);
  const int64_t kk = rowwise ? 1 : k;
  if (!output_layout_ok(rows, kk, out_sr, out_sk) ||
      !extent_ok(rows, rows > 1 ? out_sr : 0, kk, kk > 1 ? out_sk : 0))
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT,
                "%s: output strides (%" PRId64 ", %" PRId64 ") for %" PRId64 " x %" PRId64
                " results overlap or are not positive",
                fn, out_sr, out_sk, rows, kk);
  int64_t n_alpha = 0, n_out = 0;
  if (__builtin_mul_overflow(n_vec, v, &n_alpha) || __builtin_mul_overflow(rows, kk, &n_out))
    return fail(ctx, DIRMN_ERROR_OVERFLOW, "%s: parameter or result size overflows", fn);
  const int64_t psj = n_vec > 1 ? sj : 0, psi = v > 1 ? si : 0;
  // Row-wise parameters (a table's worth) are converted every call; shared
  // vectors are remembered (ParamMemo).
  ParamMemo& memo = ctx->shared_params;
  const bool reuse = !rowwise && memo.matches(params, n_vec, v, psj, psi, param);
  std::vector<double>& alpha = rowwise ? ctx->alpha_scratch : memo.alpha;
  if (!rowwise && !reuse) memo.valid = false;  // memo.alpha is about to change
  try {
    if (!reuse) alpha.resize(static_cast<size_t>(n_alpha));
    if (!on_device) ctx->out_scratch.resize(static_cast<size_t>(n_out));
  } catch (const std::bad_alloc&) {
    return fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, "%s: out of host memory for %" PRId64
                " parameters", fn, n_alpha);
  }
  if (!reuse) {
    if (dirmn_status s = convert_params(ctx, fn, rowwise ? "row" : "vector", params, n_vec, v, psj,
                                        psi, param, alpha.data()))
      return s;
    // Without room for the copy the next call converts again.
    if (!rowwise) (void)memo.remember(params, n_vec, v, psj, psi, param);
  }

  LoglikRequest req;
  req.alpha = alpha.data();
  req.k = kk;
  req.rowwise = rowwise;
  req.full = (flags & DIRMN_FULL) != 0;
  req.fast = ctx->precision == DIRMN_PRECISION_FAST;
  req.out_on_device = on_device;
  req.async = (flags & DIRMN_ASYNC) != 0;
  if (on_device) {
    req.out = out;
    req.out_stride_row = out_sr;
    req.out_stride_k = out_sk;
  } else {
    // Results land in scratch first so a cancelled or failed call leaves the
    // caller's array as it was.
    req.out = ctx->out_scratch.data();
    req.out_stride_row = kk;
    req.out_stride_k = 1;
  }
  const BackendResult r = ctx->backend->loglik(*counts->data, req, ctx->interrupt);
  if (!r.ok()) return fail_backend(ctx, fn, r);
  if (!on_device) {
    const double* src = ctx->out_scratch.data();
    for (int64_t b = 0; b < rows; ++b)
      for (int64_t j = 0; j < kk; ++j) out[b * out_sr + j * out_sk] = src[b * kk + j];
  }
  return DIRMN_SUCCESS;
}

// The counts object's histograms for these weights, built (one pass over the
// table) only when the cached ones were made with other weights.
dirmn_status histograms_for(dirmn_context* ctx, const char* fn, dirmn_counts* counts,
                            const double* weights, const Histograms** out) {
  const bool weighted = weights != nullptr;
  const bool same =
      counts->hist && counts->hist_weighted == weighted &&
      (!weighted || std::equal(counts->hist_weights.begin(), counts->hist_weights.end(), weights));
  if (!same) {
    try {
      auto h = std::make_unique<Histograms>();
      std::vector<double> w;
      if (weighted) w.assign(weights, weights + counts->rows);
      const BackendResult r = with_fallback(counts, [&](Backend& b, const BackendCounts& d) {
        return b.histograms(d, weights, h.get(), ctx->interrupt);
      });
      if (!r.ok()) return fail_backend(ctx, fn, r);
      counts->hist = std::move(h);
      counts->hist_weighted = weighted;
      counts->hist_weights.swap(w);
    } catch (const std::bad_alloc&) {
      return fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, "%s: out of host memory for count histograms", fn);
    }
  }
  *out = counts->hist.get();
  return DIRMN_SUCCESS;
}

#define DIRMN_REQUIRE_CONTEXT(ctx, fn)                                          \
  do {                                                                           \
    if ((ctx) == nullptr)                                                        \
      return ::dirmn::capi::fail(nullptr, DIRMN_ERROR_NULL_POINTER, "%s: context is NULL", fn); \
    ::dirmn::capi::clear_error(ctx);                                             \
  } while (0)

}  // namespace
}  // namespace capi
}  // namespace dirmn

using dirmn::BackendResult;
using dirmn::capi::fail;
using dirmn::capi::fail_backend;

extern "C" {

unsigned dirmn_version_number(void) { return DIRMN_VERSION_NUMBER; }

const char* dirmn_version_string(void) {
#define DIRMN_STR2(x) #x
#define DIRMN_STR(x) DIRMN_STR2(x)
  return DIRMN_STR(DIRMN_VERSION_MAJOR) "." DIRMN_STR(DIRMN_VERSION_MINOR) "." DIRMN_STR(
      DIRMN_VERSION_PATCH);
#undef DIRMN_STR
#undef DIRMN_STR2
}

const char* dirmn_status_string(dirmn_status status) {
  switch (status) {
    case DIRMN_SUCCESS: return "success";
    case DIRMN_ERROR_NULL_POINTER: return "null pointer";
    case DIRMN_ERROR_INVALID_ARGUMENT: return "invalid argument";
    case DIRMN_ERROR_INVALID_COUNTS: return "invalid counts";
    case DIRMN_ERROR_INVALID_PARAMETER: return "invalid parameter";
    case DIRMN_ERROR_DIMENSION_MISMATCH: return "dimension mismatch";
    case DIRMN_ERROR_WRONG_CONTEXT: return "wrong context";
    case DIRMN_ERROR_OUT_OF_MEMORY: return "out of memory";
    case DIRMN_ERROR_BACKEND_UNAVAILABLE: return "backend unavailable";
    case DIRMN_ERROR_DEVICE: return "device error";
    case DIRMN_ERROR_OVERFLOW: return "size overflow";
    case DIRMN_ERROR_CANCELLED: return "cancelled";
    case DIRMN_ERROR_NOT_SUPPORTED: return "not supported";
    case DIRMN_ERROR_INTERNAL: return "internal error";
  }
  return "unknown status";
}

int dirmn_backend_compiled(dirmn_backend backend) {
  switch (backend) {
    case DIRMN_BACKEND_AUTO:
    case DIRMN_BACKEND_CPU: return 1;
    case DIRMN_BACKEND_CUDA: return dirmn::cuda_compiled() ? 1 : 0;
  }
  return 0;
}

dirmn_status dirmn_cuda_device_count(int* count) {
  if (count == nullptr)
    return fail(nullptr, DIRMN_ERROR_NULL_POINTER, "dirmn_cuda_device_count: count is NULL");
  *count = 0;
  if (!dirmn::cuda_compiled())
    return fail(nullptr, DIRMN_ERROR_BACKEND_UNAVAILABLE,
                "dirmn_cuda_device_count: dirmn was built without CUDA");
  int n = 0;
  const BackendResult r = dirmn::cuda_device_count(&n);
  if (!r.ok()) return fail_backend(nullptr, "dirmn_cuda_device_count", r);
  *count = n;
  return DIRMN_SUCCESS;
}

const char* dirmn_last_error(const dirmn_context* ctx) {
  return ctx ? ctx->last_error.c_str() : dirmn::capi::t_error.c_str();
}

dirmn_status dirmn_context_create(dirmn_context** ctx, dirmn_backend backend, int device) {
  static const char* fn = "dirmn_context_create";
  dirmn::capi::t_error.clear();
  if (ctx == nullptr) return fail(nullptr, DIRMN_ERROR_NULL_POINTER, "%s: ctx is NULL", fn);
  if (backend != DIRMN_BACKEND_AUTO && backend != DIRMN_BACKEND_CPU &&
      backend != DIRMN_BACKEND_CUDA)
    return fail(nullptr, DIRMN_ERROR_INVALID_ARGUMENT, "%s: unknown backend %d", fn,
                static_cast<int>(backend));
  if (device < 0)
    return fail(nullptr, DIRMN_ERROR_INVALID_ARGUMENT, "%s: device index %d is negative", fn,
                device);
  auto c = std::unique_ptr<dirmn_context>(new (std::nothrow) dirmn_context);
  if (!c) return fail(nullptr, DIRMN_ERROR_OUT_OF_MEMORY, "%s: out of host memory", fn);
  c->id = dirmn::capi::next_context_id();

  bool want_cuda = backend == DIRMN_BACKEND_CUDA;
  if (backend == DIRMN_BACKEND_AUTO && dirmn::cuda_compiled()) {
    int n = 0;
    want_cuda = dirmn::cuda_device_count(&n).ok() && n > device;
  }
  BackendResult r;
  if (want_cuda) {
    if (!dirmn::cuda_compiled())
      return fail(nullptr, DIRMN_ERROR_BACKEND_UNAVAILABLE,
                  "%s: the CUDA backend was asked for, but dirmn was built without CUDA "
                  "(configure with -DDIRMN_CUDA=ON)",
                  fn);
    int n = 0;
    const BackendResult rc = dirmn::cuda_device_count(&n);
    if (!rc.ok() || device >= n)
      return fail(nullptr, DIRMN_ERROR_BACKEND_UNAVAILABLE,
                  "%s: CUDA device %d was asked for, but %d CUDA device(s) are usable%s%s", fn,
                  device, n, rc.ok() ? "" : ": ", rc.ok() ? "" : rc.what);
    std::unique_ptr<dirmn::Backend> b = dirmn::make_cuda_backend(device, &r);
    if (!b) return fail_backend(nullptr, fn, r);
    c->backend = std::move(b);
    std::unique_ptr<dirmn::Backend> h = dirmn::make_cpu_backend(0, &r);
    if (!h) return fail_backend(nullptr, fn, r);
    c->host_backend = std::move(h);
    c->backend->use_host_threads(c->host_backend);
  } else {
    std::unique_ptr<dirmn::Backend> b = dirmn::make_cpu_backend(0, &r);
    if (!b) return fail_backend(nullptr, fn, r);
    c->backend = std::move(b);
  }
  *ctx = c.release();
  return DIRMN_SUCCESS;
}

void dirmn_context_destroy(dirmn_context* ctx) { delete ctx; }

dirmn_status dirmn_context_backend(const dirmn_context* ctx, dirmn_backend* backend,
                                   int* device) {
  if (ctx == nullptr)
    return fail(nullptr, DIRMN_ERROR_NULL_POINTER, "dirmn_context_backend: context is NULL");
  if (backend) *backend = ctx->backend->kind();
  if (device) *device = ctx->backend->device();
  return DIRMN_SUCCESS;
}

dirmn_status dirmn_context_set_threads(dirmn_context* ctx, int threads) {
  static const char* fn = "dirmn_context_set_threads";
  DIRMN_REQUIRE_CONTEXT(ctx, fn);
  if (threads < 0)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, "%s: threads (%d) is negative", fn, threads);
  const BackendResult r = ctx->host_threads().set_threads(threads);
  return r.ok() ? DIRMN_SUCCESS : fail_backend(ctx, fn, r);
}

dirmn_status dirmn_context_get_threads(const dirmn_context* ctx, int* threads) {
  if (ctx == nullptr)
    return fail(nullptr, DIRMN_ERROR_NULL_POINTER, "dirmn_context_get_threads: context is NULL");
  if (threads == nullptr)
    return fail(const_cast<dirmn_context*>(ctx), DIRMN_ERROR_NULL_POINTER,
                "dirmn_context_get_threads: threads is NULL");
  *threads = ctx->host_threads().threads();
  return DIRMN_SUCCESS;
}

dirmn_status dirmn_context_set_precision(dirmn_context* ctx, dirmn_precision precision) {
  static const char* fn = "dirmn_context_set_precision";
  DIRMN_REQUIRE_CONTEXT(ctx, fn);
  if (precision != DIRMN_PRECISION_DOUBLE && precision != DIRMN_PRECISION_FAST)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, "%s: unknown precision %d", fn,
                static_cast<int>(precision));
  ctx->precision = precision;
  return DIRMN_SUCCESS;
}

dirmn_status dirmn_context_set_interrupt(dirmn_context* ctx, dirmn_interrupt_fn fn_ptr,
                                         void* user_data) {
  DIRMN_REQUIRE_CONTEXT(ctx, "dirmn_context_set_interrupt");
  ctx->interrupt.fn = fn_ptr;
  ctx->interrupt.user = user_data;
  return DIRMN_SUCCESS;
}

dirmn_status dirmn_context_set_stream(dirmn_context* ctx, void* stream) {
  static const char* fn = "dirmn_context_set_stream";
  DIRMN_REQUIRE_CONTEXT(ctx, fn);
  const BackendResult r = ctx->backend->set_stream(stream);
  if (r.status == DIRMN_ERROR_NOT_SUPPORTED)
    return fail(ctx, r.status, "%s: streams exist only on CUDA contexts; this one is on the CPU",
                fn);
  return r.ok() ? DIRMN_SUCCESS : fail_backend(ctx, fn, r);
}

dirmn_status dirmn_context_get_stream(const dirmn_context* ctx, void** stream) {
  static const char* fn = "dirmn_context_get_stream";
  if (ctx == nullptr) return fail(nullptr, DIRMN_ERROR_NULL_POINTER, "%s: context is NULL", fn);
  auto* mctx = const_cast<dirmn_context*>(ctx);  // only its error slot is written
  if (stream == nullptr) return fail(mctx, DIRMN_ERROR_NULL_POINTER, "%s: stream is NULL", fn);
  const BackendResult r = ctx->backend->get_stream(stream);
  if (r.status == DIRMN_ERROR_NOT_SUPPORTED)
    return fail(mctx, r.status, "%s: streams exist only on CUDA contexts; this one is on the CPU",
                fn);
  return r.ok() ? DIRMN_SUCCESS : fail_backend(mctx, fn, r);
}

dirmn_status dirmn_context_synchronize(dirmn_context* ctx) {
  static const char* fn = "dirmn_context_synchronize";
  DIRMN_REQUIRE_CONTEXT(ctx, fn);
  const BackendResult r = ctx->backend->synchronize();
  return r.ok() ? DIRMN_SUCCESS : fail_backend(ctx, fn, r);
}

void dirmn_counts_options_init(dirmn_counts_options* options) {
  if (options == nullptr) return;
  std::memset(options, 0, sizeof *options);
  options->size = sizeof *options;
  options->flags = 0;
  options->storage = DIRMN_STORAGE_AUTO;
}

dirmn_status dirmn_counts_create_dense(dirmn_context* ctx, dirmn_counts** counts, int64_t rows,
                                       int64_t cols, dirmn_dtype dtype, const void* data,
                                       int64_t row_stride, int64_t col_stride,
                                       const dirmn_counts_options* options) {
  static const char* fn = "dirmn_counts_create_dense";
  DIRMN_REQUIRE_CONTEXT(ctx, fn);
  if (counts == nullptr) return fail(ctx, DIRMN_ERROR_NULL_POINTER, "%s: counts is NULL", fn);
  if (data == nullptr) return fail(ctx, DIRMN_ERROR_NULL_POINTER, "%s: data is NULL", fn);
  uint32_t flags = 0;
  dirmn_storage storage = DIRMN_STORAGE_AUTO;
  if (dirmn_status s = dirmn::capi::check_options(ctx, fn, options, &flags, &storage)) return s;
  dirmn::HostTable table;
  if (dirmn_status s = dirmn::capi::build_dense(ctx, fn, rows, cols, dtype, data, row_stride,
                                                col_stride, flags, storage,
                                                ctx->backend->threads(), &table))
    return s;
  return dirmn::capi::finish_counts(ctx, fn, std::move(table), flags, counts);
}

dirmn_status dirmn_counts_create_sparse(dirmn_context* ctx, dirmn_counts** counts,
                                        dirmn_sparse_format format, int64_t rows, int64_t cols,
                                        int64_t nnz, dirmn_index_type index_type,
                                        const void* ptr, const void* indices,
                                        dirmn_dtype value_dtype, const void* values,
                                        const dirmn_counts_options* options) {
  static const char* fn = "dirmn_counts_create_sparse";
  DIRMN_REQUIRE_CONTEXT(ctx, fn);
  if (counts == nullptr) return fail(ctx, DIRMN_ERROR_NULL_POINTER, "%s: counts is NULL", fn);
  uint32_t flags = 0;
  dirmn_storage storage = DIRMN_STORAGE_AUTO;
  if (dirmn_status s = dirmn::capi::check_options(ctx, fn, options, &flags, &storage)) return s;
  dirmn::HostTable table;
  if (dirmn_status s =
          dirmn::capi::build_sparse(ctx, fn, format, rows, cols, nnz, index_type, ptr, indices,
                                    value_dtype, values, flags, storage, &table))
    return s;
  return dirmn::capi::finish_counts(ctx, fn, std::move(table), flags, counts);
}

dirmn_status dirmn_counts_wrap_device(dirmn_context* ctx, dirmn_counts** counts, int64_t rows,
                                      int64_t cols, dirmn_dtype dtype, const void* device_data,
                                      int64_t row_stride, int64_t col_stride,
                                      const dirmn_counts_options* options) {
  static const char* fn = "dirmn_counts_wrap_device";
  DIRMN_REQUIRE_CONTEXT(ctx, fn);
  if (counts == nullptr) return fail(ctx, DIRMN_ERROR_NULL_POINTER, "%s: counts is NULL", fn);
  if (device_data == nullptr)
    return fail(ctx, DIRMN_ERROR_NULL_POINTER, "%s: device_data is NULL", fn);
  if (ctx->backend->kind() != DIRMN_BACKEND_CUDA)
    return fail(ctx, DIRMN_ERROR_NOT_SUPPORTED,
                "%s: device arrays can only be wrapped by a CUDA context; this one is on the CPU",
                fn);
  uint32_t flags = 0;
  dirmn_storage storage = DIRMN_STORAGE_AUTO;
  if (dirmn_status s = dirmn::capi::check_options(ctx, fn, options, &flags, &storage)) return s;
  if (dirmn_status s =
          dirmn::capi::check_dense_shape(ctx, fn, rows, cols, dtype, row_stride, col_stride))
    return s;
  if (dtype == DIRMN_INT64)
    return fail(ctx, DIRMN_ERROR_NOT_SUPPORTED,
                "%s: int64 device arrays are not supported (use int32, float32 or float64)", fn);
  const int64_t rs = rows == 1 ? 0 : row_stride;
  const int64_t cs = cols == 1 ? 0 : col_stride;

  auto c = std::unique_ptr<dirmn_counts>(new (std::nothrow) dirmn_counts);
  if (!c) return fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, "%s: out of host memory", fn);
  dirmn::DeviceDenseInput in;
  in.rows = rows;
  in.cols = cols;
  in.dtype = dtype;
  in.data = device_data;
  in.row_stride = rs;
  in.col_stride = cs;
  in.real_valued = (flags & DIRMN_COUNTS_REAL_VALUED) != 0;
  in.storage = storage;
  dirmn::CountsSummary summary;
  dirmn::CountsProblem problem;
  const BackendResult r = ctx->backend->wrap_device_dense(in, &c->data, &summary, &problem);
  if (!r.ok()) {
    if (problem.kind == dirmn::CountsProblem::kBadCount)
      return fail(ctx, DIRMN_ERROR_INVALID_COUNTS,
                  "%s: row %" PRId64 ", column %" PRId64 " (0-based): count %.17g %s", fn,
                  problem.row, problem.col, problem.value, problem.why);
    return fail_backend(ctx, fn, r);
  }
  c->context_id = ctx->id;
  c->backend = ctx->backend;
  c->rows = rows;
  c->cols = cols;
  c->nnz = summary.nnz;
  c->max_count = summary.max_count;
  c->total = summary.total;
  c->flags = flags;
  c->storage = summary.sparse ? DIRMN_STORAGE_SPARSE : DIRMN_STORAGE_DENSE;
  c->value_bits = summary.value_bits;
  *counts = c.release();
  return DIRMN_SUCCESS;
}

dirmn_status dirmn_counts_wrap_device_sparse(dirmn_context* ctx, dirmn_counts** counts,
                                             int64_t rows, int64_t cols, int64_t nnz,
                                             dirmn_index_type index_type, const void* device_ptr,
                                             const void* device_indices, dirmn_dtype value_dtype,
                                             const void* device_values,
                                             const dirmn_counts_options* options) {
  static const char* fn = "dirmn_counts_wrap_device_sparse";
  DIRMN_REQUIRE_CONTEXT(ctx, fn);
  if (counts == nullptr) return fail(ctx, DIRMN_ERROR_NULL_POINTER, "%s: counts is NULL", fn);
  if (ctx->backend->kind() != DIRMN_BACKEND_CUDA)
    return fail(ctx, DIRMN_ERROR_NOT_SUPPORTED,
                "%s: device arrays can only be wrapped by a CUDA context; this one is on the CPU",
                fn);
  uint32_t flags = 0;
  dirmn_storage storage = DIRMN_STORAGE_AUTO;
  if (dirmn_status s = dirmn::capi::check_options(ctx, fn, options, &flags, &storage)) return s;
  if (dirmn_status s = dirmn::capi::check_sparse_shape(ctx, fn, rows, cols, nnz, index_type,
                                                       value_dtype))
    return s;
  if (value_dtype == DIRMN_INT64)
    return fail(ctx, DIRMN_ERROR_NOT_SUPPORTED,
                "%s: int64 device values are not supported (use int32, float32 or float64)", fn);
  if (device_ptr == nullptr) return fail(ctx, DIRMN_ERROR_NULL_POINTER, "%s: device_ptr is NULL", fn);
  if (nnz > 0 && (device_indices == nullptr || device_values == nullptr))
    return fail(ctx, DIRMN_ERROR_NULL_POINTER,
                "%s: device_indices or device_values is NULL with nnz = %" PRId64, fn, nnz);

  auto c = std::unique_ptr<dirmn_counts>(new (std::nothrow) dirmn_counts);
  if (!c) return fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, "%s: out of host memory", fn);
  dirmn::DeviceCsrInput in;
  in.rows = rows;
  in.cols = cols;
  in.nnz = nnz;
  in.index_type = index_type;
  in.ptr = device_ptr;
  in.indices = device_indices;
  in.value_dtype = value_dtype;
  in.values = device_values;
  in.real_valued = (flags & DIRMN_COUNTS_REAL_VALUED) != 0;
  in.storage = storage;
  dirmn::CountsSummary summary;
  dirmn::CountsProblem problem;
  const BackendResult r = ctx->backend->wrap_device_csr(in, &c->data, &summary, &problem);
  if (!r.ok()) {
    using P = dirmn::CountsProblem;
    const auto v = static_cast<int64_t>(problem.value);
    switch (problem.kind) {
      case P::kBadCount:
        return fail(ctx, DIRMN_ERROR_INVALID_COUNTS,
                    "%s: row %" PRId64 ", column %" PRId64 " (0-based): count %.17g %s", fn,
                    problem.row, problem.col, problem.value, problem.why);
      case P::kBadIndex:
        return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT,
                    "%s: entry %" PRId64 " (row %" PRId64 "): column index %" PRId64
                    " is outside [0, %" PRId64 ")",
                    fn, problem.entry, problem.row, v, cols);
      case P::kRepeatedIndex:
        return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT,
                    "%s: row %" PRId64 ", column %" PRId64 " (0-based) appears more than once",
                    fn, problem.row, problem.col);
      case P::kBadPointer:
        if (problem.entry == 0)
          return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, "%s: ptr[0] is %" PRId64 ", expected 0",
                      fn, v);
        if (std::strcmp(problem.why, "end") == 0)
          return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT,
                      "%s: ptr[%" PRId64 "] is %" PRId64 ", expected nnz = %" PRId64, fn,
                      problem.entry, v, nnz);
        return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT,
                    "%s: ptr[%" PRId64 "] = %" PRId64 " is below ptr[%" PRId64 "] = %" PRId64
                    " or above nnz = %" PRId64,
                    fn, problem.entry, v, problem.entry - 1, static_cast<int64_t>(problem.prev),
                    nnz);
      case P::kNone: break;
    }
    return fail_backend(ctx, fn, r);
  }
  c->context_id = ctx->id;
  c->backend = ctx->backend;
  c->rows = rows;
  c->cols = cols;
  c->nnz = summary.nnz;
  c->max_count = summary.max_count;
  c->total = summary.total;
  c->flags = flags;
  c->storage = summary.sparse ? DIRMN_STORAGE_SPARSE : DIRMN_STORAGE_DENSE;
  c->value_bits = summary.value_bits;
  *counts = c.release();
  return DIRMN_SUCCESS;
}

void dirmn_counts_destroy(dirmn_counts* counts) { delete counts; }

dirmn_status dirmn_counts_get_info(const dirmn_counts* counts, dirmn_counts_info* info) {
  static const char* fn = "dirmn_counts_get_info";
  if (counts == nullptr) return fail(nullptr, DIRMN_ERROR_NULL_POINTER, "%s: counts is NULL", fn);
  if (info == nullptr) return fail(nullptr, DIRMN_ERROR_NULL_POINTER, "%s: info is NULL", fn);
  if (info->size < offsetof(dirmn_counts_info, rows) + sizeof(int64_t))
    return fail(nullptr, DIRMN_ERROR_INVALID_ARGUMENT,
                "%s: info->size (%zu) is too small; set it to sizeof(dirmn_counts_info)", fn,
                info->size);
  dirmn_counts_info full;
  std::memset(&full, 0, sizeof full);
  full.size = info->size;
  full.rows = counts->rows;
  full.cols = counts->cols;
  full.nnz = counts->nnz;
  full.max_count = counts->max_count;
  full.total = counts->total;
  full.flags = counts->flags;
  full.storage = counts->storage;
  full.value_bits = counts->value_bits;
  full.backend = counts->backend->kind();
  full.device = counts->backend->device();
  std::memcpy(info, &full, info->size < sizeof full ? info->size : sizeof full);
  return DIRMN_SUCCESS;
}

dirmn_status dirmn_counts_row_totals(dirmn_context* ctx, const dirmn_counts* counts,
                                     double* totals) {
  static const char* fn = "dirmn_counts_row_totals";
  DIRMN_REQUIRE_CONTEXT(ctx, fn);
  if (dirmn_status s = dirmn::capi::check_counts_use(ctx, fn, counts)) return s;
  if (totals == nullptr) return fail(ctx, DIRMN_ERROR_NULL_POINTER, "%s: totals is NULL", fn);
  const BackendResult r = ctx->backend->row_totals(*counts->data, totals);
  return r.ok() ? DIRMN_SUCCESS : fail_backend(ctx, fn, r);
}

dirmn_status dirmn_loglik(dirmn_context* ctx, const dirmn_counts* counts, int64_t k,
                          const double* params, int64_t params_stride_k, int64_t params_stride_v,
                          dirmn_param param, uint32_t flags, double* out, int64_t out_stride_row,
                          int64_t out_stride_k) {
  static const char* fn = "dirmn_loglik";
  DIRMN_REQUIRE_CONTEXT(ctx, fn);
  return dirmn::capi::run_loglik(ctx, fn, counts, false, k, params, params_stride_k,
                                 params_stride_v, param, flags, out, out_stride_row,
                                 out_stride_k);
}

dirmn_status dirmn_loglik_rowwise(dirmn_context* ctx, const dirmn_counts* counts,
                                  const double* params, int64_t params_stride_row,
                                  int64_t params_stride_v, dirmn_param param, uint32_t flags,
                                  double* out, int64_t out_stride) {
  static const char* fn = "dirmn_loglik_rowwise";
  DIRMN_REQUIRE_CONTEXT(ctx, fn);
  return dirmn::capi::run_loglik(ctx, fn, counts, true, 1, params, params_stride_row,
                                 params_stride_v, param, flags, out, out_stride, 1);
}

dirmn_status dirmn_loglik_sum(dirmn_context* ctx, dirmn_counts* counts, const double* params,
                              int64_t params_stride, dirmn_param param, const double* weights,
                              uint32_t flags, double* value, double* gradient,
                              double* hessian_diag, double* hessian_scalar) {
  static const char* fn = "dirmn_loglik_sum";
  DIRMN_REQUIRE_CONTEXT(ctx, fn);
  if (dirmn_status s = dirmn::capi::check_counts_use(ctx, fn, counts)) return s;
  if (params == nullptr) return fail(ctx, DIRMN_ERROR_NULL_POINTER, "%s: params is NULL", fn);
  if (param != DIRMN_PARAM_ALPHA && param != DIRMN_PARAM_LOG_ALPHA)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, "%s: unknown param kind %d", fn,
                static_cast<int>(param));
  if (flags & ~DIRMN_FULL)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, "%s: unknown flag bits 0x%x (only DIRMN_FULL)",
                fn, flags & ~DIRMN_FULL);
  const int64_t V = counts->cols;
  if (V > 1 && params_stride < 1)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, "%s: params_stride (%" PRId64 ") must be >= 1",
                fn, params_stride);
  std::vector<double> alpha, g, d;
  try {
    alpha.resize(static_cast<size_t>(V));
    g.resize(static_cast<size_t>(V));
    d.resize(static_cast<size_t>(V));
  } catch (const std::bad_alloc&) {
    return fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, "%s: out of host memory", fn);
  }
  if (dirmn_status s = dirmn::capi::convert_params(ctx, fn, "vector", params, 1, V, 0,
                                                   V > 1 ? params_stride : 0, param, alpha.data()))
    return s;
  if (dirmn_status s = dirmn::capi::check_weights(ctx, fn, weights, counts->rows)) return s;
  const dirmn::Histograms* h = nullptr;
  if (dirmn_status s = dirmn::capi::histograms_for(ctx, fn, counts, weights, &h)) return s;
  double f = 0.0, c = 0.0;
  dirmn::histogram_sums(*h, alpha.data(), &f, g.data(), d.data(), &c,
                        &ctx->host_threads());
  if (param == DIRMN_PARAM_LOG_ALPHA)
    for (int64_t v = 0; v < V; ++v) {
      const double a = alpha[static_cast<size_t>(v)];
      d[static_cast<size_t>(v)] = a * a * d[static_cast<size_t>(v)] + a * g[static_cast<size_t>(v)];
      g[static_cast<size_t>(v)] *= a;
    }
  if (value) *value = f + ((flags & DIRMN_FULL) ? h->lcoef_sum : 0.0);
  if (gradient) std::copy(g.begin(), g.end(), gradient);
  if (hessian_diag) std::copy(d.begin(), d.end(), hessian_diag);
  if (hessian_scalar) *hessian_scalar = c;
  return DIRMN_SUCCESS;
}

dirmn_status dirmn_loglik_rowwise_derivatives(dirmn_context* ctx, const dirmn_counts* counts,
                                              const double* params, int64_t params_stride_row,
                                              int64_t params_stride_v, dirmn_param param,
                                              uint32_t flags, double* loglik, double* gradient,
                                              double* hessian_diag, double* hessian_scalar,
                                              int64_t out_stride_row, int64_t out_stride_v) {
  static const char* fn = "dirmn_loglik_rowwise_derivatives";
  DIRMN_REQUIRE_CONTEXT(ctx, fn);
  if (dirmn_status s = dirmn::capi::check_counts_use(ctx, fn, counts)) return s;
  if (params == nullptr) return fail(ctx, DIRMN_ERROR_NULL_POINTER, "%s: params is NULL", fn);
  if (param != DIRMN_PARAM_ALPHA && param != DIRMN_PARAM_LOG_ALPHA)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, "%s: unknown param kind %d", fn,
                static_cast<int>(param));
  if (flags & ~DIRMN_FULL)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, "%s: unknown flag bits 0x%x (only DIRMN_FULL)",
                fn, flags & ~DIRMN_FULL);
  const int64_t rows = counts->rows, V = counts->cols;
  if ((rows > 1 && params_stride_row < 1) || (V > 1 && params_stride_v < 1))
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT,
                "%s: parameter strides must be >= 1 (got %" PRId64 ", %" PRId64 ")", fn,
                params_stride_row, params_stride_v);
  if (!dirmn::capi::extent_ok(rows, rows > 1 ? params_stride_row : 0, V, V > 1 ? params_stride_v : 0))
    return fail(ctx, DIRMN_ERROR_OVERFLOW, "%s: the parameter array's strided extent overflows", fn);
  const bool matrices = gradient != nullptr || hessian_diag != nullptr;
  if (matrices && (!dirmn::capi::output_layout_ok(rows, V, out_stride_row, out_stride_v) ||
                   !dirmn::capi::extent_ok(rows, rows > 1 ? out_stride_row : 0, V,
                                           V > 1 ? out_stride_v : 0)))
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT,
                "%s: output strides (%" PRId64 ", %" PRId64 ") for %" PRId64 " x %" PRId64
                " results overlap or are not positive",
                fn, out_stride_row, out_stride_v, rows, V);
  int64_t cells = 0;
  if (__builtin_mul_overflow(rows, V, &cells))
    return fail(ctx, DIRMN_ERROR_OVERFLOW, "%s: rows x cols overflows", fn);
  std::vector<double> ll, g, d, c;
  try {
    ctx->alpha_scratch.resize(static_cast<size_t>(cells));
    ll.resize(static_cast<size_t>(rows));
    c.resize(static_cast<size_t>(rows));
    g.resize(static_cast<size_t>(cells));
    if (hessian_diag) d.resize(static_cast<size_t>(cells));
  } catch (const std::bad_alloc&) {
    return fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, "%s: out of host memory for %" PRId64 " x %" PRId64
                " derivatives", fn, rows, V);
  }
  if (dirmn_status s = dirmn::capi::convert_params(ctx, fn, "row", params, rows, V,
                                                   rows > 1 ? params_stride_row : 0,
                                                   V > 1 ? params_stride_v : 0, param,
                                                   ctx->alpha_scratch.data()))
    return s;
  dirmn::RowwiseDerivRequest req;
  req.alpha = ctx->alpha_scratch.data();
  req.full = (flags & DIRMN_FULL) != 0;
  req.log_param = param == DIRMN_PARAM_LOG_ALPHA;
  req.loglik = ll.data();
  req.gradient = g.data();
  req.hessian_diag = hessian_diag ? d.data() : nullptr;
  req.hessian_scalar = c.data();
  const BackendResult r = dirmn::capi::with_fallback(
      counts, [&](dirmn::Backend& be, const dirmn::BackendCounts& data) {
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
}

void dirmn_fit_options_init(dirmn_fit_options* options) {
  if (options == nullptr) return;
  std::memset(options, 0, sizeof *options);
  options->size = sizeof *options;
  options->tolerance = 1e-10;
  options->max_iterations = 1000;
}

dirmn_status dirmn_fit(dirmn_context* ctx, dirmn_counts* counts, const dirmn_fit_options* options,
                       dirmn_fit_result* result) {
  static const char* fn = "dirmn_fit";
  DIRMN_REQUIRE_CONTEXT(ctx, fn);
  if (dirmn_status s = dirmn::capi::check_counts_use(ctx, fn, counts)) return s;
  if (result == nullptr) return fail(ctx, DIRMN_ERROR_NULL_POINTER, "%s: result is NULL", fn);
  if (result->size < offsetof(dirmn_fit_result, zero_columns) + sizeof(int64_t))
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT,
                "%s: result->size (%zu) is too small; set it to sizeof(dirmn_fit_result)", fn,
                result->size);
  if (result->alpha == nullptr)
    return fail(ctx, DIRMN_ERROR_NULL_POINTER, "%s: result->alpha is NULL (it needs %" PRId64
                " entries)", fn, counts->cols);
  dirmn_fit_options o;
  dirmn_fit_options_init(&o);
  if (options) {
    if (options->size < sizeof(size_t))
      return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT,
                  "%s: options->size (%zu) is invalid; call dirmn_fit_options_init", fn,
                  options->size);
    std::memcpy(&o, options, std::min(options->size, sizeof o));
    o.size = sizeof o;
  }
  if (!(o.tolerance > 0.0) || !std::isfinite(o.tolerance))
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, "%s: tolerance %.17g must be positive and finite",
                fn, o.tolerance);
  if (o.max_iterations < 0)
    return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, "%s: max_iterations (%d) is negative", fn,
                o.max_iterations);
  const int64_t V = counts->cols;
  if (o.start)
    for (int64_t v = 0; v < V; ++v)
      if (!(o.start[v] > 0.0) || !std::isfinite(o.start[v]))
        return fail(ctx, DIRMN_ERROR_INVALID_PARAMETER,
                    "%s: start index %" PRId64 " (0-based): alpha %.17g is not positive and finite",
                    fn, v, o.start[v]);
  if (dirmn_status s = dirmn::capi::check_weights(ctx, fn, o.weights, counts->rows)) return s;
  const dirmn::Histograms* h = nullptr;
  if (dirmn_status s = dirmn::capi::histograms_for(ctx, fn, counts, o.weights, &h)) return s;
  dirmn::FitSettings settings;
  settings.tolerance = o.tolerance;
  settings.max_iterations = o.max_iterations;
  settings.start = o.start;
  settings.progress = o.progress;
  settings.progress_data = o.progress_data;
  settings.interrupt = ctx->interrupt;
  settings.threads = &ctx->host_threads();
  dirmn::FitOutcome fit;
  const char* why = "";
  try {
    if (!dirmn::fit_from_histograms(*h, settings, &fit, &why))
      return fail(ctx, DIRMN_ERROR_INVALID_ARGUMENT, "%s: %s", fn, why);
  } catch (const std::bad_alloc&) {
    return fail(ctx, DIRMN_ERROR_OUT_OF_MEMORY, "%s: out of host memory", fn);
  }
  if (fit.cancelled)
    return fail(ctx, DIRMN_ERROR_CANCELLED, "%s: cancelled after %d iterations", fn, fit.iterations);
  std::copy(fit.alpha.begin(), fit.alpha.end(), result->alpha);
  if (result->std_error_alpha) std::copy(fit.se_alpha.begin(), fit.se_alpha.end(), result->std_error_alpha);
  if (result->std_error_log_alpha)
    std::copy(fit.se_log_alpha.begin(), fit.se_log_alpha.end(), result->std_error_log_alpha);
  result->loglik = fit.loglik;
  result->loglik_full = fit.loglik_full;
  result->gradient_norm = fit.gradient_norm;
  result->precision = fit.precision;
  result->iterations = fit.iterations;
  result->converged = fit.converged ? 1 : 0;
  result->multinomial_limit = fit.multinomial_limit ? 1 : 0;
  result->zero_columns = fit.zero_columns;
  return DIRMN_SUCCESS;
}

}  // extern "C"
