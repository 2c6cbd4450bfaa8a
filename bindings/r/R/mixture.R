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
#' responsibility-weighted count histograms (the M step). `starts` starts
#' are run for each `k` and the best (by the objective) is kept. By default
#' (`init = "mixed"`, libdirmn's `DIRMN_INIT_MIXED`) the starts take turns
#' among three initialisations: start s (counted from 0) uses
#' \pkg{DirichletMultinomial}'s `dmn()` initialisation, soft k-means, when
#' s is a multiple of 3, k-means++ seeding then k-means when s % 3 is 1,
#' and k-means from random rows when it is 2; so the default includes
#' `dmn()`'s own procedure among its starts. `init = "soft_kmeans"`,
#' `"kmeanspp"` or `"kmeans"` uses one of them for every start. When
#' several consecutive `k` are fitted (`k = 1:5`), the mixture of `k - 1`
#' components seeds one more start for `k` (one of its components split in
#' two), so that under `objective = "ml"` the log-likelihood does not fall
#' as `k` grows. Results depend only on `seed`, not on R's random number
#' generator, and are the same on every backend.
#' Rows of zeros and columns of zeros are allowed (they carry no
#' information); a component that loses all its rows is re-seeded at the
#' worst-explained row.
#'
#' On a table split by rows over several processes (a prepared table
#' attached to a [dirmn_communicator()]), `dirmn_mixture()` is a collective
#' call: every rank calls it with the same arguments (`weights`: its own
#' rows'), and every rank gets the whole table's mixture (its
#' log-likelihood, AIC and BIC to rounding, its alpha, mixing weights and
#' Laplace value to the M step's accuracy) with its own rows'
#' responsibilities; see [dirmn_communicator()].
#'
#' @section Objectives and criteria:
#' With `objective = "ml"` EM maximises the likelihood, and the criteria are
#' on R's usual scale (smaller is better): with \eqn{\ell}{l} the mixture
#' log-likelihood (with multinomial coefficients), \eqn{P = kV + k - 1}{P = k V + k - 1}
#' parameters (\eqn{V}{V} counting the columns with counts) and
#' \eqn{n}{n} observations (the rows with counts and positive weight; the
#' sum of their weights when weights are given), as libdirmn counts them
#' for [dirmn_fit()] too, so that `k = 1` and [dirmn_fit()] agree,
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
#' @param m_step_iterations Number of Newton steps each component's alpha
#'   takes per M step once it has a warm start (the previous M step's): a
#'   generalized EM (no step lowers the likelihood) that stops on `tolerance`
#'   only after an M step whose fits all converged (or one with the full
#'   budget of 200 steps), at a stationary point as the classical EM does;
#'   from the same start the two may reach different local optima. `200` or
#'   more fits every M step to convergence (the classical EM). Last among
#'   the arguments, so that positional calls written before it keep their
#'   meaning.
#' @param ... Deprecated names of arguments: `tol` (now `tolerance`) and
#'   `maxit` (now `max_iterations`), accepted with a warning of class
#'   `dirmn_deprecated_warning`.
#' @param k The numbers of components to fit (positive whole numbers, each
#'   at most the number of rows with counts).
#' @param objective `"ml"` (maximum likelihood) or `"dmn"` (`dmn()`'s
#'   maximum a posteriori fit and criteria); see the section below.
#' @param init `"mixed"` (the default: the starts take turns among the
#'   three below, see Details), `"kmeanspp"` (k-means++ seeding, then
#'   k-means), `"kmeans"` (k-means from random rows) or `"soft_kmeans"`
#'   (`dmn()`'s initialisation: soft k-means with stiffness 50 from random
#'   labels, EM starting from its soft responsibilities). The names of
#'   versions before 0.3.0, `"kmeans++"` and `"soft"`, are accepted with a
#'   warning of class `dirmn_deprecated_warning`.
#' @param starts Number of random starts per `k`; the best (by the
#'   objective) is kept. `NULL` (the default) takes libdirmn's default
#'   (`dirmn_mixture_options_init`).
#' @param seed Seed of libdirmn's own random number generator (a whole
#'   number in 0 .. 2^53, or any 64-bit seed as a string of decimal
#'   digits): the same seed gives the same fit.
#' @param tolerance EM stops when the objective changes by less than
#'   `tolerance` times its absolute value.
#' @param max_iterations Maximum number of EM iterations per start. Where
#'   the best start of a `k` stops at `max_iterations` without meeting
#'   `tolerance`, `dirmn_mixture()` warns (a condition of class
#'   `dirmn_convergence_warning`, naming the `k`s) and keeps the model, with
#'   `converged = FALSE`.
#' @param weights `NULL` or one finite, non-negative weight per row.
#' @param select The criterion that selects `k`: `"bic"`, `"aic"` or
#'   `"laplace"` (smallest wins). `"laplace"` needs `objective = "dmn"`:
#'   it is dmn's criterion, and under maximum likelihood, without dmn's
#'   prior, it rewards extra components, so `objective = "ml"` with
#'   `select = "laplace"` is an error (class
#'   `dirmn_error_invalid_argument`).
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
#'       `start` (which start was best: 1 to `starts` the random ones;
#'       where the k - 1 model seeded one more, `starts + 1` that one and
#'       `starts + 2` the k - 1 fit itself, kept with a component split into
#'       two equal halves when no start did better), `nobs` (n, as libdirmn counts the
#'       observations), `objective_kind` (`"ml"` or `"dmn"`) and `data`
#'       (the table as given, for [confint()] and [residuals()]). Components
#'       are in libdirmn's order, by decreasing weight (ties: the library's
#'       earlier component first), the same in every binding. Reach the
#'       model with `k` components as `m$models[["k"]]`.}
#'     \item{`criteria`}{a data frame with one row per `k`: `k`, `loglik`,
#'       `objective`, `aic`, `bic`, `laplace`, `parameters`, `iterations`,
#'       `converged`.}
#'     \item{`selected`}{the selected `k`; `select` the criterion used.}
#'     \item{`objective`, `init`, `starts`, `call`}{the objective, the
#'       initialisation, the number of starts and the call.}
#'   }
#'   Methods (on the selected model unless `components` is given):
#'   [print()], [summary()], [coef()] (alpha), [mixture_weights()],
#'   [responsibilities()], [predict()], [logLik()] (so [AIC()] and [BIC()]
#'   work), [fitted()], [residuals()], [confint()], [nobs()] and [plot()].
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
dirmn_mixture <- function(x, k = 1:5, objective = c("ml", "dmn"),
                          init = c("mixed", "kmeanspp", "kmeans", "soft_kmeans"),
                          starts = NULL, seed = 1L, tolerance = 1e-9, max_iterations = 1000L,
                          weights = NULL,
                          select = c("bic", "aic", "laplace"), verbose = FALSE,
                          backend = getOption("dirmn.backend", "auto"),
                          samples = c("rows", "columns"), assay = NULL,
                          m_step_iterations = 4L, ...) {
  call <- match.call()
  ecall <- sys.call()
  .warn_partial_renames(ecall, c(tol = "tolerance"))
  renamed <- .renamed_args(list(...), c(tol = "tolerance", maxit = "max_iterations"), ecall)
  tolerance <- .pick_renamed(renamed, "tolerance", tolerance, missing(tolerance), ecall)
  max_iterations <- .pick_renamed(renamed, "max_iterations", max_iterations,
                                  missing(max_iterations), ecall)
  objective <- .match_choice(objective, c("ml", "dmn"), "objective", ecall)
  init <- .match_init(init, ecall)
  select <- .match_choice(select, c("bic", "aic", "laplace"), "select", ecall)
  if (select == "laplace" && objective == "ml") {
    .stop("invalid_argument", paste(
      "select = \"laplace\" needs objective = \"dmn\": the Laplace criterion belongs to",
      "dmn's maximum a posteriori fit, whose prior on alpha keeps it in check; under",
      "maximum likelihood (objective = \"ml\") it rewards extra components (it keeps",
      "falling as k grows). Use select = \"bic\" or \"aic\", or objective = \"dmn\""), ecall)
  }
  if (!is.numeric(k) || length(k) < 1L || anyNA(k) || any(k != trunc(k)) || any(k < 1) ||
      any(k > .Machine$integer.max)) {
    .stop("invalid_argument", "k must hold positive whole numbers", ecall)
  }
  k <- if (length(k) == 1L) as.integer(k) else sort(unique(as.integer(k)))
  defaults <- cpp_mixture_defaults()
  if (is.null(starts)) starts <- defaults$starts
  starts <- .check_count(starts, "starts", ecall)
  max_iterations <- .check_count(max_iterations, "max_iterations", ecall)
  m_step_iterations <- .check_count(m_step_iterations, "m_step_iterations", ecall)
  tolerance <- .check_positive(tolerance, "tolerance", ecall)
  seed <- .check_seed(seed, ecall)
  .check_flag(verbose, "verbose", ecall)
  x <- .counts_input(x, samples, assay, ecall, missing(samples))
  prepared <- .prepare(x, backend, ecall, backend_option = missing(backend))
  if (prepared$temporary) on.exit(.release(prepared))
  counts <- prepared$counts
  weights <- .as_weights(weights, counts$dim[1L], ecall)
  totals <- cpp_row_totals(counts$ptr)
  if (.failed(totals)) .raise(totals, ecall)

  models <- vector("list", length(k))
  for (i in seq_along(k)) {
    kk <- k[[i]]
    progress <- NULL
    if (verbose) progress <- .mixture_reporter(kk)
    # The previous k's mixture seeds one more start (a component split in
    # two), so that under ML the log-likelihood does not fall as k grows.
    grow_from <- if (i > 1L && k[[i - 1L]] == kk - 1L) models[[i - 1L]]$ptr else NULL
    res <- cpp_mixture_fit(counts$ptr, kk, .objective_codes[[objective]], .init_codes[[init]],
                           starts, seed, tolerance, max_iterations, m_step_iterations,
                           weights, progress, grow_from)
    if (.failed(res)) .raise(res, ecall)
    models[[i]] <- .mixture_model(res, counts, totals, objective, x, weights)
  }
  names(models) <- as.character(k)
  criteria <- .mixture_criteria(models, k)
  if (!all(criteria$converged)) {
    bad <- k[!criteria$converged]
    .warn_convergence(sprintf(
      "EM did not converge in max_iterations = %d iterations for k = %s (the best of the starts); the result%s the last iterate%s: increase max_iterations",
      max_iterations, paste(bad, collapse = ", "), if (length(bad) == 1L) " is" else "s are",
      if (length(bad) == 1L) "" else "s"), ecall)
  }
  out <- list(models = models, criteria = criteria,
              selected = k[which.min(.subset2(criteria, select))], select = select,
              objective = objective, init = init, starts = starts, call = call,
              nobs = models[[1L]]$nobs, dimnames = counts$dimnames)
  class(out) <- "dirmn_mixture"
  out
}

