#' Errors signalled by dirmn
#'
#' Every error raised by dirmn is a condition of classes
#' `c("dirmn_error_<status>", "dirmn_error", "error", "condition")`, where
#' `<status>` names the libdirmn status that caused it, so callers can handle
#' one kind of failure with [tryCatch()] and let others through. The condition
#' carries the library's detailed message (what was wrong and where, for
#' example `"row 17, column 3: count -2 is negative"`) in `message`, the
#' status number in `status`, and the user's call in `call`.
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
#' | `dirmn_error_cancelled` | 11 | the computation was interrupted (Ctrl-C) |
#' | `dirmn_error_not_supported` | 12 | the backend cannot serve a valid request |
#' | `dirmn_error_internal` | 99 | a bug in libdirmn |
#'
#' A package built against one major version of libdirmn that finds another
#' at load time fails with class `dirmn_error_version_mismatch`.
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

# Class suffixes by dirmn_status value (dirmn.h).
.status_names <- c(
  "1" = "null_pointer",
  "2" = "invalid_argument",
  "3" = "invalid_counts",
  "4" = "invalid_parameter",
  "5" = "dimension_mismatch",
  "6" = "wrong_context",
  "7" = "out_of_memory",
  "8" = "backend_unavailable",
  "9" = "device",
  "10" = "overflow",
  "11" = "cancelled",
  "12" = "not_supported",
  "99" = "internal"
)

.status <- c(
  null_pointer = 1L, invalid_argument = 2L, invalid_counts = 3L,
  invalid_parameter = 4L, dimension_mismatch = 5L, cancelled = 11L
)

dirmn_condition <- function(status, message, call = NULL) {
  name <- .status_names[as.character(status)]
  if (is.na(name)) name <- "unknown"
  structure(
    class = c(paste0("dirmn_error_", name), "dirmn_error", "error", "condition"),
    list(message = message, call = call, status = as.integer(status))
  )
}

# Raises the condition for a "dirmn_failure" returned by the C++ layer.
.raise <- function(failure, call) {
  stop(dirmn_condition(failure$status, .r_message(failure$message), call))
}

# Restates a library message for R users: the C function name goes (the R
# call already says where), 0-based positions become R's 1-based rows and
# columns, a parameter's "index" is the column it belongs to, non-finite
# values print as R prints them, and hints about C-level flags go.
#   "dirmn_loglik: vector 0, index 3 (0-based): alpha -inf is infinite"
#   -> "column 4: alpha -Inf is infinite"
.r_message <- function(message) {
  message <- sub("^dirmn_[a-z_]+: ", "", message)
  message <- gsub(" \\(set DIRMN_[A-Z_]+[^)]*\\)", "", message)
  message <- gsub("(^|[ (])(-?)inf\\b", "\\1\\2Inf", message)
  message <- gsub("(^|[ (])nan\\b", "\\1NaN", message)
  # The alpha-sum check names its vector 0-based without saying so.
  message <- sub("^vector 0: the sum of alpha", "the sum of alpha", message)
  message <- sub("^(row|vector) ([0-9]+): the sum of alpha", "\\1 \\2 (0-based): the sum of alpha",
                 message)
  marker <- " (0-based)"
  at <- regexpr(marker, message, fixed = TRUE)
  if (at < 0) return(message)
  head <- substr(message, 1L, at - 1L)
  tail <- substr(message, at + nchar(marker), nchar(message))
  positions <- gregexpr("(row|column|vector|index) [0-9]+", head)
  regmatches(head, positions) <- lapply(regmatches(head, positions), function(found) {
    words <- sub(" .*", "", found)
    numbers <- as.numeric(sub(".* ", "", found)) + 1
    sprintf("%s %.0f", words, numbers)
  })
  # ddirmn() passes a single shared vector, so "vector 1" says nothing
  head <- sub("^vector 1, index", "column", head)
  head <- sub("index", "column", head, fixed = TRUE)
  paste0(head, tail)
}

.stop <- function(status_name, message, call) {
  stop(dirmn_condition(.status[[status_name]], message, call))
}

.failed <- function(res) inherits(res, "dirmn_failure")
