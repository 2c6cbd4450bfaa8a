// communicator.cpp: communicators whose allreduce and broadcast are R
// functions (dirmn_communicator_create), and counts attached to them
// (dirmn_counts_set_communicator).
//
// The library calls the callbacks on the thread that made the collective
// call (R's main thread), from inside its own frames. Each callback copies
// the library's buffer into an R vector, calls the user's R function and
// copies its result back. No R jump may cross the library's frames, and a
// callback's failure must become a non-zero return (the library then fails
// the call with DIRMN_ERROR_COMMUNICATION), so the R call runs under
// R_ToplevelExec, which stops every jump, around R_tryCatch, which catches
// errors and interrupts with an exiting handler innermost (neither reaches
// a handler of the user's, nor R's default handler, which would print
// "Error in ..."). The error's message is kept (g_comm_cause) and added to
// the library's message by library_error, so the R condition of the dirmn
// call says what went wrong in the user's function. R_ToplevelExec also
// sets the caller's condition handlers aside (one of them could jump, as
// tryCatch(warning = ) does): a warning the function raises is shown at
// top level.
//
// The R functions are preserved (R_PreserveObject) from the communicator's
// creation until the library's `release` callback: the library calls it
// once, when the handle (owned by an external pointer whose finalizer
// destroys it) and every counts object attached to it are gone.
#include "common.h"

#include <cmath>
#include <cstring>
#include <new>
#include <string>

using namespace dirmn_r;

namespace dirmn_r {

int g_comm_callback_depth = 0;
const char* const kCommCallbackMessage =
    "dirmn functions cannot be called from a communicator's allreduce or broadcast function "
    "(it runs inside a collective dirmn call)";
std::string g_comm_cause;
long g_live_communicators = 0;

SEXP sym_communicator() {
  static SEXP s = Rf_install("dirmn_communicator");
  return s;
}

}  // namespace dirmn_r

namespace {

// What the callbacks reach (the callbacks' `data`): list(allreduce,
// broadcast), preserved until the library releases it.
struct Bridge {
  SEXP functions = R_NilValue;
};

// The callbacks' non-zero returns, which the library's message quotes
// ("the communicator's allreduce_int64 callback returned 1").
enum CallbackFailure {
  kFailedInR = 1,    // the R function raised an error, was interrupted or jumped out
  kBadResult = 2,    // its result has the wrong type or length, or an impossible value
  kBeyondExact = 3,  // an int64 value (given or summed) beyond 2^53, not exact in a double
  kDeviceMemory = 4  // device memory (not passed in this release)
};

constexpr double kTwo53 = 9007199254740992.0;  // 2^53

enum Kind { KIND_INT64, KIND_DOUBLE, KIND_BYTES };

// One call of the user's R function from a callback.
struct Call {
  Kind kind;
  SEXP fn;
  void* buffer;
  size_t count;  // elements (bytes for KIND_BYTES)
  int root;
  int code = 0;  // the callback's return
  std::string cause;

  Call(Kind k, SEXP f, void* b, size_t n, int r) : kind(k), fn(f), buffer(b), count(n), root(r) {}

