#' Dirichlet-multinomial mixtures (model-based clustering of count tables)
#'
#' Fits mixtures of `k` Dirichlet-multinomial components to the rows of a
#' count table by EM in libdirmn, for each `k` asked for, and selects the
#' number of components by an information criterion. Rows are samples
#' (communities, documents), columns categories (taxa, species, words);
#' each component has its own alpha, and each row a probability of coming
#' from each component (its responsibilities).
#'
#' Each EM iteration evaluates the rows x k log-likelihood matrix in one pass
#' (the E step) and refits every component's alpha by Newton's method on
#' responsibility-weighted count histograms (the M step). EM starts from
#' k-means on the rows' proportions (`init = "kmeans"`, or k-means++ seeding)
#' or from \pkg{DirichletMultinomial}'s `dmn()` initialisation, soft k-means
#' (`init = "soft"`); `starts`
#' random starts are run and the best kept. Results depend only on `seed`,
#' not on R's random number generator, and are the same on every backend.
#' Rows of zeros and columns of zeros are allowed (they carry no
#' information); a component that loses all its rows is re-seeded at the
#' worst-explained row.
#'
#' @section Objectives and criteria:
#' With `objective = "ml"` EM maximises the likelihood, and the criteria are
#' on R's usual scale (smaller is better): with \eqn{\ell}{l} the mixture
#' log-likelihood (with multinomial coefficients), \eqn{P = kV + k - 1}{P = k V + k - 1}
#' parameters and \eqn{n}{n} rows (every row, rows of zeros included, as
#' libdirmn counts them; the sum of the weights when given),
#' \deqn{\mathrm{AIC} = -2\ell + 2P, \quad \mathrm{BIC} = -2\ell + P \log n,}{AIC = -2 l + 2 P,  BIC = -2 l + P log(n),}
#' and `laplace` is the Laplace approximation to \eqn{-2}{-2} log evidence,
#' \eqn{-2\ell + \log\det H - P\log(2\pi)}{-2 l + log det H - P log(2 pi)},
#' with \eqn{H}{H} the Hessian of \eqn{-\ell}{-l} in log alpha per component
#' (block-diagonal; the mixing weights are left out). These agree with
#' [AIC()] and [BIC()] of the fit.
#'
#' With `objective = "dmn"` EM maximises the posterior of
#' \pkg{DirichletMultinomial}'s `dmn()`: the likelihood times a
#' Gamma(0.1, 0.1) prior on every alpha (as a density on log alpha). Its
#' `objective` is the negative log posterior, `dmn()`'s `NLE`, and the
#' criteria are on `dmn()`'s own scale, exactly as libdirmn reports them:
#' `aic` = objective + P, `bic` = objective + P/2 log n, and `laplace` =
#' objective + 1/2 log det H - P/2 log(2 pi), the quantity `dmn()` calls
#' Laplace (its vignette selects `k` by it). [AIC()] and [BIC()] still
#' compute R's scale from [logLik()].
#'
#' `aic`, `bic` and `objective` agree with `dmn()`'s `AIC`, `BIC` and `NLE`
#' where both reach the same optimum, and so does `laplace`, computed by
#' `dmn()`'s own formula (read in its C code, `hessian()` and
#' `dirichlet_fit_main()`, and checked against \pkg{DirichletMultinomial}
#' 1.40 to 1e-14 from its own fits): the log-determinant of each component's
#' Hessian in log alpha, in which the sums over rows of
#' \eqn{\psi(\alpha_v + n_{bv})}{digamma(alpha_v + n_bv)} and its derivative are not
#' weighted by the responsibilities (rows with \eqn{z_{bj} n_{bv} = 0}{z_bj n_bv = 0} count
#' with \eqn{n_{bv} = 0}{n_bv = 0}), plus \eqn{2 \log n - \log n_j}{2 log n - log n_j} (\eqn{n_j}{n_j} the
#' component's share of the rows) for every component but the first of
#' `dmn()`'s random labelling. As that labelling is not a property of the
#' fit, libdirmn weights every component's term by (k - 1)/k, the mean over
#' the possible first components: for k > 1 its `laplace` differs from
#' `dmn()`'s by \eqn{(\log \pi_f - \overline{\log \pi})/2}{(log pi_f - mean(log pi))/2}, 1e-5 to 1e-4
#' relative on the `mite` table (at k = 1 the two are equal).
#'
#' @inheritParams dirmn_fit
#' @param k The numbers of components to fit (positive whole numbers, each
#'   at most the number of rows with counts).
#' @param objective `"ml"` (maximum likelihood) or `"dmn"` (`dmn()`'s
#'   maximum a posteriori fit and criteria); see the section below.
#' @param init `"kmeans++"` (k-means++ seeding, then k-means), `"kmeans"`
#'   (k-means from random rows) or `"soft"` (`dmn()`'s initialisation: soft
#'   k-means with stiffness 50 from random labels, EM starting from its soft
#'   responsibilities).
#' @param starts Number of random starts per `k`; the best (by the
#'   objective) is kept.
#' @param seed Seed of libdirmn's own random number generator (a
#'   non-negative whole number): the same seed gives the same fit.
#' @param tol EM stops when the objective changes by less than `tol` times
#'   its absolute value.
#' @param maxit Maximum number of EM iterations per start. Where the best
#'   start of a `k` stops at `maxit` without meeting `tol`, `dirmn_mixture()`
#'   warns (a condition of class `dirmn_convergence_warning`, naming the
#'   `k`s) and keeps the model, with `converged = FALSE`.
#' @param weights `NULL` or one finite, non-negative weight per row.
#' @param select The criterion that selects `k`: `"bic"`, `"aic"` or
#'   `"laplace"` (smallest wins).
#' @param verbose If `TRUE`, report every EM iteration (k, start,
#'   iteration, the log-likelihood, with the multinomial coefficients, and
#'   its change) through [message()].
#'
#' @return An object of class `dirmn_mixture`: a list with
#'   \describe{
#'     \item{`models`}{one fitted model per `k` (named by `k`), each of class
#'       `dirmn_mixture_fit`: a list with `alpha` (a k x V matrix, one row per
#'       component, columns named by the columns of `x`), `weights` (the
#'       mixing weights \eqn{\pi}{pi}), `responsibilities` (rows x k, named
#'       by the rows of `x`), `loglik` (the mixture log-likelihood, with
#'       the multinomial coefficients), `objective`, `aic`, `bic`,
#'       `laplace`, `parameters` (P), `iterations`, `converged`, `k`,
#'       `start` (which start was best) and `nobs`. Components are ordered
#'       by decreasing weight.}
#'     \item{`criteria`}{a data frame with one row per `k`: `k`, `loglik`,
#'       `objective`, `aic`, `bic`, `laplace`, `parameters`, `iterations`,
#'       `converged`.}
#'     \item{`selected`}{the selected `k`; `select` the criterion used.}
#'     \item{`objective`, `call`}{the objective and the call.}
#'   }
#'   Methods (on the selected model unless `k` is given): [print()],
#'   [summary()], [coef()] (alpha), [mixture_weights()],
#'   [responsibilities()], [predict()], [logLik()] (so [AIC()] and [BIC()]
#'   work), [fitted()], [nobs()] and [plot()].
#' @seealso [dirmn_mixture-methods], [dirmn_fit()] for a single component.
#' @references Holmes I, Harris K, Quince C (2012). Dirichlet multinomial
#'   mixtures: generative models for microbial metagenomics. PLoS ONE 7:e30126.
#' @export
#' @examples
#' mite <- as.matrix(read.csv(system.file("extdata", "mite.csv", package = "dirmn"),
#'                            row.names = 1))
#' m <- dirmn_mixture(mite, k = 1:3, objective = "dmn", select = "laplace")
#' m
#' mixture_weights(m)
#' head(predict(m, mite, type = "class"))
#' BIC(m)
#'
#' # model-selection curve and component profiles, written to a PNG file
#' path <- tempfile(fileext = ".png")
#' png(path, width = 900, height = 450)
#' op <- par(mfrow = c(1, 2))
#' plot(m, type = "criteria")
#' plot(m, type = "components")
#' par(op)
#' dev.off()
#' file.exists(path)
dirmn_mixture <- function(x, k = 1:5, objective = c("ml", "dmn"), init = c("kmeans++", "kmeans", "soft"),
                          starts = 3L, seed = 1L, tol = 1e-9, maxit = 1000L, weights = NULL,
                          select = c("bic", "aic", "laplace"), verbose = FALSE,
                          backend = getOption("dirmn.backend", "auto")) {
  call <- match.call()
  ecall <- sys.call()
  objective <- .match_choice(objective, c("ml", "dmn"), "objective", ecall)
  init <- .match_choice(init, c("kmeans++", "kmeans", "soft"), "init", ecall)
  select <- .match_choice(select, c("bic", "aic", "laplace"), "select", ecall)
  if (!is.numeric(k) || length(k) < 1L || anyNA(k) || any(k != trunc(k)) || any(k < 1) ||
      any(k > .Machine$integer.max)) {
    .stop("invalid_argument", "k must hold positive whole numbers", ecall)
  }
  k <- if (length(k) == 1L) as.integer(k) else sort(unique(as.integer(k)))
  starts <- .check_count(starts, "starts", ecall)
  maxit <- .check_count(maxit, "maxit", ecall)
  tol <- .check_positive(tol, "tol", ecall)
  seed <- .check_seed(seed, ecall)
  .check_flag(verbose, "verbose", ecall)
  prepared <- .prepare(x, backend, ecall, backend_option = missing(backend))
  if (prepared$temporary) on.exit(.release(prepared))
  counts <- prepared$counts
  weights <- .as_weights(weights, counts$dim[1L], ecall)
  totals <- cpp_row_totals(counts$ptr)
  if (.failed(totals)) .raise(totals, ecall)
  n <- if (is.null(weights)) counts$dim[1L] else sum(weights)

  models <- lapply(k, function(kk) {
    progress <- NULL
    if (verbose) {
      start <- 0L
      previous <- NA_real_
      progress <- .progress_reporter(function(iteration, value, change) {
        if (iteration == 0L) {
          start <<- start + 1L
          previous <<- NA_real_
        }
        text <- sprintf("dirmn_mixture: k = %d, start %d, iteration %d: log-likelihood %.10g",
                        kk, start, iteration + 1L, value)
        if (!is.na(previous)) text <- paste0(text, sprintf(" (change %.3g)", value - previous))
        previous <<- value
        text
      })
    }
    res <- cpp_mixture_fit(counts$ptr, kk, .objective_codes[[objective]],
                           .init_codes[[init]], starts, seed, tol, maxit, weights, progress)
    if (.failed(res)) .raise(res, ecall)
    .mixture_model(res, counts, totals, n, objective)
  })
  names(models) <- as.character(k)
  criteria <- .mixture_criteria(models, k)
  if (!all(criteria$converged)) {
    bad <- k[!criteria$converged]
    .warn_convergence(sprintf(
      "EM did not converge in maxit = %d iterations for k = %s (the best of the starts); the result%s the last iterate%s: increase maxit",
      maxit, paste(bad, collapse = ", "), if (length(bad) == 1L) " is" else "s are",
      if (length(bad) == 1L) "" else "s"), ecall)
  }
  out <- list(models = models, criteria = criteria,
              selected = k[which.min(.subset2(criteria, select))], select = select,
              objective = objective, call = call, nobs = n, dimnames = counts$dimnames)
  class(out) <- "dirmn_mixture"
  out
}

