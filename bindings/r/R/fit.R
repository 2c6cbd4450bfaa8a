#' Sum of Dirichlet-multinomial log-likelihoods, with gradient and Hessian
#'
#' For one parameter vector shared by all rows of a table, computes the
#' weighted sum over rows of the Dirichlet-multinomial log-likelihood, its
#' gradient and its Hessian. The Hessian has the diagonal-plus-rank-one form
#' \deqn{H = \mathrm{diag}(h) + c\, u u^T,}{H = diag(h) + c u u',}
#' with \eqn{u = (1, \dots, 1)}{u = (1, ..., 1)} for derivatives with respect
#' to alpha and \eqn{u = \alpha}{u = alpha} for derivatives with respect to
#' log alpha; `hessian_diag` is \eqn{h}{h} and `hessian_scalar` is
#' \eqn{c}{c}. Newton steps and the inverse's diagonal then cost O(V) by the
#' Sherman-Morrison formula.
#'
#' The sums come from count histograms built in one pass over the table and
#' kept with a prepared table (see [dirmn_counts()]) while the weights stay
#' the same, so that repeated calls on a prepared table (as in an optimiser)
#' cost O(number of distinct counts), not O(rows x columns).
#'
#' With \eqn{N_b} the total of row \eqn{b}, \eqn{A = \sum_v \alpha_v}{A = sum(alpha)}
#' and weights \eqn{w_b}, the gradient with respect to alpha is
#' \deqn{\sum_b w_b [\psi(n_{bv} + \alpha_v) - \psi(\alpha_v) - \psi(N_b + A) + \psi(A)],}{
#'   sum_b w_b [digamma(n_bv + alpha_v) - digamma(alpha_v) - digamma(N_b + A) + digamma(A)],}
#' \eqn{h_v = \sum_b w_b [\psi'(n_{bv} + \alpha_v) - \psi'(\alpha_v)]}{h_v = sum_b w_b [trigamma(n_bv + alpha_v) - trigamma(alpha_v)]}
#' and \eqn{c = \sum_b w_b [\psi'(A) - \psi'(N_b + A)]}{c = sum_b w_b [trigamma(A) - trigamma(N_b + A)]}.
#'
#' @param x The counts: a matrix, sparse matrix, vector, data frame or a
#'   table prepared with [dirmn_counts()] (see [ddirmn()]).
#' @param alpha One parameter vector shared by all rows, with one value per
#'   column of `x`: alpha (positive, finite), or log alpha when `param =
#'   "logalpha"`.
#' @param weights `NULL` (every row has weight 1) or one finite,
#'   non-negative weight per row.
#' @param param `"alpha"` (`alpha` holds alpha, and the derivatives are with
#'   respect to alpha) or `"logalpha"` (`alpha` holds log alpha, and the
#'   derivatives are with respect to log alpha).
#' @param full If `TRUE` (the default), `value` includes the multinomial
#'   coefficients: the sum of the rows' log pmfs, the log-likelihood. If
#'   `FALSE`, `value` is the kernel (the sum without them). The derivatives
#'   do not depend on it.
#' @param backend Where to evaluate a table that is not prepared: `"auto"`,
#'   `"cpu"` or `"cuda"` (see [dirmn_counts()]); a prepared table stays
#'   where it is.
#'
#' @return A list with elements `value` (the weighted log-likelihood sum,
#'   or its kernel with `full = FALSE`),
#'   `gradient` (one value per column), `hessian_diag` (one value per
#'   column) and `hessian_scalar` (a number), named by the columns of `x`
#'   where it has names.
#' @seealso [dirmn_fit()], which maximises this sum.
#' @export
#' @examples
#' x <- rbind(c(5L, 3L, 2L), c(0L, 10L, 0L), c(3L, 3L, 4L))
#' s <- dirmn_loglik_sum(x, alpha = c(1, 2, 3))
#' s
#' # the full Hessian with respect to alpha
#' H <- diag(s$hessian_diag) + s$hessian_scalar
#' # with respect to log alpha
#' dirmn_loglik_sum(x, alpha = log(c(1, 2, 3)), param = "logalpha")$gradient
dirmn_loglik_sum <- function(x, alpha, weights = NULL, param = c("alpha", "logalpha"),
                             full = TRUE, backend = getOption("dirmn.backend", "auto")) {
  call <- sys.call()
  param <- .match_choice(param, c("alpha", "logalpha"), "param", call)
  .check_flag(full, "full", call)
  if (!is.double(alpha) || is.object(alpha)) alpha <- .as_alpha(alpha, call)
  prepared <- .prepare(x, backend, call, backend_option = missing(backend))
  on.exit(.release(prepared))
  counts <- prepared$counts
  if (!is.null(dim(alpha))) {
    .stop("dimension_mismatch",
          "alpha must be a vector with one value per column (one alpha shared by all rows)", call)
  }
  weights <- .as_weights(weights, counts$dim[1L], call)
  res <- cpp_loglik_sum(counts$ptr, alpha, weights, param == "logalpha", full)
  if (.failed(res)) .raise(res, call, alpha = "vector")
  cn <- counts$dimnames[[2L]]
  if (!is.null(cn)) {
    names(res$gradient) <- cn
    names(res$hessian_diag) <- cn
  }
  res
}

