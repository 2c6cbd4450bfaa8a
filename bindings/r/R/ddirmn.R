#' The Dirichlet-multinomial density of each row of a count table
#'
#' For a row with counts \eqn{n_1, \dots, n_V}{n_1, ..., n_V}, total
#' \eqn{N = \sum_v n_v}{N = sum(n)} and parameters
#' \eqn{\alpha_v > 0}{alpha_v > 0} with \eqn{A = \sum_v \alpha_v}{A = sum(alpha)},
#' the Dirichlet-multinomial probability is
#' \deqn{P(n \mid \alpha) = \frac{N!}{\prod_v n_v!}
#'   \frac{\Gamma(A)}{\Gamma(N + A)} \prod_v \frac{\Gamma(n_v + \alpha_v)}{\Gamma(\alpha_v)}.}{
#'   P(n | alpha) = N! / prod(n_v!) * Gamma(A) / Gamma(N + A) * prod(Gamma(n_v + alpha_v) / Gamma(alpha_v)).}
#' `ddirmn()` evaluates it for every row of `x`, in libdirmn, on the CPU or a
#' GPU, under one parameter vector, under each of several (a matrix `alpha`
#' with one vector per row: every row of `x` under every vector, as a
#' mixture's E step needs), or under one vector per row of `x` (`rowwise =
#' TRUE`).
#'
#' `ddirmn()` follows R's convention for densities (as [dbinom()] and
#' [extraDistr::ddirmnom()] do): it returns the pmf unless `log = TRUE`.
#' `MGLM::ddirmn()`, a function of the same name in \pkg{MGLM}, returns the
#' log pmf by default, so the same call gives different numbers with the two
#' packages: with both attached, say which one with `dirmn::ddirmn()`.
#'
#' With `full = FALSE` the multinomial coefficient \eqn{N! / \prod_v n_v!}{N! / prod(n_v!)}
#' is left out (the kernel of the log-likelihood). It does not depend on
#' alpha, so likelihood-based estimation of alpha can skip it.
#'
#' A table given as a matrix is validated and uploaded on every call; when
#' the same table is evaluated under many alphas, prepare it once with
#' [dirmn_counts()]. Unprepared tables use the backend in
#' `getOption("dirmn.backend", "auto")` and device
#' `getOption("dirmn.device", 0)`.
#'
#' Errors are conditions of class `dirmn_error` (see [dirmn_error]); bad
#' counts or parameters are reported with their row and column.
#'
#' @param x The counts, one row per observation: an integer, double or
#'   logical (0/1) matrix, a numeric or logical vector, a 1-d array or
#'   one-way [table()], or a \pkg{Matrix} `sparseVector` (each a single
#'   observation, with its names as the category names), a numeric or
#'   logical data frame, a matrix from \pkg{Matrix} (sparse ones,
#'   `dgCMatrix`, `dgRMatrix`, ..., never made dense; dense ones, such as
#'   `dgeMatrix` or `lgeMatrix`), a table prepared with [dirmn_counts()],
#'   or an object of \pkg{phyloseq}, \pkg{SummarizedExperiment} or
#'   \pkg{biomformat}, or the path of a BIOM file (see [dirmn_counts()]).
#' @param alpha The parameters, all positive and finite: a vector with one
#'   value per column of `x`, shared by all rows; or a K x V matrix (V the
#'   number of columns of `x`) holding K parameter vectors, one per row, each
#'   applied to every row of `x`; or, with `rowwise = TRUE`, a matrix of the
#'   dimensions of `x` giving each row of `x` its own parameters. A dense
#'   \pkg{Matrix} (`dgeMatrix` and the like) is taken as [as.matrix()] makes
#'   it. Where both `alpha` (its names, or a matrix's column names) and the
#'   columns of `x` have names, they are matched by name: the same names in
#'   another order are reordered to `x`'s columns, other names are an error
#'   of class `dirmn_error_dimension_mismatch` naming them.
#' @inheritParams dirmn_counts
#' @param log If `TRUE`, return log densities (log pmf).
#' @param full If `TRUE` (the default), include the multinomial coefficient
#'   (the pmf proper, as [extraDistr::ddirmnom()] computes it); if `FALSE`,
#'   leave it out.
#' @param rowwise If `TRUE`, `alpha` is a matrix with one row of parameters
#'   per row of `x`.
#'
#' @return For a vector `alpha`, and with `rowwise = TRUE`, a double vector
#'   with one value per row of `x`, named by the row names of `x` where it
#'   has them. For a K x V matrix `alpha`, an n x K matrix (n the rows of
#'   `x`): column j holds the rows' densities under row j of `alpha`, with
#'   the row names of `x` and of `alpha` as dimnames. A row of zeros has
#'   density 1 (log density 0).
#' @seealso [dirmn_counts()] to prepare a table once; [dirmn_error] for the
#'   conditions raised.
#' @export
#' @examples
#' # Three draws of 10 items over 3 categories
#' x <- rbind(c(5L, 3L, 2L), c(0L, 10L, 0L), c(3L, 3L, 4L))
#' ddirmn(x, alpha = c(1, 1, 1))
#' ddirmn(x, alpha = c(1, 1, 1), log = TRUE, full = FALSE)
#'
#' # Two parameter vectors: every row under each (a 3 x 2 matrix)
#' ddirmn(x, alpha = rbind(flat = c(1, 1, 1), peaked = c(0.1, 5, 0.1)))
#'
#' # One alpha per row
#' ddirmn(x, alpha = rbind(c(1, 1, 1), c(0.1, 5, 0.1), c(2, 2, 2)), rowwise = TRUE)
#'
#' # A single observation as a one-way table
#' ddirmn(table(factor(c("a", "b", "b", "c"))), alpha = c(1, 2, 1))
#'
#' # A real table: tree counts in 50 plots of Barro Colorado Island
#' bci <- as.matrix(read.csv(system.file("extdata", "bci.csv", package = "dirmn"),
#'                           row.names = 1))
#' counts <- dirmn_counts(bci)
#' p <- colSums(bci) / sum(bci)
#' sapply(c(1, 10, 100, 1000), function(theta) sum(ddirmn(counts, theta * p, log = TRUE)))
#'
#' # Sparse input is used without densifying
#' sp <- Matrix::Matrix(bci, sparse = TRUE)
#' all.equal(ddirmn(sp, 10 * p, log = TRUE), ddirmn(counts, 10 * p, log = TRUE))
ddirmn <- function(x, alpha, log = FALSE, full = TRUE, rowwise = FALSE,
                   samples = c("rows", "columns"), assay = NULL) {
  call <- sys.call()
  if (!is.double(alpha) || is.object(alpha)) alpha <- .as_alpha(alpha, call)
  .check_flag(log, "log", call)
  .check_flag(full, "full", call)
  .check_flag(rowwise, "rowwise", call)
  x <- .counts_input(x, samples, assay, call, missing(samples))
  if (inherits(x, "dirmn_counts")) {
    table <- NULL
    alpha <- .match_names(alpha, x$dimnames[[2L]], "alpha", "x", call)
    res <- cpp_ddirmn_counts(x$ptr, alpha, rowwise, full, log)
    rn <- x$dimnames[[1L]]
  } else {
    table <- .as_table(x, call)
    alpha <- .match_names(alpha, table$dimnames[[2L]], "alpha", "x", call)
    ctx <- .default_context(call)
    res <- cpp_ddirmn_table(ctx$ptr, table$data, table$kind, alpha, rowwise, full, log)
    rn <- table$dimnames[[1L]]
  }
  if (.failed(res)) .raise(res, call, table = table, alpha = .alpha_form(alpha, rowwise))
  if (is.matrix(res)) {
    dimnames(res) <- if (is.null(rn) && is.null(rownames(alpha))) NULL
                     else list(rn, rownames(alpha))
  } else if (!is.null(rn)) {
    names(res) <- rn
  }
  res
}