.objective_codes <- c(ml = 0L, dmn = 1L)
.init_codes <- c(kmeans = 0L, "kmeans++" = 1L, soft = 2L)

.match_choice <- function(value, choices, name, call) {
  if (identical(value, choices)) return(choices[1L])
  if (!is.character(value) || length(value) != 1L || is.na(value) || !(value %in% choices)) {
    .stop("invalid_argument", sprintf("%s must be one of %s", name,
                                      paste0("\"", choices, "\"", collapse = ", ")), call)
  }
  value
}

.check_seed <- function(seed, call) {
  if (!is.numeric(seed) || length(seed) != 1L || is.na(seed) || seed != trunc(seed) ||
      seed < 0 || seed > 2^53) {
    .stop("invalid_argument", "seed must be a single non-negative whole number", call)
  }
  as.double(seed)
}

# One fitted model (class dirmn_mixture_fit) from the library's mixture as
# cpp_mixture_fit() returns it: a list of, in this order, `alpha` (k x V,
# rows "comp1".."compk", columns named by the table's), `weights` (named
# "comp1".."compk"), `responsibilities` (rows x k, rows named by the
# table's), `loglik`, `objective`, `aic`, `bic`, `laplace`, `parameters`
# (double), `iterations` (integer), `converged`, `k`, `start` (1-based),
# `nobs`, `objective_type` ("ml" or "dmn"), `ptr` (the library's mixture
# handle), `order` (the library's component behind each of comp1..compk:
# components are ordered by decreasing weight, as dmn() orders them, ties in
# the library's order), `row_totals`, `backend` and `device`.
.mixture_model <- function(res, counts, totals, n, objective) {
  k <- res$k
  comp <- paste0("comp", seq_len(k))
  alpha <- res$alpha
  resp <- res$responsibilities
  weights <- res$weights
  o <- seq_len(k)
  # (order() alone costs more than the rest of this function: skipped where
  # the weights are in order already)
  if (!isFALSE(is.unsorted(-weights))) {
    o <- order(weights, decreasing = TRUE)
    alpha <- alpha[o, , drop = FALSE]
    resp <- resp[, o, drop = FALSE]
    weights <- weights[o]
  }
  dimnames(alpha) <- list(comp, counts$dimnames[[2L]])
  dimnames(resp) <- list(counts$dimnames[[1L]], comp)
  names(weights) <- comp
  out <- list(alpha = alpha, weights = weights, responsibilities = resp, loglik = res$loglik,
              objective = res$objective, aic = res$aic, bic = res$bic, laplace = res$laplace,
              parameters = res$parameters, iterations = res$iterations,
              converged = res$converged, k = k, start = res$start + 1L, nobs = n,
              objective_type = objective, ptr = res$ptr, order = o, row_totals = totals,
              backend = counts$backend, device = counts$device)
  class(out) <- "dirmn_mixture_fit"
  out
}

