#' Errors signalled by dirmn
#'
#' Every error raised by dirmn is a condition of classes
#' `c("dirmn_error_<status>", "dirmn_error", "error", "condition")`, where
#' `<status>` is the name libdirmn gives the status that caused it, so callers
#' can handle one kind of failure with [tryCatch()] and let others through.
#' The condition carries a detailed message (what was wrong and where, with
#' rows and columns counted from 1, for example
#' `"row 17, column 3: count -2 is negative"`) in `message`, the status number
#' in `status`, and the user's call in `call`. A sparse matrix whose
#' structure is corrupt is reported in terms of its slots, entries counted
#' from 1 and values as stored (0-based), for example
#' `"x@i[1] = 7 (column 1) is not a row index of a 3-row matrix (x@i holds 0-based row indices, 0 to 2)"`
#' or `"x@p[3] = 1 is below x@p[2] = 3 (the p slot must not decrease)"`.
#'
#' | class | status | raised when |
#' |---|---|---|
#' | `dirmn_error_null_pointer` | 1 | a [dirmn_counts()] object was closed or restored from disk |
#' | `dirmn_error_invalid_argument` | 2 | a size, flag, backend name or device is invalid, or `x` has an unsupported type |
#' | `dirmn_error_invalid_counts` | 3 | a count is negative, `NA`, `NaN`, infinite or not an integer |
#' | `dirmn_error_invalid_parameter` | 4 | an alpha is `NA`, not positive or not finite |
#' | `dirmn_error_dimension_mismatch` | 5 | alpha's length or shape does not match the counts |
#' | `dirmn_error_wrong_context` | 6 | an object belongs to another context |
#' | `dirmn_error_out_of_memory` | 7 | host or device memory ran out |
#' | `dirmn_error_backend_unavailable` | 8 | CUDA was asked for but is not compiled in, or the device does not exist |
#' | `dirmn_error_device` | 9 | the CUDA runtime reported an error |
#' | `dirmn_error_overflow` | 10 | a size computation overflows |
#' | `dirmn_error_cancelled` | 11 | the computation was interrupted (Ctrl-C) or ran past a `setTimeLimit()` limit; the message says which |
#' | `dirmn_error_not_supported` | 12 | the backend cannot serve a valid request, `vcov()` of a regression whose covariance is not kept (above 5000 coefficients), or a group test of a table split over a [dirmn_communicator()] |
#' | `dirmn_error_context_in_use` | 13 | the context is serving another call (the package serialises its own calls, so this names a misuse from compiled code) |
#' | `dirmn_error_communication` | 14 | a function of a [dirmn_communicator()] failed (its R error is in the message), or another rank's part of a collective call failed |
#' | `dirmn_error_internal` | 99 | a bug in libdirmn |
#'
#' A package built against one major version of libdirmn that finds another
#' at load time fails with class `dirmn_error_version_mismatch`.
#'
#' @section Warnings:
#' A fit or mixture that stops at `max_iterations` without converging warns
#' with a condition of class `dirmn_convergence_warning` (and `"warning"`,
#' `"condition"`); see [dirmn_fit()]. An argument given by a name of a
#' version before 0.3.0 (`tol`, `maxit`, `init = "kmeans++"`, `k` of the
#' mixture methods, ...) warns with class `dirmn_deprecated_warning` (and
#' `"deprecatedWarning"`); `AIC(m, k = )` of a mixture with a `k` that is
#' also a number of fitted components warns with class
#' `dirmn_argument_warning`.
#'
#' @name dirmn_error
#' @examples
#' x <- matrix(c(1L, 2L, -1L, 4L), nrow = 2)
#' tryCatch(
#'   ddirmn(x, alpha = c(1, 1)),
#'   dirmn_error_invalid_counts = function(e) conditionMessage(e)
#' )
#' e <- tryCatch(ddirmn(x, alpha = c(1, 1, 1)), dirmn_error = identity)
#' class(e)
#' e$status
NULL

# The condition class of a status: "dirmn_error_" and the part of the
# library's dirmn_status_name after "DIRMN_ERROR_", lower-cased
# ("DIRMN_ERROR_INVALID_COUNTS" -> "dirmn_error_invalid_counts");
# "dirmn_error_unknown" for statuses the library does not know.
.status_class <- function(name) {
  if (is.na(name) || !startsWith(name, "DIRMN_ERROR_")) return("dirmn_error_unknown")
  paste0("dirmn_error_", tolower(substring(name, nchar("DIRMN_ERROR_") + 1L)))
}

# The number of the status whose class is "dirmn_error_<suffix>", from the
# statuses of the header the package was built with (for the errors R code
# raises itself).
.status_code <- function(suffix) {
  codes <- .state$statuses
  if (is.null(codes)) codes <- .state$statuses <- cpp_statuses()
  code <- codes[vapply(names(codes), .status_class, "") == paste0("dirmn_error_", suffix)]
  if (length(code) != 1L) stop("internal error: no dirmn status for ", suffix)
  unname(code)
}

