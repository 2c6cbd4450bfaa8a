# Per-group likelihood-ratio tests of Dirichlet-multinomial regressions
# (issue #29), over libdirmn's dirmn_reg_test_groups: differential usage
# within groups of categories, DRIMSeq's workflow as one call.

#' Per-group likelihood-ratio tests: differential usage within groups
#'
#' DRIMSeq's differential transcript usage workflow as one call of libdirmn
#' (`dirmn_reg_test_groups()`): the columns of the response (transcripts,
#' or any categories) are partitioned into groups (their genes) by
#' `groups`, and each group's columns with counts get their own
#' Dirichlet-multinomial regression ([dirmn_reg()]) on the full design
#' (from `formula`) and on the null design (from `null`), and the
#' likelihood-ratio test of the two: the statistic
#' \eqn{2 (\ell_{full} - \ell_{null})}{2 (loglik_full - loglik_null)}
#' against \eqn{\chi^2}{chi-square} with (p - p0) (V_g - 1) degrees of
#' freedom (V_g the group's columns with counts, p and p0 the columns of the
#' full and the null design; (p - p0) V_g for the log-linear model). The
#' p-values are adjusted over the groups tested by Benjamini and Hochberg
#' (as `p.adjust(method = "BH")`).
#'
#' The default `parametrization = "meanprecision"` is DRIMSeq's model: the
#' proportions of a group's columns are a softmax of the linear predictors
#' and the group has one precision (see [dirmn_reg()]); each group's
#' reference category is its first column with counts. By default each fit
#' has its own maximum-likelihood precision; `hold_precision = TRUE` fits
#' each group's null model at its full fit's precision, as DRIMSeq does (it
#' estimates the precision once, on the full design), which makes the
#' statistics no smaller (the log-linear model ignores it). Each group's fits are those [dirmn_reg()] makes of the
#' response's columns of that group with counts (rows without counts take
#' no part); the groups run on the context's threads, and the results do
#' not depend on their number.
#'
#' The full design is made so that the null design is its first columns,
#' as the library requires: the columns of `model.matrix(null)`, then
#' those of `model.matrix(formula)` that are not combinations of the
#' columns before them (so `~ condition` against `~ 1` gives the usual
#' `(Intercept)`, `condition...` design). `null` must be nested in
#' `formula`: every column of its design a combination of the full
#' design's columns (over the rows kept), or the call is an error (class
#' `dirmn_error_invalid_argument`) naming the columns that are not; so is
#' a full design that adds nothing to the null one, or either design not
#' of full column rank.
#'
#' A group that cannot be tested (fewer than two columns with counts, fewer
#' rows with counts than the full design's columns, a design that is not
#' of full rank on the group's rows, an alpha beyond the double range) is
#' kept in the result with `NA` numbers and a `status` saying why (the
#' library's status name: `"invalid_argument"`, `"overflow"`); the call
#' still succeeds. Tested groups whose fits do not converge warn (class
#' `dirmn_convergence_warning`) and have `converged = FALSE`.
#'
#' @param formula A two-sided formula: the count matrix (samples x
#'   features: a matrix or a sparse matrix of the \pkg{Matrix} package, as
#'   [dirmn_reg()] takes it) on the left, the full model's covariates on the
#'   right.
#' @param data A data frame (or list, or environment) holding the variables
#'   of `formula`, `null` and `weights`; by default they are taken from the
#'   formula's environment.
#' @param groups A vector or factor with one entry per column of the
#'   response: the feature's group (a transcript's gene). `NA` leaves the
#'   column out. A factor's groups are its levels that occur, in their
#'   order; other vectors' groups are their distinct values in the order
#'   they first appear.
#' @param null A formula (one-sided, or two-sided with its left side not
#'   used): the null model's covariates, nested in `formula`'s; `~ 1` (an
#'   intercept) by default.
#' @param weights `NULL` or frequency weights, one finite, non-negative
#'   value per row of `data` (evaluated in `data`, as [lm()]'s).
#' @param parametrization `"meanprecision"` (the default: DRIMSeq's model)
#'   or `"loglinear"` (see [dirmn_reg()]).
#' @param hold_precision `FALSE` (the default): each fit has its own
#'   precision; `TRUE`: each group's null fit holds its full fit's precision
#'   (DRIMSeq's test; mean/precision only).
#' @param subset,na.action,contrasts As for [dirmn_reg()] (`na.action`
#'   applies to the variables of both formulas).
#' @param tolerance,max_iterations Of each fit, as for [dirmn_reg()].
#' @param backend Where the table is stored: `"auto"`, `"cpu"` or
#'   `"cuda"` (see [dirmn_counts()]); the fits run on the CPU.
#' @param ... Unused; an argument that `dirmn_reg_groups()` does not take
#'   is an error of class `dirmn_error_invalid_argument`.
#'
#' @return A data frame of class `c("dirmn_reg_groups", "data.frame")`, one
#'   row per group (row names: the groups), with columns
#'   \describe{
#'     \item{`group`}{the group (a value of `groups`; a factor's level as a
#'       character string);}
#'     \item{`categories`}{the group's columns with counts;}
#'     \item{`loglik_full`, `loglik_null`}{the maximised log-likelihoods
#'       (log pmf with the multinomial coefficients) of the group's
#'       regressions on the full and the null design;}
#'     \item{`statistic`, `df`, `p_value`}{the likelihood-ratio statistic,
#'       its degrees of freedom and its chi-square p-value;}
#'     \item{`p_adjusted`}{the Benjamini-Hochberg adjusted p-value over the
#'       groups tested;}
#'     \item{`converged`}{whether both fits met the tolerance;}
#'     \item{`status`}{`"ok"` where the group was tested, else why not (the
#'       numbers are then `NA`).}
#'   }
#'   and attributes `tested` (the groups tested), `parametrization`,
#'   `hold_precision`, `covariates` (the full design's column names),
#'   `p_null` (how many of them are the null design's) and `call`. Its [print()] method shows
#'   the design and the first groups.
#' @seealso [dirmn_reg()] for one regression, with [anova()] for the
#'   likelihood-ratio test of two nested fits.
#' @references Nowicka M, Robinson MD (2016). DRIMSeq: a Dirichlet-multinomial
#'   framework for multivariate count outcomes in genomics. F1000Research
#'   5:1356.
#' @export
#' @examples
#' # 12 samples in two conditions; 6 genes of 2 to 4 transcripts, the usage
#' # of gene "g1"'s transcripts changing with the condition
#' set.seed(1)
#' d <- data.frame(condition = factor(rep(c("a", "b"), 6)))
#' gene <- rep(paste0("g", 1:6), c(3, 2, 4, 3, 2, 3))
#' Y <- do.call(cbind, lapply(unique(gene), function(g) {
#'   k <- sum(gene == g)
#'   t(sapply(d$condition, function(cond) {
#'     p <- seq_len(k)
#'     if (g == "g1" && cond == "b") p <- rev(p)^3
#'     pr <- rgamma(k, 20 * p / sum(p))
#'     rmultinom(1, 60, pr / sum(pr))
#'   }))
#' }))
#' res <- dirmn_reg_groups(Y ~ condition, data = d, groups = gene)
#' res
#' res$group[which(res$p_adjusted < 0.05)]
dirmn_reg_groups <- function(formula, data, groups, null = ~ 1, weights = NULL,
                             parametrization = c("meanprecision", "loglinear"),
                             hold_precision = FALSE, subset,
                             na.action, contrasts = NULL, tolerance = 1e-10,
                             max_iterations = 200L,
                             backend = getOption("dirmn.backend", "auto"), ...) {
  call <- match.call()
  ecall <- sys.call()
  .renamed_args(list(...), character(), ecall)
  parametrization <- .reg_choice(parametrization, c("meanprecision", "loglinear"),
                                 "parametrization", ecall)
  .check_flag(hold_precision, "hold_precision", ecall)
  tolerance <- .check_positive(tolerance, "tolerance", ecall)
  max_iterations <- .check_count(max_iterations, "max_iterations", ecall, min = 0L)
  if (missing(formula) || !inherits(formula, "formula") || length(formula) != 3L) {
    .stop("invalid_argument", paste(
      "formula must be a two-sided formula, counts ~ covariates (Y ~ condition)"), ecall)
  }
  if (!inherits(null, "formula")) {
    .stop("invalid_argument", "null must be a formula of the null model's covariates (~ 1)",
          ecall)
  }
  if (missing(groups)) {
    .stop("invalid_argument", "groups is missing: give each column of the response its group",
          ecall)
  }
  env <- environment(formula)
  if (is.null(env)) env <- parent.frame()
  null_rhs <- null[[length(null)]]

  # The model frame of the variables of both formulas, as lm() makes it
  # (weights, subset and na.action evaluated in data); a sparse Matrix
  # response is held by its row numbers, as in dirmn_reg().
  both <- formula
  both[[3L]] <- call("+", formula[[3L]], null_rhs)
  mf <- match.call(expand.dots = FALSE)
  mf <- mf[c(1L, match(c("formula", "data", "subset", "weights", "na.action"), names(mf), 0L))]
  mf$drop.unused.levels <- TRUE
  mf[[1L]] <- quote(stats::model.frame)
  response <- eval(formula[[2L]], if (missing(data)) env else data, env)
  sparse_response <- methods::is(response, "Matrix")
  if (sparse_response) {
    if (length(dim(response)) != 2L) .bad_response(ecall)
    row_env <- new.env(parent = env)
    row_env$.dirmn_response_row <- seq_len(nrow(response))
    both[[2L]] <- as.name(".dirmn_response_row")
    environment(both) <- row_env
  }
  mf$formula <- both
  mf <- eval(mf, parent.frame())
  if (!is.null(stats::model.offset(mf))) {
    .stop("invalid_argument", "offsets are not supported by dirmn_reg_groups()", ecall)
  }
  y <- stats::model.response(mf)
  if (sparse_response) {
    y <- response[y, , drop = FALSE]
    rownames(y) <- rownames(mf)
  } else {
    if (is.data.frame(y)) y <- as.matrix(y)
    if (!is.matrix(y) || !(is.numeric(y) || is.logical(y))) .bad_response(ecall)
  }
  no_data <- missing(data)
  terms_of <- function(f) {
    t <- if (no_data) stats::terms(f) else stats::terms(f, data = data)
    stats::delete.response(t)
  }
  x <- .reg_groups_design(stats::model.matrix(terms_of(null), mf, contrasts),
                          stats::model.matrix(terms_of(formula), mf, contrasts), ecall)
  p_null <- attr(x, "p_null")
  weights <- stats::model.weights(mf)
  if (!is.null(weights)) weights <- .as_weights(as.vector(weights), nrow(x), ecall)

  categories <- colnames(y)
  if (is.null(categories)) categories <- paste0("V", seq_len(ncol(y)))
  if (is.null(dim(groups)) && length(groups) == ncol(y) && (is.atomic(groups) ||
                                                             is.factor(groups))) {
    labels <- if (is.factor(groups)) {
      levels(droplevels(groups))
    } else {
      unique(groups[!is.na(groups)])
    }
  } else {
    given <- if (is.null(dim(groups))) sprintf("length %d", length(groups)) else
      sprintf("dimensions %s", paste(dim(groups), collapse = " x "))
    .stop("dimension_mismatch", sprintf(
      "groups must be a vector with one entry per column of the response (%d), not of %s",
      ncol(y), given), ecall)
  }
  if (length(labels) == 0L) {
    .stop("invalid_argument", "groups has no group: every entry is NA", ecall)
  }
  codes <- match(as.character(groups), as.character(labels)) - 1
  codes[is.na(codes)] <- -1

  prepared <- .prepare(y, backend, ecall, arg = "response", backend_option = missing(backend))
  on.exit(.release(prepared))
  res <- cpp_reg_test_groups(prepared$counts$ptr, as.double(codes), length(labels), x,
                             p_null, weights, tolerance, max_iterations,
                             as.integer(parametrization == "meanprecision"),
                             as.integer(hold_precision))
  if (.failed(res)) .raise_reg(res, ecall, colnames(x), categories, rownames(x))

  status <- vapply(res$status, function(s) {
    if (s == 0L) "ok" else sub("^dirmn_error_", "", .status_class(cpp_status_name(s)))
  }, "")
  nan_na <- function(v) {
    v[is.nan(v)] <- NA_real_
    v
  }
  out <- data.frame(
    group = if (is.factor(labels)) as.character(labels) else labels,
    categories = as.integer(res$categories),
    loglik_full = nan_na(res$loglik_full),
    loglik_null = nan_na(res$loglik_null),
    statistic = nan_na(res$statistic),
    df = nan_na(res$df),
    p_value = nan_na(res$p_value),
    p_adjusted = nan_na(res$p_adjusted),
    converged = res$converged,
    status = status,
    row.names = make.unique(as.character(labels)),
    stringsAsFactors = FALSE)
  unconverged <- sum(status == "ok" & !res$converged)
  if (unconverged > 0L) {
    .warn_convergence(sprintf(
      "the fits of %d of the %d groups tested did not converge in %d iterations (converged = FALSE): increase max_iterations",
      unconverged, as.integer(res$tested), max_iterations), ecall)
  }
  structure(out, tested = as.integer(res$tested), parametrization = parametrization,
            hold_precision = hold_precision, covariates = colnames(x), p_null = p_null, call = call,
            class = c("dirmn_reg_groups", "data.frame"))
}

