# Draws from the Dirichlet-multinomial, its moments, new tables from fitted
# models, and prepared tables copied back to R (issue #30), over libdirmn's
# dirmn_sample, dirmn_sample_rowwise, dirmn_moments, dirmn_counts_copy_dense
# and dirmn_counts_copy_sparse.

#' Random draws from the Dirichlet-multinomial distribution
#'
#' Draws `n` rows of counts, row b holding `size[b]` counts over the
#' categories (the columns of `alpha`) drawn from
#' \eqn{DM(\alpha, size_b)}{DM(alpha, size_b)}: proportions from
#' \eqn{Dirichlet(\alpha)}{Dirichlet(alpha)}, then multinomial counts. The
#' draws are made by libdirmn (`dirmn_sample()`), exactly for every alpha in
#' \eqn{[10^{-306}, 10^{306}]}{[1e-306, 1e306]} (never `NA`: alpha =
#' 1e-300 puts a row's counts in a single category) and every size below
#' \eqn{2^{31}}{2^31}.
#'
#' What `alpha` means:
#' * a vector: one alpha shared by every row;
#' * a k x V matrix with `rowwise = FALSE` (the default): a mixture of the k
#'   parameter vectors (its rows). Row b is drawn from component
#'   `component[b]` where `component` is given, else from a component drawn
#'   with probabilities `mixture_weights` (equal weights when `NULL`). The
#'   components used are returned as the attribute `component` (1-based
#'   rows of `alpha`). A 1 x V matrix is one shared alpha;
#' * an n x V matrix with `rowwise = TRUE`: row b of the draw uses row b of
#'   `alpha` (a fitted regression's alpha). Without `rowwise = TRUE` a
#'   matrix is always a mixture, also when it has n rows.
#'
#' The draws are a function of the seed, the row's position, its alpha and
#' its size alone: the same `seed` gives the same table on every backend and
#' for any number of threads, and a table of more rows drawn with the same
#' seed starts with the same rows. `seed = NULL` draws the library's seed
#' from R's random number generator, so [set.seed()] makes the draw
#' reproducible.
#'
#' A table can be drawn in blocks of rows: `first_row` is the number of the
#' seed's rows before this block (0-based, a count, not R's row number), and
#' row b of the result is drawn as row `first_row + b` of the table the seed
#' gives (its random stream, and its mixture component where drawn from
#' `mixture_weights`). Blocks drawn with the same seed therefore bind, with
#' [rbind()], into the table of one call: `rdirmn(60, ...)` equals
#' `rbind(rdirmn(33, ..., first_row = 0), rdirmn(27, ..., first_row = 33))`
#' (with `rowwise = TRUE`, each block passes its own rows of `alpha`; with
#' `component`, its own rows' components). This is how the ranks of a table
#' split by rows over a communicator (see [dirmn_communicator()]) draw
#' their own rows of one table: the rank holding rows 101 .. 200 passes
#' `first_row = 100`, every rank the same (explicit) `seed`.
#'
#' @param n The number of rows to draw (a whole number >= 1).
#' @param size The number of counts in each row: one whole number (every
#'   row) or `n` of them, each in 0 .. 2147483647.
#' @param alpha The parameters (positive; alpha, or log alpha with `param =
#'   "logalpha"`): a vector, a k x V matrix of mixture components, or with
#'   `rowwise = TRUE` an n x V matrix (see Details). Its names (a matrix's
#'   column names) become the column names of the result.
#' @param seed `NULL` (draw one from R's random number generator) or the
#'   library's seed, a whole number in 0 .. 2^53, or any
#'   64-bit seed as a string of decimal digits ("18446744073709551615" at most).
#' @param component For a mixture (a k x V `alpha`): `NULL`, or each row's
#'   component, `n` whole numbers in 1 .. k.
#' @param mixture_weights For a mixture, where `component` is `NULL`: the
#'   components' probabilities, k finite non-negative values with a
#'   positive sum (normalised), or `NULL` for equal weights.
#' @param rowwise If `TRUE`, `alpha` is an n x V matrix with one row of
#'   parameters per row drawn.
#' @param param `"alpha"` (`alpha` holds alpha) or `"logalpha"` (it holds log
#'   alpha).
#' @param output The form of the result: `"matrix"` (a base integer
#'   matrix), `"dgCMatrix"` (a sparse \pkg{Matrix}, copied from libdirmn's
#'   table in compressed columns, never made dense) or `"counts"` (the
#'   table as a prepared [dirmn_counts()] object on `backend`, which the
#'   package's functions take without checking or uploading it again).
#' @param backend Where the table is drawn and kept: `"auto"`, `"cpu"` or
#'   `"cuda"` (see [dirmn_counts()]).
#' @param first_row The number of the seed's rows before this block: a
#'   whole number in 0 .. 2^53 (0, the default, draws the seed's first `n`
#'   rows). A 0-based offset: row b of the result is the seed's row
#'   `first_row + b` (see Details; for a table split over a communicator,
#'   [dirmn_communicator()]).
#' @return An n x V table of counts in the form `output` asks for, its
#'   column names those of `alpha`. For a mixture, the attribute
#'   `component` holds each row's component (1-based).
#' @seealso [dirmn_moments()] for the mean and covariance of the
#'   distribution; [simulate()][simulate.dirmn_fit] for tables drawn from
#'   fitted models.
#' @export
#' @examples
#' x <- rdirmn(5, size = 20, alpha = c(a = 1, b = 2, c = 0.5), seed = 1)
#' x
#' rowSums(x)
#'
#' # a mixture of two components, equal weights
#' alpha <- rbind(c(10, 1, 1), c(1, 1, 10))
#' y <- rdirmn(6, size = 50, alpha = alpha, seed = 2)
#' attr(y, "component")
#'
#' # one alpha per row
#' rdirmn(3, size = c(10, 100, 1000), alpha = rbind(1:3, 3:1, c(1, 1, 1)), rowwise = TRUE)
#'
#' # straight into a fit, without a round trip through R
#' counts <- rdirmn(200, size = 100, alpha = c(2, 4, 6), seed = 3, output = "counts")
#' coef(dirmn_fit(counts))
#'
#' # a table drawn in two blocks of rows (1 .. 4 and 5 .. 10) is the table of one call
#' whole <- rdirmn(10, size = 20, alpha = c(1, 2, 3), seed = 4)
#' top <- rdirmn(4, size = 20, alpha = c(1, 2, 3), seed = 4)
#' rest <- rdirmn(6, size = 20, alpha = c(1, 2, 3), seed = 4, first_row = 4)
#' identical(rbind(top, rest), whole)
rdirmn <- function(n, size, alpha, seed = NULL, component = NULL, mixture_weights = NULL,
                   rowwise = FALSE, param = c("alpha", "logalpha"),
                   output = c("matrix", "dgCMatrix", "counts"),
                   backend = getOption("dirmn.backend", "auto"), first_row = 0) {
  call <- sys.call()
  n <- .check_count(n, "n", call, min = 1L)
  param <- .match_choice(param, c("alpha", "logalpha"), "param", call)
  output <- .match_choice(output, c("matrix", "dgCMatrix", "counts"), "output", call)
  .check_flag(rowwise, "rowwise", call)
  if (missing(alpha)) .stop("invalid_parameter", "alpha is missing", call)
  alpha <- .as_alpha(alpha, call)
  size <- .check_sizes(size, n, call)
  seed <- if (is.null(seed)) .draw_seed() else .check_seed(seed, call)
  first_row <- .check_first_row(first_row, call)
  cn <- if (is.matrix(alpha)) colnames(alpha) else names(alpha)
  if (is.matrix(alpha) && nrow(alpha) == 1L && !rowwise) alpha <- alpha[1L, ]
  shape <- .sample_shape(alpha, rowwise, n, component, mixture_weights, call)
  if (shape == .alpha_shapes[["vectors"]]) {
    k <- nrow(alpha)
    component <- .check_component(component, n, k, call)
    mixture_weights <- .check_mixture_weights(mixture_weights, k, call)
    if (!is.null(component) && !is.null(mixture_weights)) {
      .stop("invalid_argument", "give component or mixture_weights, not both", call)
    }
  }
  ctx <- .context(backend, getOption("dirmn.device", 0L), call, backend_option = missing(backend),
                  device_option = TRUE)
  res <- cpp_sample(ctx$ptr, alpha, shape, param == "logalpha", n, size,
                    if (is.null(component)) NULL else component - 1L, mixture_weights, seed,
                    first_row)
  if (.failed(res)) {
    .raise(res, call, alpha = c("vector", "matrix", "rowwise")[[shape + 1L]])
  }
  out <- .counts_output(res$counts, ctx, c(n, ncol(rbind(alpha))), list(NULL, cn), output, call)
  if (!is.null(res$component)) attr(out, "component") <- res$component
  out
}

