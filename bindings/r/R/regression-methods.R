# Methods for dirmn_reg objects.

#' Methods for Dirichlet-multinomial regressions
#'
#' Methods for objects returned by [dirmn_reg()]. Below, \eqn{\alpha_b}{alpha_b}
#' is row b's fitted alpha, \eqn{A_b = \sum_v \alpha_{bv}}{A_b = sum(alpha_b)},
#' \eqn{p_b = \alpha_b / A_b}{p_b = alpha_b / A_b} its expected proportions and
#' \eqn{N_b} its total count. P is the number of free coefficients
#' (`object$parameters`): p V for the log-linear model, p (V - 1) + q for
#' the mean/precision model (q the columns of its precision design; 1
#' without one).
#'
#' * `coef()` returns beta, the p x V matrix of coefficients (covariates x
#'   categories); for the mean/precision model the reference category's
#'   column is 0 (with `contrast = "sum"`, minus the sum of the others').
#'   The precision is `object$precision` (phi) and `object$log_precision`;
#'   with a precision design, phi of each fitted row and the coefficients
#'   gamma.
#' * `vcov()` returns the P x P covariance of the free coefficients, the
#'   negative inverse Hessian of the log-likelihood at the fit: log-linear,
#'   in the order of `as.vector(coef(object))` (covariates fastest), rows
#'   and columns named `"<category>:<covariate>"`; mean/precision, the same
#'   without the reference category's column, then the log precision
#'   (named `"(log precision)"`) or, with a precision design, its
#'   coefficients gamma (`"(precision):<covariate>"`, as
#'   `"(precision):(Intercept)"`). All `NA` where the Hessian is not
#'   negative definite (`hessian_definite = FALSE`). The standard errors
#'   are the square roots of its diagonal (`summary()` shows them). Above
#'   5000 free coefficients the matrix is not kept (see [dirmn_reg()]) and
#'   `vcov()` is an error of class `dirmn_error_not_supported`; the
#'   standard errors, `summary()`, `confint()` and `wald_test()` do not
#'   need it.
#' * `wald_test()` returns the Wald test of each covariate, that all its
#'   free coefficients are 0: a data frame with one row per covariate and
#'   columns `statistic` (\eqn{b^T S^{-1} b}{b' S^-1 b}, b the covariate's
#'   free coefficients and S their covariance), `df` (V; V - 1 for the
#'   mean/precision model, where the test is the same under either
#'   contrast) and `p_value` (from the chi-square distribution with `df`
#'   degrees of freedom); as \pkg{MGLM}'s "Hypothesis test". Computed by
#'   libdirmn at the fit (`dirmn_reg_wald_test()`), for any number of
#'   coefficients.
#' * `summary()` gives, per coefficient, the estimate, its standard error,
#'   the z value and its two-sided p-value (a Wald test), one table per
#'   category when printed (not for a reference category, whose
#'   coefficients are fixed at 0; with `contrast = "sum"` the implied
#'   category's from the covariance of the others'), the Wald tests of the
#'   covariates, and for the mean/precision model the log precision with
#'   its standard error and phi (`precision`), or with a precision design
#'   the table of its coefficients gamma (`precision`: estimate, standard
#'   error, z value and two-sided p-value, one row per column of the
#'   design).
#' * `logLik()` returns the maximised log-likelihood (with the multinomial
#'   coefficients) as a `"logLik"` object with `df` = P and `nobs` = the
#'   observations (rows with counts and positive weight; the sum of their
#'   weights when weights are given), so [AIC()] and [BIC()] work.
#' * `anova(fit0, fit1, ...)` compares nested fits to the same counts (the
#'   same response rows and weights) by likelihood-ratio tests: the fits
#'   are taken by increasing number of parameters, and each is tested
#'   against the one before it: `Chisq` = 2 (difference of the
#'   log-likelihoods) on `Df` = the difference of the numbers of
#'   parameters (the free coefficients P), `Pr(>Chisq)` from the
#'   chi-square distribution. Fits to other counts, or with the same
#'   number of parameters, are an error (class
#'   `dirmn_error_invalid_argument`); a design whose columns are not
#'   combinations of the next larger design's (so the fits are not nested),
#'   or fits of the two parametrisations (nested only where the smaller is
#'   an intercept alone, the shared-alpha model of both), give a warning of
#'   class `dirmn_argument_warning`, as do precision designs whose columns
#'   are not combinations of the larger fit's (one precision for every row
#'   counts as a design of ones). A fit with a precision design of q
#'   columns against the same fit without one is a test on q - 1 df.
#' * `predict()` returns, for the rows of `newdata` (a data frame with the
#'   covariates of the formula; factors are coded with the fit's levels and
#'   contrasts), alpha (`type = "alpha"`, through libdirmn's
#'   `dirmn_reg_predict()`: \eqn{\exp(x_b^T \beta)}{exp(x_b' beta)}, or
#'   \eqn{\phi\,\mathrm{softmax}(x_b^T \beta)}{phi softmax(x_b' beta)} for
#'   the mean/precision model) or the
#'   expected proportions (`type = "proportion"`: alpha over its row sum);
#'   a rows x V matrix. Rows with `NA` covariates give `NA` rows. With a
#'   precision design, \eqn{\phi_b = \exp(z_b^T \gamma)}{phi_b = exp(z_b'
#'   gamma)} (libdirmn's `dirmn_reg_predict_with_precision()`): its formula
#'   is evaluated in `newdata` too (`na.action` sees the variables of both
#'   formulas at once), and a design given as a matrix takes the new rows'
#'   `precision_design`. Without `newdata`, the fitted rows (with their
#'   precision design). A fit restored with [readRDS()] predicts
#'   too (from its coefficients).
#' * `fitted()` returns the same for the fitted rows (with their precision
#'   design), by default the expected proportions \eqn{p_b}{p_b}.
#' * `residuals()`, for the rows of the fit:
#'   - `type = "pearson"` (the default): \eqn{(n_{bv} - N_b p_{bv}) /
#'     \sqrt{N_b p_{bv} (1 - p_{bv}) (N_b + A_b) / (1 + A_b)}}{(n_bv - N_b p_bv) /
#'     sqrt(N_b p_bv (1 - p_bv) (N_b + A_b) / (1 + A_b))}, the count less
#'     its expectation over its Dirichlet-multinomial standard deviation; 0
#'     where the variance is 0 (rows of zeros). A rows x V matrix.
#'   - `type = "response"`: the observed proportions less the fitted ones,
#'     \eqn{n_{bv} / N_b - p_{bv}}{n_bv / N_b - p_bv} (`NA` for rows of
#'     zeros, which have no proportions). A rows x V matrix.
#'   - `type = "deviance"`: one value per row,
#'     \eqn{\sqrt{2 (\ell^{sat}_b - \ell_b)}}{sqrt(2 (lsat_b - l_b))}, with
#'     \eqn{\ell_b}{l_b} the row's log pmf under its fitted alpha and
#'     \eqn{\ell^{sat}_b}{lsat_b} the multinomial log pmf at the row's own
#'     proportions (see [dirmn_confint] for why it is non-negative).
#'
#'   Residuals are not weighted by the row weights. With `na.action =
#'   na.exclude` in the fit, `fitted()`, `residuals()` and `predict()`
#'   without `newdata` have `NA` rows where rows were left out.
#' * `confint()` gives Wald intervals of the free coefficients, estimate
#'   \eqn{\pm}{+/-} `qnorm((1 + level) / 2)` standard errors, one row per
#'   coefficient named as `vcov()`'s (the log precision's included).
#' * `nobs()` returns the number of observations (see `logLik()`).
#'
#' @param object,x A `dirmn_reg` object (or its summary, for `print()`).
#' @param newdata A data frame with the covariates of the formula; `NULL`
#'   for the rows of the fit.
#' @param type For `predict()` and `fitted()`: `"alpha"` or `"proportion"`
#'   (see Details). For `residuals()`: `"pearson"`, `"response"` or
#'   `"deviance"`.
#' @param na.action For `predict()`: what to do with rows of `newdata`
#'   holding `NA` (by default they give `NA` rows).
#' @param precision_design For `predict()` with `newdata`, of a fit whose
#'   `precision_design` was a matrix: the new rows' precision covariates, a
#'   numeric matrix with one row per row of `newdata` and the fit's columns
#'   (matched by name where both have names). `NULL` otherwise: a precision
#'   formula is evaluated in `newdata`.
#' @param parm For `confint()`: the coefficients, by name (as `vcov()`
#'   names them) or position; all when missing.
#' @param level For `confint()`: the confidence level.
#' @param digits Significant digits to print.
#' @param n For `print()`: the largest number of categories to print.
#' @param ... For `anova()`: further `dirmn_reg` fits. Else unused.
#' @return See Details.
#' @name dirmn_reg-methods
#' @examples
#' set.seed(2)
#' d <- data.frame(x = rnorm(40), z = rnorm(40))
#' alpha <- exp(cbind(1 + d$x, 1 - d$x, 0.5 + 0 * d$x))
#' Y <- t(sapply(1:40, function(b) {
#'   g <- rgamma(3, alpha[b, ])
#'   rmultinom(1, 30, g / sum(g))
#' }))
#' fit <- dirmn_reg(Y ~ x + z, data = d)
#' coef(fit)
#' sqrt(diag(vcov(fit)))
#' wald_test(fit)
#' logLik(fit)
#' BIC(fit)
#' anova(dirmn_reg(Y ~ x, data = d), fit)
#' head(fitted(fit))
#' head(residuals(fit))
#' predict(fit, newdata = data.frame(x = 0, z = 0))
#' # the mean/precision parametrisation
#' mp <- dirmn_reg(Y ~ x + z, data = d, parametrization = "meanprecision")
#' coef(mp)
#' vcov(mp)["(log precision)", "(log precision)"]
#' anova(dirmn_reg(Y ~ 1, data = d, parametrization = "meanprecision"), mp)
#' # its precision with a covariate
#' mz <- dirmn_reg(Y ~ x + z, data = d, parametrization = "meanprecision",
#'                 precision_design = ~ x)
#' summary(mz)$precision
#' k <- c("(precision):(Intercept)", "(precision):x")
#' vcov(mz)[k, k]
#' predict(mz, newdata = data.frame(x = c(-1, 1), z = 0))
#' anova(mp, mz)
NULL