# The criteria data frame of dirmn_mixture(): one row per fitted model,
# unnamed columns. (Built as a list from one matrix of the models' values:
# data.frame(), or vapply() per column, would cost more than fitting a small
# table.)
.mixture_criteria <- function(models, k) {
  fields <- c("loglik", "objective", "aic", "bic", "laplace", "parameters", "iterations",
              "converged")
  values <- matrix(unlist(lapply(models, `[`, fields), use.names = FALSE), nrow = length(fields))
  out <- list(k = k, loglik = values[1L, ], objective = values[2L, ], aic = values[3L, ],
              bic = values[4L, ], laplace = values[5L, ], parameters = values[6L, ],
              iterations = as.integer(values[7L, ]), converged = values[8L, ] != 0)
  attr(out, "row.names") <- c(NA_integer_, -length(k))
  class(out) <- "data.frame"
  out
}

#' Methods for Dirichlet-multinomial mixtures
#'
#' Methods for objects returned by [dirmn_mixture()] (they apply to the
#' selected model, or to the model with `k` components when `k` is given)
#' and for its fitted models (class `dirmn_mixture_fit`, the elements of its
#' `models`).
#'
#' * `coef()` returns alpha, a k x V matrix (one row per component).
#' * `mixture_weights()` returns the mixing weights \eqn{\pi}{pi}.
#' * `responsibilities()` returns the rows x k matrix of the fitted rows'
#'   posterior component probabilities.
#' * `predict()` returns, for the rows of `newdata` (any form [ddirmn()]
#'   takes, with the fitted table's columns), the posterior component
#'   probabilities (`type = "prob"`, a rows x k matrix) or the most probable
#'   component (`type = "class"`, an integer vector); newdata without rows
#'   gives a 0 x k matrix (an empty vector). Without `newdata`, the
#'   fitted rows'. A model restored with [readRDS()] predicts too (from its
#'   alpha and weights).
#' * `logLik()` returns the mixture log-likelihood (with the multinomial
#'   coefficients) as a `"logLik"` object with `df` = P = kV + k - 1 and
#'   `nobs` = the number of rows (the sum of the weights when given), so
#'   [AIC()] and [BIC()] work (on R's scale; see [dirmn_mixture()] for
#'   `dmn()`'s).
#' * `fitted()` returns the expected counts given each row's
#'   responsibilities: \eqn{N_b \sum_j z_{bj} \alpha_{jv} / \sum_v \alpha_{jv}}{N_b sum_j z_bj alpha_jv / sum_v alpha_jv}.
#' * `plot()` draws, in base graphics, the model-selection curve (`type =
#'   "criteria"`: the criterion against k, the selected k marked) or the
#'   component profiles (`type = "components"`: alpha / sum(alpha) of the
#'   `top` categories with the largest share in any component, per
#'   component).
#'
#' @param object,x A `dirmn_mixture` or `dirmn_mixture_fit` object (or a
#'   summary, for `print()`).
#' @param k For a `dirmn_mixture`: the number of components of the model to
#'   use; `NULL` for the selected one.
#' @param newdata Counts to assign to components; `NULL` for the fitted rows.
#' @param type For `predict()`: `"prob"` or `"class"`. For `plot()`:
#'   `"criteria"` or `"components"`.
#' @param criterion For `plot(type = "criteria")`: `"bic"`, `"aic"` or
#'   `"laplace"`; by default the one that selected k.
#' @param top For `plot(type = "components")` and `summary()`: how many
#'   categories to show.
#' @param digits Significant digits to print.
#' @param ... Further arguments: graphical parameters for `plot()`, else
#'   unused.
#' @return See Details.
#' @name dirmn_mixture-methods
#' @examples
#' bci <- as.matrix(read.csv(system.file("extdata", "bci.csv", package = "dirmn"),
#'                           row.names = 1))
#' m <- dirmn_mixture(bci, k = 1:3)
#' summary(m)
#' coef(m, k = 2)[, 1:5]
#' mixture_weights(m)
#' head(responsibilities(m))
#' logLik(m)
#' AIC(m)
#' predict(m, bci[1:5, ], type = "class")
NULL