# libdirmn's layouts of alpha (the C++ layer's AlphaShape).
.alpha_shapes <- c(shared = 0L, vectors = 1L, rowwise = 2L)

# The layout of alpha for n rows, or an error.
.sample_shape <- function(alpha, rowwise, n, component, mixture_weights, call) {
  if (rowwise) {
    if (!is.matrix(alpha) || nrow(alpha) != n) {
      .stop("dimension_mismatch", sprintf(
        "with rowwise = TRUE, alpha must be a matrix with one row per row drawn (n = %d), not %s",
        n, if (is.matrix(alpha)) sprintf("a %d x %d matrix", nrow(alpha), ncol(alpha))
           else "a vector"), call)
    }
    if (!is.null(component) || !is.null(mixture_weights)) {
      .stop("invalid_argument",
            "component and mixture_weights belong to a mixture (rowwise = FALSE)", call)
    }
    return(.alpha_shapes[["rowwise"]])
  }
  if (is.matrix(alpha)) return(.alpha_shapes[["vectors"]])
  if (length(dim(alpha)) > 2L) {
    .stop("dimension_mismatch", "alpha must be a vector or a matrix", call)
  }
  if (!is.null(component) || !is.null(mixture_weights)) {
    .stop("invalid_argument", paste(
      "component and mixture_weights need a mixture: alpha a matrix with one row per",
      "component"), call)
  }
  .alpha_shapes[["shared"]]
}