#' @rdname dirmn_reg-methods
#' @export
print.dirmn_reg <- function(x, digits = max(3L, getOption("digits") - 3L), n = 10L, ...) {
  cat(.reg_title(x), "\n", sep = "")
  if (!is.null(x$call)) cat("Call: ", paste(deparse(x$call), collapse = "\n"), "\n", sep = "")
  beta <- x$coefficients
  cat(sprintf("%s rows (%s observations: rows with counts and positive weight%s), %s covariates, %s categories\n",
              .num(nrow(x$x)), .num(x$nobs), if (is.null(x$weights)) "" else ", by weight",
              .num(nrow(beta)), .num(ncol(beta))))
  if (.reg_mp(x)) cat(.reg_contrast_line(x$contrast, colnames(beta)[[x$reference]]), "\n", sep = "")
  if (ncol(beta) > n) {
    cat(sprintf("\nCoefficients (covariates x categories; the first %d of %d categories):\n", n,
                ncol(beta)))
    beta <- beta[, seq_len(n), drop = FALSE]
  } else {
    cat("\nCoefficients (covariates x categories):\n")
  }
  print(beta, digits = digits)
  cat("\n")
  if (.reg_has_precision_design(x)) {
    cat(.reg_precision_heading(x$precision), "\n", sep = "")
    stats::printCoefmat(.reg_precision_table(x), digits = digits, na.print = "NA")
    cat("\n")
  } else if (.reg_mp(x)) {
    cat(.reg_precision_line(x$precision, x$log_precision, x$std_error_log_precision, digits),
        "\n", sep = "")
  }
  .reg_fit_lines(x, digits)
  invisible(x)
}