.model <- function(object, k = NULL) {
  if (inherits(object, "dirmn_mixture_fit")) return(object)
  if (is.null(k)) k <- object$selected
  model <- object$models[[as.character(k)]]
  if (is.null(model) || length(k) != 1L) {
    .stop("invalid_argument", sprintf("no model with k = %s was fitted (fitted: %s)",
                                      paste(k, collapse = ", "),
                                      paste(object$criteria$k, collapse = ", ")), sys.call(-1L))
  }
  model
}

#' @rdname dirmn_mixture-methods
#' @export
mixture_weights <- function(object, ...) UseMethod("mixture_weights")

#' @rdname dirmn_mixture-methods
#' @export
mixture_weights.dirmn_mixture <- function(object, k = NULL, ...) .model(object, k)$weights

#' @rdname dirmn_mixture-methods
#' @export
mixture_weights.dirmn_mixture_fit <- function(object, ...) object$weights

#' @rdname dirmn_mixture-methods
#' @export
responsibilities <- function(object, ...) UseMethod("responsibilities")

#' @rdname dirmn_mixture-methods
#' @export
responsibilities.dirmn_mixture <- function(object, k = NULL, ...) {
  .model(object, k)$responsibilities
}

#' @rdname dirmn_mixture-methods
#' @export
responsibilities.dirmn_mixture_fit <- function(object, ...) object$responsibilities

