# The test of one Dirichlet-multinomial for all rows against one per group
# of rows (issue #30), over libdirmn's dirmn_test_groups, and the test of
# the rows against a given composition (HMP's Xsc), over
# dirmn_test_proportions.

#' Test whether groups of rows share one Dirichlet-multinomial
#'
#' Does one composition fit every group of rows? The test of one
#' Dirichlet-multinomial for every row against one per group of rows, by
#' its likelihood ratio (\pkg{HMP}'s `Xdc.sevsample()` on the full
#' likelihood) or by \pkg{HMP}'s `Xmcupo.sevsample()` statistic, referred to
#' chi-square or to a parametric bootstrap; or, with `statistic = "xoc"`
#' (\pkg{HMP}'s `Xoc.sevsample()`), do the groups share one overdispersion?
#' Computed by libdirmn (`dirmn_test_groups()`).
#'
#' The statistic, by `statistic` (G the groups with counts, P the columns
#' with counts):
#'
#' * `statistic = "lrt"` (the default): the likelihood ratio of one
#'   Dirichlet-multinomial for every row (a [dirmn_fit()] of the whole
#'   table) against one per group of rows (a fit of each group's rows),
#'   \eqn{2 (\sum_g \ell_g - \ell_0)}{2 (sum_g l_g - l_0)}, the log pmfs at
#'   the fits; chi-square with \eqn{(G - 1) P}{(G - 1) P} degrees of
#'   freedom.
#' * `statistic = "xmcupo"`: \pkg{HMP}'s Xmcupo (La Rosa et al. 2012), the
#'   groups' pooled proportions \eqn{\pi_g}{pi_g} against their
#'   precision-weighted mean \eqn{\pi_0}{pi_0}: \eqn{\sum_g \sum_v (\pi_{gv}
#'   - \pi_{0v})^2 / (\pi_{0v} c_g)}{sum_g sum_v (pi_gv - pi_0v)^2 / (pi_0v
#'   c_g)}, \eqn{c_g = (\theta_g (\sum N^2 - \sum N) + \sum N) / (\sum
#'   N)^2}{c_g = (theta_g (sum N^2 - sum N) + sum N) / (sum N)^2} over the
#'   row totals N of group g, with \eqn{\theta_g}{theta_g} Weir's
#'   method-of-moments overdispersion of its rows; chi-square with
#'   \eqn{(G - 1) (P - 1)}{(G - 1) (P - 1)} degrees of freedom. No fit
#'   enters this statistic; the log-likelihoods reported are still the
#'   fits'.
#' * `statistic = "xoc"`: \pkg{HMP}'s Xoc (La Rosa et al. 2012), a test of
#'   overdispersion rather than composition: do the groups share one
#'   overdispersion \eqn{\theta = 1 / (1 + A)}{theta = 1 / (1 + A)}? The
#'   likelihood ratio of one Dirichlet-multinomial per group with one shared
#'   precision A (each group's proportions free) against one per group (a
#'   fit of each group's rows), \eqn{2 (\sum_g \ell_g - \ell_0)}{2 (sum_g l_g
#'   - l_0)}, \eqn{\ell_0}{l_0} now the shared-precision fit's; chi-square
#'   with \eqn{G - 1}{G - 1} degrees of freedom.
#'
#' The p-value, by `method`:
#'
#' * `method = "lrt"`: from the chi-square distribution with the
#'   statistic's degrees of freedom.
#' * `method = "bootstrap"`: the parametric bootstrap p-value
#'   \eqn{(1 + \#\{T^* \ge T\}) / (1 + B)}{(1 + #{T* >= T}) / (1 + B)}
#'   (Davison and Hinkley 1997, eq. 4.11): `B` tables drawn from the fitted
#'   one-DM model (for `"xoc"`, from the shared-precision fit, each row from
#'   its group's DM) with each row's observed total, each tested by the same
#'   statistic (for `"lrt"` and `"xoc"`, refitted under both hypotheses). It does not
#'   lean on the chi-square approximation, which can be poor for small
#'   groups or many sparse columns. The tables and fits run on the host's
#'   threads; the result depends on `seed` alone, not on their number.
#'
#' A group whose rows show no overdispersion is fitted at the multinomial
#' limit; groups without counts are left out of G.
#'
#' @inheritParams dirmn_fit
#' @param groups The group of each row: a factor or a vector (its distinct
#'   values are the groups), one entry per row of `x`; `NA` leaves the row
#'   out of the test. At least two groups are needed.
#' @param method `"lrt"` (the default: the chi-square p-value) or
#'   `"bootstrap"` (the parametric bootstrap p-value).
#' @param statistic `"lrt"` (the default: the likelihood ratio, HMP's
#'   `Xdc`), `"xmcupo"` (HMP's `Xmcupo`) or `"xoc"` (HMP's `Xoc`: one
#'   shared overdispersion against one per group).
#' @param B The number of bootstrap tables, for `method = "bootstrap"` (a
#'   whole number >= 1; ignored, but checked, for `"lrt"`).
#' @param seed For the bootstrap: `NULL` (draw the library's seed from R's
#'   random number generator, so [set.seed()] makes it reproducible) or the
#'   library's seed, a whole number in 0 .. 2^53, or any
#'   64-bit seed as a string of decimal digits ("18446744073709551615" at most).
#' @return An object of class `"htest"`: `statistic` (named `LRT`,
#'   `Xmcupo` or `Xoc`), `parameter` (`df`), `p.value` (the chi-square p-value for
#'   `"lrt"`, the bootstrap p-value for `"bootstrap"`), `method` (which
#'   statistic and which p-value), `data.name`, `estimate` (the two
#'   log-likelihoods), and also `statistic_kind` (`"lrt"`, `"xmcupo"` or
#'   `"xoc"`, as `statistic` asked), `p_value_chisq` (the chi-square p-value,
#'   whichever `method`), `p_value_bootstrap` (the bootstrap p-value, `NA`
#'   for `"lrt"`), `B` (the bootstrap tables drawn: 0 for `"lrt"`), `seed`
#'   (the bootstrap's seed; `NULL` for `"lrt"`), `loglik_null` (the log pmf
#'   of the table at the one-DM fit; for `"xoc"`, at the shared-precision
#'   fit), `loglik_groups` (the sum of the
#'   groups' log pmfs at their fits), `groups` (G, the groups with counts),
#'   `levels` (the groups' labels), `categories` (P, the columns with
#'   counts) and `converged` (whether every fit of the observed table
#'   converged).
#' @references Davison AC, Hinkley DV (1997). Bootstrap Methods and their
#'   Application. Cambridge University Press.
#'
#'   La Rosa PS, Brooks JP, Deych E, et al. (2012). Hypothesis testing and
#'   power calculations for taxonomic-based human microbiome data. PLoS ONE
#'   7:e52078.
#' @seealso [dirmn_fit()], [dirmn_overdispersion_test()]; [dirmn_reg()] for
#'   covariates other than one factor; [dirmn_test_proportions()] for the
#'   rows against a given composition.
#' @export
#' @examples
#' set.seed(1)
#' x <- rbind(rdirmn(20, 100, c(5, 3, 2)), rdirmn(20, 100, c(2, 3, 5)))
#' g <- rep(c("a", "b"), each = 20)
#' dirmn_test_groups(x, g)
#' dirmn_test_groups(x, g, method = "bootstrap", B = 99, seed = 1)$p.value
#' dirmn_test_groups(x, g, statistic = "xmcupo")
#' dirmn_test_groups(x, g, statistic = "xoc")  # one shared overdispersion?
dirmn_test_groups <- function(x, groups, method = c("lrt", "bootstrap"), B = 1000L, seed = NULL,
                              statistic = c("lrt", "xmcupo", "xoc"), tolerance = 1e-10,
                              max_iterations = 1000L,
                              backend = getOption("dirmn.backend", "auto"),
                              samples = c("rows", "columns"), assay = NULL) {
  data_name <- paste(paste(deparse(substitute(x)), collapse = " "), "by",
                     paste(deparse(substitute(groups)), collapse = " "))
  call <- sys.call()
  method <- .match_choice(method, c("lrt", "bootstrap"), "method", call)
  statistic <- .match_choice(statistic, c("lrt", "xmcupo", "xoc"), "statistic", call)
  B <- .check_count(B, "B", call, min = 0L)
  if (method == "bootstrap" && B < 1L) {
    .stop("invalid_argument", "B must be at least 1 for method = \"bootstrap\"", call)
  }
  tolerance <- .check_positive(tolerance, "tolerance", call)
  max_iterations <- .check_count(max_iterations, "max_iterations", call, min = 0L)
  if (method == "bootstrap") {
    seed <- if (is.null(seed)) .draw_seed() else .check_seed(seed, call)
  } else {
    seed <- NULL
  }
  if (missing(groups)) .stop("invalid_argument", "groups is missing", call)
  x <- .counts_input(x, samples, assay, call, missing(samples))
  prepared <- .prepare(x, backend, call, backend_option = missing(backend))
  on.exit(.release(prepared))
  counts <- prepared$counts
  coded <- .group_codes(groups, counts$dim[1L], call)
  res <- cpp_test_groups(counts$ptr, coded$codes, length(coded$levels),
                         if (method == "bootstrap") B else 0, if (is.null(seed)) 0 else seed,
                         tolerance, max_iterations, .group_statistic_code(statistic))
  if (.failed(res)) .raise(res, call)
  if (!res$converged) {
    .warn_convergence(sprintf(paste(
      "a Dirichlet-multinomial fit of the test did not converge in %d iterations;",
      "%s from its last iterate: increase max_iterations"), max_iterations,
      if (statistic == "xmcupo") "the log-likelihoods are" else "the statistic is"), call)
  }
  test <- switch(statistic,
    lrt = "Likelihood-ratio test of one Dirichlet-multinomial against one per group",
    xmcupo = "HMP's Xmcupo test of one composition for every group",
    xoc = "HMP's Xoc test of one overdispersion for every group")
  out <- list(
    statistic = stats::setNames(res$statistic,
                                c(lrt = "LRT", xmcupo = "Xmcupo", xoc = "Xoc")[[statistic]]),
    parameter = c(df = res$df),
    p.value = if (method == "lrt") res$p_value else res$p_value_bootstrap,
    method = if (method == "lrt") {
      paste(test, "(chi-square)")
    } else {
      sprintf("%s (parametric bootstrap, B = %d)", test, as.integer(res$bootstrap))
    },
    data.name = data_name, statistic_kind = statistic,
    estimate = c(loglik_null = res$loglik_null, loglik_groups = res$loglik_groups),
    p_value_chisq = res$p_value,
    p_value_bootstrap = if (method == "lrt") NA_real_ else res$p_value_bootstrap,
    B = as.integer(res$bootstrap), seed = seed,
    loglik_null = res$loglik_null, loglik_groups = res$loglik_groups,
    groups = as.integer(res$groups), levels = coded$levels,
    categories = as.integer(res$categories), converged = res$converged)
  class(out) <- "htest"
  out
}