# A mean/precision fit (an object saved before the parametrisations
# existed is log-linear).
.reg_mp <- function(x) identical(x$parametrization, "meanprecision")

.reg_title <- function(x) {
  if (.reg_has_precision_design(x)) {
    "Dirichlet-multinomial regression (mean/precision), alpha = phi softmax(X beta), log phi = Z gamma"
  } else if (.reg_mp(x)) {
    "Dirichlet-multinomial regression (mean/precision), alpha = phi softmax(X beta)"
  } else {
    "Dirichlet-multinomial regression, alpha = exp(X beta)"
  }
}

.reg_contrast_line <- function(contrast, category) {
  if (identical(contrast, "sum")) {
    sprintf("Contrast: each covariate's coefficients sum to 0 (category %s implied)", category)
  } else {
    sprintf("Reference category: %s (its coefficients are 0)", category)
  }
}

.reg_precision_line <- function(precision, log_precision, se, digits) {
  sprintf("Precision: phi = %s (log phi = %s, std. error %s)",
          format(precision, digits = digits), format(log_precision, digits = digits),
          format(se, digits = digits))
}

# A mean/precision fit whose precision has covariates (a fit, or its
# summary).
.reg_has_precision_design <- function(x) {
  .reg_mp(x) && (!is.null(x$precision_design) || !is.null(x$precision_covariates))
}

# The precision's coefficients gamma, one row per column of the precision's
# design: estimate, standard error, z value and its two-sided p-value.
.reg_precision_table <- function(x) {
  est <- x$log_precision
  se <- x$std_error_log_precision
  z <- est / se
  cbind(Estimate = est, `Std. Error` = se, `z value` = z, `Pr(>|z|)` = 2 * stats::pnorm(-abs(z)))
}

.reg_precision_heading <- function(phi) {
  sprintf("Precision coefficients (log phi = Z gamma; phi %s to %s over the rows):",
          format(min(phi), digits = 3L), format(max(phi), digits = 3L))
}