# first_row, the number of the seed's rows before a block (0-based), as a
# double holding a whole number in 0 .. 2^53 (every one of them exact).
.check_first_row <- function(first_row, call) {
  if (inherits(first_row, "integer64") || !is.numeric(first_row) || length(first_row) != 1L ||
      is.na(first_row) || !is.finite(first_row) || first_row != trunc(first_row) ||
      first_row < 0 || first_row > 2^53) {
    .stop("invalid_argument", paste(
      "first_row must be a single whole number in 0 .. 2^53, the number of the seed's rows",
      "before this block (0 for the first block)"), call)
  }
  as.double(first_row)
}

# Sizes as whole numbers in 0 .. 2^31 - 1, one or n of them.
.check_sizes <- function(size, n, call) {
  .refuse_integer64(size, "sizes", call)
  if (!is.numeric(size) || !(length(size) %in% c(1L, n)) || sum(dim(size) > 1L) > 1L) {
    .stop("invalid_argument", sprintf(
      "size must be a number or a numeric vector of length n (%d), one size per row", n), call)
  }
  bad <- which(is.na(size) | !is.finite(size) | size < 0 | size > .Machine$integer.max |
                 size != trunc(size))
  if (length(bad) > 0L) {
    .stop("invalid_argument", sprintf(
      "size must hold whole numbers from 0 to %d; size[%d] is %s", .Machine$integer.max,
      bad[[1L]], format(size[[bad[[1L]]]], digits = 15L)), call)
  }
  as.double(size)
}

.check_component <- function(component, n, k, call) {
  if (is.null(component)) return(NULL)
  if (!is.numeric(component) || length(component) != n || anyNA(component) ||
      any(component != trunc(component)) || any(component < 1 | component > k)) {
    .stop("invalid_argument", sprintf(
      "component must hold one whole number per row drawn (n = %d), each in 1 .. %d (a row of alpha)",
      n, k), call)
  }
  as.integer(component)
}

.check_mixture_weights <- function(weights, k, call) {
  if (is.null(weights)) return(NULL)
  if (!is.numeric(weights) || length(weights) != k || anyNA(weights) ||
      any(!is.finite(weights) | weights < 0) || sum(weights) <= 0) {
    .stop("invalid_argument", sprintf(paste(
      "mixture_weights must hold one finite number >= 0 per component (k = %d), with a",
      "positive sum"), k), call)
  }
  as.double(weights)
}

# A seed for libdirmn (a whole number in [0, 2^53)) from R's random number
# generator, for seed = NULL: set.seed() then makes the draws reproducible.
.draw_seed <- function() {
  u <- stats::runif(2L)
  floor(u[[1L]] * 2^26) * 2^27 + floor(u[[2L]] * 2^27)
}