  const char* name() const { return kind == KIND_BYTES ? "broadcast(x, root)" : "allreduce(x)"; }
  void fail(int c, const std::string& why) {
    if (code == 0) {
      code = c;
      cause = why;
    }
  }
};

std::string number(double v) {
  char text[64];
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Inf" : "-Inf";
  if (v == std::trunc(v) && std::fabs(v) < 1e20)
    std::snprintf(text, sizeof text, "%.0f", v);
  else
    std::snprintf(text, sizeof text, "%.17g", v);
  return text;
}

std::string element(size_t i) { return std::to_string(static_cast<unsigned long long>(i + 1)); }

// "a double vector of length 3", "an integer vector of length 1", "NULL",
// "a closure"
std::string described(SEXP x) {
  if (x == R_NilValue) return "NULL";
  const std::string type = Rf_type2char(TYPEOF(x));
  const std::string article =
      !type.empty() && std::strchr("aeiou", type[0]) != nullptr ? "an " : "a ";
  if (!Rf_isVector(x)) return article + type;
  return article + type + " vector of length " +
         std::to_string(static_cast<long long>(XLENGTH(x)));
}

// Checks the R function's result and copies it into the library's buffer
// (only where all of it is good). No R allocation, no jump.
void take_result(Call* c, SEXP res) {
  const R_xlen_t n = static_cast<R_xlen_t>(c->count);
  if (c->kind == KIND_BYTES) {
    if (TYPEOF(res) != RAWSXP || XLENGTH(res) != n) {
      c->fail(kBadResult, std::string(c->name()) + " returned " + described(res) +
                              "; it must return a raw vector of length " + std::to_string(n) +
                              ", root's bytes");
      return;
    }
    if (n > 0) std::memcpy(c->buffer, RAW(res), c->count);
    return;
  }
  if ((TYPEOF(res) != REALSXP && TYPEOF(res) != INTSXP) || XLENGTH(res) != n) {
    c->fail(kBadResult, std::string(c->name()) + " returned " + described(res) +
                            "; it must return a numeric vector of length " +
                            std::to_string(n) + ", the sums over the ranks");
    return;
  }
  const bool integer = TYPEOF(res) == INTSXP;
  for (R_xlen_t i = 0; i < n; ++i) {
    if (integer && INTEGER(res)[i] == NA_INTEGER) {
      c->fail(kBadResult, std::string(c->name()) + " returned NA at element " + element(i));
      return;
    }
  }
  if (c->kind == KIND_DOUBLE) {
    auto* out = static_cast<double*>(c->buffer);
    for (R_xlen_t i = 0; i < n; ++i)
      out[i] = integer ? static_cast<double>(INTEGER(res)[i]) : REAL(res)[i];
    return;
  }
  // int64 sums: whole numbers that a double holds exactly
  for (R_xlen_t i = 0; i < n && !integer; ++i) {
    const double v = REAL(res)[i];
    if (!(v == std::trunc(v)) || std::fabs(v) > kTwo53) {
      const bool beyond = std::isfinite(v) && v == std::trunc(v);
      c->fail(beyond ? kBeyondExact : kBadResult,
              std::string(c->name()) + " returned " + number(v) + " at element " + element(i) +
                  " of a sum of whole numbers, which must be a whole number of magnitude at "
                  "most 2^53 (R's doubles hold integers exactly only up to there)" +
                  (std::isnan(v) ? "; a rank whose values were beyond 2^53 sends NaN" : ""));
      return;
    }
  }
  auto* out = static_cast<int64_t*>(c->buffer);
  for (R_xlen_t i = 0; i < n; ++i)
    out[i] = integer ? static_cast<int64_t>(INTEGER(res)[i]) : static_cast<int64_t>(REAL(res)[i]);
}

SEXP call_body(void* data) {
  auto* c = static_cast<Call*>(data);
  const R_xlen_t n = static_cast<R_xlen_t>(c->count);
  SEXP x;
  if (c->kind == KIND_BYTES) {
    x = PROTECT(Rf_allocVector(RAWSXP, n));
    if (n > 0) std::memcpy(RAW(x), c->buffer, c->count);
  } else {
    x = PROTECT(Rf_allocVector(REALSXP, n));
    double* v = REAL(x);
    if (c->kind == KIND_DOUBLE) {
      if (n > 0) std::memcpy(v, c->buffer, c->count * sizeof(double));
    } else {
      // A value a double does not hold exactly goes as NaN, so that the
      // sum is NaN on every rank and every rank's callback fails at this
      // step, as a collective must; this rank says why.
      const auto* in = static_cast<const int64_t*>(c->buffer);
      for (R_xlen_t i = 0; i < n; ++i) {
        const double d = static_cast<double>(in[i]);
        if (std::fabs(d) > kTwo53) {
          v[i] = R_NaN;
          c->fail(kBeyondExact, "element " + element(i) + " of the values to sum, " +
                                    std::to_string(static_cast<long long>(in[i])) +
                                    ", is beyond 2^53, which R's doubles do not hold exactly");
        } else {
          v[i] = d;
        }
      }
    }
  }
  SEXP root = PROTECT(Rf_ScalarInteger(c->root));
  SEXP call = PROTECT(c->kind == KIND_BYTES ? Rf_lang3(c->fn, x, root) : Rf_lang2(c->fn, x));
  SEXP res = PROTECT(Rf_eval(call, R_GlobalEnv));
  if (c->code == 0) take_result(c, res);
  UNPROTECT(4);
  return R_NilValue;
}

SEXP call_condition(SEXP condition, void* data) {
  auto* c = static_cast<Call*>(data);
  if (Rf_inherits(condition, "interrupt")) {
    c->fail(kFailedInR, std::string(c->name()) + " was interrupted");
    return R_NilValue;
  }
  // The message of the condition: its element "message" (simpleError's
  // first), as conditionMessage() gives for the usual conditions.
  std::string message;
  if (TYPEOF(condition) == VECSXP) {
    SEXP names = Rf_getAttrib(condition, R_NamesSymbol);
    for (R_xlen_t i = 0; i < XLENGTH(condition); ++i) {
      if (TYPEOF(names) == STRSXP && i < XLENGTH(names) &&
          std::strcmp(CHAR(STRING_ELT(names, i)), "message") == 0) {
        SEXP m = VECTOR_ELT(condition, i);
        if (TYPEOF(m) == STRSXP && XLENGTH(m) >= 1 && STRING_ELT(m, 0) != NA_STRING)
          message = Rf_translateCharUTF8(STRING_ELT(m, 0));
        break;
      }
    }
  }
  c->fail(kFailedInR, std::string(c->name()) + " raised an error" +
                          (message.empty() ? std::string() : ": " + message));
  return R_NilValue;
}

void call_protected(void* data) { try_catch_errors(call_body, data, call_condition, data); }

// Runs the R function and returns the callback's status; a failure's cause
// goes to g_comm_cause (the first of the dirmn call: later callbacks of a
// failing collective add nothing).
int run(Call* c) {
  ++g_comm_callback_depth;
  const bool clean = R_ToplevelExec(call_protected, c) != FALSE;
  --g_comm_callback_depth;
  if (!clean && c->code == 0)
    c->fail(kFailedInR, std::string(c->name()) +
                            " was left by a jump (a restart or a return to an outer function)");
  if (c->code != 0 && g_comm_cause.empty()) g_comm_cause = c->cause;
  return c->code;
}

int device_memory(int device, const char* what) {
  if (device == 0) return 0;
  if (g_comm_cause.empty())
    g_comm_cause = std::string(what) + " was passed device memory, which R functions cannot read";
  return kDeviceMemory;
}

int cb_allreduce_int64(void* data, int64_t* values, size_t count, int device) {
  if (int e = device_memory(device, "allreduce(x)")) return e;
  Call c(KIND_INT64, VECTOR_ELT(static_cast<Bridge*>(data)->functions, 0), values, count, 0);
  return run(&c);
}

int cb_allreduce_double(void* data, double* values, size_t count, int device) {
  if (int e = device_memory(device, "allreduce(x)")) return e;
  Call c(KIND_DOUBLE, VECTOR_ELT(static_cast<Bridge*>(data)->functions, 0), values, count, 0);
  return run(&c);
}

int cb_broadcast(void* data, void* buffer, size_t bytes, int root, int device) {
  if (int e = device_memory(device, "broadcast(x, root)")) return e;
  Call c(KIND_BYTES, VECTOR_ELT(static_cast<Bridge*>(data)->functions, 1), buffer, bytes, root);
  return run(&c);
}

// The library's `release`: the handle and every counts object attached
// are gone (from a finalizer, close() or a failed attach; on R's thread).
void cb_release(void* data) {
  auto* b = static_cast<Bridge*>(data);
  R_ReleaseObject(b->functions);
  delete b;
  --g_live_communicators;
}

void communicator_finalizer(SEXP xp) {
  auto* comm = static_cast<dirmn_communicator*>(R_ExternalPtrAddr(xp));
  if (comm != nullptr) {
    R_ClearExternalPtr(xp);
    dirmn_communicator_destroy(comm);
  }
}

const char* kUnusableCommunicator =
    "this dirmn_communicator object no longer holds a communicator: communicators do not survive "
    "saveRDS()/readRDS(), save()/load() or a new R session; make it again with "
    "dirmn_communicator()";

}  // namespace

