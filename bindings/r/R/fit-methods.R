# Methods for dirmn_fit objects.

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
#'   coefficients) as a `"logLik"` object with attributes `df` (the
#'   parameters as libdirmn counts them, `parameters`: the alphas of the
#'   columns with counts) and `nobs` (the observations as libdirmn counts
#'   them), so [AIC()] and [BIC()] work. The same rule holds for
#'   [dirmn_mixture()], so a fit and a one-component mixture agree.
#' * [confint()] and [residuals()]: see [dirmn_confint].
#' * `fitted()` returns the expected counts, \eqn{N_b \alpha_v / \sum_v
#'   \alpha_v}{N_b alpha_v / sum(alpha)} for row \eqn{b} with total
#'   \eqn{N_b}{N_b}, as a matrix of the shape of the data.
#' * `nobs()` returns the number of observations: the rows with counts and
#'   positive weight (the sum of their weights when weights are given).
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
  cat(sprintf("%s rows (%s observations: rows with counts and positive weight%s), %s categories\n",
              .num(length(x$row_totals)), .num(x$nobs),
              if (is.null(x$weights)) "" else ", by weight", .num(length(x$alpha))))
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

# The parameters of a fit, as libdirmn counts them (dirmn_fit_result's
# `parameters`: one rule for fits and mixtures).
.df_fit <- function(x) x$parameters

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
  se_log <- object$std_error_log_alpha
  coefs <- cbind(a, object$std_error_alpha, la, se_log, exp(la - q * se_log),
                 exp(la + q * se_log))
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
  cat(sprintf("%s rows (%s observations: rows with counts and positive weight), %s categories\n\n",
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

