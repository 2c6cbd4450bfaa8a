// R bindings over the libdirmn C ABI (dirmn.h).
//
// No entry point here raises an R error. Each returns its value, or, when
// the library (or an argument check) fails, a list of class "dirmn_failure"
// holding the status number and message; R code turns that into a classed
// condition (R/errors.R). This keeps R's longjmp out of frames that own C++
// objects or library handles, and lets the condition carry the user's call.
//
// Library handles are owned by external pointers whose finalizers free them.
// Each external pointer is made before the handle it will own, so there is
// no moment at which an R allocation failure could leak a handle.

#include <Rcpp.h>
#include <Rinternals.h>

#include <dirmn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csetjmp>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace {

// Number of counts handles owned by live external pointers; tests read it to
// see that finalizers and close() really free handles.
long g_live_counts = 0;

// Test hook: makes the interrupt callback ask the library to stop, so the
// cancellation path can be tested without delivering a real SIGINT.
bool g_force_cancel = false;

// The context running a fit whose progress callback is in R right now. The
// library forbids calls on that context from inside the callback, so entry
// points refuse them (a progress message handler that calls dirmn).
const dirmn_context* g_busy_context = nullptr;

const char* kBusyMessage =
    "dirmn functions on this backend cannot be called from a handler of a fit's progress "
    "messages while the fit runs";

enum TableKind { TABLE_DENSE = 0, TABLE_CSC = 1, TABLE_CSR = 2 };

SEXP failure(int status, const std::string& message) {
  Rcpp::List res = Rcpp::List::create(Rcpp::Named("status") = status,
                                      Rcpp::Named("message") = message);
  res.attr("class") = "dirmn_failure";
  return res;
}

// ---------------------------------------------------------------------------
// Interrupts

void check_interrupt_body(void*) { R_CheckUserInterrupt(); }

// Polled by the library from this (R's main) thread during long calls.
// R_ToplevelExec catches the longjmp that R_CheckUserInterrupt makes on a
// pending interrupt, so no jump crosses the library's frames; the library
// then returns DIRMN_ERROR_CANCELLED and R raises dirmn_error_cancelled.
int interrupt_callback(void*) {
  if (g_force_cancel) return 1;
  // A top-level context costs microseconds; the library may poll far more
  // often than a user can press Ctrl-C, so look at most every 20 ms.
  using clock = std::chrono::steady_clock;
  static clock::time_point last_check;
  const clock::time_point now = clock::now();
  if (now - last_check < std::chrono::milliseconds(20)) return 0;
  last_check = now;
  return R_ToplevelExec(check_interrupt_body, nullptr) ? 0 : 1;
}

// ---------------------------------------------------------------------------
// External pointers

SEXP sym_context() {
  static SEXP s = Rf_install("dirmn_context");
  return s;
}
SEXP sym_counts() {
  static SEXP s = Rf_install("dirmn_counts");
  return s;
}
// Tag of a counts pointer after close(): tells "closed" apart from "restored
// from disk", since both leave a NULL address.
SEXP sym_closed() {
  static SEXP s = Rf_install("dirmn_counts_closed");
  return s;
}

void context_finalizer(SEXP xp) {
  auto* ctx = static_cast<dirmn_context*>(R_ExternalPtrAddr(xp));
  if (ctx != nullptr) {
    R_ClearExternalPtr(xp);
    dirmn_context_destroy(ctx);
  }
}

void counts_finalizer(SEXP xp) {
  auto* counts = static_cast<dirmn_counts*>(R_ExternalPtrAddr(xp));
  if (counts != nullptr) {
    R_ClearExternalPtr(xp);
    // The library allows this after the context is gone, so the order in
    // which R runs finalizers does not matter.
    dirmn_counts_destroy(counts);
    --g_live_counts;
  }
}

bool is_xptr(SEXP x, SEXP tag) {
  return TYPEOF(x) == EXTPTRSXP && (R_ExternalPtrTag(x) == tag || tag == R_NilValue);
}

std::string unusable_counts_message(SEXP xp) {
  if (R_ExternalPtrTag(xp) == sym_closed())
    return "this dirmn_counts object has been closed; make a new one with dirmn_counts()";
  return "this dirmn_counts object no longer holds a table: prepared tables do not survive "
         "saveRDS()/readRDS(), save()/load() or a new R session; make it again with "
         "dirmn_counts()";
}

// The context and counts handles behind a counts external pointer, or a
// failure explaining why there are none.
struct PreparedCounts {
  dirmn_context* ctx = nullptr;
  dirmn_counts* counts = nullptr;
  int status = DIRMN_SUCCESS;
  std::string message;
};

PreparedCounts prepared_counts(SEXP xp) {
  PreparedCounts p;
  if (TYPEOF(xp) != EXTPTRSXP ||
      (R_ExternalPtrTag(xp) != sym_counts() && R_ExternalPtrTag(xp) != sym_closed())) {
    p.status = DIRMN_ERROR_INVALID_ARGUMENT;
    p.message = "not a dirmn_counts object";
    return p;
  }
  p.counts = static_cast<dirmn_counts*>(R_ExternalPtrAddr(xp));
  SEXP ctx_xp = R_ExternalPtrProtected(xp);
  if (is_xptr(ctx_xp, sym_context())) p.ctx = static_cast<dirmn_context*>(R_ExternalPtrAddr(ctx_xp));
  if (p.counts == nullptr || p.ctx == nullptr) {
    p.status = DIRMN_ERROR_NULL_POINTER;
    p.message = unusable_counts_message(xp);
  } else if (p.ctx == g_busy_context) {
    p.status = DIRMN_ERROR_INVALID_ARGUMENT;
    p.message = kBusyMessage;
  }
  return p;
}

dirmn_context* context_of(SEXP ctx_xp) {
  if (!is_xptr(ctx_xp, sym_context())) return nullptr;
  return static_cast<dirmn_context*>(R_ExternalPtrAddr(ctx_xp));
}