// ---------------------------------------------------------------------------
// Entry points

// A communicator over the R functions allreduce(x) and broadcast(x, root)
// (R/communicator.R has checked the arguments; the library checks rank and
// ranks again). An external pointer owning the handle, or a failure.
// [[Rcpp::export(rng = false)]]
SEXP cpp_communicator_create(int rank, int ranks, SEXP allreduce, SEXP broadcast) {
  if (!Rf_isFunction(allreduce) || !Rf_isFunction(broadcast))
    return failure(DIRMN_ERROR_INVALID_ARGUMENT, "allreduce and broadcast must be functions");
  SEXP xp = PROTECT(R_MakeExternalPtr(nullptr, sym_communicator(), R_NilValue));
  R_RegisterCFinalizerEx(xp, communicator_finalizer, TRUE);
  SEXP functions = PROTECT(Rf_allocVector(VECSXP, 2));
  SET_VECTOR_ELT(functions, 0, allreduce);
  SET_VECTOR_ELT(functions, 1, broadcast);
  // The one R allocation that could fail once the bridge exists is this
  // one, so it comes first.
  R_PreserveObject(functions);
  auto* bridge = new (std::nothrow) Bridge;
  if (bridge == nullptr) {
    R_ReleaseObject(functions);
    UNPROTECT(2);
    return failure(DIRMN_ERROR_OUT_OF_MEMORY, "out of memory making the communicator");
  }
  bridge->functions = functions;
  dirmn_communicator_callbacks cb;
  std::memset(&cb, 0, sizeof cb);
  cb.size = sizeof cb;
  cb.rank = rank;
  cb.ranks = ranks;
  cb.allreduce_int64 = cb_allreduce_int64;
  cb.allreduce_double = cb_allreduce_double;
  cb.broadcast = cb_broadcast;
  cb.data = bridge;
  cb.release = cb_release;
  dirmn_communicator* comm = nullptr;
  const dirmn_status status = dirmn_communicator_create(&comm, &cb);
  if (status != DIRMN_SUCCESS) {
    // The library never releases what it did not take.
    const Failure f = library_error(nullptr, status);
    R_ReleaseObject(functions);
    delete bridge;
    UNPROTECT(2);
    return failure(f);
  }
  ++g_live_communicators;
  R_SetExternalPtrAddr(xp, comm);
  UNPROTECT(2);
  return xp;
}

