# Confidence intervals and residuals of fits and mixtures (issue #25, item 7).

#' Confidence intervals and residuals of Dirichlet-multinomial fits
#'
#' `confint()` gives Wald intervals for alpha computed on the log scale, as
#' [summary()] of a fit shows them: \eqn{\exp(\log\hat\alpha_v \pm
#' z_{(1+\mathrm{level})/2}\, \mathrm{se}(\log\hat\alpha_v))}{exp(log(alpha_v)
#' +/- qnorm((1 + level)/2) se(log alpha_v))}, so both bounds are positive
#' (the interval of alpha itself, symmetric, would reach below 0 where alpha
#' is small). Only the standard errors are used (no V x V covariance matrix
#' is formed). Intervals are `NA` where there is no standard error: columns
#' without counts, and every column in the multinomial limit.
#'
#' For a mixture the standard errors of each component's log alpha come from
#' that component's observed information with the responsibilities held
#' fixed: the Hessian in log alpha of the responsibility-weighted
#' log-likelihood (plus, under `objective = "dmn"`, the curvature of dmn's
#' Gamma(0.1, 0.1) prior), inverted by the Sherman-Morrison formula. This
#' leaves out the uncertainty of the assignment and of the mixing weights,
#' so the intervals are narrower than the full observed information would
#' give; no interval is given for the mixing weights, nor where a
#' component's alpha sits at its lower limit (a column the component's rows
#' hardly use: the interval would run from 0 to infinity). The rows of the result
#' are named `"<component>:<column>"` (`"comp1:Brachy"`), component by
#' component.
#'
#' `residuals()` of a fit, with \eqn{N_b} the total of row \eqn{b},
#' \eqn{p = \alpha / A} and \eqn{A = \sum_v \alpha_v}{A = sum(alpha)}:
#' * `type = "pearson"` (the default): \eqn{(x_{bv} - N_b p_v) /
#'   \sqrt{N_b p_v (1 - p_v) (N_b + A) / (1 + A)}}{(x_bv - N_b p_v) /
#'   sqrt(N_b p_v (1 - p_v) (N_b + A) / (1 + A))}, the Dirichlet-multinomial
#'   variance of the count (the multinomial one, \eqn{N_b p_v (1 - p_v)}{N_b
#'   p_v (1 - p_v)}, in the multinomial limit); 0 where the variance is 0
#'   (columns without counts, rows of zeros). A rows x V matrix.
#' * `type = "response"`: \eqn{x_{bv} - N_b p_v}{x_bv - N_b p_v}, the counts
#'   less [fitted()]. A rows x V matrix.
#' * `type = "deviance"`: one value per row (the response is the whole row),
#'   \eqn{d_b = \sqrt{2 (\ell^{sat}_b - \ell_b)}}{d_b = sqrt(2 (lsat_b -
#'   l_b))}, where \eqn{\ell_b}{l_b} is the row's log pmf under the fit and
#'   \eqn{\ell^{sat}_b}{lsat_b} the saturated one, the multinomial log pmf at
#'   the row's own proportions \eqn{x_b / N_b}{x_b / N_b}. As every DM (and
#'   every mixture of DMs) is a mixture of multinomials, its pmf is at most
#'   the saturated one, so \eqn{d_b \ge 0}{d_b >= 0} and
#'   \eqn{\sum_b d_b^2}{sum(d_b^2)} is the deviance against that saturated
#'   model. A row of zeros has 0. The values carry no sign.
#'
#' For a mixture, `"response"` is the counts less [fitted()] (the
#' responsibility-weighted expectation), `"pearson"` divides it by the
#' standard deviation of the count under the mixture with the row's
#' responsibilities \eqn{z_{bj}}{z_bj} as its weights,
#' \eqn{\sum_j z_{bj} [V_{jbv} + (N_b p_{jv})^2] - (N_b \sum_j z_{bj}
#' p_{jv})^2}{sum_j z_bj [V_jbv + (N_b p_jv)^2] - (N_b sum_j z_bj p_jv)^2},
#' \eqn{V_{jbv}}{V_jbv} the DM variance under component j; `"deviance"`
#' uses the mixture's log pmf (with the mixing weights) for \eqn{\ell_b}{l_b}.
#' Residuals are not weighted by row weights.
#'
#' \pkg{MGLM} has no residuals for its Dirichlet-multinomial fits; the
#' Pearson residuals here are those of its `MGLMfit` model (same mean and
#' variance).
#'
#' Residuals need the counts: fits and mixtures keep the table they were
#' given (shared with the caller's object, not copied). A model fitted to
#' a table prepared with [dirmn_counts()] does not hold its counts: pass
#' them as `data`. A mixture's `confint()` evaluates its information on the
#' table it keeps, prepared or not (or on `data`).
#'
#' @param object A `dirmn_fit`, `dirmn_mixture` or `dirmn_mixture_fit`.
#' @param parm The parameters to give intervals for, by name or position
#'   (the rows of the full result); all when missing.
#' @param level The confidence level.
#' @param type For `residuals()`: `"pearson"`, `"deviance"` or `"response"`.
#' @param data The counts the model was fitted to, where the model was
#'   fitted to a prepared table (see Details); `NULL` for those the model
#'   keeps.
#' @param components For a `dirmn_mixture`: the number of components of the
#'   model to use; `NULL` for the selected one.
#' @param ... Unused.
#' @return `confint()`: a matrix with one row per parameter and two columns,
#'   the lower and upper bounds, labelled as percentages (as
#'   [stats::confint()] does). `residuals()`: a rows x V matrix, or for
#'   `type = "deviance"` a vector with one value per row, named by the rows
#'   of the table.
#' @name dirmn_confint
#' @examples
#' mite <- as.matrix(read.csv(system.file("extdata", "mite.csv", package = "dirmn"),
#'                            row.names = 1))
#' fit <- dirmn_fit(mite)
#' head(confint(fit))
#' r <- residuals(fit)
#' range(r)
#' head(residuals(fit, type = "deviance"))
#' m <- dirmn_mixture(mite, k = 2)
#' head(confint(m))
#' dim(residuals(m))
NULL