// Owns a counts handle made for a single call.
struct CountsGuard {
  dirmn_counts* counts = nullptr;
  CountsGuard() = default;
  CountsGuard(const CountsGuard&) = delete;
  CountsGuard& operator=(const CountsGuard&) = delete;
  ~CountsGuard() { dirmn_counts_destroy(counts); }
};

// ---------------------------------------------------------------------------
// Tables

std::string cell_is_na(int64_t row0, int64_t col0) {
  return "row " + std::to_string(row0 + 1) + ", column " + std::to_string(col0 + 1) +
         ": count is NA";
}

struct Table {
  TableKind kind = TABLE_DENSE;
  int64_t rows = 0, cols = 0;
  SEXP data = R_NilValue;  // dense: the matrix or vector; sparse: the x slot
  SEXP ptr = R_NilValue;   // sparse: the p slot
  SEXP index = R_NilValue; // sparse: the i (CSC) or j (CSR) slot
  int64_t nnz = 0;
};

// Reads the shape and arrays of `x` without copying. R code has already
// normalised x to an integer/double vector or matrix, a dgCMatrix or a
// dgRMatrix; the checks here only keep a direct call from crashing.
bool describe_table(SEXP x, int kind, Table* t, std::string* message) {
  t->kind = static_cast<TableKind>(kind);
  if (kind == TABLE_DENSE) {
    if (TYPEOF(x) != INTSXP && TYPEOF(x) != REALSXP) {
      *message = "x must be an integer or double matrix or vector";
      return false;
    }
    SEXP dim = Rf_getAttrib(x, R_DimSymbol);
    if (TYPEOF(dim) == INTSXP && XLENGTH(dim) == 2) {
      t->rows = INTEGER(dim)[0];
      t->cols = INTEGER(dim)[1];
    } else {
      t->rows = 1;
      t->cols = XLENGTH(x);
    }
    t->data = x;
    return true;
  }
  if (kind != TABLE_CSC && kind != TABLE_CSR) {
    *message = "unknown table kind";
    return false;
  }
  if (!Rf_isS4(x)) {
    *message = "x must be a dgCMatrix or dgRMatrix";
    return false;
  }
  SEXP dim = R_do_slot(x, Rf_install("Dim"));
  SEXP ptr = R_do_slot(x, Rf_install("p"));
  SEXP index = R_do_slot(x, Rf_install(kind == TABLE_CSC ? "i" : "j"));
  SEXP values = R_do_slot(x, Rf_install("x"));
  if (TYPEOF(dim) != INTSXP || XLENGTH(dim) != 2 || TYPEOF(ptr) != INTSXP ||
      TYPEOF(index) != INTSXP || TYPEOF(values) != REALSXP) {
    *message = "x is not a valid dgCMatrix or dgRMatrix";
    return false;
  }
  t->rows = INTEGER(dim)[0];
  t->cols = INTEGER(dim)[1];
  const int64_t outer = kind == TABLE_CSC ? t->cols : t->rows;
  if (XLENGTH(ptr) != outer + 1) {
    *message = "x is not a valid sparse matrix: its p slot has the wrong length";
    return false;
  }
  t->nnz = INTEGER(ptr)[outer];
  // The library reads nnz entries of both arrays; never let it read past them.
  if (t->nnz < 0 || t->nnz > XLENGTH(index) || t->nnz > XLENGTH(values)) {
    *message = "x is not a valid sparse matrix: its p slot does not match its i/j and x slots";
    return false;
  }
  t->data = values;
  t->ptr = ptr;
  t->index = index;
  return true;
}

dirmn_status create_counts(dirmn_context* ctx, const Table& t, dirmn_counts** out) {
  if (t.kind == TABLE_DENSE) {
    const bool is_int = TYPEOF(t.data) == INTSXP;
    // R stores matrices column-major: element (i, j) sits at i + j * rows.
    return dirmn_counts_create_dense(
        ctx, out, t.rows, t.cols, is_int ? DIRMN_INT32 : DIRMN_FLOAT64,
        is_int ? static_cast<const void*>(INTEGER(t.data)) : static_cast<const void*>(REAL(t.data)),
        1, t.rows, nullptr);
  }
  return dirmn_counts_create_sparse(ctx, out, t.kind == TABLE_CSC ? DIRMN_CSC : DIRMN_CSR, t.rows,
                                    t.cols, t.nnz, DIRMN_INDEX_INT32, INTEGER(t.ptr),
                                    t.nnz > 0 ? INTEGER(t.index) : nullptr, DIRMN_FLOAT64,
                                    t.nnz > 0 ? REAL(t.data) : nullptr, nullptr);
}

// After the library rejected a table: R's NA is stored as INT_MIN (a
// "negative count") or as a NaN payload (a "non-finite count"), neither of
// which tells an R user what happened. Looking only on the failure path
// keeps valid tables free of an extra pass.
std::string find_na_in_table(const Table& t) {
  if (t.kind == TABLE_DENSE) {
    const R_xlen_t n = XLENGTH(t.data);
    if (TYPEOF(t.data) == INTSXP) {
      const int* v = INTEGER(t.data);
      for (R_xlen_t k = 0; k < n; ++k)
        if (v[k] == NA_INTEGER) return cell_is_na(k % t.rows, k / t.rows);
    } else {
      const double* v = REAL(t.data);
      for (R_xlen_t k = 0; k < n; ++k)
        if (ISNA(v[k])) return cell_is_na(k % t.rows, k / t.rows);
    }
    return "";
  }
  const int* ptr = INTEGER(t.ptr);
  const int* index = INTEGER(t.index);
  const double* v = REAL(t.data);
  const int64_t outer = t.kind == TABLE_CSC ? t.cols : t.rows;
  for (int64_t a = 0; a < outer; ++a)
    for (int64_t k = ptr[a]; k < ptr[a + 1] && k < t.nnz; ++k)
      if (ISNA(v[k]))
        return t.kind == TABLE_CSC ? cell_is_na(index[k], a) : cell_is_na(a, index[k]);
  return "";
}

// ---------------------------------------------------------------------------
// Parameters

struct AlphaShape {
  bool per_row = false;
};