dirmn_condition <- function(status, message, call = NULL,
                            name = cpp_status_name(as.integer(status))) {
  structure(
    class = c(.status_class(name), "dirmn_error", "error", "condition"),
    list(message = message, call = call, status = as.integer(status))
  )
}

# Raises the condition for a "dirmn_failure" returned by the C++ layer.
# `table` (from .as_table()) and `alpha` (from .alpha_form()) say what the
# call passed, for the wording of positions in them.
.raise <- function(failure, call, table = NULL, alpha = NULL) {
  stop(dirmn_condition(failure$status, .location_message(failure, table, alpha), call,
                       failure$name))
}

# The message of a failure for R users, from its location (see
# src/errors.cpp): the position the library reports 0-based, worded
# 1-based as R counts, before the detail (the library's message without
# its C function name, which the R call replaces, and without hints about
# C-level flags).
#   row 0, column 41, "count -1 is negative" -> "row 1, column 42: count -1 is negative"
#   vector 0, index 3, "alpha -Inf is infinite" -> "column 4: alpha -Inf is infinite"
# A parameter's index is the column it belongs to. For a single vector
# (`alpha` "vector", as dirmn_loglik_sum() and a vector alpha of ddirmn()
# pass) "vector 1" is left out; for K vectors (`alpha` "matrix", one per
# row of a K x V matrix) the vector is alpha's row; with `alpha` "rowwise"
# the row is the counts' (and alpha's). A proportion of
# dirmn_test_proportions (`argument` "proportions") is the column it
# belongs to. A position without an index is a vector whose sum overflows
# (dirmn_error_location). A bad row weight is worded from its value.
# Positions of a sparse matrix's structure are worded as the slots of the
# R object (`table`): "x@i[3] = 7", "x@p[2]" (the slots' values stay as R
# stores them, 0-based).
# A count is quoted as R prints it (the library writes the fewest digits
# that read back as the same double, which can differ from R's), an integer
# as the caller's integer, exactly.
# `location` is a list with `detail` and any of `argument`, `row`,
# `column`, `vector`, `index` (0-based; missing, NA or negative where they
# do not apply), `value` and `integer_value` (a string; NA where the value
# is not an integer the caller passed).
.location_message <- function(location, table = NULL, alpha = NULL) {
  at <- function(name) {
    p <- location[[name]]
    if (is.null(p) || length(p) != 1L || is.na(p) || p < 0) NA_real_ else p
  }
  row <- at("row")
  column <- at("column")
  vector <- at("vector")
  index <- at("index")
  argument <- location$argument
  if (is.null(argument) || is.na(argument)) argument <- ""
  value <- location$value
  if (is.null(value) || length(value) != 1L) value <- NA_real_
  integer_value <- location$integer_value
  if (is.null(integer_value) || length(integer_value) != 1L) integer_value <- NA_character_
  detail <- .drop_c_hints(location$detail)
  if (argument == "data" && is.na(integer_value)) detail <- .count_as_r(detail, value)
  n <- function(p) format(p + 1, scientific = FALSE)
  has <- !is.na(c(row = row, column = column, vector = vector, index = index))
  position <- function(...) identical(unname(has), c(...))
  if (argument %in% c("indices", "ptr") && any(has)) {
    return(.sparse_message(argument, row, column, index, value, detail, table, integer_value))
  }
  if (argument == "params" && !is.na(vector) && is.na(index) && is.na(row) ||
      argument == "params" && !is.na(row) && is.na(index) && is.na(vector)) {
    detail <- paste(detail, "(above the largest double, 1.8e+308)")
  }
  where <- if (!any(has)) {
    NULL
  } else if (position(TRUE, TRUE, FALSE, FALSE)) {
    sprintf("row %s, column %s", n(row), n(column))
  } else if (position(FALSE, FALSE, TRUE, TRUE)) {
    if (identical(alpha, "matrix")) sprintf("row %s, column %s of alpha", n(vector), n(index))
    else if (vector == 0) sprintf("column %s", n(index))
    else sprintf("vector %s, column %s", n(vector), n(index))
  } else if (position(TRUE, FALSE, FALSE, TRUE)) {
    sprintf("row %s, column %s", n(row), n(index))
  } else if (position(FALSE, FALSE, TRUE, FALSE)) {
    if (identical(alpha, "matrix")) sprintf("row %s of alpha", n(vector))
    else if (vector == 0) NULL
    else sprintf("vector %s", n(vector))
  } else if (position(TRUE, FALSE, FALSE, FALSE)) {
    # (a NaN value is a value; NA is none)
    if (argument == "weights" && (!is.na(value) || is.nan(value))) {
      return(sprintf("weight of row %s is %s; weights must be finite and >= 0", n(row),
                     format(value, digits = 15L)))
    }
    sprintf("row %s", n(row))
  } else if (position(FALSE, FALSE, FALSE, TRUE)) {
    if (argument == "start") sprintf("start column %s", n(index))
    else if (argument == "proportions") sprintf("column %s", n(index))
    else sprintf("%s element %s", argument, n(index))
  } else {
    words <- c("row", "column", "vector", "index")[has]
    paste(words, vapply(c(row, column, vector, index)[has], n, ""), collapse = ", ")
  }
  if (is.null(where)) detail else paste0(where, ": ", detail)
}