#' Maximum-likelihood fit of a Dirichlet-multinomial distribution
#'
#' Finds the alpha that maximises the Dirichlet-multinomial likelihood of the
#' rows of a count table (one alpha shared by all rows), by Newton's method on
#' log alpha in libdirmn. Each iteration costs O(number of distinct counts),
#' not O(rows x columns): the table is read once, into count histograms.
#'
#' The Newton steps use the diagonal-plus-rank-one Hessian (see
#' [dirmn_loglik_sum()]) with O(V) Sherman-Morrison solves, safeguarded by
#' step halving and by Minka's fixed-point step where Newton does not
#' increase the likelihood. The fit stops when the predicted gain of a Newton
#' step (half the squared Newton decrement) is below `tol` times the
#' absolute log-likelihood. The default start is the method of moments.
#'
#' Special cases:
#' * Rows of zeros and rows of weight 0 contribute nothing (and do not count
#'   in `nobs`).
#' * Columns without counts have their maximum-likelihood alpha at the limit
#'   0: they are reported with alpha 0 and standard error `NA`, and are not
#'   fitted (`zero_columns` counts them).
#' * Data that show no overdispersion (sample variances at or below the
#'   multinomial's) have their supremum in the multinomial limit, where the
#'   sum of alpha grows without bound: `multinomial_limit` is `TRUE`, `alpha`
#'   holds the multinomial proportions, `precision` is `Inf` and standard
#'   errors are `NA`.
#'
#' With `verbose = TRUE` every iteration reports its number, the
#' log-likelihood (with the multinomial coefficient) and the largest
#' gradient component (with respect to log alpha) through [message()]. An
#' interrupt (Ctrl-C), or a time limit set with [setTimeLimit()], stops the
#' fit with an error of class `dirmn_error_cancelled`.
#'
#' A fit that stops at `maxit` iterations without meeting the tolerance
#' warns, with a condition of class `dirmn_convergence_warning` (a
#' `warning`), and returns its last iterate with `converged = FALSE`, as
#' [glm()] does; [suppressWarnings()] with `classes =
#' "dirmn_convergence_warning"` (R >= 4.0) silences only these.
#'
#' @inheritParams dirmn_loglik_sum
#' @param weights `NULL` or one finite, non-negative weight per row. Integer
#'   weights give the same fit as repeating the rows.
#' @param start `NULL` (the method of moments), or starting values of
#'   alpha, one positive value per column.
#' @param tol Relative convergence tolerance (see Details).
#' @param maxit Maximum number of Newton iterations.
#' @param verbose If `TRUE`, report every iteration through [message()].
#'
#' @return An object of class `dirmn_fit`, a list with elements
#'   \describe{
#'     \item{`alpha`}{the fitted alpha, named by the columns of `x`.}
#'     \item{`loglik`}{the maximised log-likelihood, with the multinomial
#'       coefficients: the log pmf of the data.}
#'     \item{`loglik_kernel`}{the same without the multinomial coefficients
#'       (the part that depends on alpha).}
#'     \item{`gradient_norm`}{the largest absolute gradient component with
#'       respect to log alpha at the fit.}
#'     \item{`iterations`, `converged`}{Newton iterations taken; whether the
#'       tolerance was met.}
#'     \item{`multinomial_limit`}{`TRUE` when the multinomial limit fits
#'       best (see Details).}
#'     \item{`zero_columns`}{the number of columns without counts.}
#'     \item{`precision`}{the sum of alpha (`Inf` in the multinomial limit).}
#'     \item{`se_alpha`, `se_log_alpha`}{standard errors of alpha and of log
#'       alpha from the observed information (`NA` for columns without
#'       counts and in the multinomial limit).}
#'     \item{`nobs`}{the number of rows with positive weight and counts.}
#'     \item{`call`}{the call.}
#'   }
#'   Methods: [print()], [summary()], [coef()] (alpha), [vcov()] (the
#'   covariance matrix of alpha), [logLik()] (so [AIC()] and [BIC()] work),
#'   [fitted()] (expected counts) and [nobs()].
#' @seealso [dirmn_loglik_sum()] for the objective and its derivatives;
#'   [dirmn_mixture()] for mixtures of several alphas.
#' @export
#' @examples
#' mite <- as.matrix(read.csv(system.file("extdata", "mite.csv", package = "dirmn"),
#'                            row.names = 1))
#' fit <- dirmn_fit(mite)
#' fit
#' summary(fit)
#' AIC(fit)
#' head(sqrt(diag(vcov(fit))))
#'
#' # weights: integer weights are repeated rows
#' w <- rep(1:2, length.out = nrow(mite))
#' all.equal(coef(dirmn_fit(mite, weights = w)),
#'           coef(dirmn_fit(mite[rep(seq_len(nrow(mite)), w), ])))
#'
#' # data without overdispersion
#' set.seed(1)
#' multi <- t(rmultinom(40, 100, c(0.5, 0.3, 0.2)))
#' dirmn_fit(multi)$multinomial_limit
dirmn_fit <- function(x, weights = NULL, start = NULL, tol = 1e-10, maxit = 1000L,
                      verbose = FALSE, backend = getOption("dirmn.backend", "auto")) {
  call <- match.call()
  ecall <- sys.call()
  .check_flag(verbose, "verbose", ecall)
  tol <- .check_positive(tol, "tol", ecall)
  maxit <- .check_count(maxit, "maxit", ecall, min = 0L)
  prepared <- .prepare(x, backend, ecall, backend_option = missing(backend))
  on.exit(.release(prepared))
  counts <- prepared$counts
  rows <- counts$dim[1L]
  cols <- counts$dim[2L]
  weights <- .as_weights(weights, rows, ecall)
  if (!is.null(start)) start <- .as_start(start, cols, ecall)

  progress <- NULL
  if (verbose) {
    # The C++ layer asks the library for the log pmf (DIRMN_FULL), the
    # log-likelihood on the scale of the result.
    progress <- .progress_reporter(function(iteration, value, change) {
      sprintf("dirmn_fit: iteration %d, log-likelihood %.12g, gradient norm %.3g",
              iteration, value, change)
    })
  }
  res <- cpp_fit(counts$ptr, weights, start, tol, maxit, progress)
  if (.failed(res)) .raise(res, ecall)
  if (!res$converged && !res$multinomial_limit) {
    .warn_convergence(sprintf(
      "did not converge in %d iteration%s (largest gradient component in log alpha %s, tol = %s); the result is the last iterate: increase maxit",
      res$iterations, if (res$iterations == 1) "" else "s", format(res$gradient_norm, digits = 3L),
      format(tol, digits = 3L)), ecall)
  }

  totals <- cpp_row_totals(counts$ptr)
  if (.failed(totals)) .raise(totals, ecall)
  used <- totals > 0
  if (!is.null(weights)) used <- used & weights > 0

  alpha <- res$alpha
  zero <- alpha == 0
  se_alpha <- res$se_alpha
  se_log_alpha <- res$se_log_alpha
  # The library reports 0 where there is no standard error.
  no_se <- zero | se_log_alpha == 0 | res$multinomial_limit
  se_alpha[no_se] <- NA_real_
  se_log_alpha[no_se] <- NA_real_

  # The Hessian with respect to alpha at the fit, which the library returns
  # with it, kept for vcov(); NULL in the multinomial limit and where a
  # single column has counts. Entries of columns without counts are unused.
  hessian <- NULL
  if (!is.null(res$hessian_diag)) {
    hessian <- list(diag = res$hessian_diag, scalar = res$hessian_scalar)
  }

  cn <- counts$dimnames[[2L]]
  names(alpha) <- cn
  names(se_alpha) <- cn
  names(se_log_alpha) <- cn
  structure(
    list(
      alpha = alpha,
      loglik = res$loglik,
      loglik_kernel = res$loglik_kernel,
      gradient_norm = res$gradient_norm,
      iterations = res$iterations,
      converged = res$converged,
      multinomial_limit = res$multinomial_limit,
      zero_columns = as.integer(res$zero_columns),
      precision = res$precision,
      se_alpha = se_alpha,
      se_log_alpha = se_log_alpha,
      nobs = sum(used),
      call = call,
      hessian = hessian,
      row_totals = totals,
      dimnames = counts$dimnames,
      weights = weights
    ),
    class = "dirmn_fit"
  )
}