# A table the library made (a counts external pointer on `ctx`) in the form
# `output` asks for; a copy frees the library's table at once.
.counts_output <- function(ptr, ctx, dim, dimnames, output, call) {
  counts <- structure(list(ptr = ptr, dim = as.integer(dim), dimnames = dimnames,
                           backend = ctx$backend, device = ctx$device),
                      class = "dirmn_counts")
  if (output == "counts") return(counts)
  on.exit(cpp_counts_close(ptr))
  if (output == "matrix") .counts_matrix(counts, call) else .counts_dgc(counts, call)
}

.counts_matrix <- function(x, call) {
  m <- cpp_counts_dense(x$ptr)
  if (.failed(m)) .raise(m, call)
  if (!is.null(x$dimnames[[1L]]) || !is.null(x$dimnames[[2L]])) dimnames(m) <- x$dimnames
  m
}

.counts_dgc <- function(x, call) {
  s <- cpp_counts_csc(x$ptr)
  if (.failed(s)) .raise(s, call)
  methods::new("dgCMatrix", i = s$i, p = s$p, x = s$x, Dim = as.integer(x$dim),
               Dimnames = .dimnames2(x$dimnames))
}

#' Copy a prepared table back to R
#'
#' `as.matrix()` copies a [dirmn_counts()] table into a base matrix
#' (integer where every count is a whole number within R's integer range,
#' else double), through libdirmn's `dirmn_counts_copy_dense()`;
#' `as_sparse()` copies its nonzero cells into a \pkg{Matrix} `dgCMatrix`
#' (compressed sparse columns, through `dirmn_counts_copy_sparse()`),
#' never making it dense. Both keep the table's dimnames. A table on a
#' CUDA device is copied from the host copy libdirmn keeps of it.
#'
#' @param x A `dirmn_counts` object (for `as_sparse()`, also a base or
#'   \pkg{Matrix} matrix, converted to a `dgCMatrix` of doubles).
#' @param ... Unused.
#' @return A base matrix, or a `dgCMatrix`.
#' @seealso [rdirmn()], whose `output = "counts"` gives such a table.
#' @export
#' @examples
#' counts <- dirmn_counts(rbind(a = c(x = 1L, y = 0L, z = 3L), b = c(0L, 0L, 5L)))
#' as.matrix(counts)
#' as_sparse(counts)
as_sparse <- function(x, ...) UseMethod("as_sparse")

#' @rdname as_sparse
#' @export
as_sparse.dirmn_counts <- function(x, ...) .counts_dgc(x, sys.call())

#' @rdname as_sparse
#' @export
as_sparse.default <- function(x, ...) {
  call <- sys.call()
  if (!is.matrix(x) && !methods::is(x, "Matrix")) {
    .stop("invalid_argument", sprintf(
      "as_sparse() takes a dirmn_counts object or a matrix, not an object of class %s",
      paste(class(x), collapse = "/")), call)
  }
  if (is.matrix(x)) storage.mode(x) <- "double"
  methods::as(methods::as(methods::as(x, "CsparseMatrix"), "generalMatrix"), "dMatrix")
}

#' @rdname as_sparse
#' @export
as.matrix.dirmn_counts <- function(x, ...) .counts_matrix(x, sys.call())

