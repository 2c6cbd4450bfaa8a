# The test of the Dirichlet-multinomial against the multinomial (issue #25,
# item 12), over libdirmn's dirmn_overdispersion_test.

#' Test for overdispersion: is the multinomial enough?
#'
#' Tests the multinomial model (every row's counts drawn from the same
#' proportions) against the Dirichlet-multinomial, whose rows vary in their
#' proportions (overdispersion). Both tests are computed by libdirmn in one
#' call; `method` chooses which one is reported.
#'
#' * `method = "lrt"`: the likelihood-ratio statistic \eqn{2 (\ell_{DM} -
#'   \ell_{mult})}{2 (l_DM - l_mult)}, with \eqn{\ell_{DM}}{l_DM} the log pmf at
#'   the maximum-likelihood DM fit ([dirmn_fit()]) and
#'   \eqn{\ell_{mult}}{l_mult} the multinomial log pmf at the pooled
#'   proportions. Under the multinomial the precision lies on the boundary
#'   of the DM's parameter space (infinite precision), so the null
#'   distribution is the 50:50 mixture of \eqn{\chi^2_0}{chi^2_0} (a point
#'   mass at 0) and \eqn{\chi^2_1}{chi^2_1}: the p-value is \eqn{P(\chi^2_1
#'   \ge LRT) / 2}{P(chi^2_1 >= LRT) / 2}, and 1 when the statistic is 0
#'   (the fit is at the multinomial limit).
#' * `method = "score"`: Tarone's C(alpha) score statistic in the form of
#'   Kim and Margolin (1992), \eqn{T = \sum_v \sum_b (x_{bv} - N_b X_v /
#'   N)^2 / X_v}{T = sum_v sum_b (x_bv - N_b X_v / N)^2 / X_v}
#'   (\eqn{X_v}{X_v} the column totals, \eqn{N}{N} the grand total), with the
#'   scaled chi-square approximation \eqn{T / g \sim \chi^2_{df}}{T / g ~
#'   chi^2_df}, as `HMP::C.alpha.multinomial()` computes it.
#'
#' Columns without counts are left out (they carry no information; HMP
#' gives `NaN` there), as are rows of zeros. `weights` are frequency
#' weights: integer weights give the same test as repeating the rows.
#'
#' @inheritParams dirmn_fit
#' @param method `"lrt"` (the default) or `"score"`.
#' @return An object of class `"htest"`: `statistic` (`LRT` or `T`),
#'   `parameter` (for the score test the degrees of freedom `df` and the
#'   scale `scale` of its chi-square approximation; none for the LRT),
#'   `p.value`, `method`, `data.name`, `estimate` (the fitted DM precision,
#'   the sum of alpha: `Inf` at the multinomial limit), and also
#'   `loglik_dm`, `loglik_multinomial` (the two log pmfs), `lrt`, `score`
#'   (both statistics with their p-values, whichever `method` reports),
#'   `categories` (the columns with counts), `nobs` (the observations, as
#'   [dirmn_fit()] counts them) and `converged` (of the DM fit).
#' @references Kim BS, Margolin BH (1992). Testing goodness of fit of a
#'   multinomial model against overdispersed alternatives. Biometrics
#'   48:711-719.
#'
#'   Tarone RE (1979). Testing the goodness of fit of the binomial
#'   distribution. Biometrika 66:585-590.
#' @seealso [dirmn_fit()]; `HMP::C.alpha.multinomial()`.
#' @export
#' @examples
#' mite <- as.matrix(read.csv(system.file("extdata", "mite.csv", package = "dirmn"),
#'                            row.names = 1))
#' dirmn_overdispersion_test(mite)
#' dirmn_overdispersion_test(mite, method = "score")
#'
#' # multinomial data: no overdispersion
#' set.seed(1)
#' multi <- t(rmultinom(30, 50, c(0.5, 0.3, 0.2)))
#' dirmn_overdispersion_test(multi)$p.value
dirmn_overdispersion_test <- function(x, method = c("lrt", "score"), weights = NULL,
                                      tolerance = 1e-10, max_iterations = 1000L,
                                      backend = getOption("dirmn.backend", "auto"),
                                      samples = c("rows", "columns"), assay = NULL, ...) {
  data_name <- paste(deparse(substitute(x)), collapse = " ")
  call <- sys.call()
  .warn_partial_renames(call, c(tol = "tolerance"))
  renamed <- .renamed_args(list(...), c(tol = "tolerance", maxit = "max_iterations"), call)
  tolerance <- .pick_renamed(renamed, "tolerance", tolerance, missing(tolerance), call)
  max_iterations <- .pick_renamed(renamed, "max_iterations", max_iterations,
                                  missing(max_iterations), call)
  method <- .match_choice(method, c("lrt", "score"), "method", call)
  tolerance <- .check_positive(tolerance, "tolerance", call)
  max_iterations <- .check_count(max_iterations, "max_iterations", call, min = 0L)
  x <- .counts_input(x, samples, assay, call, missing(samples))
  prepared <- .prepare(x, backend, call, backend_option = missing(backend))
  on.exit(.release(prepared))
  counts <- prepared$counts
  weights <- .as_weights(weights, counts$dim[1L], call)
  res <- cpp_overdispersion_test(counts$ptr, weights, tolerance, max_iterations)
  if (.failed(res)) .raise(res, call)
  if (!res$converged) {
    .warn_convergence(sprintf(paste(
      "the Dirichlet-multinomial fit of the test did not converge in %d iterations;",
      "the likelihood-ratio statistic is from its last iterate: increase max_iterations"),
      max_iterations), call)
  }
  lrt <- c(statistic = res$lrt_statistic, p.value = res$lrt_p_value)
  score <- c(statistic = res$score_statistic, df = res$score_df, scale = res$score_scale,
             p.value = res$score_p_value)
  out <- if (method == "lrt") {
    list(statistic = c(LRT = res$lrt_statistic), p.value = res$lrt_p_value,
         method = paste("Likelihood-ratio test of the multinomial against the",
                        "Dirichlet-multinomial (boundary null: 50:50 mixture of chi^2_0 and chi^2_1)"))
  } else {
    list(statistic = c(T = res$score_statistic),
         parameter = c(df = res$score_df, scale = res$score_scale),
         p.value = res$score_p_value,
         method = paste("C(alpha) score test of the multinomial against the",
                        "Dirichlet-multinomial (Kim and Margolin's T, scaled chi-square)"))
  }
  out <- c(out, list(
    data.name = data_name, estimate = c(precision = res$precision),
    loglik_dm = res$loglik_dm, loglik_multinomial = res$loglik_multinomial, lrt = lrt,
    score = score, categories = as.integer(res$categories), nobs = res$observations,
    converged = res$converged))
  class(out) <- "htest"
  out
}