# ---------------------------------------------------------------------------
# Methods

#' Methods for Dirichlet-multinomial fits
#'
#' Methods for objects returned by [dirmn_fit()].
#'
#' * `coef()` returns alpha.
#' * `vcov()` returns the covariance matrix of alpha, the inverse of the
#'   observed information \eqn{-(\mathrm{diag}(h) + c\,11^T)}{-(diag(h) + c 11')}
#'   (see [dirmn_loglik_sum()]) at the fit, by the Sherman-Morrison formula;
#'   rows and columns of columns without counts are `NA`, and the whole
#'   matrix is `NA` in the multinomial limit.
#' * `logLik()` returns the maximised log-likelihood (with the multinomial
#'   coefficients) as a `"logLik"` object with attributes `df` (the number
#'   of fitted alphas; one fewer in the multinomial limit, whose
#'   proportions sum to 1) and `nobs`, so [AIC()] and [BIC()] work.
#' * `fitted()` returns the expected counts, \eqn{N_b \alpha_v / \sum_v
#'   \alpha_v}{N_b alpha_v / sum(alpha)} for row \eqn{b} with total
#'   \eqn{N_b}{N_b}, as a matrix of the shape of the data.
#' * `nobs()` returns the number of rows with positive weight and counts.
#' * `summary()` adds a table of alpha and log alpha with standard errors
#'   and 95% Wald intervals (computed on the log scale).
#'
#' @param object,x A `dirmn_fit` object (or its summary, for `print()`).
#' @param digits Significant digits to print.
#' @param n Largest number of alphas (or table rows) to print.
#' @param level Confidence level of the intervals in `summary()`.
#' @param ... Unused.
#' @return See Details.
#' @name dirmn_fit-methods
#' @examples
#' bci <- as.matrix(read.csv(system.file("extdata", "bci.csv", package = "dirmn"),
#'                           row.names = 1))
#' fit <- dirmn_fit(bci)
#' s <- summary(fit)
#' head(s$coefficients)
#' logLik(fit)
#' BIC(fit)
#' dim(vcov(fit))
#' fitted(fit)[1:3, 1:4]
NULL