.reg_fit_lines <- function(x, digits) {
  cat("Log-likelihood: ", format(x$loglik, digits = max(digits, 8L)), " on ", x$parameters,
      " df; AIC ", format(x$aic, digits = max(digits, 8L)), ", BIC ",
      format(x$bic, digits = max(digits, 8L)), "\n", sep = "")
  cat(sprintf("%s after %d iteration%s (largest gradient component %s)\n",
              if (x$converged) "Converged" else "NOT converged", x$iterations,
              if (x$iterations == 1) "" else "s", format(x$gradient_norm, digits = 3L)))
  if (!x$hessian_definite) {
    cat("Note: the Hessian at the fit is not negative definite (not a strict local maximum):",
        "no covariance, standard errors or Wald tests.\n")
  }
}

#' @rdname dirmn_reg-methods
#' @export
summary.dirmn_reg <- function(object, ...) {
  beta <- object$coefficients
  mp <- .reg_mp(object)
  # the categories with a table: all but a reference category (its
  # coefficients are fixed at 0)
  blocks <- seq_len(ncol(beta))
  if (mp && identical(object$contrast, "reference")) blocks <- blocks[-object$reference]
  est <- as.vector(beta[, blocks, drop = FALSE])
  se <- as.vector(.reg_std_error_matrix(object)[, blocks, drop = FALSE])
  z <- est / se
  coefs <- cbind(est, se, z, 2 * stats::pnorm(-abs(z)))
  dimnames(coefs) <- list(.reg_parameter_names(rownames(beta), colnames(beta)[blocks]),
                          c("Estimate", "Std. Error", "z value", "Pr(>|z|)"))
  precision <- NULL
  precision_covariates <- NULL
  if (.reg_has_precision_design(object)) {
    precision <- .reg_precision_table(object)
    precision_covariates <- colnames(object$precision_design)
  } else if (mp) {
    precision <- matrix(c(object$log_precision, object$std_error_log_precision, object$precision),
                        1L, 3L, dimnames = list("(log precision)",
                                                c("Estimate", "Std. Error", "phi")))
  }
  structure(
    list(call = object$call, coefficients = coefs, covariates = rownames(beta),
         categories = colnames(beta), blocks = colnames(beta)[blocks],
         parametrization = if (mp) "meanprecision" else "loglinear",
         contrast = object$contrast,
         reference = if (mp) colnames(beta)[[object$reference]],
         precision = precision, precision_covariates = precision_covariates,
         precision_range = if (!is.null(precision_covariates)) range(object$precision),
         wald_test = object$wald_test, loglik = object$loglik,
         parameters = object$parameters, aic = object$aic, bic = object$bic,
         nobs = object$nobs, rows = nrow(object$x), iterations = object$iterations,
         converged = object$converged, gradient_norm = object$gradient_norm,
         hessian_definite = object$hessian_definite),
    class = "summary.dirmn_reg"
  )
}

#' @rdname dirmn_reg-methods
#' @export
print.summary.dirmn_reg <- function(x, digits = max(3L, getOption("digits") - 3L), n = 10L,
                                    ...) {
  mp <- identical(x$parametrization, "meanprecision")
  cat(.reg_title(x), "\n", sep = "")
  if (!is.null(x$call)) cat("Call: ", paste(deparse(x$call), collapse = "\n"), "\n", sep = "")
  p <- length(x$covariates)
  V <- length(x$categories)
  cat(sprintf("%s rows (%s observations), %s covariates, %s categories\n", .num(x$rows),
              .num(x$nobs), .num(p), .num(V)))
  if (mp) cat(.reg_contrast_line(x$contrast, x$reference), "\n", sep = "")
  blocks <- x$blocks
  if (is.null(blocks)) blocks <- x$categories   # a summary saved by an earlier version
  B <- length(blocks)
  shown <- seq_len(min(B, n))
  if (B > n) cat(sprintf("(coefficients of the first %d of %d categories)\n", n, B))
  for (k in shown) {
    implied <- mp && identical(x$contrast, "sum") && identical(blocks[[k]], x$reference)
    cat(sprintf("\nCategory %s%s:\n", blocks[[k]],
                if (implied) " (implied: minus the sum of the others)" else ""))
    block <- x$coefficients[(k - 1L) * p + seq_len(p), , drop = FALSE]
    rownames(block) <- x$covariates
    stats::printCoefmat(block, digits = digits, na.print = "NA",
                        signif.legend = k == shown[[length(shown)]])
  }
  if (.reg_has_precision_design(x)) {
    cat("\n", .reg_precision_heading(x$precision_range), "\n", sep = "")
    stats::printCoefmat(x$precision, digits = digits, na.print = "NA")
  } else if (mp) {
    cat("\nPrecision (one for every row):\n")
    print(x$precision, digits = digits)
  }
  cat(sprintf("\nWald tests of the covariates (all the covariate's %scoefficients 0):\n",
              if (mp) "free " else ""))
  w <- x$wald_test
  tab <- cbind(`Wald statistic` = format(w$statistic, digits = digits),
               Df = format(w$df), `Pr(>Chisq)` = format.pval(w$p_value, digits = digits))
  rownames(tab) <- rownames(w)
  print(tab, quote = FALSE, right = TRUE)
  cat("\n")
  .reg_fit_lines(x, digits)
  invisible(x)
}

