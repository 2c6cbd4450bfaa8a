// errors.cpp: failure objects, and the status names R's condition classes
// come from.
//
// A failure is a list of class "dirmn_failure":
//   status    the dirmn_status number
//   name      its name, as dirmn_status_name gives it ("DIRMN_ERROR_INVALID_COUNTS")
//   message   the whole message (the library's dirmn_last_error, or the
//             bindings' own text)
//   detail    the message without function and position
//   argument  the argument at fault ("data", "params", "weights", "start", ... or "")
//   row, column, vector, index
//             the position, 0-based, NA where it does not apply
//   value     the offending value, NA where there is none
//   integer_value
//             the offending value as the caller's integer, exactly, as a
//             string (an int64 need not fit a double); NA unless the value is
//             an integer the caller passed (a count of an integer table, a
//             p, i or j slot entry)
// R words the position in its own convention (R/errors.R).
#include "common.h"

#include <cmath>
#include <string>

using namespace dirmn_r;

namespace {

double position(int64_t p) { return p < 0 ? NA_REAL : static_cast<double>(p); }

}  // namespace

namespace dirmn_r {

namespace {

Failure reported_error(const dirmn_context* ctx, dirmn_status status) {
  Failure f;
  f.status = status;
  f.message = dirmn_last_error(ctx);
  if (status == DIRMN_ERROR_CANCELLED && !g_cancel_cause.empty()) {
    // The library knows only that its interrupt callback said stop; R
    // knows why (a Ctrl-C, an elapsed setTimeLimit()).
    f.detail = "cancelled (" + g_cancel_cause + ")";
    g_cancel_cause.clear();
    return f;
  }
  dirmn_error_location where;
  where.size = sizeof where;
  if (dirmn_last_error_location(ctx, &where) != DIRMN_SUCCESS) {
    f.detail = f.message;
    return f;
  }
  f.detail = where.detail != nullptr ? where.detail : f.message;
  f.argument = where.argument != nullptr ? where.argument : "";
  f.row = where.row;
  f.column = where.column;
  f.vector = where.vector;
  f.index = where.index;
  f.has_value = where.has_value != 0;
  f.value = where.value;
  f.has_integer_value = where.has_integer_value != 0;
  f.integer_value = where.integer_value;
  return f;
}

}  // namespace

Failure library_error(const dirmn_context* ctx, dirmn_status status) {
  Failure f = reported_error(ctx, status);
  // The library knows only what a communicator's callback returned ("the
  // communicator's allreduce_int64 callback returned 1"); R knows why (the
  // error its R function raised). Read once, whatever the status.
  std::string cause;
  cause.swap(g_comm_cause);
  if (status == DIRMN_ERROR_COMMUNICATION && !cause.empty()) {
    f.message += ": " + cause;
    f.detail += ": " + cause;
  }
  return f;
}

SEXP failure(const Failure& f) {
  static const char* names[] = {"status", "name",   "message", "detail", "argument",     "row",
                                "column", "vector", "index",   "value",  "integer_value"};
  const int n = static_cast<int>(sizeof names / sizeof names[0]);
  Rcpp::List res(n);
  Rcpp::CharacterVector res_names(n);
  for (int i = 0; i < n; ++i) res_names[i] = names[i];
  res[0] = f.status;
  res[1] = std::string(dirmn_status_name(static_cast<dirmn_status>(f.status)));
  res[2] = f.message;
  res[3] = f.detail;
  res[4] = std::string(f.argument);
  res[5] = position(f.row);
  res[6] = position(f.column);
  res[7] = position(f.vector);
  res[8] = position(f.index);
  res[9] = f.has_value ? f.value : NA_REAL;
  if (f.has_integer_value)
    res[10] = std::to_string(static_cast<long long>(f.integer_value));
  else
    res[10] = Rcpp::CharacterVector::create(NA_STRING);
  res.attr("names") = res_names;
  res.attr("class") = "dirmn_failure";
  return res;
}

SEXP failure(int status, const std::string& message) {
  Failure f;
  f.status = status;
  f.message = message;
  f.detail = message;
  return failure(f);
}

}  // namespace dirmn_r

// ---------------------------------------------------------------------------
// Entry points

// dirmn_status_string: the fixed description ("invalid counts"; "unknown
// status" for values the library does not know).
// [[Rcpp::export(rng = false)]]
SEXP cpp_status_string(int status) {
  return Rf_mkString(dirmn_status_string(static_cast<dirmn_status>(status)));
}

// dirmn_status_name ("DIRMN_ERROR_INVALID_COUNTS"; "DIRMN_STATUS_UNKNOWN").
// [[Rcpp::export(rng = false)]]
SEXP cpp_status_name(int status) {
  return Rf_mkString(dirmn_status_name(static_cast<dirmn_status>(status)));
}

// The statuses of the header this package was built with, named by the
// loaded library's dirmn_status_name: R code raises its own errors with the
// numbers, and words every class from the names.
// [[Rcpp::export(rng = false)]]
SEXP cpp_statuses() {
  static const dirmn_status all[] = {
      DIRMN_SUCCESS,           DIRMN_ERROR_NULL_POINTER,       DIRMN_ERROR_INVALID_ARGUMENT,
      DIRMN_ERROR_INVALID_COUNTS, DIRMN_ERROR_INVALID_PARAMETER, DIRMN_ERROR_DIMENSION_MISMATCH,
      DIRMN_ERROR_WRONG_CONTEXT,  DIRMN_ERROR_OUT_OF_MEMORY,  DIRMN_ERROR_BACKEND_UNAVAILABLE,
      DIRMN_ERROR_DEVICE,         DIRMN_ERROR_OVERFLOW,       DIRMN_ERROR_CANCELLED,
      DIRMN_ERROR_NOT_SUPPORTED,  DIRMN_ERROR_CONTEXT_IN_USE, DIRMN_ERROR_COMMUNICATION,
      DIRMN_ERROR_INTERNAL};
  const int n = static_cast<int>(sizeof all / sizeof all[0]);
  Rcpp::IntegerVector codes(n);
  Rcpp::CharacterVector names(n);
  for (int i = 0; i < n; ++i) {
    codes[i] = static_cast<int>(all[i]);
    names[i] = dirmn_status_name(all[i]);
  }
  codes.attr("names") = names;
  return codes;
}