# The full design of dirmn_reg_groups(): the null design's columns (x0)
# first, then those of the full model's design (x1) that are not
# combinations of the columns before them; attribute "p_null" the number of
# x0's columns. Refuses a null design that is empty or not of full column
# rank, a full design not of full column rank, a null model that is not
# nested in the full one, and a full model that adds nothing.
.reg_groups_design <- function(x0, x1, call) {
  storage.mode(x0) <- "double"
  storage.mode(x1) <- "double"
  if (ncol(x0) == 0L) {
    .stop("invalid_argument", "the null design has no covariates (null = ~ 0): the null model needs at least one (~ 1)", call)
  }
  if (ncol(x1) == 0L) {
    .stop("invalid_argument", "the design has no covariates (the formula's right-hand side is empty)", call)
  }
  if (!all(is.finite(x0)) || !all(is.finite(x1))) {
    # the library names the first non-finite entry of the full design; the
    # null design's columns are in it
    x <- cbind(x0, x1[, !(colnames(x1) %in% colnames(x0)), drop = FALSE])
    attr(x, "p_null") <- ncol(x0)
    return(x)
  }
  dependent <- function(x, what) {
    q <- qr(x)
    if (q$rank < ncol(x)) {
      bad <- colnames(x)[q$pivot[q$rank + 1L]]
      .stop("invalid_argument", sprintf(
        "the %s design is not of full column rank: its covariate %s is a combination of the others",
        what, bad), call)
    }
  }
  dependent(x0, "null")
  dependent(x1, "full")
  both <- qr(cbind(x1, x0))
  if (both$rank > ncol(x1)) {
    extra <- colnames(x0)[setdiff(both$pivot[seq_len(both$rank)], seq_len(ncol(x1))) -
                            ncol(x1)]
    .stop("invalid_argument", sprintf(paste(
      "the null model is not nested in the full model: its design column%s %s %s not",
      "combinations of the full design's columns (%s); the null model's covariates must be",
      "among the full model's"), if (length(extra) == 1L) "" else "s",
      paste0("\"", extra, "\"", collapse = ", "), if (length(extra) == 1L) "is" else "are",
      paste0("\"", colnames(x1), "\"", collapse = ", ")), call)
  }
  q <- qr(cbind(x0, x1))
  keep <- q$pivot[seq_len(q$rank)]
  if (q$rank == ncol(x0)) {
    .stop("invalid_argument", paste(
      "the full model adds no covariates to the null model: its design's columns are all",
      "combinations of the null design's"), call)
  }
  if (!identical(keep[seq_len(ncol(x0))], seq_len(ncol(x0)))) {
    stop("internal error: the null design's columns are not first")  # nocov
  }
  x <- cbind(x0, x1)[, keep, drop = FALSE]
  attr(x, "assign") <- NULL
  attr(x, "contrasts") <- NULL
  attr(x, "p_null") <- ncol(x0)
  x
}