#' @rdname dirmn_mixture-methods
#' @export
coef.dirmn_mixture <- function(object, k = NULL, ...) .model(object, k)$alpha

#' @rdname dirmn_mixture-methods
#' @export
coef.dirmn_mixture_fit <- function(object, ...) object$alpha

#' @rdname dirmn_mixture-methods
#' @export
logLik.dirmn_mixture <- function(object, k = NULL, ...) logLik(.model(object, k))

#' @rdname dirmn_mixture-methods
#' @export
logLik.dirmn_mixture_fit <- function(object, ...) {
  structure(object$loglik, df = object$parameters, nobs = object$nobs, class = "logLik")
}

#' @rdname dirmn_mixture-methods
#' @export
nobs.dirmn_mixture <- function(object, ...) object$nobs

#' @rdname dirmn_mixture-methods
#' @export
nobs.dirmn_mixture_fit <- function(object, ...) object$nobs

#' @rdname dirmn_mixture-methods
#' @export
fitted.dirmn_mixture <- function(object, k = NULL, ...) fitted(.model(object, k))

#' @rdname dirmn_mixture-methods
#' @export
fitted.dirmn_mixture_fit <- function(object, ...) {
  p <- object$alpha / rowSums(object$alpha)
  out <- object$row_totals * (object$responsibilities %*% p)
  dimnames(out) <- list(rownames(object$responsibilities), colnames(object$alpha))
  out
}