// list(rank, ranks) of a communicator pointer, or a failure.
// [[Rcpp::export(rng = false)]]
SEXP cpp_communicator_info(SEXP xp) {
  if (!is_xptr(xp, sym_communicator()))
    return failure(DIRMN_ERROR_INVALID_ARGUMENT, "not a dirmn_communicator object");
  const auto* comm = static_cast<const dirmn_communicator*>(R_ExternalPtrAddr(xp));
  if (comm == nullptr) return failure(DIRMN_ERROR_NULL_POINTER, kUnusableCommunicator);
  int rank = 0, ranks = 0;
  const dirmn_status status = dirmn_communicator_get_rank(comm, &rank, &ranks);
  if (status != DIRMN_SUCCESS) return library_failure(nullptr, status);
  return Rcpp::List::create(Rcpp::Named("rank") = rank, Rcpp::Named("ranks") = ranks);
}

// Attaches a prepared table to a communicator (collective), or detaches it
// (comm_xp NULL). On success the counts pointer holds the communicator's R
// object `comm` as its attribute "dirmn_communicator" (removed on detach).
// [[Rcpp::export(rng = false)]]
SEXP cpp_counts_set_communicator(SEXP xp, SEXP comm_xp, SEXP comm) {
  PreparedCounts p = prepared_counts(xp);
  if (p.failed != R_NilValue) return p.failed;
  dirmn_communicator* handle = nullptr;
  if (comm_xp != R_NilValue) {
    if (!is_xptr(comm_xp, sym_communicator()))
      return failure(DIRMN_ERROR_INVALID_ARGUMENT, "not a dirmn_communicator object");
    handle = static_cast<dirmn_communicator*>(R_ExternalPtrAddr(comm_xp));
    if (handle == nullptr) return failure(DIRMN_ERROR_NULL_POINTER, kUnusableCommunicator);
  }
  g_comm_cause.clear();
  const dirmn_status status = dirmn_counts_set_communicator(p.ctx, p.counts, handle);
  if (status != DIRMN_SUCCESS) return library_failure(p.ctx, status);
  Rf_setAttrib(xp, sym_communicator(), handle == nullptr ? R_NilValue : comm);
  return R_NilValue;
}

// [[Rcpp::export(rng = false)]]
SEXP cpp_live_communicators() {
  return Rf_ScalarReal(static_cast<double>(g_live_communicators));
}