#' @rdname dirmn_fit-methods
#' @export
print.dirmn_fit <- function(x, digits = max(3L, getOption("digits") - 3L), n = 10L, ...) {
  cat("Dirichlet-multinomial maximum-likelihood fit\n")
  if (!is.null(x$call)) cat("Call: ", paste(deparse(x$call), collapse = "\n"), "\n", sep = "")
  cat(sprintf("%s rows (%s with counts and positive weight), %s categories\n",
              .num(length(x$row_totals)), .num(x$nobs), .num(length(x$alpha))))
  if (x$multinomial_limit) {
    cat("No overdispersion: the multinomial limit fits best (precision Inf);",
        "alpha holds the multinomial proportions.\n")
  } else {
    cat("Precision (sum of alpha): ", format(x$precision, digits = digits), "\n", sep = "")
  }
  cat("Log-likelihood: ", format(x$loglik, digits = max(digits, 8L)),
      " (with the multinomial coefficients), df = ", .df_fit(x), "\n", sep = "")
  cat(.convergence_line(x, digits), "\n", sep = "")
  if (x$zero_columns > 0) {
    cat(sprintf(paste0("Note: %d column%s without counts: alpha 0 (the limit of the ",
                       "likelihood), not fitted, no standard error.\n"),
                x$zero_columns, if (x$zero_columns == 1) "" else "s"))
  }
  a <- x$alpha
  if (is.null(names(a))) names(a) <- paste0("V", seq_along(a))
  if (length(a) > n) {
    cat(sprintf("\nalpha (the largest %d of %d):\n", n, length(a)))
    a <- sort(a, decreasing = TRUE)[seq_len(n)]
  } else {
    cat("\nalpha:\n")
  }
  print(a, digits = digits)
  invisible(x)
}

.convergence_line <- function(x, digits = 3L) {
  if (x$multinomial_limit) return("Converged (multinomial limit)")
  sprintf("%s after %d iteration%s (largest gradient component in log alpha %s)",
          if (x$converged) "Converged" else "NOT converged", x$iterations,
          if (x$iterations == 1) "" else "s", format(x$gradient_norm, digits = 3L))
}

.df_fit <- function(x) {
  n <- length(x$alpha) - x$zero_columns
  if (x$multinomial_limit) n - 1L else n
}