#' @rdname dirmn_mixture-methods
#' @export
predict.dirmn_mixture <- function(object, newdata = NULL, type = c("prob", "class"), k = NULL,
                                  ...) {
  predict(.model(object, k), newdata = newdata, type = type)
}

#' @rdname dirmn_mixture-methods
#' @export
predict.dirmn_mixture_fit <- function(object, newdata = NULL, type = c("prob", "class"), ...) {
  call <- sys.call()
  type <- .match_choice(type, c("prob", "class"), "type", call)
  if (is.null(newdata)) {
    prob <- object$responsibilities
  } else {
    prob <- .assign(object, newdata, call)
  }
  if (type == "prob") return(prob)
  cls <- max.col(prob, ties.method = "first")
  names(cls) <- rownames(prob)
  cls
}

# Posterior component probabilities of the rows of newdata: through the
# library's mixture handle where it is alive, else (a model restored from
# disk) from the rows x k log-likelihoods and the weights. Newdata without
# rows (which the library has no table for) has a 0 x k answer, as
# ddirmn() has for a table without rows.
.assign <- function(object, newdata, call) {
  table <- NULL
  if (!inherits(newdata, "dirmn_counts")) {
    table <- .as_table(newdata, call, "newdata")
    if (table$dim[1L] == 0L) {
      .check_new_columns(object, table$dim[2L], table$dimnames[[2L]], call)
      return(matrix(numeric(0), 0L, nrow(object$alpha),
                    dimnames = list(table$dimnames[[1L]], rownames(object$alpha))))
    }
  }
  prepared <- .prepare(newdata, object$backend, call, "newdata", table = table)
  on.exit(.release(prepared))
  counts <- prepared$counts
  .check_new_columns(object, counts$dim[2L], counts$dimnames[[2L]], call)
  prob <- cpp_mixture_assign(object$ptr, counts$ptr)
  if (.failed(prob) && prob$status == .status_code("null_pointer") &&
      grepl("mixture handle", prob$message, fixed = TRUE)) {
    ll <- cpp_ddirmn_counts(counts$ptr, object$alpha, FALSE, TRUE, TRUE)
    if (.failed(ll)) .raise(ll, call, alpha = "matrix")
    s <- sweep(ll, 2L, log(object$weights), `+`)
    s <- exp(s - apply(s, 1L, max))
    prob <- s / rowSums(s)
  } else if (.failed(prob)) {
    .raise(prob, call)
  } else {
    prob <- prob[, object$order, drop = FALSE]
  }
  dimnames(prob) <- list(counts$dimnames[[1L]], rownames(object$alpha))
  prob
}

