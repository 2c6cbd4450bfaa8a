# The test of one Dirichlet-multinomial for all rows against one per group
# of rows (issue #30), over libdirmn's dirmn_test_groups.

#' Test whether groups of rows share one Dirichlet-multinomial
#'
#' Does one composition fit every group of rows? The test of one
#' Dirichlet-multinomial for every row against one per group of rows, by
#' its likelihood ratio (\pkg{HMP}'s `Xdc.sevsample()` on the full
#' likelihood) or by \pkg{HMP}'s `Xmcupo.sevsample()` statistic, referred to
#' chi-square or to a parametric bootstrap. Computed by libdirmn
#' (`dirmn_test_groups()`).
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
#'
#' The p-value, by `method`:
#'
#' * `method = "lrt"`: from the chi-square distribution with the
#'   statistic's degrees of freedom.
#' * `method = "bootstrap"`: the parametric bootstrap p-value
#'   \eqn{(1 + \#\{T^* \ge T\}) / (1 + B)}{(1 + #{T* >= T}) / (1 + B)}
#'   (Davison and Hinkley 1997, eq. 4.11): `B` tables drawn from the fitted
#'   one-DM model with each row's observed total, each tested by the same
#'   statistic (for `"lrt"`, refitted under both hypotheses). It does not
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
#'   `Xdc`) or `"xmcupo"` (HMP's `Xmcupo`).
#' @param B The number of bootstrap tables, for `method = "bootstrap"` (a
#'   whole number >= 1; ignored, but checked, for `"lrt"`).
#' @param seed For the bootstrap: `NULL` (draw the library's seed from R's
#'   random number generator, so [set.seed()] makes it reproducible) or the
#'   library's seed, a whole number in 0 .. 2^53.
#' @return An object of class `"htest"`: `statistic` (named `LRT` or
#'   `Xmcupo`), `parameter` (`df`), `p.value` (the chi-square p-value for
#'   `"lrt"`, the bootstrap p-value for `"bootstrap"`), `method` (which
#'   statistic and which p-value), `data.name`, `estimate` (the two
#'   log-likelihoods), and also `statistic_kind` (`"lrt"` or `"xmcupo"`,
#'   as `statistic` asked), `p_value_chisq` (the chi-square p-value,
#'   whichever `method`), `p_value_bootstrap` (the bootstrap p-value, `NA`
#'   for `"lrt"`), `B` (the bootstrap tables drawn: 0 for `"lrt"`), `seed`
#'   (the bootstrap's seed; `NULL` for `"lrt"`), `loglik_null` (the log pmf
#'   of the table at the one-DM fit), `loglik_groups` (the sum of the
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
#'   covariates other than one factor.
#' @export
#' @examples
#' set.seed(1)
#' x <- rbind(rdirmn(20, 100, c(5, 3, 2)), rdirmn(20, 100, c(2, 3, 5)))
#' g <- rep(c("a", "b"), each = 20)
#' dirmn_test_groups(x, g)
#' dirmn_test_groups(x, g, method = "bootstrap", B = 99, seed = 1)$p.value
#' dirmn_test_groups(x, g, statistic = "xmcupo")
dirmn_test_groups <- function(x, groups, method = c("lrt", "bootstrap"), B = 1000L, seed = NULL,
                              statistic = c("lrt", "xmcupo"), tolerance = 1e-10,
                              max_iterations = 1000L,
                              backend = getOption("dirmn.backend", "auto"),
                              samples = c("rows", "columns"), assay = NULL) {
  data_name <- paste(paste(deparse(substitute(x)), collapse = " "), "by",
                     paste(deparse(substitute(groups)), collapse = " "))
  call <- sys.call()
  method <- .match_choice(method, c("lrt", "bootstrap"), "method", call)
  statistic <- .match_choice(statistic, c("lrt", "xmcupo"), "statistic", call)
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
      if (statistic == "lrt") "the statistic is" else "the log-likelihoods are"), call)
  }
  test <- if (statistic == "lrt") {
    "Likelihood-ratio test of one Dirichlet-multinomial against one per group"
  } else {
    "HMP's Xmcupo test of one composition for every group"
  }
  out <- list(
    statistic = if (statistic == "lrt") c(LRT = res$statistic) else c(Xmcupo = res$statistic),
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

# The library's dirmn_group_statistic of a checked `statistic` choice.
.group_statistic_code <- function(statistic) {
  switch(statistic, lrt = 0L, xmcupo = 1L)
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