#' @rdname dirmn_reg-methods
#' @export
coef.dirmn_reg <- function(object, ...) object$coefficients

#' @rdname dirmn_reg-methods
#' @export
vcov.dirmn_reg <- function(object, ...) {
  if (!is.null(object$vcov)) return(object$vcov)
  beta <- object$coefficients
  P <- object$parameters
  if (is.null(P)) P <- length(beta)
  if (P > .reg_vcov_max_coefficients) {
    .stop("not_supported", sprintf(paste(
      "the covariance of the %.0f coefficients is not kept above %.0f coefficients (it would be",
      "%.0f x %.0f numbers, %s GB); the standard errors (summary(), confint()) and the Wald",
      "tests (wald_test()) are available"), P, .reg_vcov_max_coefficients, P, P,
      format(8e-9 * P * P, digits = 3L)), sys.call())
  }
  nm <- .reg_free_names(rownames(beta), colnames(beta),
                        if (.reg_mp(object)) object$reference, colnames(object$precision_design))
  matrix(NA_real_, length(nm), length(nm), dimnames = list(nm, nm))
}

# The standard errors, p x V as the coefficients: the library's, kept at
# the fit (NA without a covariance; 0 for a reference category's); from
# vcov() for a log-linear object without them (saved by an earlier
# version).
.reg_std_error_matrix <- function(object) {
  se <- attr(object, "std_errors", exact = TRUE)
  if (!is.null(se)) return(se)
  beta <- object$coefficients
  matrix(sqrt(diag(vcov(object))), nrow(beta), ncol(beta), dimnames = dimnames(beta))
}

# The free coefficients' estimates and standard errors, in vcov()'s order
# and named as its rows: vec(beta) (log-linear), or vec(beta) without the
# reference category's column, then the log precision or its coefficients
# (mean/precision).
.reg_free <- function(object) {
  beta <- object$coefficients
  se <- .reg_std_error_matrix(object)
  if (!.reg_mp(object)) {
    nm <- .reg_parameter_names(rownames(beta), colnames(beta))
    return(list(estimate = stats::setNames(as.vector(beta), nm),
                se = stats::setNames(as.vector(se), nm)))
  }
  r <- object$reference
  nm <- .reg_free_names(rownames(beta), colnames(beta), r, colnames(object$precision_design))
  list(estimate = stats::setNames(c(as.vector(beta[, -r, drop = FALSE]), object$log_precision),
                                  nm),
       se = stats::setNames(c(as.vector(se[, -r, drop = FALSE]), object$std_error_log_precision),
                            nm))
}

#' @rdname dirmn_reg-methods
#' @export
wald_test <- function(object, ...) UseMethod("wald_test")

#' @rdname dirmn_reg-methods
#' @export
wald_test.dirmn_reg <- function(object, ...) object$wald_test

#' @rdname dirmn_reg-methods
#' @export
logLik.dirmn_reg <- function(object, ...) {
  structure(object$loglik, df = object$parameters, nobs = object$nobs, class = "logLik")
}

#' @rdname dirmn_reg-methods
#' @export
nobs.dirmn_reg <- function(object, ...) object$nobs