// Checks alpha's shape against a rows x cols table. Values are the
// library's to check.
bool check_alpha(SEXP alpha, int64_t rows, int64_t cols, AlphaShape* shape, int* status,
                 std::string* message) {
  if (TYPEOF(alpha) != REALSXP) {
    *status = DIRMN_ERROR_INVALID_PARAMETER;
    *message = "alpha must be a double vector or matrix";
    return false;
  }
  SEXP dim = Rf_getAttrib(alpha, R_DimSymbol);
  if (TYPEOF(dim) == INTSXP && XLENGTH(dim) == 2) {
    const int64_t ar = INTEGER(dim)[0], ac = INTEGER(dim)[1];
    if (ar != rows || ac != cols) {
      *status = DIRMN_ERROR_DIMENSION_MISMATCH;
      *message = "alpha is a " + std::to_string(ar) + " x " + std::to_string(ac) +
                 " matrix but the counts are " + std::to_string(rows) + " x " +
                 std::to_string(cols) +
                 " (a matrix alpha needs one row per row of counts and one column per column)";
      return false;
    }
    shape->per_row = true;
    return true;
  }
  if (XLENGTH(alpha) != cols) {
    *status = DIRMN_ERROR_DIMENSION_MISMATCH;
    *message = "alpha has length " + std::to_string(XLENGTH(alpha)) + " but the counts have " +
               std::to_string(cols) + " columns";
    return false;
  }
  shape->per_row = false;
  return true;
}

std::string find_na_in_alpha(SEXP alpha, int64_t rows, const AlphaShape& shape) {
  const double* a = REAL(alpha);
  const R_xlen_t n = XLENGTH(alpha);
  for (R_xlen_t k = 0; k < n; ++k) {
    if (!ISNA(a[k])) continue;
    if (shape.per_row)
      return "row " + std::to_string(k % rows + 1) + ", column " + std::to_string(k / rows + 1) +
             ": alpha is NA";
    return "column " + std::to_string(k + 1) + ": alpha is NA";
  }
  return "";
}

dirmn_status run_loglik(dirmn_context* ctx, const dirmn_counts* counts, int64_t rows,
                        int64_t cols, SEXP alpha, const AlphaShape& shape, uint32_t flags,
                        double* out) {
  if (shape.per_row)
    return dirmn_loglik_rowwise(ctx, counts, REAL(alpha), 1, rows, DIRMN_PARAM_ALPHA, flags, out,
                                1);
  return dirmn_loglik(ctx, counts, 1, REAL(alpha), cols, 1, DIRMN_PARAM_ALPHA, flags, out, 1, 1);
}

void exponentiate(double* out, R_xlen_t n) {
  for (R_xlen_t i = 0; i < n; ++i) out[i] = std::exp(out[i]);
}

uint32_t loglik_flags(bool full) { return full ? DIRMN_FULL : 0u; }

// ---------------------------------------------------------------------------
// Progress callbacks into R

// The library calls a progress function once per iteration of a fit or EM
// run, on this (R's main) thread. It calls back into R to report progress,
// and R code may jump: an error raised by a condition handler, an exiting
// handler (tryCatch(message = )), a restart, an interrupt. No jump may cross
// the library's frames, so the R call runs under R_UnwindProtect. A jump is
// stopped at the callback (the clean-up function longjmps back to it, over
// R's own C frame only, as Rcpp::unwindProtect does), the callback asks the
// library to stop, and once the library has returned and the entry point's
// C++ objects are gone the jump is resumed: the entry point throws
// Rcpp::LongjumpException, which END_RCPP continues with R_ContinueUnwind.
struct ProgressBridge {
  SEXP fn = R_NilValue;     // R function(iteration, value, change); TRUE stops
  SEXP token = R_NilValue;  // the continuation of an intercepted jump
  bool jumped = false;
  std::jmp_buf jump_buffer;
};

struct ProgressCall {
  ProgressBridge* bridge;
  int iteration;
  double value, change;
  bool stop;
};

SEXP progress_eval(void* data) {
  auto* c = static_cast<ProgressCall*>(data);
  SEXP it = PROTECT(Rf_ScalarInteger(c->iteration));
  SEXP value = PROTECT(Rf_ScalarReal(c->value));
  SEXP change = PROTECT(Rf_ScalarReal(c->change));
  SEXP call = PROTECT(Rf_lang4(c->bridge->fn, it, value, change));
  SEXP res = Rf_eval(call, R_GlobalEnv);
  c->stop = TYPEOF(res) == LGLSXP && XLENGTH(res) == 1 && LOGICAL(res)[0] == TRUE;
  UNPROTECT(4);
  return R_NilValue;
}

void progress_unwound(void* data, Rboolean jump) {
  if (jump) std::longjmp(static_cast<ProgressBridge*>(data)->jump_buffer, 1);
}

int progress_callback(int iteration, double value, double change, void* user) {
  auto* bridge = static_cast<ProgressBridge*>(user);
  if (bridge->jumped) return 1;
  ProgressCall call{bridge, iteration, value, change, false};
  if (setjmp(bridge->jump_buffer)) {
    bridge->jumped = true;
    return 1;
  }
  R_UnwindProtect(progress_eval, &call, progress_unwound, bridge, bridge->token);
  return call.stop ? 1 : 0;
}

struct BusyScope {
  const dirmn_context* saved;
  explicit BusyScope(const dirmn_context* ctx) : saved(g_busy_context) { g_busy_context = ctx; }
  ~BusyScope() { g_busy_context = saved; }
  BusyScope(const BusyScope&) = delete;
  BusyScope& operator=(const BusyScope&) = delete;
};

// Resumes a jump intercepted by progress_callback; never returns.
[[noreturn]] void resume_jump(SEXP token) {
  // Kept alive while C++ frames unwind; Rcpp releases it when it resumes.
  R_PreserveObject(token);
  throw Rcpp::LongjumpException(token);
}