#' Moments of the Dirichlet-multinomial distribution
#'
#' With \eqn{A = \sum_v \alpha_v}{A = sum(alpha)} and \eqn{p = \alpha / A}{p
#' = alpha / A}, the counts of \eqn{DM(\alpha, size)}{DM(alpha, size)} have
#' mean \eqn{size\, p_v}{size p_v}, variance \eqn{size\, p_v (1 - p_v)
#' (size + A) / (1 + A)}{size p_v (1 - p_v) (size + A) / (1 + A)} and
#' covariance \eqn{-size\, p_u p_v (size + A) / (1 + A)}{-size p_u p_v (size
#' + A) / (1 + A)} (\eqn{u \ne v}{u != v}): the multinomial's, inflated by
#' \eqn{(size + A) / (1 + A)}{(size + A) / (1 + A)}. Computed by libdirmn
#' (`dirmn_moments()`).
#'
#' @param alpha One parameter vector (positive; alpha, or log alpha with
#'   `param = "logalpha"`).
#' @param size The number of counts: a finite number >= 0 (not necessarily
#'   whole; the formulas are polynomial in it).
#' @inheritParams rdirmn
#' @return A list with `mean` and `variance` (one value per category) and
#'   `covariance` (a V x V matrix, the variances on its diagonal), named by
#'   `alpha`'s names.
#' @seealso [rdirmn()]
#' @export
#' @examples
#' m <- dirmn_moments(c(a = 1, b = 2, c = 3), size = 10)
#' m$mean
#' m$covariance
#' # the sample moments of many draws come close
#' x <- rdirmn(20000, 10, c(a = 1, b = 2, c = 3), seed = 1)
#' colMeans(x)
#' cov(x)
dirmn_moments <- function(alpha, size, param = c("alpha", "logalpha")) {
  call <- sys.call()
  param <- .match_choice(param, c("alpha", "logalpha"), "param", call)
  if (missing(alpha)) .stop("invalid_parameter", "alpha is missing", call)
  alpha <- .as_alpha(alpha, call)
  if (!is.null(dim(alpha)) && sum(dim(alpha) > 1L) > 1L) {
    .stop("dimension_mismatch", "alpha must be one parameter vector, not a matrix", call)
  }
  nm <- if (is.matrix(alpha)) colnames(alpha) else names(alpha)
  alpha <- as.vector(alpha)
  if (length(alpha) == 0L) .stop("dimension_mismatch", "alpha must hold at least one value", call)
  if (missing(size) || !is.numeric(size) || length(size) != 1L || is.na(size) ||
      !is.finite(size) || size < 0) {
    .stop("invalid_argument", "size must be a single finite number >= 0", call)
  }
  res <- cpp_moments(.context("cpu", 0L, call)$ptr, alpha, param == "logalpha", as.double(size))
  if (.failed(res)) .raise(res, call, alpha = "vector")
  names(res$mean) <- nm
  names(res$variance) <- nm
  if (!is.null(nm)) dimnames(res$covariance) <- list(nm, nm)
  res
}

#' Simulate count tables from a fitted Dirichlet-multinomial model
#'
#' Draws `nsim` new tables from a fitted model, each with the rows of the
#' fitted table and each row's observed total (its size), through
#' [rdirmn()]'s sampler:
#' * a [dirmn_fit()]: every row from the fitted alpha. Columns without
#'   counts (alpha 0) stay 0; a fit at the multinomial limit draws
#'   multinomial rows (alpha its proportions times 1e300, a
#'   Dirichlet-multinomial equal to the multinomial to double precision);
#' * a [dirmn_mixture()] (its selected model, or `components`) or one of its
#'   models: each row from a component drawn with the fitted mixing
#'   weights; the attribute `component` of each table holds them;
#' * a [dirmn_reg()]: each row from its fitted alpha (`predict()` on the
#'   fit's own design, and its own precision design where it has one).
#'
#' `seed = NULL` draws the library's seed from R's random number generator
#' (so [set.seed()] makes the result reproducible); a whole number is used
#' as the library's seed itself, leaving R's generator alone. The seed used
#' is returned as the attribute `seed`: `simulate(object, nsim, seed =
#' attr(s, "seed"))` gives `s` again.
#'
#' @param object A `dirmn_fit`, `dirmn_mixture`, `dirmn_mixture_fit` or
#'   `dirmn_reg` object.
#' @param nsim The number of tables to draw.
#' @param seed `NULL` or the library's seed, a whole number in 0 .. 2^53, or any
#'   64-bit seed as a string of decimal digits ("18446744073709551615" at most).
#' @param components For a `dirmn_mixture`: the number of components of the
#'   model to draw from; `NULL` for the selected model.
#' @param ... Unused.
#' @return A list of `nsim` integer matrices (a list also for `nsim = 1`),
#'   each with the fitted table's dimensions and dimnames, with the
#'   attribute `seed`.
#' @name simulate.dirmn_fit
#' @export
#' @examples
#' mite <- as.matrix(read.csv(system.file("extdata", "mite.csv", package = "dirmn"),
#'                            row.names = 1))
#' fit <- dirmn_fit(mite)
#' s <- simulate(fit, nsim = 2, seed = 1)
#' all(rowSums(s[[1]]) == rowSums(mite))
#' # a table from the fit, refitted
#' head(coef(dirmn_fit(s[[1]])))
#' head(coef(fit))
simulate.dirmn_fit <- function(object, nsim = 1, seed = NULL, ...) {
  call <- sys.call()
  .renamed_args(list(...), character(), call)
  alpha <- object$alpha
  if (isTRUE(object$multinomial_limit)) alpha <- alpha / sum(alpha) * 1e300
  .simulate_tables(alpha, .alpha_shapes[["shared"]], object$row_totals, object$dimnames,
                   nsim, seed, NULL, call)
}