#' @rdname dirmn_confint
#' @export
confint.dirmn_fit <- function(object, parm, level = 0.95, ...) {
  call <- sys.call()
  a <- object$alpha
  names(a) <- .column_names(a)
  .wald_log(a, object$std_error_log_alpha, parm, level, call)
}

#' @rdname dirmn_confint
#' @export
confint.dirmn_mixture <- function(object, parm, level = 0.95, components = NULL, ...) {
  model <- .model(object, components, list(...))
  if (missing(parm)) confint(model, level = level) else confint(model, parm, level = level)
}

#' @rdname dirmn_confint
#' @export
confint.dirmn_mixture_fit <- function(object, parm, level = 0.95, data = NULL, ...) {
  call <- sys.call()
  .check_level(level, call)
  data <- .model_data(object, data, call, prepared_ok = TRUE)
  alpha <- object$alpha
  cn <- .column_names(alpha[1L, ])
  se <- matrix(NA_real_, nrow(alpha), ncol(alpha))
  w <- object$row_weights
  for (j in seq_len(nrow(alpha))) {
    zj <- object$responsibilities[, j]
    if (!is.null(w)) zj <- zj * w
    s <- dirmn_loglik_sum(data, log(unname(alpha[j, ])), weights = unname(zj),
                          param = "logalpha", backend = object$backend)
    d <- s$hessian_diag
    # dmn's Gamma(0.1, 0.1) prior on alpha, as a density on log alpha:
    # 0.1 log(alpha) - 0.1 alpha, whose second derivative is -0.1 alpha
    if (identical(object$objective_kind, "dmn")) d <- d - 0.1 * alpha[j, ]
    se[j, ] <- .se_from_hessian(d, s$hessian_scalar, alpha[j, ])
  }
  est <- as.vector(t(alpha))
  names(est) <- paste(rep(rownames(alpha), each = ncol(alpha)), rep(cn, nrow(alpha)), sep = ":")
  .wald_log(est, as.vector(t(se)), parm, level, call)
}