# The library's "count <value> ..." about a double count, with the value as
# R prints it with 15 significant digits (0.1, 2.5, 1e+300), except that a
# whole number below 1e17 keeps all its digits, so 2^53 + 2 reads
# 9007199254740994, never a rounding of it below 2^53. The library writes
# it %.17g ("0.10000000000000001"), and Inf, -Inf and NaN as R does. (C's
# printf, not format() or deparse(): R's own formatting goes through long
# double, which valgrind computes as double, and the test suite runs under
# valgrind too.)
.count_as_r <- function(detail, value) {
  if (is.na(value) || !is.finite(value)) return(detail)
  prefix <- paste0("count ", sprintf("%.17g", value), " ")
  if (!startsWith(detail, prefix)) return(detail)
  text <- if (abs(value) < 1e17 && value == trunc(value)) sprintf("%.0f", value)
          else sprintf("%.15g", value)
  paste0("count ", text, " ", substring(detail, nchar(prefix) + 1L))
}

# A fault in the structure of a sparse table, in the terms of the R object
# the user passed: its p slot (`argument` "ptr"; entry `index` of it) and
# its i (dgCMatrix) or j (dgRMatrix) slot ("indices": entry `index`, in
# column `column` or row `row`; or, without an index, a cell stored twice).
# R's slots hold 0-based values, as the library's arrays do, so the values
# are quoted as stored (the caller's integer, `integer_value`, where the
# library gives it) while entries and rows are counted from 1. Without
# `table` (not expected) the positions are still worded 1-based.
.sparse_message <- function(argument, row, column, index, value, detail, table,
                            integer_value = NA_character_) {
  n <- function(p) format(p + 1, scientific = FALSE)
  v <- function(x) format(x, scientific = FALSE)
  value_text <- if (is.na(integer_value)) v(value) else integer_value
  csc <- is.null(table) || table$kind == .kind[["csc"]]
  name <- if (is.null(table$arg)) "x" else table$arg
  if (isTRUE(table$converted)) name <- sprintf("as(%s, \"CsparseMatrix\")", name)
  slot <- if (csc) "i" else "j"
  if (argument == "indices") {
    if (is.na(index)) {
      # a cell stored twice
      if (is.na(row) || is.na(column)) return(detail)
      return(sprintf("cell [%s, %s] is stored more than once: %s@%s holds %s twice in %s %s",
                     n(row), n(column), name, slot, v(if (csc) row else column),
                     if (csc) "column" else "row", n(if (csc) column else row)))
    }
    outer <- if (csc) column else row
    if (is.null(table) || is.na(value) || is.na(outer)) {
      return(sprintf("%s@%s[%s]: %s", name, slot, n(index), detail))
    }
    extent <- table$dim[if (csc) 1L else 2L]
    return(sprintf(
      "%s@%s[%s] = %s (%s %s) is not a %s index of a %s-%s matrix (%s@%s holds 0-based %s indices, 0 to %s)",
      name, slot, n(index), value_text, if (csc) "column" else "row", n(outer),
      if (csc) "row" else "column", v(extent), if (csc) "row" else "column", name, slot,
      if (csc) "row" else "column", v(extent - 1)))
  }
  # the p slot
  if (is.na(index)) return(sprintf("%s@p: %s", name, detail))
  p <- if (!is.null(table) && methods::is(table$data, "sparseMatrix")) table$data@p else NULL
  if (is.na(value) || is.null(p) || index >= length(p)) {
    return(sprintf("%s@p[%s]: %s", name, n(index), detail))
  }
  if (index == 0) {
    return(sprintf("%s@p[1] = %s, but the p slot must start at 0", name, value_text))
  }
  previous <- p[[index]]
  if (value < previous) {
    return(sprintf("%s@p[%s] = %s is below %s@p[%s] = %s (the p slot must not decrease)",
                   name, n(index), value_text, name, v(index), v(previous)))
  }
  sprintf("%s@p[%s] = %s is above %s@p[%s] = %s, the number of stored entries",
          name, n(index), value_text, name, v(length(p)), v(p[[length(p)]]))
}

# Hints about C-level flags ("(set DIRMN_COUNTS_REAL_VALUED for
# real-valued counts)") mean nothing to R users.
.drop_c_hints <- function(detail) gsub(" \\(set DIRMN_[A-Z_]+[^)]*\\)", "", detail)

.stop <- function(status_name, message, call) {
  stop(dirmn_condition(.status_code(status_name), message, call))
}

.failed <- function(res) inherits(res, "dirmn_failure")
