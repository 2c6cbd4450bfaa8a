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
#'   "logalpha"`. Where both `alpha` and the columns of `x` have names, they
#'   are matched by name (the same names in any order; other names are an
#'   error of class `dirmn_error_dimension_mismatch`).
#' @inheritParams dirmn_counts
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
                             full = TRUE, backend = getOption("dirmn.backend", "auto"),
                             samples = c("rows", "columns"), assay = NULL) {
  call <- sys.call()
  param <- .match_choice(param, c("alpha", "logalpha"), "param", call)
  .check_flag(full, "full", call)
  if (!is.double(alpha) || is.object(alpha)) alpha <- .as_alpha(alpha, call)
  x <- .counts_input(x, samples, assay, call, missing(samples))
  prepared <- .prepare(x, backend, call, backend_option = missing(backend))
  on.exit(.release(prepared))
  counts <- prepared$counts
  if (!is.null(dim(alpha))) {
    .stop("dimension_mismatch",
          "alpha must be a vector with one value per column (one alpha shared by all rows)", call)
  }
  alpha <- .match_names(alpha, counts$dimnames[[2L]], "alpha", "x", call)
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
#' step (half the squared Newton decrement) is below `tolerance` times the
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
#' A fit that stops at `max_iterations` iterations without meeting the tolerance
#' warns, with a condition of class `dirmn_convergence_warning` (a
#' `warning`), and returns its last iterate with `converged = FALSE`, as
#' [glm()] does; [suppressWarnings()] with `classes =
#' "dirmn_convergence_warning"` (R >= 4.0) silences only these.
#'
#' @inheritParams dirmn_loglik_sum
#' @param weights `NULL` or one finite, non-negative weight per row. Integer
#'   weights give the same fit as repeating the rows.
#' @param start `NULL` (the method of moments), or starting values of
#'   alpha, one positive value per column (matched to the columns of `x` by
#'   name where both have names).
#' @param tolerance Relative convergence tolerance (see Details).
#' @param max_iterations Maximum number of Newton iterations.
#' @param ... Deprecated names of arguments: `tol` (now `tolerance`) and
#'   `maxit` (now `max_iterations`) are accepted with a warning of class
#'   `dirmn_deprecated_warning`.
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
#'     \item{`std_error_alpha`, `std_error_log_alpha`}{standard errors of
#'       alpha and of log alpha from the observed information (`NA` for
#'       columns without counts and in the multinomial limit). (Called
#'       `se_alpha` and `se_log_alpha` before version 0.3.0.)}
#'     \item{`parameters`}{the number of fitted parameters, as libdirmn
#'       counts them: the alphas of the columns with counts.}
#'     \item{`nobs`}{the observations, as libdirmn counts them: the rows
#'       with counts and positive weight (the sum of their weights when
#'       weights are given).}
#'     \item{`data`}{the table as given (shared with the caller's object,
#'       not copied), for [residuals()]; `NULL` for a prepared table.}
#'     \item{`call`}{the call.}
#'   }
#'   Methods: [print()], [summary()], [coef()] (alpha), [vcov()] (the
#'   covariance matrix of alpha), [logLik()] (so [AIC()] and [BIC()] work),
#'   [fitted()] (expected counts) and [nobs()].
#' @seealso [dirmn_loglik_sum()] for the objective and its derivatives;
#'   [dirmn_mixture()] for mixtures of several alphas;
#'   [dirmn_communicator()] for a table split by rows over several processes
#'   (an MPI script comes with the package).
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
dirmn_fit <- function(x, weights = NULL, start = NULL, tolerance = 1e-10,
                      max_iterations = 1000L, verbose = FALSE,
                      backend = getOption("dirmn.backend", "auto"),
                      samples = c("rows", "columns"), assay = NULL, ...) {
  call <- match.call()
  ecall <- sys.call()
  .warn_partial_renames(ecall, c(tol = "tolerance"))
  renamed <- .renamed_args(list(...), c(tol = "tolerance", maxit = "max_iterations"), ecall)
  tolerance <- .pick_renamed(renamed, "tolerance", tolerance, missing(tolerance), ecall)
  max_iterations <- .pick_renamed(renamed, "max_iterations", max_iterations,
                                  missing(max_iterations), ecall)
  .check_flag(verbose, "verbose", ecall)
  tolerance <- .check_positive(tolerance, "tolerance", ecall)
  max_iterations <- .check_count(max_iterations, "max_iterations", ecall, min = 0L)
  x <- .counts_input(x, samples, assay, ecall, missing(samples))
  prepared <- .prepare(x, backend, ecall, backend_option = missing(backend))
  on.exit(.release(prepared))
  counts <- prepared$counts
  rows <- counts$dim[1L]
  cols <- counts$dim[2L]
  weights <- .as_weights(weights, rows, ecall)
  if (!is.null(start)) {
    start <- .as_start(.match_names(start, counts$dimnames[[2L]], "start", "x", ecall), cols,
                       ecall)
  }

  progress <- NULL
  if (verbose) {
    # The library reports the log pmf (its default), the
    # log-likelihood on the scale of the result.
    progress <- .progress_reporter(function(iteration, value, change) {
      sprintf("dirmn_fit: iteration %d, log-likelihood %.12g, gradient norm %.3g",
              iteration, value, change)
    })
  }
  res <- cpp_fit(counts$ptr, weights, start, tolerance, max_iterations, progress)
  if (.failed(res)) .raise(res, ecall)
  if (!res$converged && !res$multinomial_limit) {
    .warn_convergence(sprintf(
      "did not converge in %d iteration%s (largest gradient component in log alpha %s, tolerance = %s); the result is the last iterate: increase max_iterations",
      res$iterations, if (res$iterations == 1) "" else "s", format(res$gradient_norm, digits = 3L),
      format(tolerance, digits = 3L)), ecall)
  }

  totals <- cpp_row_totals(counts$ptr)
  if (.failed(totals)) .raise(totals, ecall)

  alpha <- res$alpha
  zero <- alpha == 0
  std_error_alpha <- res$std_error_alpha
  std_error_log_alpha <- res$std_error_log_alpha
  # The library reports 0 where there is no standard error.
  no_se <- zero | std_error_log_alpha == 0 | res$multinomial_limit
  std_error_alpha[no_se] <- NA_real_
  std_error_log_alpha[no_se] <- NA_real_

  # The Hessian with respect to alpha at the fit, which the library returns
  # with it, kept for vcov(); NULL in the multinomial limit and where a
  # single column has counts. Entries of columns without counts are unused.
  hessian <- NULL
  if (!is.null(res$hessian_diag)) {
    hessian <- list(diag = res$hessian_diag, scalar = res$hessian_scalar)
  }

  cn <- counts$dimnames[[2L]]
  names(alpha) <- cn
  names(std_error_alpha) <- cn
  names(std_error_log_alpha) <- cn
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
      std_error_alpha = std_error_alpha,
      std_error_log_alpha = std_error_log_alpha,
      parameters = res$parameters,
      nobs = res$observations,
      call = call,
      hessian = hessian,
      row_totals = totals,
      dimnames = counts$dimnames,
      weights = weights,
      # the table as given (R shares it, no copy), for residuals(); NULL
      # for a prepared table, whose counts R does not hold
      data = if (prepared$temporary) x else NULL
    ),
    class = "dirmn_fit"
  )
}

