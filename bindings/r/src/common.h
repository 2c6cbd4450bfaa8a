// common.h: what the R bindings' source files share -- failure objects,
// external pointers and their handles, the busy-context guard, tables and
// parameters as R holds them, the bridge that calls R from a progress
// callback, and communicators whose callbacks are R functions.
//
// No entry point raises an R error. Each returns its value, or, when the
// library (or an argument check) fails, a list of class "dirmn_failure"
// holding the status, its name, the message and the failure's location as
// numbers (see errors.cpp); R code words the message and raises a classed
// condition (R/errors.R). This keeps R's longjmp out of frames that own C++
// objects or library handles, and lets the condition carry the user's call.
//
// Library handles are owned by external pointers whose finalizers free them.
// Each external pointer is made before the handle it will own, so there is
// no moment at which an R allocation failure could leak a handle.
//
// Entry points return plain vectors and lists; the S3 objects, data frames
// and names R users see are built in R (R/*.R).
#ifndef DIRMN_R_COMMON_H
#define DIRMN_R_COMMON_H

#include <Rcpp.h>
#include <Rinternals.h>

#include <dirmn.h>

#include <csetjmp>
#include <cstdint>
#include <string>

namespace dirmn_r {

// ---------------------------------------------------------------------------
// Failures (errors.cpp)

// A failure, held in C++ until it is handed to R: the status, the whole
// message, the detail (the message without function and position) and the
// position, 0-based as the library's dirmn_error_location gives it, -1 where
// it does not apply. Built without R allocations, so that it can be taken
// while C++ objects that own handles are alive.
struct Failure {
  int status = DIRMN_SUCCESS;
  std::string message, detail;
  const char* argument = "";  // static
  int64_t row = -1, column = -1, vector = -1, index = -1;
  bool has_value = false;
  double value = 0.0;
  // An integer the caller passed (a count, a p, i or j slot entry), exactly.
  bool has_integer_value = false;
  int64_t integer_value = 0;
};

// The last failure the library recorded on ctx (NULL: on this thread before
// a context existed), with its location.
Failure library_error(const dirmn_context* ctx, dirmn_status status);

// The R object of class "dirmn_failure" for a failure.
SEXP failure(const Failure& f);
// A failure found by the bindings, without a position: `message` is its
// whole text.
SEXP failure(int status, const std::string& message);

// body(body_data) under R_tryCatch with an exiting handler for errors and
// interrupts alike (handler(condition, handler_data)): the R code the
// library's callbacks run, whose conditions must never jump through it.
inline void try_catch_errors(SEXP (*body)(void*), void* body_data, SEXP (*handler)(SEXP, void*),
                             void* handler_data) {
  SEXP classes = PROTECT(Rf_allocVector(STRSXP, 2));
  SET_STRING_ELT(classes, 0, Rf_mkChar("error"));
  SET_STRING_ELT(classes, 1, Rf_mkChar("interrupt"));
  R_tryCatch(body, body_data, classes, handler, handler_data, nullptr, nullptr);
  UNPROTECT(1);
}

inline SEXP library_failure(const dirmn_context* ctx, dirmn_status status) {
  return failure(library_error(ctx, status));
}

// ---------------------------------------------------------------------------
// External pointers and handles (context.cpp, counts.cpp)

SEXP sym_context();
SEXP sym_counts();
SEXP sym_closed();  // tag of a counts pointer after close()
SEXP sym_mixture();
SEXP sym_regression();

bool is_xptr(SEXP x, SEXP tag);
// The context behind a context pointer, or NULL.
dirmn_context* context_of(SEXP ctx_xp);

// The context running a fit whose progress callback is in R right now, and
// the table it reads. The library forbids calls on that context from inside
// the callback, so entry points refuse them (a progress message handler that
// calls dirmn), and close() refuses that table (the fit reads it, and the
// caller's R code reads it again after the fit). Closing or finalizing any
// other table or mixture of the context there is fine: the library frees a
// handle destroyed from inside a call on its context when the call returns.
extern const dirmn_context* g_busy_context;
extern const dirmn_counts* g_busy_counts;
extern const char* const kBusyMessage;

struct BusyScope {
  const dirmn_context* saved;
  const dirmn_counts* saved_counts;
  BusyScope(const dirmn_context* ctx, const dirmn_counts* counts)
      : saved(g_busy_context), saved_counts(g_busy_counts) {
    g_busy_context = ctx;
    g_busy_counts = counts;
  }
  ~BusyScope() {
    g_busy_context = saved;
    g_busy_counts = saved_counts;
  }
  BusyScope(const BusyScope&) = delete;
  BusyScope& operator=(const BusyScope&) = delete;
};

// The context and counts handles behind a counts external pointer, with
// its description, or a failure (an R object) explaining why there are
// none: use the handles only when `failed` is R_NilValue.
struct PreparedCounts {
  dirmn_context* ctx = nullptr;
  dirmn_counts* counts = nullptr;
  dirmn_counts_info info{};
  SEXP failed = R_NilValue;
};
PreparedCounts prepared_counts(SEXP xp);

// The failure for a context pointer that cannot be used now (gone, or busy
// in a fit's progress callback), or R_NilValue.
SEXP unusable_context(dirmn_context* ctx);

// Owns a counts handle made for a single call.
struct CountsGuard {
  dirmn_counts* counts = nullptr;
  CountsGuard() = default;
  CountsGuard(const CountsGuard&) = delete;
  CountsGuard& operator=(const CountsGuard&) = delete;
  ~CountsGuard() { dirmn_counts_destroy(counts); }
};

// ---------------------------------------------------------------------------
// Tables as R holds them (counts.cpp)

enum TableKind { TABLE_DENSE = 0, TABLE_CSC = 1, TABLE_CSR = 2 };

struct Table {
  TableKind kind = TABLE_DENSE;
  int64_t rows = 0, cols = 0;
  SEXP data = R_NilValue;   // dense: the matrix or vector; sparse: the x slot
  SEXP ptr = R_NilValue;    // sparse: the p slot
  SEXP index = R_NilValue;  // sparse: the i (CSC) or j (CSR) slot
  int64_t nnz = 0;
};

// Reads the shape and arrays of `x` without copying; false with a message
// when x is not a table the bindings can pass.
bool describe_table(SEXP x, int kind, Table* t, std::string* message);
dirmn_status create_counts(dirmn_context* ctx, const Table& t, dirmn_counts** out);
// A counts external pointer without a handle yet, owning whatever handle
// adopt_counts gives it (freed by its finalizer or close()); it protects
// the context's pointer, so the context lives at least as long as any
// table made with it. Made before the handle, so that an R allocation
// failure cannot leak one.
SEXP new_counts_xptr(SEXP ctx_xp);
void adopt_counts(SEXP xp, dirmn_counts* counts);
// The failure of create_counts: the library's, or R's "count is NA" where
// the table holds R's NA.
Failure counts_error(dirmn_context* ctx, dirmn_status status, const Table& t);

// ---------------------------------------------------------------------------
// Parameters and weights (loglik.cpp)

// How alpha is laid out against a rows x cols table: one vector shared by
// every row (a vector of cols values), k vectors (a k x cols matrix, one
// per row of the matrix: every row of the table under each), or one vector
// per row of the table (a rows x cols matrix, `rowwise`).
enum AlphaShape { ALPHA_SHARED = 0, ALPHA_VECTORS = 1, ALPHA_ROWWISE = 2 };
struct AlphaLayout {
  AlphaShape shape = ALPHA_SHARED;
  int64_t k = 1;  // the number of vectors (ALPHA_VECTORS), else 1
};

// Checks alpha's type and shape against a rows x cols table (values are the
// library's to check): a vector is shared, a matrix holds k vectors, or one
// per row where `rowwise`. Returns R_NilValue or the failure.
SEXP check_alpha(SEXP alpha, int64_t rows, int64_t cols, bool rowwise, AlphaLayout* layout);
// The same for functions that take one shared vector only (`what` names it).
SEXP check_shared_alpha(SEXP alpha, int64_t cols, const char* what);
// The failure of a likelihood call on alpha: the library's, or R's "alpha
// is NA" where alpha holds R's NA.
Failure alpha_error(dirmn_context* ctx, dirmn_status status, SEXP alpha, int64_t rows,
                    const AlphaLayout& layout);
// Weights: NULL, or a double vector with one value per row (values are the
// library's to check; R code has reported NA already). R_NilValue or the
// failure.
SEXP check_weights(SEXP weights, int64_t rows);
inline const double* weights_ptr(SEXP weights) {
  return weights == R_NilValue ? nullptr : REAL(weights);
}

// ---------------------------------------------------------------------------
// Progress callbacks into R (progress.cpp)

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

// A dirmn_progress_fn; user_data is a ProgressBridge.
int progress_callback(int iteration, double value, double change, void* user);

// Resumes a jump intercepted by progress_callback; never returns.
[[noreturn]] void resume_jump(SEXP token);

// Polled by the library during long calls (a dirmn_interrupt_fn).
int interrupt_callback(void*);

// Test hook: 1 makes the interrupt callback ask the library to stop, 2
// makes its R check raise an error, so the cancellation paths can be tested
// without a real SIGINT or time limit.
extern int g_force_cancel_mode;

// What stopped the last cancelled call, in R's words ("interrupted", or an
// error's message such as "reached elapsed time limit"), "" if unknown;
// set by the interrupt callback, read once by library_error.
extern std::string g_cancel_cause;

// Number of counts, mixture and regression handles owned by live external pointers;
// tests read them to see that finalizers and close() really free handles.
extern long g_live_counts;
extern long g_live_mixtures;
extern long g_live_regressions;

// ---------------------------------------------------------------------------
// Communicators (communicator.cpp)

SEXP sym_communicator();

// How many communicator callbacks are running R code now (the caller's
// allreduce and broadcast functions, inside a collective dirmn call). The
// library forbids calls on the context of that call from its callbacks;
// the bindings do not know which context it is, so while one runs every
// entry point that reaches a context refuses (prepared_counts,
// unusable_context).
extern int g_comm_callback_depth;
extern const char* const kCommCallbackMessage;

// Why the last communicator callback failed, in R's words (the error its R
// function raised, or what was wrong with its result), "" if none; set by
// the first failing callback of a call, read once (and cleared) by
// library_error, which adds it to the library's COMMUNICATION message.
extern std::string g_comm_cause;

// Communicators whose R functions are still preserved: made, and not yet
// released by the library (the handle and every counts object attached to
// it gone). Tests read it.
extern long g_live_communicators;

// A seed as R code passes it (.check_seed, R/mixture.R): a whole double
// in 0 .. 2^53, or a string of decimal digits for any 64-bit seed (a double
// holds no more). 0 for anything else (R code has checked it).
inline uint64_t seed_of(SEXP seed) {
  if (TYPEOF(seed) == REALSXP && XLENGTH(seed) == 1) return static_cast<uint64_t>(REAL(seed)[0]);
  if (TYPEOF(seed) == STRSXP && XLENGTH(seed) == 1) {
    uint64_t v = 0;
    for (const char* c = CHAR(STRING_ELT(seed, 0)); *c >= '0' && *c <= '9'; ++c)
      v = v * 10 + static_cast<uint64_t>(*c - '0');
    return v;
  }
  return 0;
}

}  // namespace dirmn_r

#endif  // DIRMN_R_COMMON_H
