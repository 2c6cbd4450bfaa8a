# Argument checks, warnings, deprecated names and progress reporting shared
# by the package's functions.

# Signals a warning of class dirmn_convergence_warning (a fit or EM run that
# stopped at maxit); the caller goes on with its result.
.warn_convergence <- function(message, call) {
  warning(structure(class = c("dirmn_convergence_warning", "warning", "condition"),
                    list(message = message, call = call)))
}

.check_flag <- function(value, name, call) {
  if (!isTRUE(value) && !isFALSE(value)) {
    .stop("invalid_argument", sprintf("%s must be TRUE or FALSE", name), call)
  }
  invisible(value)
}

.check_positive <- function(value, name, call) {
  if (!is.numeric(value) || length(value) != 1L || is.na(value) || !is.finite(value) ||
      value <= 0) {
    .stop("invalid_argument", sprintf("%s must be a single positive finite number", name), call)
  }
  as.double(value)
}

.check_count <- function(value, name, call, min = 1L) {
  if (!is.numeric(value) || length(value) != 1L || is.na(value) || value != trunc(value) ||
      value < min || value > .Machine$integer.max) {
    .stop("invalid_argument", sprintf("%s must be a single whole number >= %d", name, min), call)
  }
  as.integer(value)
}

# Row weights as a double vector (or NULL); NA and NaN are reported here
# (each by its name: is.na() is TRUE for both), other bad values by the
# library, each with its 1-based row.
.as_weights <- function(weights, rows, call) {
  if (is.null(weights)) return(NULL)
  .refuse_integer64(weights, "weights", call)
  if (!(is.numeric(weights) || is.logical(weights)) || sum(dim(weights) > 1L) > 1L) {
    .stop("invalid_parameter", "weights must be a numeric vector with one value per row", call)
  }
  if (length(weights) != rows) {
    .stop("dimension_mismatch", sprintf(
      "weights has length %d but the counts have %d rows", length(weights), rows), call)
  }
  if (anyNA(weights)) {
    row <- which(is.na(weights))[1L]
    .stop("invalid_parameter", sprintf(
      "weight of row %d is %s; weights must be finite and >= 0", row,
      if (is.nan(weights[[row]])) "NaN" else "NA"), call)
  }
  as.double(weights)
}

.as_start <- function(start, cols, call) {
  .refuse_integer64(start, "start values", call)
  if (!is.numeric(start) || sum(dim(start) > 1L) > 1L) {
    .stop("invalid_parameter", "start must be a numeric vector with one value per column", call)
  }
  if (length(start) != cols) {
    .stop("dimension_mismatch", sprintf(
      "start has length %d but the counts have %d columns", length(start), cols), call)
  }
  # NA here; NaN (is.na() too) and other bad values by the library
  na <- is.na(start) & !is.nan(start)
  if (any(na)) {
    .stop("invalid_parameter", sprintf("start column %d: alpha is NA", which(na)[1L]), call)
  }
  as.double(start)
}

# The R function that the C++ layer calls once per iteration of a fit: it
# reports `text(iteration, value, change)` through message(). An interrupt
# while it runs stops the fit (TRUE asks the library to cancel), so Ctrl-C
# gives a dirmn_error_cancelled error whether it lands in the library or
# here; any other jump out of message() (an error in a handler, an exiting
# handler) is carried past the library by the C++ layer and resumed.
.progress_reporter <- function(text) {
  function(iteration, value, change) {
    tryCatch({
      message(text(iteration, value, change))
      FALSE
    }, interrupt = function(e) TRUE)
  }
}

# Old names of arguments (issue #25: one vocabulary, bindings/names.tsv),
# still accepted through `...` with a warning of class
# dirmn_deprecated_warning. `dots` is list(...) of the caller, `renames` a
# named character vector old = "new". Returns a list of the values given
# under the old names, by their new names; an argument in `...` that is
# neither an old name nor anything else the caller takes is an error naming
# it, as R's "unused argument" would be (`allowed`: other names the caller
# reads from its dots).
.renamed_args <- function(dots, renames, call, allowed = character()) {
  out <- list()
  if (length(dots) == 0L) return(out)
  nms <- names(dots)
  if (is.null(nms)) nms <- rep("", length(dots))
  for (i in seq_along(dots)) {
    old <- nms[[i]]
    if (old %in% names(renames)) {
      new <- renames[[old]]
      .warn_deprecated(sprintf("argument %s is deprecated; use %s", old, new), call)
      out[[new]] <- dots[[i]]
    } else if (!(old %in% allowed)) {
      .stop("invalid_argument", sprintf(
        "unused argument %s", if (nzchar(old)) old else sprintf("(unnamed argument %d in ...)", i)),
        call)
    }
  }
  out
}

# The old names that R's partial matching hands to a new argument (`tol` is
# a prefix of `tolerance`), which .renamed_args() never sees: warned from
# the names of the caller's call.
.warn_partial_renames <- function(call, renames) {
  typed <- names(call)
  for (old in intersect(names(renames), typed)) {
    .warn_deprecated(sprintf("argument %s is deprecated; use %s", old, renames[[old]]), call)
  }
}

# Signals a warning of class dirmn_deprecated_warning (also a
# deprecatedWarning, R's class for them); the call goes on.
.warn_deprecated <- function(message, call) {
  warning(structure(class = c("dirmn_deprecated_warning", "deprecatedWarning", "warning",
                              "condition"),
                    list(message = message, call = call)))
}

# A value from the renamed arguments (see .renamed_args) where the new name
# was left missing; both given is an error.
.pick_renamed <- function(renamed, name, value, missing_new, call) {
  if (is.null(renamed[[name]])) return(value)
  if (!missing_new) {
    .stop("invalid_argument", sprintf("give %s once (its old name is deprecated)", name), call)
  }
  renamed[[name]]
}