# Standard errors of log alpha from the Hessian of the log-likelihood in log
# alpha, diag(d) + c alpha alpha': the square roots of the diagonal of its
# negative inverse (Sherman-Morrison); NA where it is not a maximum.
.se_from_hessian <- function(d, c, u) {
  v <- 1 / d - c * (u / d)^2 / (1 + c * sum(u^2 / d))
  se <- sqrt(-v)
  se[!is.finite(se) | v >= 0] <- NA_real_
  se
}

.check_level <- function(level, call) {
  if (!is.numeric(level) || length(level) != 1L || is.na(level) || !(level > 0 && level < 1)) {
    .stop("invalid_argument", "level must be a single number between 0 and 1", call)
  }
  invisible(level)
}

# exp(log(estimate) +/- q se), as a matrix with confint()'s column labels.
.wald_log <- function(estimate, se_log, parm, level, call) {
  .check_level(level, call)
  q <- stats::qnorm(0.5 + level / 2)
  la <- ifelse(estimate > 0, log(estimate), NA_real_)
  out <- cbind(exp(la - q * se_log), exp(la + q * se_log))
  # no interval where it would not be finite (a mixture component's alpha at
  # its lower limit, with next to no information)
  out[!(out[, 1L] > 0 & is.finite(out[, 2L])), ] <- NA_real_
  pct <- paste(format(100 * c((1 - level) / 2, 1 - (1 - level) / 2), trim = TRUE,
                      scientific = FALSE, digits = 3L), "%")
  dimnames(out) <- list(names(estimate), pct)
  if (missing(parm)) return(out)
  if (is.character(parm)) {
    bad <- setdiff(parm, rownames(out))
    if (length(bad) > 0L) {
      .stop("invalid_argument", sprintf("parm names no parameter of the model: %s",
                                        .quote_names(bad)), call)
    }
  } else if (!is.numeric(parm) || anyNA(parm) || any(parm < 1 | parm > nrow(out) |
                                                      parm != trunc(parm))) {
    .stop("invalid_argument", sprintf(
      "parm must be names of parameters or positions from 1 to %d", nrow(out)), call)
  }
  out[parm, , drop = FALSE]
}

.column_names <- function(a) {
  if (is.null(names(a))) paste0("V", seq_along(a)) else names(a)
}

# The counts a model was fitted to, as a dense double matrix: `data` where
# given, else the table the model keeps.
# A prepared table (dirmn_counts) serves where `prepared_ok`.
.model_data <- function(object, data, call, prepared_ok = FALSE) {
  if (is.null(data)) data <- object$data
  if (is.null(data) || !prepared_ok && inherits(data, "dirmn_counts")) {
    .stop("invalid_argument", paste(
      "the model was fitted to a prepared table (dirmn_counts), whose counts R does not",
      "hold: pass the counts as data ="), call)
  }
  data
}

.dense_counts <- function(data, call) {
  table <- .as_table(data, call, "data")
  x <- table$data
  if (methods::is(x, "Matrix")) x <- as.matrix(x)
  if (is.null(dim(x)) || length(dim(x)) != 2L) {
    x <- matrix(x, nrow = 1L, dimnames = list(NULL, table$dimnames[[2L]]))
  }
  storage.mode(x) <- "double"
  dimnames(x) <- table$dimnames
  x
}