// Weights: NULL, or a double vector with one value per row (values are the
// library's to check; R code has reported NA already).
bool check_weights(SEXP weights, int64_t rows, int* status, std::string* message) {
  if (weights == R_NilValue) return true;
  if (TYPEOF(weights) != REALSXP) {
    *status = DIRMN_ERROR_INVALID_PARAMETER;
    *message = "weights must be a double vector";
    return false;
  }
  if (XLENGTH(weights) != rows) {
    *status = DIRMN_ERROR_DIMENSION_MISMATCH;
    *message = "weights has length " + std::to_string(XLENGTH(weights)) + " but the counts have " +
               std::to_string(rows) + " rows";
    return false;
  }
  return true;
}

const double* weights_ptr(SEXP weights) { return weights == R_NilValue ? nullptr : REAL(weights); }

SEXP sym_mixture() {
  static SEXP s = Rf_install("dirmn_mixture");
  return s;
}

void mixture_finalizer(SEXP xp) {
  auto* m = static_cast<dirmn_mixture*>(R_ExternalPtrAddr(xp));
  if (m != nullptr) {
    R_ClearExternalPtr(xp);
    dirmn_mixture_destroy(m);
  }
}

// Owns a mixture handle until an external pointer takes it.
struct MixtureGuard {
  dirmn_mixture* mixture = nullptr;
  MixtureGuard() = default;
  MixtureGuard(const MixtureGuard&) = delete;
  MixtureGuard& operator=(const MixtureGuard&) = delete;
  ~MixtureGuard() { dirmn_mixture_destroy(mixture); }
};

}  // namespace

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
SEXP cpp_status_string(int status) {
  return Rf_mkString(dirmn_status_string(static_cast<dirmn_status>(status)));
}

