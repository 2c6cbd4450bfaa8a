// context.cpp: the library's version and backends, contexts, interrupts and
// the busy-context guard.
#include "common.h"

#include <chrono>

using namespace dirmn_r;

namespace dirmn_r {

const dirmn_context* g_busy_context = nullptr;
const dirmn_counts* g_busy_counts = nullptr;
const char* const kBusyMessage =
    "dirmn functions on this backend cannot be called from a handler of a fit's progress "
    "messages while the fit runs";
int g_force_cancel_mode = 0;
std::string g_cancel_cause;

SEXP sym_context() {
  static SEXP s = Rf_install("dirmn_context");
  return s;
}

bool is_xptr(SEXP x, SEXP tag) {
  return TYPEOF(x) == EXTPTRSXP && (R_ExternalPtrTag(x) == tag || tag == R_NilValue);
}

dirmn_context* context_of(SEXP ctx_xp) {
  if (!is_xptr(ctx_xp, sym_context())) return nullptr;
  return static_cast<dirmn_context*>(R_ExternalPtrAddr(ctx_xp));
}

SEXP unusable_context(dirmn_context* ctx) {
  if (ctx == nullptr)
    return failure(DIRMN_ERROR_NULL_POINTER, "the dirmn context is no longer available");
  if (ctx == g_busy_context) return failure(DIRMN_ERROR_INVALID_ARGUMENT, kBusyMessage);
  if (g_comm_callback_depth > 0) return failure(DIRMN_ERROR_INVALID_ARGUMENT, kCommCallbackMessage);
  return R_NilValue;
}

namespace {

// The interrupt check: R_CheckUserInterrupt signals an interrupt condition
// on a pending Ctrl-C, and an error where a setTimeLimit() limit has passed
// (R_ProcessEvents). R_tryCatch catches both with an exiting handler
// innermost, so neither reaches a handler of the user's (which would jump
// across the library) nor R's default error handler (which prints "Error in
// .Call(...)" even when the user's code catches the cancellation that
// follows). The condition's message is kept as the cause of the
// cancellation. R_ToplevelExec stops any other jump (an event handler's).
struct InterruptCheck {
  bool stop = false;
};

SEXP check_interrupt(void*) {
  if (g_force_cancel_mode == 2) Rf_error("a test error raised by the interrupt check");
  R_CheckUserInterrupt();
  return R_NilValue;
}

SEXP on_interrupt_condition(SEXP condition, void* data) {
  static_cast<InterruptCheck*>(data)->stop = true;
  g_cancel_cause = Rf_inherits(condition, "interrupt") ? "interrupted" : "";
  // An error condition is list(message, call): keep its message.
  if (g_cancel_cause.empty() && TYPEOF(condition) == VECSXP && XLENGTH(condition) >= 1) {
    SEXP message = VECTOR_ELT(condition, 0);
    if (TYPEOF(message) == STRSXP && XLENGTH(message) >= 1 &&
        STRING_ELT(message, 0) != NA_STRING)
      g_cancel_cause = Rf_translateCharUTF8(STRING_ELT(message, 0));
  }
  return R_NilValue;
}

void check_interrupt_body(void* data) { try_catch_errors(check_interrupt, nullptr, on_interrupt_condition, data); }

// A context is never finalized during a call on it: every call reaches its
// context through a pointer R holds for the call -- the context's own, or
// the protected field of a table's or a mixture's pointer -- so the context
// is reachable until the call returns. (Destroyed from a callback of a call
// on it, the library would keep the context for good.) Inside a callback of
// a call on another context it is destroyed at once.
void context_finalizer(SEXP xp) {
  auto* ctx = static_cast<dirmn_context*>(R_ExternalPtrAddr(xp));
  if (ctx != nullptr) {
    R_ClearExternalPtr(xp);
    dirmn_context_destroy(ctx);
  }
}

}  // namespace

// Polled by the library from this (R's main) thread during long calls; see
// check_interrupt_body. The library then returns DIRMN_ERROR_CANCELLED and
// R raises dirmn_error_cancelled, whose message names the cause.
int interrupt_callback(void*) {
  if (g_force_cancel_mode == 1) return 1;
  // A check costs microseconds; the library may poll far more often than a
  // user can press Ctrl-C, so look at most every 20 ms (except under the
  // test hook).
  using clock = std::chrono::steady_clock;
  static clock::time_point last_check;
  const clock::time_point now = clock::now();
  if (g_force_cancel_mode == 0 && now - last_check < std::chrono::milliseconds(20)) return 0;
  last_check = now;
  InterruptCheck check;
  g_cancel_cause.clear();
  const bool clean = R_ToplevelExec(check_interrupt_body, &check) != FALSE;
  return clean && !check.stop ? 0 : 1;
}

}  // namespace dirmn_r