# The progress reporter of one k: the library counts each start's
# iterations from 1.
.mixture_reporter <- function(k) {
  start <- 0L
  previous <- NA_real_
  .progress_reporter(function(iteration, value, change) {
    if (iteration == 1L) {
      start <<- start + 1L
      previous <<- NA_real_
    }
    text <- sprintf("dirmn_mixture: k = %d, start %d, iteration %d: log-likelihood %.10g",
                    k, start, iteration, value)
    if (!is.na(previous)) text <- paste0(text, sprintf(" (change %.3g)", value - previous))
    previous <<- value
    text
  })
}

.objective_codes <- c(ml = 0L, dmn = 1L)
# libdirmn's dirmn_mixture_init
.init_codes <- c(kmeans = 0L, kmeanspp = 1L, soft_kmeans = 2L, mixed = 3L)

# init, with the names of versions before 0.3.0 ("kmeans++", "soft")
# accepted with a deprecation warning.
.match_init <- function(init, call) {
  choices <- c("mixed", "kmeanspp", "kmeans", "soft_kmeans")
  old <- c("kmeans++" = "kmeanspp", soft = "soft_kmeans")
  if (is.character(init) && length(init) == 1L && !is.na(init) && init %in% names(old)) {
    .warn_deprecated(sprintf("init = \"%s\" is deprecated; use init = \"%s\"", init,
                             old[[init]]), call)
    return(old[[init]])
  }
  .match_choice(init, choices, "init", call)
}