#' @rdname dirmn_fit-methods
#' @export
summary.dirmn_fit <- function(object, level = 0.95, ...) {
  if (!is.numeric(level) || length(level) != 1L || !(level > 0 && level < 1)) {
    .stop("invalid_argument", "level must be a single number between 0 and 1", sys.call())
  }
  q <- stats::qnorm(0.5 + level / 2)
  a <- object$alpha
  la <- ifelse(a > 0, log(a), NA_real_)
  pct <- paste(format(100 * c((1 - level) / 2, 1 - (1 - level) / 2), trim = TRUE), "%")
  coefs <- cbind(a, object$se_alpha, la, object$se_log_alpha,
                 exp(la - q * object$se_log_alpha), exp(la + q * object$se_log_alpha))
  dimnames(coefs) <- list(names(a), c("alpha", "Std. Error", "log(alpha)", "Std. Error (log)",
                                      pct[1L], pct[2L]))
  structure(
    list(call = object$call, coefficients = coefs, precision = object$precision,
         loglik = object$loglik, df = .df_fit(object), nobs = object$nobs,
         rows = length(object$row_totals), aic = stats::AIC(object), bic = stats::BIC(object),
         iterations = object$iterations, converged = object$converged,
         gradient_norm = object$gradient_norm, multinomial_limit = object$multinomial_limit,
         zero_columns = object$zero_columns, level = level),
    class = "summary.dirmn_fit"
  )
}

#' @rdname dirmn_fit-methods
#' @export
print.summary.dirmn_fit <- function(x, digits = max(3L, getOption("digits") - 3L), n = 30L,
                                    ...) {
  cat("Dirichlet-multinomial maximum-likelihood fit\n")
  if (!is.null(x$call)) cat("Call: ", paste(deparse(x$call), collapse = "\n"), "\n", sep = "")
  cat(sprintf("%s rows (%s with counts and positive weight), %s categories\n\n",
              .num(x$rows), .num(x$nobs), .num(nrow(x$coefficients))))
  coefs <- x$coefficients
  if (nrow(coefs) > n) {
    cat(sprintf("Coefficients (the first %d of %d rows):\n", n, nrow(coefs)))
    coefs <- coefs[seq_len(n), , drop = FALSE]
  } else {
    cat("Coefficients:\n")
  }
  print(coefs, digits = digits, na.print = "NA")
  cat(sprintf("(intervals: %s%% Wald intervals on the log scale)\n\n",
              format(100 * x$level, trim = TRUE)))
  if (x$multinomial_limit) {
    cat("No overdispersion: the multinomial limit fits best (precision Inf);",
        "alpha holds the multinomial proportions.\n")
  } else {
    cat("Precision (sum of alpha): ", format(x$precision, digits = digits), "\n", sep = "")
  }
  if (x$zero_columns > 0) {
    cat(sprintf("Columns without counts: %d (alpha 0, not fitted)\n", x$zero_columns))
  }
  cat("Log-likelihood: ", format(x$loglik, digits = max(digits, 8L)), " on ", x$df,
      " df; AIC ", format(x$aic, digits = max(digits, 8L)), ", BIC ",
      format(x$bic, digits = max(digits, 8L)), "\n", sep = "")
  cat(.convergence_line(x, digits), "\n", sep = "")
  invisible(x)
}

#' @rdname dirmn_fit-methods
#' @export
coef.dirmn_fit <- function(object, ...) object$alpha

#' @rdname dirmn_fit-methods
#' @export
vcov.dirmn_fit <- function(object, ...) {
  a <- object$alpha
  V <- length(a)
  out <- matrix(NA_real_, V, V, dimnames = list(names(a), names(a)))
  h <- object$hessian
  if (is.null(h)) return(out)
  active <- which(a > 0)
  # -(D + c 1 1')^-1 = -D^-1 + (c / (1 + c 1' D^-1 1)) D^-1 1 1' D^-1
  d <- 1 / h$diag[active]
  s <- h$scalar
  cov <- outer(d, d) * (s / (1 + s * sum(d)))
  diag(cov) <- diag(cov) - d
  out[active, active] <- cov
  out
}

#' @rdname dirmn_fit-methods
#' @export
logLik.dirmn_fit <- function(object, ...) {
  structure(object$loglik, df = .df_fit(object), nobs = object$nobs, class = "logLik")
}

#' @rdname dirmn_fit-methods
#' @export
nobs.dirmn_fit <- function(object, ...) object$nobs

#' @rdname dirmn_fit-methods
#' @export
fitted.dirmn_fit <- function(object, ...) {
  p <- object$alpha / sum(object$alpha)
  out <- outer(object$row_totals, p)
  dimnames(out) <- object$dimnames
  out
}

# ---------------------------------------------------------------------------
# Argument checks, warnings and progress

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