// ---------------------------------------------------------------------------
// Entry points (wrapped by RcppExports; all internal to the package)

// [[Rcpp::export(rng = false)]]
SEXP cpp_version() {
  return Rcpp::List::create(Rcpp::Named("runtime") = static_cast<double>(dirmn_version_number()),
                            Rcpp::Named("runtime_string") = std::string(dirmn_version_string()),
                            Rcpp::Named("header") = static_cast<double>(DIRMN_VERSION_NUMBER));
}

// [[Rcpp::export(rng = false)]]
SEXP cpp_backends() {
  int devices = 0;
  const bool cuda = dirmn_backend_compiled(DIRMN_BACKEND_CUDA) != 0;
  std::string note;
  if (cuda) {
    // A CUDA build on a machine without a usable driver reports an error
    // here; that simply means no devices.
    if (dirmn_cuda_device_count(&devices) != DIRMN_SUCCESS) {
      devices = 0;
      note = dirmn_last_error(nullptr);
    }
  }
  return Rcpp::List::create(Rcpp::Named("cuda_compiled") = cuda,
                            Rcpp::Named("cuda_devices") = devices,
                            Rcpp::Named("cuda_note") = note);
}

// [[Rcpp::export(rng = false)]]
SEXP cpp_context_create(int backend, int device) {
  SEXP xp = PROTECT(R_MakeExternalPtr(nullptr, sym_context(), R_NilValue));
  R_RegisterCFinalizerEx(xp, context_finalizer, TRUE);
  dirmn_context* ctx = nullptr;
  const dirmn_status status =
      dirmn_context_create(&ctx, static_cast<dirmn_backend>(backend), device);
  if (status != DIRMN_SUCCESS) {
    SEXP res = library_failure(nullptr, status);
    UNPROTECT(1);
    return res;
  }
  R_SetExternalPtrAddr(xp, ctx);
  dirmn_context_set_interrupt(ctx, interrupt_callback, nullptr);
  UNPROTECT(1);
  return xp;
}

// [[Rcpp::export(rng = false)]]
SEXP cpp_context_backend(SEXP ctx_xp) {
  dirmn_context* ctx = context_of(ctx_xp);
  dirmn_backend backend = DIRMN_BACKEND_CPU;
  int device = 0;
  const dirmn_status status = dirmn_context_backend(ctx, &backend, &device);
  if (status != DIRMN_SUCCESS) return failure(status, "the dirmn context is no longer available");
  return Rcpp::List::create(Rcpp::Named("backend") = backend == DIRMN_BACKEND_CUDA ? "cuda" : "cpu",
                            Rcpp::Named("device") = device);
}

// Test hook: 0 off; 1 the interrupt callback asks the library to stop; 2
// the interrupt check raises an R error (as an elapsed setTimeLimit() does).
// [[Rcpp::export(rng = false)]]
SEXP cpp_set_force_cancel(int mode) {
  g_force_cancel_mode = mode;
  return R_NilValue;
}