#' @rdname dirmn_reg-methods
#' @export
anova.dirmn_reg <- function(object, ...) {
  call <- sys.call()
  models <- c(list(object), list(...))
  if (length(models) < 2L) {
    .stop("invalid_argument",
          "anova() of dirmn_reg fits compares two or more nested fits: anova(fit0, fit1)", call)
  }
  is_reg <- vapply(models, inherits, TRUE, "dirmn_reg")
  if (!all(is_reg)) {
    .stop("invalid_argument", sprintf(
      "every model must be a dirmn_reg fit; model %d is not", which(!is_reg)[1L]), call)
  }
  for (i in seq_along(models)[-1L]) {
    if (!.same_counts(models[[1L]], models[[i]])) {
      .stop("invalid_argument", sprintf(paste(
        "model %d was fitted to other counts than model 1 (another response, other rows or",
        "other weights): likelihood-ratio tests compare fits to the same counts"), i), call)
    }
  }
  df <- vapply(models, function(m) m$parameters, 0)
  if (anyDuplicated(df)) {
    .stop("invalid_argument", paste(
      "two fits have the same number of parameters, so neither is nested in the other:",
      "likelihood-ratio tests compare a fit with one that has more covariates"), call)
  }
  ord <- order(df)
  models <- models[ord]
  df <- df[ord]
  for (i in seq_along(models)[-1L]) {
    small <- models[[i - 1L]]
    if (.reg_mp(small) != .reg_mp(models[[i]]) && !.intercept_only(small$x)) {
      warning(structure(class = c("dirmn_argument_warning", "warning", "condition"), list(
        message = sprintf(paste(
          "the fits with %s and %s parameters are of different parametrizations (log-linear",
          "and mean/precision), which are nested only where the smaller has an intercept",
          "alone: the likelihood-ratio test does not apply"), .num(df[[i - 1L]]),
          .num(df[[i]])),
        call = call)))
    } else if (!.nested_design(small$x, models[[i]]$x)) {
      warning(structure(class = c("dirmn_argument_warning", "warning", "condition"), list(
        message = sprintf(paste(
          "the design of the fit with %s parameters is not within the design of the fit with",
          "%s (its columns are not combinations of the other's): the fits are not nested and",
          "the likelihood-ratio test does not apply"), .num(df[[i - 1L]]), .num(df[[i]])),
        call = call)))
    } else if (!.nested_design(.reg_precision_z(small), .reg_precision_z(models[[i]]))) {
      warning(structure(class = c("dirmn_argument_warning", "warning", "condition"), list(
        message = sprintf(paste(
          "the precision's design of the fit with %s parameters is not within the precision's",
          "design of the fit with %s (its columns are not combinations of the other's): the",
          "fits are not nested and the likelihood-ratio test does not apply"),
          .num(df[[i - 1L]]), .num(df[[i]])),
        call = call)))
    }
  }
  ll <- vapply(models, function(m) m$loglik, 0)
  chisq <- c(NA, 2 * diff(ll))
  ddf <- c(NA, diff(df))
  tab <- data.frame(Parameters = df, logLik = ll,
                    AIC = vapply(models, function(m) m$aic, 0),
                    BIC = vapply(models, function(m) m$bic, 0),
                    Df = ddf, Chisq = chisq,
                    `Pr(>Chisq)` = stats::pchisq(chisq, ddf, lower.tail = FALSE),
                    check.names = FALSE, row.names = paste("Model", seq_along(models)))
  formulas <- vapply(models, function(m) {
    text <- paste(deparse(m$formula, width.cutoff = 500L), collapse = " ")
    if (!is.null(m$precision_formula)) {
      text <- paste0(text, "; precision ", paste(deparse(m$precision_formula, width.cutoff = 500L),
                                                 collapse = " "))
    } else if (!is.null(m$precision_design)) {
      text <- sprintf("%s; precision ~ a matrix of %d column%s", text, ncol(m$precision_design),
                      if (ncol(m$precision_design) == 1L) "" else "s")
    }
    text
  }, "")
  structure(tab, heading = c(
    "Likelihood-ratio tests of Dirichlet-multinomial regressions\n",
    paste0(paste0("Model ", seq_along(models), ": ", formulas), collapse = "\n")),
    class = c("anova", "data.frame"))
}

# Two fits to the same counts: the same response rows (values, as doubles)
# and the same weights.
.same_counts <- function(a, b) {
  if (!identical(dim(a$y), dim(b$y))) return(FALSE)
  if (inherits(a$y, "dirmn_counts") && inherits(b$y, "dirmn_counts") &&
      identical(a$y$ptr, b$y$ptr)) {
    return(identical(a$weights, b$weights))
  }
  ya <- as.matrix(a$y)
  yb <- as.matrix(b$y)
  storage.mode(ya) <- "double"
  storage.mode(yb) <- "double"
  isTRUE(all(ya == yb)) && identical(a$weights, b$weights)
}

# A design of one constant column: the shared-alpha model (of either
# parametrisation).
.intercept_only <- function(x) {
  ncol(x) == 1L && nrow(x) > 0L && all(x[, 1L] == x[1L, 1L]) && x[1L, 1L] != 0
}

# What moves the precision of fit `m`, for the nesting of two fits: a
# mean/precision fit's precision design, or a column of ones where the
# precision is one for every row; a log-linear fit's design (its alpha =
# exp(X beta) holds phi = exp(z gamma) times fixed proportions for every z
# within X).
.reg_precision_z <- function(m) {
  if (!.reg_mp(m)) return(m$x)
  if (!is.null(m$precision_design)) return(m$precision_design)
  matrix(1, nrow(m$x), 1L)
}

# The columns of `small` lie in the column space of `big` (to rounding).
.nested_design <- function(small, big) {
  r <- qr.resid(qr(big), small)
  max(abs(r)) <= 1e-8 * max(1, max(abs(small)))
}