.match_choice <- function(value, choices, name, call) {
  if (identical(value, choices)) return(choices[1L])
  if (!is.character(value) || length(value) != 1L || is.na(value) || !(value %in% choices)) {
    .stop("invalid_argument", sprintf("%s must be one of %s", name,
                                      paste0("\"", choices, "\"", collapse = ", ")), call)
  }
  value
}

# A seed for libdirmn: a whole number in 0 .. 2^53 (as a double holds it
# exactly), or any 64-bit seed (0 .. 2^64 - 1, as Python and Julia take
# them) written as a string of decimal digits; returned as a double where
# one holds it, else as the digits without leading zeros.
.check_seed <- function(seed, call) {
  if (is.character(seed) && length(seed) == 1L && !is.na(seed) && grepl("^[0-9]+$", seed)) {
    digits <- sub("^0+([0-9])", "\\1", seed)
    if (nchar(digits) < 20L || (nchar(digits) == 20L && digits <= "18446744073709551615")) {
      exact <- nchar(digits) < 16L || (nchar(digits) == 16L && digits <= "9007199254740992")
      return(if (exact) as.double(digits) else digits)
    }
  } else if (is.numeric(seed) && length(seed) == 1L && !is.na(seed) && seed == trunc(seed) &&
             seed >= 0 && seed <= 2^53) {
    return(as.double(seed))
  }
  .stop("invalid_argument", paste(
    "seed must be a single whole number in 0 .. 2^53, or a string of decimal digits",
    "below 2^64 (\"18446744073709551615\" at most)"), call)
}