# How the messages of a failure name alpha's elements (see
# .location_message): "vector", "matrix" (K vectors, one per row) or
# "rowwise" (one per row of the counts).
.alpha_form <- function(alpha, rowwise) {
  if (rowwise) "rowwise" else if (is.matrix(alpha)) "matrix" else "vector"
}

# alpha as a double vector or matrix (dimensions kept), or an error. A
# dense Matrix (dgeMatrix, dsyMatrix, ...) is the base matrix as.matrix()
# makes of it; anything else refused is named by its class (an object) or
# type.
.as_alpha <- function(alpha, call) {
  .refuse_integer64(alpha, "alpha values", call)
  if (is.double(alpha)) return(alpha)
  if (methods::is(alpha, "denseMatrix")) return(.as_alpha(as.matrix(alpha), call))
  if (is.integer(alpha) || is.logical(alpha) && all(is.na(alpha))) {
    storage.mode(alpha) <- "double"
    return(alpha)
  }
  if (is.data.frame(alpha)) {
    .stop("invalid_parameter",
          "alpha must be a numeric vector or matrix, not a data frame (use as.matrix())", call)
  }
  .stop("invalid_parameter", sprintf(
    "alpha must be a numeric vector or matrix, not %s",
    if (is.object(alpha)) paste("an object of class", paste(class(alpha), collapse = "/"))
    else typeof(alpha)), call)
}