#' @rdname dirmn_reg-methods
#' @export
predict.dirmn_reg <- function(object, newdata = NULL, type = c("alpha", "proportion"),
                              na.action = stats::na.pass, precision_design = NULL, ...) {
  call <- sys.call()
  type <- .match_choice(type, c("alpha", "proportion"), "type", call)
  if (!is.null(precision_design) && (is.null(newdata) || !.reg_has_precision_design(object) ||
                                     !is.null(object$precision_terms))) {
    .stop("invalid_argument", paste(
      "precision_design is taken by predict() only with newdata, for a fit whose",
      "precision_design was a matrix (a precision formula is evaluated in newdata)"), call)
  }
  if (is.null(newdata)) {
    alpha <- stats::napredict(object$na.action, .reg_fitted_alpha(object, call))
  } else if (!.reg_has_precision_design(object)) {
    tt <- stats::delete.response(object$terms)
    mf <- stats::model.frame(tt, newdata, na.action = na.action, xlev = object$xlevels)
    classes <- attr(tt, "dataClasses")
    if (!is.null(classes)) stats::.checkMFClasses(classes, mf)
    x <- stats::model.matrix(tt, mf, contrasts.arg = object$contrasts)
    storage.mode(x) <- "double"
    alpha <- .reg_alpha(object, x, call)
  } else {
    designs <- .reg_new_designs(object, newdata, na.action, precision_design, call)
    alpha <- .reg_alpha(object, designs$x, call, designs$z)
  }
  if (type == "alpha") alpha else alpha / rowSums(alpha)
}

# The design and the precision's design of the rows of `newdata` for a fit
# with a precision design: each frame as predict() makes the design's
# (factors coded with the fit's levels and contrasts), then na.action over
# both at once so that their rows stay the same. A precision design given
# as a matrix takes the new rows' `precision_design` (one row per row of
# newdata; its columns matched to the fit's by name where both have names
# of their own).
.reg_new_designs <- function(object, newdata, na.action, precision_design, call) {
  frame_of <- function(tt, xlevels) {
    mf <- stats::model.frame(tt, newdata, na.action = stats::na.pass, xlev = xlevels)
    classes <- attr(tt, "dataClasses")
    if (!is.null(classes)) stats::.checkMFClasses(classes, mf)
    mf
  }
  tt <- stats::delete.response(object$terms)
  mf <- frame_of(tt, object$xlevels)
  x <- stats::model.matrix(tt, mf, contrasts.arg = object$contrasts)
  fit_z <- colnames(object$precision_design)
  if (!is.null(object$precision_terms)) {
    zt <- object$precision_terms
    zf <- frame_of(zt, object$precision_xlevels)
    z <- stats::model.matrix(zt, zf, contrasts.arg = object$precision_contrasts)
    variables <- c(as.list(mf), as.list(zf))
  } else {
    z <- precision_design
    if (is.null(z)) {
      .stop("invalid_argument", sprintf(paste(
        "the fit's precision_design was a matrix: predict() for newdata needs the new rows'",
        "precision covariates, precision_design = a matrix of %d column%s (%s)"),
        length(fit_z), if (length(fit_z) == 1L) "" else "s", .quote_names(fit_z)), call)
    }
    if (!is.matrix(z) || !(is.numeric(z) || is.logical(z)) || is.object(z)) {
      .stop("invalid_argument", sprintf(
        "precision_design must be a numeric matrix, not %s", .reg_describe(z)), call)
    }
    # names z1, ..., zq are the fit's own (its matrix had none): other names
    # of the new rows' columns are then no mismatch, positions count
    own <- identical(fit_z, paste0("z", seq_along(fit_z))) && !setequal(colnames(z), fit_z)
    z <- .match_names(z, if (!own) fit_z, "precision_design", "the fit's precision design", call)
    if (ncol(z) != length(fit_z) || nrow(z) != nrow(x)) {
      .stop("dimension_mismatch", sprintf(paste(
        "precision_design is %s x %s; the fit's precision design has %s columns and newdata",
        "%s rows"), .num(nrow(z)), .num(ncol(z)), .num(length(fit_z)), .num(nrow(x))), call)
    }
    colnames(z) <- fit_z
    variables <- c(as.list(mf), list(z))
  }
  storage.mode(x) <- "double"
  storage.mode(z) <- "double"
  # na.action on a frame of every variable of both designs and the rows'
  # numbers: the rows it keeps, in both
  joint <- data.frame(row = seq_len(nrow(x)), row.names = rownames(x))
  for (k in seq_along(variables)) joint[[paste0("v", k)]] <- variables[[k]]
  if (is.character(na.action)) na.action <- get(na.action, mode = "function")
  rows <- na.action(joint)$row
  rownames(z) <- rownames(x)
  list(x = x[rows, , drop = FALSE], z = z[rows, , drop = FALSE])
}