#' @rdname simulate.dirmn_fit
#' @export
simulate.dirmn_mixture <- function(object, nsim = 1, seed = NULL, components = NULL, ...) {
  model <- .model(object, components, list(...))
  .simulate_mixture(model, nsim, seed, sys.call())
}

#' @rdname simulate.dirmn_fit
#' @export
simulate.dirmn_mixture_fit <- function(object, nsim = 1, seed = NULL, ...) {
  call <- sys.call()
  .renamed_args(list(...), character(), call)
  .simulate_mixture(object, nsim, seed, call)
}

#' @rdname simulate.dirmn_fit
#' @export
simulate.dirmn_reg <- function(object, nsim = 1, seed = NULL, ...) {
  call <- sys.call()
  .renamed_args(list(...), character(), call)
  alpha <- .reg_fitted_alpha(object, call)
  y <- .reg_response(object, call)
  totals <- if (methods::is(y, "Matrix")) Matrix::rowSums(y) else rowSums(y)
  .simulate_tables(alpha, .alpha_shapes[["rowwise"]], totals,
                   list(rownames(object$x), colnames(object$coefficients)), nsim, seed, NULL,
                   call)
}

.simulate_mixture <- function(model, nsim, seed, call) {
  alpha <- model$alpha
  totals <- model$row_totals
  .simulate_tables(alpha, .alpha_shapes[["vectors"]], totals,
                   list(rownames(model$responsibilities), colnames(alpha)), nsim, seed,
                   as.double(model$weights), call)
}

# nsim tables of the rows of a fitted table, drawn in one call to libdirmn:
# the nsim tables stacked (each row's stream depends on its position, so
# the stacked rows are independent draws). Columns whose alpha is 0 in
# every vector (columns without counts) are left out of the draw and stay
# 0. `shape`: .alpha_shapes; `alpha` a vector, a k x V matrix or an n x V
# matrix (rowwise); `weights` the mixing weights of k vectors.
.simulate_tables <- function(alpha, shape, totals, dimnames, nsim, seed, weights, call) {
  nsim <- .check_count(nsim, "nsim", call, min = 1L)
  seed <- if (is.null(seed)) .draw_seed() else .check_seed(seed, call)
  n <- length(totals)
  if (as.double(n) * nsim > .Machine$integer.max) {
    .stop("invalid_argument", sprintf(
      "nsim tables of %d rows are more than %d rows in all", n, .Machine$integer.max), call)
  }
  alpha_matrix <- rbind(alpha)
  V <- ncol(alpha_matrix)
  keep <- which(colSums(alpha_matrix > 0) > 0)
  rows <- rep(seq_len(n), nsim)
  draw_alpha <- if (shape == .alpha_shapes[["shared"]]) {
    as.double(alpha)[keep]
  } else if (shape == .alpha_shapes[["rowwise"]]) {
    unname(alpha_matrix[rows, keep, drop = FALSE])
  } else {
    unname(alpha_matrix[, keep, drop = FALSE])
  }
  one_component <- shape == .alpha_shapes[["vectors"]] && nrow(alpha_matrix) == 1L
  if (one_component) {
    draw_alpha <- draw_alpha[1L, ]
    shape <- .alpha_shapes[["shared"]]
    weights <- NULL
  }
  ctx <- .default_context(call)
  res <- cpp_sample(ctx$ptr, draw_alpha, shape, FALSE, n * nsim, as.double(totals)[rows],
                    NULL, weights, seed, 0)
  if (.failed(res)) .raise(res, call, alpha = c("vector", "matrix", "rowwise")[[shape + 1L]])
  drawn <- cpp_counts_dense(res$counts)
  cpp_counts_close(res$counts)
  if (.failed(drawn)) .raise(drawn, call)
  if (one_component) res$component <- rep(1L, n * nsim)
  out <- lapply(seq_len(nsim), function(i) {
    at <- (i - 1L) * n + seq_len(n)
    m <- matrix(0L, n, V, dimnames = dimnames)
    m[, keep] <- drawn[at, , drop = FALSE]
    if (!is.null(res$component)) attr(m, "component") <- res$component[at]
    m
  })
  attr(out, "seed") <- seed
  out
}