# newdata's columns (`cols` of them, named `new_cn`) are the fitted table's.
.check_new_columns <- function(object, cols, new_cn, call) {
  cn <- colnames(object$alpha)
  if (cols != ncol(object$alpha)) {
    .stop("dimension_mismatch", sprintf(
      "newdata has %d columns but the mixture was fitted to %d", cols, ncol(object$alpha)), call)
  }
  if (!is.null(cn) && !is.null(new_cn) && !identical(cn, new_cn)) {
    .stop("dimension_mismatch", sprintf(
      "the columns of newdata are not those of the fitted table (column %d is %s, not %s)",
      which(cn != new_cn)[1L], new_cn[which(cn != new_cn)[1L]], cn[which(cn != new_cn)[1L]]),
      call)
  }
  invisible(NULL)
}

#' @rdname dirmn_mixture-methods
#' @export
print.dirmn_mixture_fit <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat(sprintf("Dirichlet-multinomial mixture, k = %d (%s objective)\n", x$k,
              if (x$objective_type == "dmn") "dmn" else "maximum-likelihood"))
  cat("Log-likelihood: ", format(x$loglik, digits = max(digits, 8L)),
      " (with the multinomial coefficients), df = ", x$parameters, "\n", sep = "")
  cat(sprintf("%s after %d EM iteration%s (best of the starts: %d)\n",
              if (x$converged) "Converged" else "NOT converged", x$iterations,
              if (x$iterations == 1) "" else "s", x$start))
  print(.component_table(x), digits = digits, row.names = FALSE)
  invisible(x)
}

.component_table <- function(model) {
  data.frame(component = rownames(model$alpha), weight = unname(model$weights),
             rows = unname(colSums(model$responsibilities)),
             precision = unname(rowSums(model$alpha)), stringsAsFactors = FALSE)
}

#' @rdname dirmn_mixture-methods
#' @export
print.dirmn_mixture <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat(sprintf("Dirichlet-multinomial mixtures (%s objective), %s rows x %s categories\n",
              if (x$objective == "dmn") "dmn" else "maximum-likelihood",
              .num(length(x$models[[1L]]$row_totals)), .num(ncol(x$models[[1L]]$alpha))))
  if (!is.null(x$call)) cat("Call: ", paste(deparse(x$call), collapse = "\n"), "\n", sep = "")
  cat(sprintf("Criteria (%s scale; smaller is better):\n",
              if (x$objective == "dmn") "dmn's" else "R's -2 log-likelihood"))
  crit <- x$criteria
  crit$selected <- ifelse(crit$k == x$selected, "<-", "")
  print(crit[, c("k", "loglik", "aic", "bic", "laplace", "iterations", "converged",
                 "selected")], digits = max(digits, 7L), row.names = FALSE)
  cat(sprintf("\nSelected by %s: k = %d\n", toupper(x$select), x$selected))
  print(.component_table(.model(x)), digits = digits, row.names = FALSE)
  invisible(x)
}