#' @rdname dirmn_reg_groups
#' @param x A `dirmn_reg_groups` result.
#' @param digits Significant digits of the numbers printed.
#' @param n The most groups printed.
#' @export
print.dirmn_reg_groups <- function(x, digits = max(3L, getOption("digits") - 3L), n = 20L, ...) {
  d <- x
  attributes(d) <- attributes(x)[c("names", "row.names")]
  class(d) <- "data.frame"
  G <- nrow(d)
  tested <- attr(x, "tested")
  if (is.null(tested)) tested <- sum(d$status == "ok")
  cat("Per-group likelihood-ratio tests (dirmn_reg_groups)\n")
  covariates <- attr(x, "covariates")
  p_null <- attr(x, "p_null")
  if (!is.null(covariates) && !is.null(p_null)) {
    cat(sprintf("  %s regression; null design: %s; full adds: %s%s\n",
                if (identical(attr(x, "parametrization"), "loglinear")) "log-linear"
                else "mean/precision",
                paste(covariates[seq_len(p_null)], collapse = ", "),
                paste(covariates[-seq_len(p_null)], collapse = ", "),
                if (isTRUE(attr(x, "hold_precision"))) " (null at the full fit's precision)"
                else ""))
  }
  untested <- G - tested
  cat(sprintf("  %d group%s, %d tested%s; %d with p_adjusted < 0.05\n", G,
              if (G == 1L) "" else "s", tested,
              if (untested > 0L) sprintf(", %d not (see status)", untested) else "",
              sum(d$p_adjusted < 0.05, na.rm = TRUE)))
  if (G > 0L) {
    shown <- d[seq_len(min(G, n)), , drop = FALSE]
    print(shown, digits = digits, row.names = FALSE)
    if (G > n) cat(sprintf("... %d more group%s\n", G - n, if (G - n == 1L) "" else "s"))
  }
  invisible(x)
}