// [[Rcpp::export(rng = false)]]
SEXP cpp_context_create(int backend, int device) {
  SEXP xp = PROTECT(R_MakeExternalPtr(nullptr, sym_context(), R_NilValue));
  R_RegisterCFinalizerEx(xp, context_finalizer, TRUE);
  dirmn_context* ctx = nullptr;
  const dirmn_status status =
      dirmn_context_create(&ctx, static_cast<dirmn_backend>(backend), device);
  if (status != DIRMN_SUCCESS) {
    const std::string message = dirmn_last_error(nullptr);
    UNPROTECT(1);
    return failure(status, message);
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

// [[Rcpp::export(rng = false)]]
SEXP cpp_counts_create(SEXP ctx_xp, SEXP x, int kind) {
  dirmn_context* ctx = context_of(ctx_xp);
  if (ctx == nullptr) return failure(DIRMN_ERROR_NULL_POINTER, "the dirmn context is no longer available");
  if (ctx == g_busy_context) return failure(DIRMN_ERROR_INVALID_ARGUMENT, kBusyMessage);
  Table t;
  std::string message;
  if (!describe_table(x, kind, &t, &message)) return failure(DIRMN_ERROR_INVALID_ARGUMENT, message);

  // The counts pointer protects its context's pointer, so the context lives
  // at least as long as any table made with it.
  SEXP xp = PROTECT(R_MakeExternalPtr(nullptr, sym_counts(), ctx_xp));
  R_RegisterCFinalizerEx(xp, counts_finalizer, TRUE);
  dirmn_counts* counts = nullptr;
  const dirmn_status status = create_counts(ctx, t, &counts);
  if (status != DIRMN_SUCCESS) {
    message = dirmn_last_error(ctx);
    if (status == DIRMN_ERROR_INVALID_COUNTS) {
      const std::string na = find_na_in_table(t);
      if (!na.empty()) message = na;
    }
    UNPROTECT(1);
    return failure(status, message);
  }
  R_SetExternalPtrAddr(xp, counts);
  ++g_live_counts;
  UNPROTECT(1);
  return xp;
}

// [[Rcpp::export(rng = false)]]
SEXP cpp_counts_close(SEXP xp) {
  if (TYPEOF(xp) != EXTPTRSXP) return failure(DIRMN_ERROR_INVALID_ARGUMENT, "not a dirmn_counts object");
  // A table may be the one a running fit reads (closed from a handler of
  // its progress messages): leave every table of that context alone.
  if (R_ExternalPtrAddr(xp) != nullptr && g_busy_context != nullptr &&
      context_of(R_ExternalPtrProtected(xp)) == g_busy_context)
    return failure(DIRMN_ERROR_INVALID_ARGUMENT, kBusyMessage);
  if (R_ExternalPtrAddr(xp) != nullptr) {
    counts_finalizer(xp);
    R_SetExternalPtrTag(xp, sym_closed());
  }
  return R_NilValue;
}

// [[Rcpp::export(rng = false)]]
SEXP cpp_counts_info(SEXP xp) {
  PreparedCounts p = prepared_counts(xp);
  if (p.status != DIRMN_SUCCESS) return failure(p.status, p.message);
  dirmn_counts_info info;
  info.size = sizeof info;
  const dirmn_status status = dirmn_counts_get_info(p.counts, &info);
  if (status != DIRMN_SUCCESS) return failure(status, dirmn_status_string(status));
  return Rcpp::List::create(
      Rcpp::Named("rows") = static_cast<double>(info.rows),
      Rcpp::Named("cols") = static_cast<double>(info.cols),
      Rcpp::Named("nnz") = static_cast<double>(info.nnz),
      Rcpp::Named("max_count") = info.max_count, Rcpp::Named("total") = info.total,
      Rcpp::Named("real_valued") = (info.flags & DIRMN_COUNTS_REAL_VALUED) != 0,
      Rcpp::Named("storage") = info.storage == DIRMN_STORAGE_SPARSE ? "sparse" : "dense",
      Rcpp::Named("value_bits") = info.value_bits,
      Rcpp::Named("backend") = info.backend == DIRMN_BACKEND_CUDA ? "cuda" : "cpu",
      Rcpp::Named("device") = info.device);
}

// [[Rcpp::export(rng = false)]]
SEXP cpp_ddirmn_counts(SEXP xp, SEXP alpha, bool full, bool log) {
  PreparedCounts p = prepared_counts(xp);
  if (p.status != DIRMN_SUCCESS) return failure(p.status, p.message);
  dirmn_counts_info info;
  info.size = sizeof info;
  dirmn_status status = dirmn_counts_get_info(p.counts, &info);
  if (status != DIRMN_SUCCESS) return failure(status, dirmn_status_string(status));

  AlphaShape shape;
  int bad = 0;
  std::string message;
  if (!check_alpha(alpha, info.rows, info.cols, &shape, &bad, &message)) return failure(bad, message);

  SEXP out = PROTECT(Rf_allocVector(REALSXP, info.rows));
  status = run_loglik(p.ctx, p.counts, info.rows, info.cols, alpha, shape, loglik_flags(full),
                      REAL(out));
  if (status != DIRMN_SUCCESS) {
    message = dirmn_last_error(p.ctx);
    if (status == DIRMN_ERROR_INVALID_PARAMETER) {
      const std::string na = find_na_in_alpha(alpha, info.rows, shape);
      if (!na.empty()) message = na;
    }
    UNPROTECT(1);
    return failure(status, message);
  }
  if (!log) exponentiate(REAL(out), XLENGTH(out));
  UNPROTECT(1);
  return out;
}

// [[Rcpp::export(rng = false)]]
SEXP cpp_ddirmn_table(SEXP ctx_xp, SEXP x, int kind, SEXP alpha, bool full, bool log) {
  dirmn_context* ctx = context_of(ctx_xp);
  if (ctx == nullptr) return failure(DIRMN_ERROR_NULL_POINTER, "the dirmn context is no longer available");
  if (ctx == g_busy_context) return failure(DIRMN_ERROR_INVALID_ARGUMENT, kBusyMessage);
  Table t;
  std::string message;
  if (!describe_table(x, kind, &t, &message)) return failure(DIRMN_ERROR_INVALID_ARGUMENT, message);
  AlphaShape shape;
  int bad = 0;
  if (!check_alpha(alpha, t.rows, t.cols, &shape, &bad, &message)) return failure(bad, message);

  // The library has no empty tables; an empty set of rows has an empty answer.
  if (t.rows == 0 && t.cols > 0) return Rf_allocVector(REALSXP, 0);

  // Allocated before the temporary table exists, so that an allocation
  // error cannot skip the table's destructor.
  SEXP out = PROTECT(Rf_allocVector(REALSXP, t.rows > 0 ? t.rows : 0));
  int status = DIRMN_SUCCESS;
  {
    CountsGuard counts;
    status = create_counts(ctx, t, &counts.counts);
    if (status != DIRMN_SUCCESS) {
      message = dirmn_last_error(ctx);
      if (status == DIRMN_ERROR_INVALID_COUNTS) {
        const std::string na = find_na_in_table(t);
        if (!na.empty()) message = na;
      }
    } else {
      status = run_loglik(ctx, counts.counts, t.rows, t.cols, alpha, shape, loglik_flags(full),
                          REAL(out));
      if (status != DIRMN_SUCCESS) {
        message = dirmn_last_error(ctx);
        if (status == DIRMN_ERROR_INVALID_PARAMETER) {
          const std::string na = find_na_in_alpha(alpha, t.rows, shape);
          if (!na.empty()) message = na;
        }
      }
    }
  }
  if (status != DIRMN_SUCCESS) {
    UNPROTECT(1);
    return failure(status, message);
  }
  if (!log) exponentiate(REAL(out), XLENGTH(out));
  UNPROTECT(1);
  return out;
}

// Benchmark support: seconds spent in `reps` back-to-back dirmn_loglik calls
// on a prepared table with one shared alpha, timed from C++, so that the R
// overhead of ddirmn() can be measured by difference.
// [[Rcpp::export(rng = false)]]
SEXP cpp_bench_loglik(SEXP xp, SEXP alpha, int reps, bool full) {
  PreparedCounts p = prepared_counts(xp);
  if (p.status != DIRMN_SUCCESS) return failure(p.status, p.message);
  dirmn_counts_info info;
  info.size = sizeof info;
  dirmn_status status = dirmn_counts_get_info(p.counts, &info);
  if (status != DIRMN_SUCCESS) return failure(status, dirmn_status_string(status));
  AlphaShape shape;
  int bad = 0;
  std::string message;
  if (!check_alpha(alpha, info.rows, info.cols, &shape, &bad, &message)) return failure(bad, message);
  if (reps < 1) return failure(DIRMN_ERROR_INVALID_ARGUMENT, "reps must be positive");
  std::vector<double> out(static_cast<size_t>(info.rows));
  const auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < reps && status == DIRMN_SUCCESS; ++r)
    status = run_loglik(p.ctx, p.counts, info.rows, info.cols, alpha, shape, loglik_flags(full),
                        out.data());
  const auto stop = std::chrono::steady_clock::now();
  if (status != DIRMN_SUCCESS) return failure(status, dirmn_last_error(p.ctx));
  return Rf_ScalarReal(std::chrono::duration<double>(stop - start).count());
}

// [[Rcpp::export(rng = false)]]
SEXP cpp_live_counts() { return Rf_ScalarReal(static_cast<double>(g_live_counts)); }

// [[Rcpp::export(rng = false)]]
SEXP cpp_set_force_cancel(bool on) {
  g_force_cancel = on;
  return R_NilValue;
}

// ---------------------------------------------------------------------------
// Derivatives and fits

// [[Rcpp::export(rng = false)]]
SEXP cpp_row_totals(SEXP xp) {
  PreparedCounts p = prepared_counts(xp);
  if (p.status != DIRMN_SUCCESS) return failure(p.status, p.message);
  dirmn_counts_info info;
  info.size = sizeof info;
  dirmn_status status = dirmn_counts_get_info(p.counts, &info);
  if (status != DIRMN_SUCCESS) return failure(status, dirmn_status_string(status));
  Rcpp::NumericVector totals(static_cast<R_xlen_t>(info.rows));
  status = dirmn_counts_row_totals(p.ctx, p.counts, totals.begin());
  if (status != DIRMN_SUCCESS) return failure(status, dirmn_last_error(p.ctx));
  return totals;
}

// dirmn_loglik_sum: the weighted sum of the rows' log-likelihoods under one
// shared parameter vector, with its gradient and diagonal-plus-rank-one
// Hessian, with respect to alpha or (log_param) log alpha.
// [[Rcpp::export(rng = false)]]
SEXP cpp_loglik_sum(SEXP xp, SEXP params, SEXP weights, bool log_param, bool full) {
  PreparedCounts p = prepared_counts(xp);
  if (p.status != DIRMN_SUCCESS) return failure(p.status, p.message);
  dirmn_counts_info info;
  info.size = sizeof info;
  dirmn_status status = dirmn_counts_get_info(p.counts, &info);
  if (status != DIRMN_SUCCESS) return failure(status, dirmn_status_string(status));
  int bad = 0;
  std::string message;
  AlphaShape shape;
  if (!check_alpha(params, info.rows, info.cols, &shape, &bad, &message)) return failure(bad, message);
  if (shape.per_row)
    return failure(DIRMN_ERROR_DIMENSION_MISMATCH,
                   "alpha must be a vector with one value per column (one alpha shared by all rows)");
  if (!check_weights(weights, info.rows, &bad, &message)) return failure(bad, message);
  Rcpp::NumericVector gradient(static_cast<R_xlen_t>(info.cols));
  Rcpp::NumericVector hessian_diag(static_cast<R_xlen_t>(info.cols));
  double value = 0.0, hessian_scalar = 0.0;
  status = dirmn_loglik_sum(p.ctx, p.counts, REAL(params), 1,
                            log_param ? DIRMN_PARAM_LOG_ALPHA : DIRMN_PARAM_ALPHA,
                            weights_ptr(weights), loglik_flags(full), &value, gradient.begin(),
                            hessian_diag.begin(), &hessian_scalar);
  if (status != DIRMN_SUCCESS) {
    message = dirmn_last_error(p.ctx);
    if (status == DIRMN_ERROR_INVALID_PARAMETER) {
      const std::string na = find_na_in_alpha(params, info.rows, shape);
      if (!na.empty()) message = na;
    }
    return failure(status, message);
  }
  return Rcpp::List::create(Rcpp::Named("value") = value, Rcpp::Named("gradient") = gradient,
                            Rcpp::Named("hessian_diag") = hessian_diag,
                            Rcpp::Named("hessian_scalar") = hessian_scalar);
}

// dirmn_fit. `progress` is NULL or an R function(iteration, loglik,
// gradient_norm) called once per iteration; TRUE from it cancels.
// [[Rcpp::export(rng = false)]]
SEXP cpp_fit(SEXP xp, SEXP weights, SEXP start, double tolerance, int max_iterations,
             SEXP progress) {
  PreparedCounts p = prepared_counts(xp);
  if (p.status != DIRMN_SUCCESS) return failure(p.status, p.message);
  dirmn_counts_info info;
  info.size = sizeof info;
  dirmn_status status = dirmn_counts_get_info(p.counts, &info);
  if (status != DIRMN_SUCCESS) return failure(status, dirmn_status_string(status));
  int bad = 0;
  std::string message;
  if (!check_weights(weights, info.rows, &bad, &message)) return failure(bad, message);
  if (start != R_NilValue) {
    AlphaShape shape;
    if (!check_alpha(start, info.rows, info.cols, &shape, &bad, &message) || shape.per_row)
      return failure(DIRMN_ERROR_DIMENSION_MISMATCH,
                     "start must be a vector with one value per column (" +
                         std::to_string(info.cols) + ")");
  }
  const R_xlen_t V = static_cast<R_xlen_t>(info.cols);
  Rcpp::NumericVector alpha(V), se_alpha(V), se_log_alpha(V);
  Rcpp::Shield<SEXP> token(R_MakeUnwindCont());
  ProgressBridge bridge;
  bridge.fn = progress;
  bridge.token = token;

  dirmn_fit_options options;
  dirmn_fit_options_init(&options);
  options.tolerance = tolerance;
  options.max_iterations = max_iterations;
  options.weights = weights_ptr(weights);
  options.start = start == R_NilValue ? nullptr : REAL(start);
  if (progress != R_NilValue) {
    options.progress = progress_callback;
    options.progress_data = &bridge;
  }
  dirmn_fit_result result;
  std::memset(&result, 0, sizeof result);
  result.size = sizeof result;
  result.alpha = alpha.begin();
  result.std_error_alpha = se_alpha.begin();
  result.std_error_log_alpha = se_log_alpha.begin();
  {
    BusyScope busy(progress != R_NilValue ? p.ctx : g_busy_context);
    status = dirmn_fit(p.ctx, p.counts, &options, &result);
  }
  if (bridge.jumped) resume_jump(token);
  if (status != DIRMN_SUCCESS) return failure(status, dirmn_last_error(p.ctx));
  return Rcpp::List::create(
      Rcpp::Named("alpha") = alpha, Rcpp::Named("se_alpha") = se_alpha,
      Rcpp::Named("se_log_alpha") = se_log_alpha, Rcpp::Named("loglik") = result.loglik,
      Rcpp::Named("loglik_full") = result.loglik_full,
      Rcpp::Named("gradient_norm") = result.gradient_norm,
      Rcpp::Named("precision") = result.precision, Rcpp::Named("iterations") = result.iterations,
      Rcpp::Named("converged") = result.converged != 0,
      Rcpp::Named("multinomial_limit") = result.multinomial_limit != 0,
      Rcpp::Named("zero_columns") = static_cast<double>(result.zero_columns));
}

// ---------------------------------------------------------------------------
// Mixtures

// One fitted model of class dirmn_mixture_fit (see R/mixture.R): everything
// a fitted mixture holds, copied into R objects with its components ordered
// by decreasing weight (as dmn() orders them; ties keep the library's order,
// as R's order(decreasing = TRUE)), plus an external pointer that owns the
// handle (for dirmn_mixture_assign). Built here rather than in R because on
// small tables building it in R costs about as much as the fit. `dimnames`
// is the table's list(rows, columns); `row_totals`, `nobs`,
// `objective_type`, `backend` and `device` are stored as given.
// [[Rcpp::export(rng = false)]]
SEXP cpp_mixture_fit(SEXP xp, int k, int objective, int init, int starts, double seed,
                     double tolerance, int max_iterations, SEXP weights, SEXP progress,
                     SEXP dimnames, SEXP row_totals, SEXP nobs, SEXP objective_type,
                     SEXP backend, SEXP device) {
  PreparedCounts p = prepared_counts(xp);
  if (p.status != DIRMN_SUCCESS) return failure(p.status, p.message);
  dirmn_counts_info info;
  info.size = sizeof info;
  dirmn_status status = dirmn_counts_get_info(p.counts, &info);
  if (status != DIRMN_SUCCESS) return failure(status, dirmn_status_string(status));
  int bad = 0;
  std::string message;
  if (!check_weights(weights, info.rows, &bad, &message)) return failure(bad, message);
  if (k < 1) return failure(DIRMN_ERROR_INVALID_ARGUMENT, "k must be at least 1");
  const R_xlen_t V = static_cast<R_xlen_t>(info.cols);
  const R_xlen_t rows = static_cast<R_xlen_t>(info.rows);
  // Outputs and the owning pointer exist before the handle does.
  Rcpp::NumericMatrix alpha(k, V);
  Rcpp::NumericVector mix_weights(k);
  Rcpp::NumericMatrix resp(rows, k);
  Rcpp::Shield<SEXP> mix_xp(R_MakeExternalPtr(nullptr, sym_mixture(), R_NilValue));
  R_RegisterCFinalizerEx(mix_xp, mixture_finalizer, TRUE);
  Rcpp::Shield<SEXP> token(R_MakeUnwindCont());
  ProgressBridge bridge;
  bridge.fn = progress;
  bridge.token = token;

  dirmn_mixture_options options;
  dirmn_mixture_options_init(&options);
  options.objective = static_cast<dirmn_mixture_objective>(objective);
  options.init = static_cast<dirmn_mixture_init>(init);
  options.starts = starts;
  options.seed = static_cast<uint64_t>(seed);
  options.max_iterations = max_iterations;
  options.tolerance = tolerance;
  options.weights = weights_ptr(weights);
  if (progress != R_NilValue) {
    options.progress = progress_callback;
    options.progress_data = &bridge;
  }
  dirmn_mixture_info mi;
  std::memset(&mi, 0, sizeof mi);
  mi.size = sizeof mi;
  {
    MixtureGuard guard;
    {
      BusyScope busy(progress != R_NilValue ? p.ctx : g_busy_context);
      status = dirmn_mixture_fit(p.ctx, p.counts, k, &options, &guard.mixture);
    }
    if (bridge.jumped) resume_jump(token);
    if (status != DIRMN_SUCCESS) return failure(status, dirmn_last_error(p.ctx));
    // R matrices are column-major: (j, v) of the k x V alpha sits at
    // j + v * k, (b, j) of the responsibilities at b + j * rows.
    status = dirmn_mixture_get_info(guard.mixture, &mi);
    if (status == DIRMN_SUCCESS)
      status = dirmn_mixture_get_params(guard.mixture, alpha.begin(), 1, k, mix_weights.begin());
    if (status == DIRMN_SUCCESS)
      status = dirmn_mixture_get_responsibilities(guard.mixture, resp.begin(), 1, rows);
    if (status != DIRMN_SUCCESS) return failure(status, dirmn_last_error(nullptr));
    R_SetExternalPtrAddr(mix_xp, guard.mixture);
    guard.mixture = nullptr;
  }
  // Components by decreasing weight (a stable sort: ties keep their order).
  std::vector<int> o(static_cast<size_t>(k));
  for (int j = 0; j < k; ++j) o[static_cast<size_t>(j)] = j;
  const double* wt = mix_weights.begin();
  std::stable_sort(o.begin(), o.end(), [wt](int a, int b) { return wt[a] > wt[b]; });
  Rcpp::IntegerVector order(k);
  Rcpp::CharacterVector comp(k);
  Rcpp::NumericVector weights_out(k);
  Rcpp::NumericMatrix alpha_out(k, V);
  Rcpp::NumericMatrix resp_out(rows, k);
  for (int j = 0; j < k; ++j) {
    const int src = o[static_cast<size_t>(j)];
    order[j] = src + 1;
    comp[j] = "comp" + std::to_string(j + 1);
    weights_out[j] = mix_weights[src];
    const double* a_in = alpha.begin() + src;
    double* a_out = alpha_out.begin() + j;
    for (R_xlen_t v = 0; v < V; ++v) a_out[v * k] = a_in[v * k];
    std::memcpy(resp_out.begin() + static_cast<R_xlen_t>(j) * rows,
                resp.begin() + static_cast<R_xlen_t>(src) * rows, sizeof(double) * rows);
  }
  weights_out.attr("names") = comp;
  SEXP row_names = R_NilValue, col_names = R_NilValue;
  if (TYPEOF(dimnames) == VECSXP && XLENGTH(dimnames) == 2) {
    row_names = VECTOR_ELT(dimnames, 0);
    col_names = VECTOR_ELT(dimnames, 1);
  }
  {
    Rcpp::List dn(2);
    dn[0] = comp;
    dn[1] = col_names;
    Rf_setAttrib(alpha_out, R_DimNamesSymbol, dn);
  }
  {
    Rcpp::List dn(2);
    dn[0] = row_names;
    dn[1] = comp;
    Rf_setAttrib(resp_out, R_DimNamesSymbol, dn);
  }
  // Rcpp::List::create takes at most 20 elements.
  static const char* names[] = {"alpha", "weights", "responsibilities", "loglik", "objective",
                                "aic", "bic", "laplace", "parameters", "iterations",
                                "converged", "k", "start", "nobs", "objective_type", "ptr",
                                "order", "row_totals", "backend", "device"};
  const int n_el = static_cast<int>(sizeof names / sizeof names[0]);
  Rcpp::List out(n_el);
  Rcpp::CharacterVector out_names(n_el);
  for (int i = 0; i < n_el; ++i) out_names[i] = names[i];
  out[0] = alpha_out;
  out[1] = weights_out;
  out[2] = resp_out;
  out[3] = mi.loglik;
  out[4] = mi.objective;
  out[5] = mi.aic;
  out[6] = mi.bic;
  out[7] = mi.laplace;
  out[8] = static_cast<double>(mi.parameters);
  out[9] = mi.iterations;
  out[10] = mi.converged != 0;
  out[11] = mi.k;
  out[12] = mi.start + 1;
  out[13] = nobs;
  out[14] = objective_type;
  out[15] = static_cast<SEXP>(mix_xp);
  out[16] = order;
  out[17] = row_totals;
  out[18] = backend;
  out[19] = device;
  out.attr("names") = out_names;
  out.attr("class") = "dirmn_mixture_fit";
  return out;
}

// The criteria data frame of dirmn_mixture() from its fitted models (a list
// of dirmn_mixture_fit objects) and their k (an integer vector): one row
// per model, unnamed columns, as R/mixture.R documents.
// [[Rcpp::export(rng = false)]]
SEXP cpp_mixture_criteria(SEXP models, SEXP k) {
  const R_xlen_t n = XLENGTH(models);
  auto element = [](SEXP model, const char* name) -> SEXP {
    SEXP nm = Rf_getAttrib(model, R_NamesSymbol);
    for (R_xlen_t i = 0; i < XLENGTH(model); ++i)
      if (std::strcmp(CHAR(STRING_ELT(nm, i)), name) == 0) return VECTOR_ELT(model, i);
    return R_NilValue;
  };
  static const char* names[] = {"k",   "loglik",  "objective",  "aic",      "bic",
                                "laplace", "parameters", "iterations", "converged"};
  Rcpp::List df(9);
  Rcpp::CharacterVector df_names(9);
  for (int c = 0; c < 9; ++c) df_names[c] = names[c];
  Rcpp::IntegerVector kk(n);
  for (R_xlen_t i = 0; i < n; ++i) kk[i] = INTEGER(k)[i];
  df[0] = kk;
  for (int c = 1; c <= 6; ++c) {
    Rcpp::NumericVector col(n);
    for (R_xlen_t i = 0; i < n; ++i) col[i] = Rf_asReal(element(VECTOR_ELT(models, i), names[c]));
    df[c] = col;
  }
  Rcpp::IntegerVector iterations(n);
  Rcpp::LogicalVector converged(n);
  for (R_xlen_t i = 0; i < n; ++i) {
    iterations[i] = Rf_asInteger(element(VECTOR_ELT(models, i), "iterations"));
    converged[i] = Rf_asLogical(element(VECTOR_ELT(models, i), "converged"));
  }
  df[7] = iterations;
  df[8] = converged;
  df.attr("names") = df_names;
  df.attr("class") = "data.frame";
  df.attr("row.names") = Rcpp::IntegerVector::create(NA_INTEGER, -static_cast<int>(n));
  return df;
}

// Posterior component probabilities (rows x k) of the rows of a prepared
// table under a fitted mixture.
// [[Rcpp::export(rng = false)]]
SEXP cpp_mixture_assign(SEXP mix_xp, SEXP xp) {
  if (!is_xptr(mix_xp, sym_mixture()) || R_ExternalPtrAddr(mix_xp) == nullptr)
    return failure(DIRMN_ERROR_NULL_POINTER, "the mixture handle is not available");
  const auto* m = static_cast<const dirmn_mixture*>(R_ExternalPtrAddr(mix_xp));
  PreparedCounts p = prepared_counts(xp);
  if (p.status != DIRMN_SUCCESS) return failure(p.status, p.message);
  dirmn_counts_info info;
  info.size = sizeof info;
  dirmn_mixture_info mi;
  mi.size = sizeof mi;
  dirmn_status status = dirmn_counts_get_info(p.counts, &info);
  if (status == DIRMN_SUCCESS) status = dirmn_mixture_get_info(m, &mi);
  if (status != DIRMN_SUCCESS) return failure(status, dirmn_status_string(status));
  const R_xlen_t rows = static_cast<R_xlen_t>(info.rows);
  Rcpp::NumericMatrix out(rows, mi.k);
  status = dirmn_mixture_assign(p.ctx, m, p.counts, out.begin(), 1, rows);
  if (status != DIRMN_SUCCESS) return failure(status, dirmn_last_error(p.ctx));
  return out;
}

// Log-likelihood (full log pmf) of every row under each row of a k x V
// alpha matrix: a rows x k matrix.
// [[Rcpp::export(rng = false)]]
SEXP cpp_loglik_k(SEXP xp, SEXP alpha) {
  PreparedCounts p = prepared_counts(xp);
  if (p.status != DIRMN_SUCCESS) return failure(p.status, p.message);
  dirmn_counts_info info;
  info.size = sizeof info;
  dirmn_status status = dirmn_counts_get_info(p.counts, &info);
  if (status != DIRMN_SUCCESS) return failure(status, dirmn_status_string(status));
  SEXP dim = Rf_getAttrib(alpha, R_DimSymbol);
  if (TYPEOF(alpha) != REALSXP || TYPEOF(dim) != INTSXP || XLENGTH(dim) != 2 ||
      INTEGER(dim)[1] != info.cols || INTEGER(dim)[0] < 1)
    return failure(DIRMN_ERROR_DIMENSION_MISMATCH,
                   "alpha must be a double matrix with one column per column of the counts (" +
                       std::to_string(info.cols) + ")");
  const int k = INTEGER(dim)[0];
  const R_xlen_t rows = static_cast<R_xlen_t>(info.rows);
  Rcpp::NumericMatrix out(rows, k);
  status = dirmn_loglik(p.ctx, p.counts, k, REAL(alpha), 1, k, DIRMN_PARAM_ALPHA, DIRMN_FULL,
                        out.begin(), 1, rows);
  if (status != DIRMN_SUCCESS) return failure(status, dirmn_last_error(p.ctx));
  return out;
}