# alpha = exp(x beta) (mean/precision: phi softmax(x beta), phi = exp(z
# gamma) with a precision design z) of the rows of design x through
# dirmn_reg_predict (dirmn_reg_predict_with_precision with z), rows with NA
# (or NaN) covariates NA; from the coefficients in R where the library's
# handle is gone (a fit restored from disk).
.reg_alpha <- function(object, x, call, z = NULL) {
  beta <- object$coefficients
  out <- matrix(NA_real_, nrow(x), ncol(beta), dimnames = list(rownames(x), colnames(beta)))
  complete <- stats::complete.cases(x)
  if (!is.null(z)) complete <- complete & stats::complete.cases(z)
  ok <- which(complete)
  if (length(ok) == 0L) return(out)
  xo <- x[ok, , drop = FALSE]
  zo <- if (!is.null(z)) z[ok, , drop = FALSE]
  res <- if (is.null(z)) cpp_reg_predict(object$ptr, xo)
         else cpp_reg_predict_with_precision(object$ptr, xo, zo)
  if (.failed(res) && res$status == .status_code("null_pointer")) {
    eta <- xo %*% beta
    if (.reg_mp(object)) {
      e <- exp(eta - apply(eta, 1L, max))
      phi <- if (is.null(z)) object$precision else exp(drop(zo %*% object$log_precision))
      res <- phi * e / rowSums(e)
    } else {
      res <- exp(eta)
    }
  } else if (.failed(res)) {
    # positions among the rows of x, not of the complete ones
    if (!is.na(res$row)) res$row <- ok[[res$row + 1]] - 1
    .raise_reg(res, call, rownames(beta), colnames(beta), rownames(x), colnames(z))
  }
  out[ok, ] <- res
  out
}

# alpha of the fitted rows (their designs as the fit kept them).
.reg_fitted_alpha <- function(object, call) {
  .reg_alpha(object, object$x, call, object$precision_design)
}

#' @rdname dirmn_reg-methods
#' @export
fitted.dirmn_reg <- function(object, type = c("proportion", "alpha"), ...) {
  type <- .match_choice(type, c("proportion", "alpha"), "type", sys.call())
  alpha <- .reg_fitted_alpha(object, sys.call())
  stats::napredict(object$na.action, if (type == "alpha") alpha else alpha / rowSums(alpha))
}

#' @rdname dirmn_reg-methods
#' @export
residuals.dirmn_reg <- function(object, type = c("pearson", "response", "deviance"), ...) {
  call <- sys.call()
  type <- .match_choice(type, c("pearson", "response", "deviance"), "type", call)
  y <- .dense_counts(.reg_response(object, call), call)
  alpha <- .reg_fitted_alpha(object, call)
  n <- rowSums(y)
  A <- rowSums(alpha)
  p <- alpha / A
  out <- if (type == "response") {
    r <- y / n - p
    r[n == 0, ] <- NA_real_
    r
  } else if (type == "pearson") {
    v <- n * p * (1 - p) * (n + A) / (1 + A)
    ifelse(v > 0, (y - n * p) / sqrt(v), 0)
  } else {
    ll <- ddirmn(unname(y), unname(alpha), log = TRUE, rowwise = TRUE)
    .deviance_residuals(.saturated_loglik(y), ll, rownames(y))
  }
  if (is.matrix(out)) dimnames(out) <- dimnames(alpha)
  stats::naresid(object$na.action, out)
}

# The fit's response as a matrix: a table prepared with dirmn_counts()
# copied back (this rank's rows of a split table), its rows named as the
# design's.
.reg_response <- function(object, call) {
  y <- object$y
  if (!inherits(y, "dirmn_counts")) return(y)
  y <- .counts_matrix(y, call)
  rownames(y) <- rownames(object$x)
  y
}

#' @rdname dirmn_reg-methods
#' @export
confint.dirmn_reg <- function(object, parm, level = 0.95, ...) {
  call <- sys.call()
  .check_level(level, call)
  free <- .reg_free(object)
  est <- free$estimate
  se <- free$se
  q <- stats::qnorm(0.5 + level / 2)
  out <- cbind(est - q * se, est + q * se)
  pct <- paste(format(100 * c((1 - level) / 2, 1 - (1 - level) / 2), trim = TRUE,
                      scientific = FALSE, digits = 3L), "%")
  dimnames(out) <- list(names(se), pct)
  if (missing(parm)) return(out)
  if (is.character(parm)) {
    bad <- setdiff(parm, rownames(out))
    if (length(bad) > 0L) {
      .stop("invalid_argument", sprintf("parm names no coefficient of the model: %s",
                                        .quote_names(bad)), call)
    }
  } else if (!is.numeric(parm) || anyNA(parm) || any(parm < 1 | parm > nrow(out) |
                                                      parm != trunc(parm))) {
    .stop("invalid_argument", sprintf(
      "parm must be names of coefficients or positions from 1 to %d", nrow(out)), call)
  }
  out[parm, , drop = FALSE]
}
