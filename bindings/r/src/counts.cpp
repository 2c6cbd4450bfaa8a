// counts.cpp: tables as R holds them, and prepared tables (counts handles
// owned by external pointers).
#include "common.h"

#include <climits>
#include <vector>

using namespace dirmn_r;

namespace dirmn_r {

long g_live_counts = 0;

SEXP sym_counts() {
  static SEXP s = Rf_install("dirmn_counts");
  return s;
}

// Tells "closed" apart from "restored from disk", since both leave a NULL
// address.
SEXP sym_closed() {
  static SEXP s = Rf_install("dirmn_counts_closed");
  return s;
}

namespace {

void counts_finalizer(SEXP xp) {
  auto* counts = static_cast<dirmn_counts*>(R_ExternalPtrAddr(xp));
  if (counts != nullptr) {
    R_ClearExternalPtr(xp);
    // The library allows this after the context is gone, so the order in
    // which R runs finalizers does not matter; and inside a callback of a
    // call on the context (a gc() in a handler of a fit's progress
    // messages, or finalizers R runs while the interrupt check evaluates),
    // where the library frees the handle when that call returns.
    dirmn_counts_destroy(counts);
    --g_live_counts;
  }
}

std::string unusable_counts_message(SEXP xp) {
  if (R_ExternalPtrTag(xp) == sym_closed())
    return "this dirmn_counts object has been closed; make a new one with dirmn_counts()";
  return "this dirmn_counts object no longer holds a table: prepared tables do not survive "
         "saveRDS()/readRDS(), save()/load() or a new R session; make it again with "
         "dirmn_counts()";
}

bool na_count(int64_t row0, int64_t col0, Failure* f) {
  f->status = DIRMN_ERROR_INVALID_COUNTS;
  f->argument = "data";
  f->row = row0;
  f->column = col0;
  f->message = f->detail = "count is NA";
  return true;
}

// After the library rejected a table: R's NA is stored as INT_MIN (a
// "negative count", in integer and logical tables) or as a NaN payload (a
// "non-finite count"), neither of which tells an R user what happened.
// Looking only on the failure path keeps valid tables free of an extra pass.
// False when there is none.
bool find_na_in_table(const Table& t, Failure* f) {
  if (t.kind == TABLE_DENSE) {
    const R_xlen_t n = XLENGTH(t.data);
    if (TYPEOF(t.data) == INTSXP || TYPEOF(t.data) == LGLSXP) {
      // NA_LOGICAL is NA_INTEGER, and LOGICAL() is INTEGER()'s int array
      const int* v = TYPEOF(t.data) == INTSXP ? INTEGER(t.data) : LOGICAL(t.data);
      for (R_xlen_t k = 0; k < n; ++k)
        if (v[k] == NA_INTEGER) return na_count(k % t.rows, k / t.rows, f);
    } else {
      const double* v = REAL(t.data);
      for (R_xlen_t k = 0; k < n; ++k)
        if (ISNA(v[k])) return na_count(k % t.rows, k / t.rows, f);
    }
    return false;
  }
  const int* ptr = INTEGER(t.ptr);
  const int* index = INTEGER(t.index);
  const double* v = REAL(t.data);
  const int64_t outer = t.kind == TABLE_CSC ? t.cols : t.rows;
  for (int64_t a = 0; a < outer; ++a)
    for (int64_t k = ptr[a]; k < ptr[a + 1] && k < t.nnz; ++k)
      if (ISNA(v[k]))
        return t.kind == TABLE_CSC ? na_count(index[k], a, f) : na_count(a, index[k], f);
  return false;
}

}  // namespace

PreparedCounts prepared_counts(SEXP xp) {
  PreparedCounts p;
  if (TYPEOF(xp) != EXTPTRSXP ||
      (R_ExternalPtrTag(xp) != sym_counts() && R_ExternalPtrTag(xp) != sym_closed())) {
    p.failed = failure(DIRMN_ERROR_INVALID_ARGUMENT, "not a dirmn_counts object");
    return p;
  }
  p.counts = static_cast<dirmn_counts*>(R_ExternalPtrAddr(xp));
  p.ctx = context_of(R_ExternalPtrProtected(xp));
  if (p.counts == nullptr || p.ctx == nullptr) {
    p.failed = failure(DIRMN_ERROR_NULL_POINTER, unusable_counts_message(xp));
    return p;
  }
  if (p.ctx == g_busy_context) {
    p.failed = failure(DIRMN_ERROR_INVALID_ARGUMENT, kBusyMessage);
    return p;
  }
  if (g_comm_callback_depth > 0) {
    p.failed = failure(DIRMN_ERROR_INVALID_ARGUMENT, kCommCallbackMessage);
    return p;
  }
  p.info.size = sizeof p.info;
  const dirmn_status status = dirmn_counts_get_info(p.counts, &p.info);
  if (status != DIRMN_SUCCESS) p.failed = library_failure(nullptr, status);
  return p;
}

// R code has already normalised x to an integer/double/logical vector or
// matrix, a dgCMatrix or a dgRMatrix; the checks here only keep a direct
// call from crashing.
bool describe_table(SEXP x, int kind, Table* t, std::string* message) {
  t->kind = static_cast<TableKind>(kind);
  if (kind == TABLE_DENSE) {
    if (TYPEOF(x) != INTSXP && TYPEOF(x) != REALSXP && TYPEOF(x) != LGLSXP) {
      *message = "x must be an integer, double or logical matrix or vector";
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
    // R stores matrices column-major: element (i, j) sits at i + j * rows.
    // A logical table is read in place as 0/1 int32 counts (R stores
    // FALSE, TRUE and NA as the ints 0, 1 and NA_INTEGER).
    const void* data = nullptr;
    dirmn_dtype dtype = DIRMN_INT32;
    switch (TYPEOF(t.data)) {
      case INTSXP: data = INTEGER(t.data); break;
      case LGLSXP: data = LOGICAL(t.data); break;
      default:
        data = REAL(t.data);
        dtype = DIRMN_FLOAT64;
    }
    return dirmn_counts_create_dense(ctx, out, t.rows, t.cols, dtype, data, 1, t.rows, nullptr);
  }
  return dirmn_counts_create_sparse(ctx, out, t.kind == TABLE_CSC ? DIRMN_CSC : DIRMN_CSR, t.rows,
                                    t.cols, t.nnz, DIRMN_INDEX_INT32, INTEGER(t.ptr),
                                    t.nnz > 0 ? INTEGER(t.index) : nullptr, DIRMN_FLOAT64,
                                    t.nnz > 0 ? REAL(t.data) : nullptr, nullptr);
}

SEXP new_counts_xptr(SEXP ctx_xp) {
  SEXP xp = PROTECT(R_MakeExternalPtr(nullptr, sym_counts(), ctx_xp));
  R_RegisterCFinalizerEx(xp, counts_finalizer, TRUE);
  UNPROTECT(1);
  return xp;
}

void adopt_counts(SEXP xp, dirmn_counts* counts) {
  R_SetExternalPtrAddr(xp, counts);
  ++g_live_counts;
}

Failure counts_error(dirmn_context* ctx, dirmn_status status, const Table& t) {
  Failure f;
  if (status == DIRMN_ERROR_INVALID_COUNTS && find_na_in_table(t, &f)) return f;
  return library_error(ctx, status);
}

}  // namespace dirmn_r

// ---------------------------------------------------------------------------
// Entry points

// [[Rcpp::export(rng = false)]]
SEXP cpp_counts_create(SEXP ctx_xp, SEXP x, int kind) {
  dirmn_context* ctx = context_of(ctx_xp);
  SEXP bad = unusable_context(ctx);
  if (bad != R_NilValue) return bad;
  Table t;
  std::string message;
  if (!describe_table(x, kind, &t, &message)) return failure(DIRMN_ERROR_INVALID_ARGUMENT, message);

  SEXP xp = PROTECT(new_counts_xptr(ctx_xp));
  dirmn_counts* counts = nullptr;
  const dirmn_status status = create_counts(ctx, t, &counts);
  if (status != DIRMN_SUCCESS) {
    SEXP res = failure(counts_error(ctx, status, t));
    UNPROTECT(1);
    return res;
  }
  adopt_counts(xp, counts);
  UNPROTECT(1);
  return xp;
}

// [[Rcpp::export(rng = false)]]
SEXP cpp_counts_close(SEXP xp) {
  if (TYPEOF(xp) != EXTPTRSXP) return failure(DIRMN_ERROR_INVALID_ARGUMENT, "not a dirmn_counts object");
  // From a handler of a fit's progress messages: the table that fit reads
  // stays (R code reads it again once the fit returns); any other table of
  // its context is closed now and freed by the library when the fit returns.
  if (R_ExternalPtrAddr(xp) != nullptr && R_ExternalPtrAddr(xp) == g_busy_counts)
    return failure(DIRMN_ERROR_INVALID_ARGUMENT,
                   "the table a running fit reads cannot be closed from a handler of the fit's "
                   "progress messages; close it after the fit returns");
  if (R_ExternalPtrAddr(xp) != nullptr) {
    counts_finalizer(xp);
    R_SetExternalPtrTag(xp, sym_closed());
  }
  // A closed table holds no communicator (dirmn_set_communicator): let it go.
  Rf_setAttrib(xp, sym_communicator(), R_NilValue);
  return R_NilValue;
}

// dirmn_counts_get_info as a plain list. `host_steps` and
// `unavailable_steps` name the DIRMN_STEP_* bits set.
// [[Rcpp::export(rng = false)]]
SEXP cpp_counts_info(SEXP xp) {
  PreparedCounts p = prepared_counts(xp);
  if (p.failed != R_NilValue) return p.failed;
  const dirmn_counts_info& info = p.info;
  static const struct {
    uint32_t bit;
    const char* name;
  } steps[] = {{DIRMN_STEP_LOGLIK, "loglik"},
               {DIRMN_STEP_LOGLIK_ROWWISE, "loglik_rowwise"},
               {DIRMN_STEP_DERIVATIVES_ROWWISE, "derivatives_rowwise"},
               {DIRMN_STEP_HISTOGRAMS, "histograms"},
               {DIRMN_STEP_MIXTURE_EM, "mixture_em"},
               {DIRMN_STEP_MIXTURE_FITS, "mixture_fits"}};
  auto named_steps = [](uint32_t bits) {
    std::vector<std::string> out;
    for (const auto& s : steps)
      if (bits & s.bit) out.push_back(s.name);
    return Rcpp::CharacterVector(out.begin(), out.end());
  };
  return Rcpp::List::create(
      Rcpp::Named("rows") = static_cast<double>(info.rows),
      Rcpp::Named("cols") = static_cast<double>(info.cols),
      Rcpp::Named("nnz") = static_cast<double>(info.nnz),
      Rcpp::Named("max_count") = info.max_count, Rcpp::Named("total") = info.total,
      Rcpp::Named("real_valued") = (info.flags & DIRMN_COUNTS_REAL_VALUED) != 0,
      Rcpp::Named("storage") = info.storage == DIRMN_STORAGE_SPARSE ? "sparse" : "dense",
      Rcpp::Named("value_bits") = info.value_bits,
      Rcpp::Named("backend") = info.backend == DIRMN_BACKEND_CUDA ? "cuda" : "cpu",
      Rcpp::Named("device") = info.device,
      Rcpp::Named("host_steps") = named_steps(info.host_steps),
      Rcpp::Named("unavailable_steps") = named_steps(info.unavailable_steps));
}

// [[Rcpp::export(rng = false)]]
SEXP cpp_row_totals(SEXP xp) {
  PreparedCounts p = prepared_counts(xp);
  if (p.failed != R_NilValue) return p.failed;
  Rcpp::NumericVector totals(static_cast<R_xlen_t>(p.info.rows));
  const dirmn_status status = dirmn_counts_row_totals(p.ctx, p.counts, totals.begin());
  if (status != DIRMN_SUCCESS) return library_failure(p.ctx, status);
  return totals;
}

// The table as a base R matrix (dirmn_counts_copy_dense, column-major):
// integer where every count is a whole number within R's integer range,
// else double (exact).
// [[Rcpp::export(rng = false)]]
SEXP cpp_counts_dense(SEXP xp) {
  PreparedCounts p = prepared_counts(xp);
  if (p.failed != R_NilValue) return p.failed;
  const int64_t rows = p.info.rows, cols = p.info.cols;
  if (rows > INT_MAX || cols > INT_MAX)
    return failure(DIRMN_ERROR_OVERFLOW, "the table has more rows or columns than an R matrix");
  const bool as_integer = (p.info.flags & DIRMN_COUNTS_REAL_VALUED) == 0 &&
                          p.info.max_count <= static_cast<double>(INT_MAX);
  SEXP out = PROTECT(Rf_allocMatrix(as_integer ? INTSXP : REALSXP, static_cast<int>(rows),
                                    static_cast<int>(cols)));
  void* data = as_integer ? static_cast<void*>(INTEGER(out)) : static_cast<void*>(REAL(out));
  // R's matrices are column-major: cell (i, j) at i + j * rows.
  const dirmn_status status = dirmn_counts_copy_dense(
      p.ctx, p.counts, as_integer ? DIRMN_INT32 : DIRMN_FLOAT64, data, 1, rows);
  if (status != DIRMN_SUCCESS) {
    SEXP res = library_failure(p.ctx, status);
    UNPROTECT(1);
    return res;
  }
  UNPROTECT(1);
  return out;
}

// The table's nonzero cells in compressed sparse columns
// (dirmn_counts_copy_sparse, CSC): the slots p, i (0-based, as a dgCMatrix
// holds them) and x of a dgCMatrix, which R code builds.
// [[Rcpp::export(rng = false)]]
SEXP cpp_counts_csc(SEXP xp) {
  PreparedCounts p = prepared_counts(xp);
  if (p.failed != R_NilValue) return p.failed;
  const int64_t cols = p.info.cols, nnz = p.info.nnz;
  if (p.info.rows > INT_MAX || cols > INT_MAX || nnz > INT_MAX)
    return failure(DIRMN_ERROR_OVERFLOW,
                   "the table has more rows, columns or nonzero cells than a dgCMatrix holds");
  Rcpp::IntegerVector ptr(static_cast<R_xlen_t>(cols + 1));
  Rcpp::IntegerVector index(static_cast<R_xlen_t>(nnz));
  Rcpp::NumericVector values(static_cast<R_xlen_t>(nnz));
  const dirmn_status status = dirmn_counts_copy_sparse(
      p.ctx, p.counts, DIRMN_CSC, DIRMN_INDEX_INT32, ptr.begin(),
      nnz > 0 ? static_cast<void*>(index.begin()) : nullptr, DIRMN_FLOAT64,
      nnz > 0 ? static_cast<void*>(values.begin()) : nullptr);
  if (status != DIRMN_SUCCESS) return library_failure(p.ctx, status);
  return Rcpp::List::create(Rcpp::Named("p") = ptr, Rcpp::Named("i") = index,
                            Rcpp::Named("x") = values);
}

// [[Rcpp::export(rng = false)]]
SEXP cpp_live_counts() { return Rf_ScalarReal(static_cast<double>(g_live_counts)); }