# Rows x V counts of the model's table, checked against its shape.
.residual_counts <- function(object, data, cols, call) {
  x <- .dense_counts(.model_data(object, data, call), call)
  if (ncol(x) != cols || nrow(x) != length(object$row_totals)) {
    .stop("dimension_mismatch", sprintf(
      "data is %d x %d but the model was fitted to %d x %d counts", nrow(x), ncol(x),
      length(object$row_totals), cols), call)
  }
  x
}

# The multinomial log pmf of each row at its own proportions: the saturated
# model of the deviance residuals.
.saturated_loglik <- function(x) {
  n <- rowSums(x)
  xlogp <- ifelse(x > 0, x * log(x / n), 0)
  lgamma(n + 1) - rowSums(lgamma(x + 1)) + rowSums(xlogp)
}

.deviance_residuals <- function(saturated, loglik, rn) {
  d <- 2 * (saturated - loglik)
  # a row at the saturated model may come out a rounding error below it
  out <- sqrt(pmax(d, 0))
  names(out) <- rn
  out
}

#' @rdname dirmn_confint
#' @export
residuals.dirmn_fit <- function(object, type = c("pearson", "deviance", "response"),
                                data = NULL, ...) {
  call <- sys.call()
  type <- .match_choice(type, c("pearson", "deviance", "response"), "type", call)
  a <- object$alpha
  x <- .residual_counts(object, data, length(a), call)
  n <- rowSums(x)
  A <- object$precision
  p <- a / sum(a)
  mu <- outer(n, p)
  if (type == "response") return(x - mu)
  if (type == "pearson") {
    inflation <- if (is.finite(A)) (n + A) / (1 + A) else rep(1, length(n))
    v <- outer(n * inflation, p * (1 - p))
    out <- ifelse(v > 0, (x - mu) / sqrt(v), 0)
    dimnames(out) <- dimnames(x)
    return(out)
  }
  active <- a > 0
  xa <- x[, active, drop = FALSE]
  ll <- if (object$multinomial_limit) {
    lgamma(n + 1) - rowSums(lgamma(xa + 1)) + drop(xa %*% log(p[active]))
  } else {
    unname(ddirmn(xa, unname(a[active]), log = TRUE))
  }
  .deviance_residuals(.saturated_loglik(x), ll, rownames(x))
}

#' @rdname dirmn_confint
#' @export
residuals.dirmn_mixture <- function(object, type = c("pearson", "deviance", "response"),
                                    data = NULL, components = NULL, ...) {
  residuals(.model(object, components, list(...)), type = type, data = data)
}

#' @rdname dirmn_confint
#' @export
residuals.dirmn_mixture_fit <- function(object, type = c("pearson", "deviance", "response"),
                                        data = NULL, ...) {
  call <- sys.call()
  type <- .match_choice(type, c("pearson", "deviance", "response"), "type", call)
  alpha <- object$alpha
  x <- .residual_counts(object, data, ncol(alpha), call)
  n <- rowSums(x)
  z <- object$responsibilities
  p <- alpha / rowSums(alpha)
  mu <- n * (z %*% p)
  if (type == "response") {
    out <- x - mu
    dimnames(out) <- dimnames(x)
    return(out)
  }
  if (type == "pearson") {
    A <- rowSums(alpha)
    second <- matrix(0, nrow(x), ncol(x))
    for (j in seq_len(nrow(alpha))) {
      vj <- outer(n * (n + A[[j]]) / (1 + A[[j]]), p[j, ] * (1 - p[j, ]))
      second <- second + z[, j] * (vj + outer(n, p[j, ])^2)
    }
    v <- second - mu^2
    out <- ifelse(v > 0, (x - mu) / sqrt(pmax(v, 0)), 0)
    dimnames(out) <- dimnames(x)
    return(out)
  }
  ll <- ddirmn(unname(x), unname(alpha), log = TRUE)
  s <- sweep(matrix(ll, nrow(x)), 2L, log(object$weights), `+`)
  m <- apply(s, 1L, max)
  .deviance_residuals(.saturated_loglik(x), m + log(rowSums(exp(s - m))), rownames(x))
}