#' @rdname dirmn_mixture-methods
#' @export
summary.dirmn_mixture <- function(object, k = NULL, top = 5L, ...) {
  model <- .model(object, k)
  top <- .check_count(top, "top", sys.call())
  p <- model$alpha / rowSums(model$alpha)
  tops <- lapply(seq_len(model$k), function(j) {
    o <- order(p[j, ], decreasing = TRUE)[seq_len(min(top, ncol(p)))]
    stats::setNames(p[j, o], colnames(p)[o])
  })
  names(tops) <- rownames(model$alpha)
  structure(
    list(call = object$call, criteria = object$criteria, select = object$select,
         selected = object$selected, objective = object$objective, k = model$k,
         components = .component_table(model), top = tops, loglik = model$loglik,
         aic = stats::AIC(model), bic = stats::BIC(model), converged = model$converged),
    class = "summary.dirmn_mixture"
  )
}

#' @rdname dirmn_mixture-methods
#' @export
print.summary.dirmn_mixture <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  cat(sprintf("Dirichlet-multinomial mixtures (%s objective)\n",
              if (x$objective == "dmn") "dmn" else "maximum-likelihood"))
  if (!is.null(x$call)) cat("Call: ", paste(deparse(x$call), collapse = "\n"), "\n", sep = "")
  print(x$criteria, digits = max(digits, 7L), row.names = FALSE)
  cat(sprintf("\nSelected by %s: k = %d; shown: k = %d\n", toupper(x$select), x$selected, x$k))
  cat("Log-likelihood ", format(x$loglik, digits = max(digits, 8L)), "; AIC ",
      format(x$aic, digits = max(digits, 8L)), ", BIC ", format(x$bic, digits = max(digits, 8L)),
      " (R's scale)\n\n", sep = "")
  print(x$components, digits = digits, row.names = FALSE)
  cat("\nLargest shares alpha / sum(alpha) per component:\n")
  for (j in names(x$top)) {
    cat(j, ": ", paste(sprintf("%s %.3g", names(x$top[[j]]), x$top[[j]]), collapse = ", "),
        "\n", sep = "")
  }
  invisible(x)
}

#' @rdname dirmn_mixture-methods
#' @export
plot.dirmn_mixture <- function(x, type = c("criteria", "components"), criterion = x$select,
                               k = NULL, top = 10L, ...) {
  call <- sys.call()
  type <- .match_choice(type, c("criteria", "components"), "type", call)
  if (type == "criteria") {
    criterion <- .match_choice(criterion, c("bic", "aic", "laplace"), "criterion", call)
    crit <- x$criteria
    y <- crit[[criterion]]
    best <- which.min(y)
    graphics::plot(crit$k, y, type = "b", pch = 1, xaxt = "n",
                   xlab = "number of components k",
                   ylab = sprintf("%s (%s scale)", toupper(criterion),
                                  if (x$objective == "dmn") "dmn's" else "R's"),
                   main = sprintf("Model selection by %s", toupper(criterion)), ...)
    graphics::axis(1L, at = crit$k)
    graphics::points(crit$k[best], y[best], pch = 19, col = "red", cex = 1.6)
    graphics::legend("topright", legend = sprintf("smallest: k = %d", crit$k[best]), pch = 19,
                     col = "red", bty = "n")
    return(invisible(x))
  }
  plot(.model(x, k), top = top, ...)
}

#' @rdname dirmn_mixture-methods
#' @export
plot.dirmn_mixture_fit <- function(x, top = 10L, ...) {
  top <- .check_count(top, "top", sys.call())
  p <- x$alpha / rowSums(x$alpha)
  if (is.null(colnames(p))) colnames(p) <- paste0("V", seq_len(ncol(p)))
  keep <- order(apply(p, 2L, max), decreasing = TRUE)[seq_len(min(top, ncol(p)))]
  cols <- grDevices::hcl.colors(nrow(p), "Dark 3")
  graphics::barplot(p[, keep, drop = FALSE], beside = TRUE, col = cols, las = 2,
                    ylab = "alpha / sum(alpha)",
                    main = sprintf("Components of the k = %d mixture", x$k), ...)
  graphics::legend("topright", legend = sprintf("%s (weight %.2f)", rownames(p), x$weights),
                   fill = cols, bty = "n")
  invisible(x)
}