#' Test whether the rows share a given composition
#'
#' Do the rows' pooled proportions match a given composition? \pkg{HMP}'s
#' Xsc test (`Xsc.onesample()`, La Rosa et al. 2012): the rows' pooled
#' proportions against `p`, with the rows' overdispersion in their variance,
#' referred to chi-square. Computed by libdirmn (`dirmn_test_proportions()`).
#'
#' The pooled proportions \eqn{\pi_v}{pi_v} are the column sums over the
#' grand total. Their method-of-moments covariance is
#' \eqn{c (\mathrm{diag}(\pi_0) - \pi_0 \pi_0^T)}{c (diag(pi0) - pi0 pi0^T)},
#' \eqn{\pi_0}{pi0} the composition `p`, with \eqn{c = (\theta (\sum N^2 - \sum N) + \sum N) /
#' (\sum N)^2}{c = (theta (sum N^2 - sum N) + sum N) / (sum N)^2} over the
#' row totals N and \eqn{\theta}{theta} Weir's method-of-moments
#' overdispersion of the rows (0 for one row). The statistic is the Wald
#' statistic of \eqn{\pi - \pi_0}{pi - pi0} through that matrix's
#' Moore-Penrose inverse, \eqn{\sum_v (\pi_v - \pi_{0v})^2 / (\pi_{0v}
#' c)}{sum_v (pi_v - pi0_v)^2 / (pi0_v c)} over the columns with
#' \eqn{\pi_{0v} > 0}{pi0_v > 0}, referred to chi-square with (those
#' columns) - 1 degrees of freedom. No fit enters it.
#'
#' A column with counts where `p` is 0 makes the statistic `Inf` and the
#' p-value 0: the rows cannot come from that composition (\pkg{HMP}'s
#' numerical inverse ignores the column instead). Rows without counts are
#' left out (\pkg{HMP} counts them in Weir's \eqn{\theta}{theta}).
#'
#' @inheritParams dirmn_fit
#' @param p The composition to test against (\pkg{HMP}'s `pi0`): one
#'   proportion per column of `x`, each finite and >= 0, at least two
#'   positive, summing to 1 (within 1e-6; they are divided by their sum).
#'   Where `p` and the columns of `x` both have names, they are matched by
#'   name.
#' @return An object of class `"htest"`: `statistic` (named `Xsc`;
#'   `Inf` where a column with counts has `p` 0), `parameter` (`df`, the
#'   columns with `p` > 0, less one), `p.value` (the chi-square p-value),
#'   `method`, `data.name`, `estimate` (`theta`), and also `theta` (Weir's
#'   method-of-moments overdispersion of the rows), `rows` (the rows with
#'   counts) and `categories` (the columns with `p` > 0).
#' @references La Rosa PS, Brooks JP, Deych E, et al. (2012). Hypothesis
#'   testing and power calculations for taxonomic-based human microbiome
#'   data. PLoS ONE 7:e52078.
#' @seealso [dirmn_test_groups()] for groups of rows against each other;
#'   [dirmn_overdispersion_test()]; [dirmn_power_proportions()] for the
#'   test's power by simulation.
#' @export
#' @examples
#' set.seed(1)
#' x <- rdirmn(20, 100, c(5, 3, 2))
#' dirmn_test_proportions(x, c(0.5, 0.3, 0.2))
#' dirmn_test_proportions(x, c(0.2, 0.3, 0.5))$p.value
#'
#' # against the pooled proportions of another table
#' y <- rdirmn(20, 100, c(2, 3, 5))
#' dirmn_test_proportions(x, colSums(y) / sum(y))
dirmn_test_proportions <- function(x, p, backend = getOption("dirmn.backend", "auto"),
                                   samples = c("rows", "columns"), assay = NULL) {
  data_name <- paste(paste(deparse(substitute(x)), collapse = " "), "against",
                     paste(deparse(substitute(p)), collapse = " "))
  call <- sys.call()
  if (missing(p)) .stop("invalid_argument", "p is missing", call)
  x <- .counts_input(x, samples, assay, call, missing(samples))
  prepared <- .prepare(x, backend, call, backend_option = missing(backend))
  on.exit(.release(prepared))
  counts <- prepared$counts
  p <- .as_proportions(p, counts$dim[2L], counts$dimnames[[2L]], call)
  res <- cpp_test_proportions(counts$ptr, p)
  if (.failed(res)) .raise(res, call)
  out <- list(
    statistic = c(Xsc = res$statistic), parameter = c(df = res$df), p.value = res$p_value,
    method = "HMP's Xsc test of the rows against a given composition (chi-square)",
    data.name = data_name, estimate = c(theta = res$theta), theta = res$theta,
    rows = as.integer(res$rows), categories = as.integer(res$categories))
  class(out) <- "htest"
  out
}