# One fitted model (class dirmn_mixture_fit) from the library's mixture as
# cpp_mixture_fit() returns it: a list of `alpha` (k x V, rows
# "comp1".."compk", columns named by the table's), `weights` (named
# "comp1".."compk"), `responsibilities` (rows x k, rows named by the
# table's), `loglik`, `objective`, `aic`, `bic`, `laplace`, `parameters`
# (double), `observations`, `iterations` (integer), `converged`, `k`,
# `start` (1-based), `ptr` (the library's mixture handle). Components are
# in the library's order (decreasing weight); R never reorders them.
# `data`: the table as the caller gave it (shared, not copied; a prepared
# table is kept as its dirmn_counts object) and `row_weights` (NULL or the
# row weights), for confint() and residuals().
.mixture_model <- function(res, counts, totals, objective, data, row_weights) {
  k <- res$k
  comp <- paste0("comp", seq_len(k))
  alpha <- res$alpha
  resp <- res$responsibilities
  weights <- res$weights
  dimnames(alpha) <- list(comp, counts$dimnames[[2L]])
  dimnames(resp) <- list(counts$dimnames[[1L]], comp)
  names(weights) <- comp
  out <- list(alpha = alpha, weights = weights, responsibilities = resp, loglik = res$loglik,
              objective = res$objective, aic = res$aic, bic = res$bic, laplace = res$laplace,
              parameters = res$parameters, iterations = res$iterations,
              converged = res$converged, k = k, start = res$start + 1L,
              nobs = res$observations, objective_kind = objective, ptr = res$ptr,
              row_totals = totals, backend = counts$backend, device = counts$device,
              data = data, row_weights = row_weights)
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