# The composition `p` of dirmn_test_proportions as a double vector, one
# entry per column of the table (`cols`, named `cn`), in the table's order
# where both have names; NA and NaN are reported here, by the column, other
# bad values by the library (as "column <j>: ...", see .location_message).
# `against = "alpha"` (dirmn_power_proportions): `cols` and `cn` are
# alpha's length and names, and the messages say so.
.as_proportions <- function(p, cols, cn, call, against = "x") {
  .refuse_integer64(p, "p", call)
  if (!is.numeric(p) || sum(dim(p) > 1L) > 1L) {
    .stop("invalid_parameter", sprintf("p must be a numeric vector with one value per %s",
                                       if (against == "x") "column" else "entry of alpha"),
          call)
  }
  if (!is.null(dim(p))) p <- drop(p)
  if (length(p) != cols) {
    .stop("dimension_mismatch", if (against == "x") {
      sprintf("p has length %d but the counts have %s columns", length(p), .num(cols))
    } else {
      sprintf("p has length %d but alpha has length %s", length(p), .num(cols))
    }, call)
  }
  p <- .match_names(p, cn, "p", against, call)
  if (anyNA(p)) {
    column <- which(is.na(p))[1L]
    .stop("invalid_parameter", sprintf(
      "column %d: proportion %s is not finite", column,
      if (is.nan(p[[column]])) "NaN" else "NA"), call)
  }
  storage.mode(p) <- "double"
  p
}

# The library's dirmn_group_statistic of a checked `statistic` choice.
.group_statistic_code <- function(statistic) {
  switch(statistic, lrt = 0L, xmcupo = 1L, xoc = 2L)
}

# Groups as the library's codes: 0 .. G - 1 by the levels of the groups
# (a factor's levels without those no row has, else the sorted distinct
# values), -1 for NA (a row left out).
.group_codes <- function(groups, rows, call) {
  if (!is.atomic(groups) || !is.null(dim(groups)) && sum(dim(groups) > 1L) > 1L) {
    .stop("invalid_argument", "groups must be a factor or a vector with one entry per row",
          call)
  }
  if (length(groups) != rows) {
    .stop("dimension_mismatch", sprintf(
      "groups has length %d but the counts have %d rows", length(groups), rows), call)
  }
  f <- if (is.factor(groups)) droplevels(groups) else factor(as.vector(groups))
  if (nlevels(f) < 2L) {
    .stop("invalid_argument", sprintf(
      "groups must have at least two distinct values (not NA), not %d", nlevels(f)), call)
  }
  codes <- as.integer(f) - 1L
  codes[is.na(codes)] <- -1L
  list(codes = codes, levels = levels(f))
}
